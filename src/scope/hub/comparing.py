"""Comparisons on the hub (`/compare`, `/api/compare`): a mixin of the hub's Hub (hub/app.py),
which owns the engine, the list, the comparison cache and its gate.  Two sides named as
clusters (their latest runs, or their newest runs that share points) or as run/ID, compared by
hub/runs.py's `compared`, with what differs in their provenance beside the answer."""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from scope.analysis.provenance import differ
from scope.hub import db, pages
from scope.hub.guard import HubError, path_id
from scope.hub.openapi import Comparison, typed
from scope.hub.runs import compared


def run_id(text: str) -> int:
    return path_id(text, "run")


class Comparing:
    """Mixed into Hub: `self.engine`, `self.comparisons`, `self.comparing`, `self._list`,
    `self._page`, `self._api`."""

    def compare_page(self, request: Request) -> Response:
        a, b = request.query_params.get("a"), request.query_params.get("b")

        def make():
            names = [r["name"] for r in self._list()]
            if not a or not b:
                return pages.compare_page(a, b, names)
            try:
                ra, rb, result = self._compared(a, b)
            except HubError as e:
                if e.status == 429:
                    raise
                return pages.compare_page(a, b, names, error=e.message)
            return pages.compare_page(a, b, names, ra, rb, result)

        return self._page(request, make)

    def _side(self, ref: str) -> dict:
        """A run named as run/ID, or a cluster (its latest run)."""
        if ref.startswith("run/"):
            rid = run_id(ref[4:])
        elif db.CLUSTER_NAME.fullmatch(ref):
            rid = db.latest_run(self.engine, ref)
            if rid is None:
                raise HubError(404, f"no cluster {ref!r} with runs on this hub")
        else:
            raise HubError(404, f"{ref[:80]!r} is neither a cluster name nor run/ID")
        row = db.run_row(self.engine, rid)
        if row is None:
            raise HubError(404, f"no run {rid} on this hub")
        return row

    def _compared(self, a: str, b: str):
        ra, rb = self._side(a), self._side(b)
        if ra["id"] == rb["id"]:
            raise HubError(400, f"{a} and {b} are the same run (run {ra['id']})", "compare two runs")
        result = self.comparisons.get((ra["id"], rb["id"]), lambda: self._compute(ra, rb))
        if not result["rows"] and not a.startswith("run/") and not b.startswith("run/"):
            ra, rb, result = self._matched(a, b, ra, rb, result)
        # what differs between the two runs' provenance (MPI, transports, CVARs, nodes ...), beside the answer
        changed = differ(_provenance(ra), _provenance(rb))
        return _public(ra), _public(rb), dict(result, changed={k: list(v) for k, v in changed.items()})

    MATCH_DEPTH = 6  # each cluster's newest runs tried when its latest share no point (36 pairs at most)

    def _matched(self, a: str, b: str, ra: dict, rb: dict, result: dict):
        """Two clusters matched on their newest runs that measured points in common (issue 70:
        latest runs of different tests gave "no point in common" though older ones matched),
        the pairs tried newest first by their combined age."""
        hist = [list(reversed(db.cluster(self.engine, n, limit=self.MATCH_DEPTH)["history"])) for n in (a, b)]
        pairs = sorted(((i, j) for i in range(len(hist[0])) for j in range(len(hist[1]))), key=lambda ij: sum(ij))
        for i, j in pairs[1:]:
            xa, xb = db.run_row(self.engine, hist[0][i]["id"]), db.run_row(self.engine, hist[1][j]["id"])
            if xa is None or xb is None or xa["id"] == xb["id"]:
                continue
            got = self.comparisons.get((xa["id"], xb["id"]), lambda xa=xa, xb=xb: self._compute(xa, xb))
            if got["rows"]:
                return xa, xb, dict(got, matched=f"matched on run {xa['id']} and run {xb['id']}, the newest of "
                                                 f"{a} and {b} that measured points in common")  # fmt: skip
        return ra, rb, result

    def _compute(self, ra: dict, rb: dict) -> dict:
        with self.comparing():
            names = (f"A ({ra['cluster']})", f"B ({rb['cluster']})")
            between = ra["cluster"] != rb["cluster"]
            return compared(db.bundle_of(self.engine, ra["id"]), db.bundle_of(self.engine, rb["id"]), names=names,
                            between=between)  # fmt: skip

    def api_compare(self, request: Request) -> Response:
        a, b = request.query_params.get("a"), request.query_params.get("b")

        def make():
            if not a or not b:
                raise HubError(400, "compare needs two runs: a and b", "e.g. /api/compare?a=CLUSTER&b=run/ID")
            ra, rb, result = self._compared(a, b)
            layers = [[pages._layer(x) for x in side] for side in result["layers"]]
            doc = {"a": ra, "b": rb, "verdicts": result["verdicts"], "changed": result["changed"],
                   "rows": result["rows"], "machine": result["shifts"], "layers": layers,
                   "matched": result.get("matched")}  # fmt: skip
            return typed(doc, Comparison)

        return self._api(request, make)


def _provenance(row: dict) -> dict:
    try:
        known = msgspec.json.decode(row.get("provenance") or "{}")
    except msgspec.DecodeError:
        return {}
    return known if isinstance(known, dict) else {}


def _public(row: dict) -> dict:
    keep = ("id", "cluster", "started_utc", "pushed_utc", "status", "label", "ranks", "mpi", "launches", "points")
    return {k: row[k] for k in keep}
