"""Every series of a cluster (`/clusters/NAME/series`, `/api/clusters/NAME/series`): a mixin of
the hub's Hub (hub/app.py), which owns the engine and the page cache.  A reader picks a test and
one of its series (parameters, size, ranks, kind) in a form the server renders, no script
needed, and reads that series' history with its changes (issue 70).  The rows come from
hub/series.py; the runs a hub stored before it kept series are read from their bundles once."""

from __future__ import annotations

import logging

from sqlalchemy import exc
from starlette.requests import Request
from starlette.responses import Response

from scope.errors import ScopeError
from scope.hub import db, events, pages, series
from scope.hub.documents import SeriesHistory, SeriesList
from scope.hub.guard import HubError, path_id
from scope.hub.openapi import typed
from scope.hub.runs import series_changes, series_points

log = logging.getLogger("scope.hub")
PICK = "pick one from the cluster's series page"


def series_id(text: str | None) -> int | None:
    return None if not text else path_id(text, "series", PICK)


class Picking:
    """Mixed into Hub: `self.engine`, `self.pages`, `self._page`, `self._api`, `self._cluster_id`."""

    def series_page(self, request: Request) -> Response:
        name = request.path_params["name"]
        sid = series_id(request.query_params.get("series"))
        test = request.query_params.get("test") or None

        def make():
            cid, key = self._cluster_id(name)
            return self.pages.get(("series page", cid, key, test, sid), lambda: self._series_page(name, cid, test, sid))

        return self._page(request, make)

    def _series_page(self, name: str, cid: int, test: str | None, sid: int | None) -> str:
        every = self._every(cid)
        picked = self._picked(cid, sid) if sid is not None else None
        if picked is not None:
            test = picked[0]["test"]
        tests = sorted({s["test"] for s in every})
        if test is not None and test not in tests:
            raise HubError(
                404, f"no series of test {test[:80]!r} on cluster {name}", "pick a test the cluster measured"
            )
        with self.engine.connect() as conn:
            cut = series.partial(conn, cid)
            known = events.listed(conn, cid)
        return pages.series_page(name, every, tests, test, picked, cut, known)

    def api_series_list(self, request: Request) -> Response:
        def make():
            cid, _ = self._cluster_id(request.path_params["name"])
            return typed({"series": self._every(cid)}, SeriesList)

        return self._api(request, make)

    def api_series(self, request: Request) -> Response:
        def make():
            cid, _ = self._cluster_id(request.path_params["name"])
            picked = self._picked(cid, series_id(request.path_params["id"]))
            head, rows, changes = picked
            return typed({**head, "runs": rows, "changes": changes}, SeriesHistory)

        return self._api(request, make)

    def _every(self, cid: int) -> list[dict]:
        self.read_series(cid)
        with self.engine.connect() as conn:
            return series.listed(conn, cid)

    def _picked(self, cid: int, sid: int) -> tuple[dict, list[dict], list[dict]]:
        with self.engine.connect() as conn:
            found = series.history(conn, cid, sid)
            known = events.listed(conn, cid)
        if found is None:
            raise HubError(404, f"no series {sid} on this cluster", PICK)
        head, rows = found
        return head, rows, series_changes(head, rows, known)

    def read_series(self, cid: int) -> None:
        """The cluster's runs stored before the hub kept series, read from their bundles (once:
        each run's row then says how many of its points were kept)."""
        with self.engine.connect() as conn:
            unread = series.unread(conn, cid)
        for rid in unread:
            try:
                points = series_points(db.bundle_of(self.engine, rid) or b"")
            except ScopeError as e:  # a bundle this scope cannot read: its run keeps no series, said in its log
                log.warning("scope hub: run %d keeps no series: %s", rid, e.message)
                points = []
            try:
                with db.writing(self.engine) as conn:
                    if rid in series.unread(conn, cid):
                        series.keep(conn, cid, rid, points)
            except exc.IntegrityError:
                pass  # another worker read it at the same time
