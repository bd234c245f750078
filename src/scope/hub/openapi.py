"""The hub's JSON API: each answer's type (msgspec), which the handlers encode through, and the
OpenAPI 3.1 document made from those same types (served at /openapi.json, listed at /docs/api),
so the document and the answers cannot drift apart (issue 67).  Every status a route can answer
is listed with it; the push links its answer's id to the routes that read a run (Schemathesis
follows them)."""

from __future__ import annotations

import base64
import struct
from html import escape
from typing import Any, Optional

import msgspec
from msgspec import Struct, defstruct

from scope.hub.documents import (
    CONTROL,
    AlertList,
    Event,
    EventBody,
    EventList,
    Made,
    RuleBody,
    SeriesHistory,
    SeriesList,
    Triaged,
)
from scope.hub.guard import MAX_ID
from scope.hub.pages import render
from scope.hub.tables import CLUSTER_NAME, FIGURES
from scope.records.bundle import Bundle
from scope.version import __version__


class Error(Struct):
    error: str
    hint: str = ""


class Health(Struct, omit_defaults=True):
    ok: bool
    clusters: Optional[int] = None  # what it holds: told to readers only on a private hub
    runs: Optional[int] = None


_FIGURES = [(c, Optional[float], None) for f in FIGURES for c in (f, f"{f}_lo", f"{f}_hi")]
_FIGURES += [(f"{f}_at", Optional[str], None) for f in FIGURES]  # where: "8 B, 2 procs"
_LATEST = [(f"{f}_run", Optional[int], None) for f in FIGURES]  # the run each figure comes from
_LATEST += [(f"{f}_trend", list[float], []) for f in FIGURES]  # its value in the last runs of its origin, oldest first
_LATEST += [
    (f"{f}_change", Optional[float], None) for f in FIGURES
]  # the newest against the median before: 0.05 = +5 %
ClusterRow = defstruct(
    "ClusterRow",
    [("name", str), ("runs", int), ("last_push_utc", Optional[str], None), ("latest_run_id", Optional[int], None),
     ("started_utc", Optional[str], None), ("mpi", Optional[str], None), ("origin", Optional[str], None),
     ("ranks", Optional[int], None), *_FIGURES, *_LATEST,
     ("regression", Optional[str], None),  # its newest change for the worse that holds, or None
     ("nodes", Optional[int], None), ("interconnect", Optional[str], None),  # where the latest run measured
     ("latency_crossed", Optional[bool], None)],  # the latency's pair on two nodes (False: within one)
    kw_only=True,
)  # fmt: skip
RunRow = defstruct(
    "RunRow",
    [("id", int), ("started_utc", str), ("pushed_utc", str), ("status", str), ("label", Optional[str], None),
     ("origin", Optional[str], None), ("ranks", Optional[int], None), ("mpi", Optional[str], None),
     ("launches", Optional[int], None), ("points", int), *_FIGURES,
     ("collectives", list[tuple[str, int, int, float]], []),  # [test, processes, size (B), median (us)]
     ("provenance", dict[str, str], {})],
    kw_only=True,
)  # fmt: skip


class ClusterList(Struct):
    clusters: list[ClusterRow]  # type: ignore[valid-type]


class Cluster(Struct):
    name: str
    created_utc: str
    runs: int
    last_push_utc: Optional[str]
    history: list[RunRow]  # type: ignore[valid-type]
    changes: list[dict[str, Any]] = []  # each change in a headline figure: its run, size, interval, what changed
    events: list[Event] = []  # what the site announced, newest first (hub/events.py)


class Side(Struct):
    id: int
    cluster: str
    started_utc: str
    pushed_utc: str
    status: str
    label: Optional[str]
    ranks: Optional[int]
    mpi: Optional[str]
    launches: Optional[int]
    points: int


class Comparison(Struct):
    a: Side
    b: Side
    verdicts: list[dict[str, Any]]  # the answer a test: B/A's geometric mean, its interval, where, a sentence
    changed: dict[str, list[str]]  # what differs in the two runs' provenance: name -> [A's, B's]
    rows: list[dict[str, Any]]  # scope compare's rows: ratio B/A, its interval, Holm-adjusted p, verdict
    machine: list[str]  # the canaries' shifts between the two runs' machines
    layers: list[list[dict[str, Any]]]
    matched: Optional[str] = None  # two clusters compared on older runs: which, and why


class Pushed(Struct):
    id: int
    cluster: str
    stored: bool  # false: this run was stored before, and nothing was stored again
    url: str  # the run's page: an address when the hub has --public-url, else its path


TYPES = (Error, Health, ClusterList, Cluster, Comparison, Pushed, Bundle, SeriesList, SeriesHistory, AlertList,
         Triaged, EventList, Made, EventBody, RuleBody)  # fmt: skip


def typed(doc, kind) -> bytes:
    """A document as the API answers it: checked against its type here, so an answer that does
    not fit the published schema fails at once rather than surprising a client."""
    return msgspec.json.encode(msgspec.convert(doc, kind, strict=False))


_ANSWERS = {
    400: "a malformed request: what is wrong, and a hint",
    401: "a private hub without a live read token (a push: no live push token)",
    403: "a read token, or another cluster's push token",
    404: "no such cluster or run",
    408: "the request's body stopped arriving",
    413: "over the hub's upload limit",
    415: "a body of another content type",
    429: "the hub is busy with such work: try again in a few seconds",
    503: "the hub's database cannot be used now",
}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _op(op_id: str, summary: str, ok: dict, *codes: int, params=(), **more) -> dict:
    responses = {"200": ok}
    for c in (*codes, 401, 429, 503):
        responses[str(c)] = {"description": _ANSWERS[c], "content": {"application/json": {"schema": _ref("Error")}}}
    out = {"operationId": op_id, "summary": summary, "responses": responses, **more}
    if params:
        out["parameters"] = list(params)
    return out


def _json(name: str, what: str = "OK") -> dict:
    return {"description": what, "content": {"application/json": {"schema": _ref(name)}}}


_ID = {"name": "id", "in": "path", "required": True, "description": "a run's id",
       "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID}}  # fmt: skip
_SERIES = {"name": "id", "in": "path", "required": True, "description": "a series' id (listSeries)",
           "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID}}  # fmt: skip
_ALERT = {"name": "id", "in": "path", "required": True, "description": "an alert's id (listAlerts)",
          "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID}}  # fmt: skip
_RULE = {"name": "id", "in": "path", "required": True, "description": "an alert rule's id (listAlerts)",
         "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID}}  # fmt: skip


def _body(name: str) -> dict:
    return {"required": True, "content": {"application/json": {"schema": _ref(name)}}}


def _made(op: dict, links: dict | None = None) -> dict:
    """An operation that makes something: its answer 201, with `links` to what reads or removes it."""
    op["responses"]["201"] = {**op["responses"].pop("200"), **({"links": links} if links else {})}
    return op


_NAME = {"name": "name", "in": "path", "required": True, "description": "a cluster's name",
         "schema": {"type": "string", "pattern": f"^{CLUSTER_NAME.pattern}$"}}  # fmt: skip
SIDE = "a cluster's name (its latest run) or run/ID"
_SIDES = [{"name": k, "in": "query", "required": True, "description": SIDE,
           "schema": {"type": "string", "minLength": 1}} for k in ("a", "b")]  # fmt: skip
_PUSHED_LINKS = {
    f"get{what}": {"operationId": op, "parameters": {"id": "$response.body#/id"}}
    for what, op in (("Run", "getRun"), ("Bundle", "getBundle"))
}


def _f64(values) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}d", *values)).decode()


def _i64(values) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}q", *values)).decode()


# A whole run a push may carry, the document's example (and the first push of a fuzzer, whose
# answer's id its links then follow): a ping-pong curve as a CSV import of three sizes brings it.
EXAMPLE_BUNDLE = {
    "format": "scope-run",
    "version": 1,
    "scope": __version__,
    "run": {"started_utc": "2026-01-05T09:00:00Z", "status": "complete", "origin": "csv", "label": "example",
            "finished_utc": "2026-01-05T09:00:00Z", "command": ["scope", "import", "pingpong.csv"]},
    "imported": [{"first_seq": 0, "test": "p2p.pingpong", "measures": "latency", "credit": 1.0, "statistic": "as given",
                  "sizes": _i64([8, 1024, 65536]), "times": _f64([1.5, 2.25, 11.0])}],
}  # fmt: skip


def _schema() -> dict:
    _, components = msgspec.json.schema_components(TYPES, ref_template="#/components/schemas/{name}")
    gz = {"application/gzip": {"schema": {"type": "string", "format": "binary"}}}
    pushed = {**_json("Pushed", "stored"), "links": _PUSHED_LINKS}
    again = {**_json("Pushed", "this run was stored before: nothing stored again"), "links": _PUSHED_LINKS}
    push = _op("pushRun", "push a run: its bundle (`scope export --format bundle`), with the cluster's push token",
               again, 400, 403, 408, 413, 415, security=[{"token": []}],
               requestBody={"required": True, "content": {**gz, "application/json": {
                   "schema": _ref("Bundle"), "example": EXAMPLE_BUNDLE}},
                            "description": "gzip'd or plain JSON; its records are checked past this schema (400)"},
               )  # fmt: skip
    push["responses"]["201"] = pushed
    push["parameters"] = [{"name": "X-Scope-Cluster", "in": "header", "required": False,
                           "schema": {"type": "string"},
                           "description": "the cluster meant; refused when the token is another's"}]  # fmt: skip
    paths = {
        "/api/health": {"get": _op("health", "the hub is up (and, to a reader, what it holds)", _json("Health"))},
        "/api/clusters": {"get": _op("listClusters", "every cluster with its latest run's figures",
                                     _json("ClusterList"))},
        "/api/clusters/{name}": {"get": _op("getCluster", "one cluster: its runs in time order (the newest 500) and "
                                            "the changes in its figures", _json("Cluster"), 404, params=[_NAME])},
        "/api/clusters/{name}/series": {"get": _op("listSeries", "every series a cluster measured: test, "
                                                   "parameters, size, ranks, kind", _json("SeriesList"), 404,
                                                   params=[_NAME])},
        "/api/clusters/{name}/series/{id}": {"get": _op("getSeries", "one series' runs in time order and its changes",
                                                        _json("SeriesHistory"), 404, params=[_NAME, _SERIES])},
        "/api/clusters/{name}/alerts": {"get": _op("listAlerts", "a cluster's alerts (newest 200), its rules' "
                                                   "channels and thresholds, and triage's precision",
                                                   _json("AlertList"), 404, params=[_NAME])},
        "/api/alerts/{id}": {"post": _op("triageAlert", "set an alert open, acknowledged, expected or false, with a "
                                         "note (the cluster's push token)", _json("Triaged"), 400, 404, 413,
                                         params=[_ALERT], security=[{"token": []}],
                                         requestBody={"required": True, "content": {"application/json": {
                                             "schema": {"type": "object", "properties": {
                                                 "status": {"enum": ["open", "acknowledged", "expected", "false"]},
                                                 "note": {"type": "string", "maxLength": 1000,
                                                          "pattern": f"^[^{CONTROL[1:-1]}]*$"}},
                                                 "required": ["status"]}}}})},
        "/api/clusters/{name}/events": {
            "get": _op("listEvents", "a cluster's announced events, newest first", _json("EventList"), 404,
                       params=[_NAME]),
            "post": _made(_op("announceEvent", "announce an event (the cluster's push token or an admin token)",
                              _json("Made"), 400, 403, 404, 413, params=[_NAME], security=[{"token": []}],
                              requestBody=_body("EventBody")))},
        "/api/clusters/{name}/rules": {
            "post": _made(_op("addRule", "send a cluster's alerts somewhere (an admin token)", _json("Made"), 400,
                              403, 404, 413, params=[_NAME], security=[{"token": []}],
                              requestBody=_body("RuleBody")), links={"removeRule": {
                                  "operationId": "removeRule", "parameters": {"id": "$response.body#/id"}}})},
        "/api/rules/{id}": {"delete": _op("removeRule", "remove an alert rule (an admin token)", _json("Made"),
                                          403, 404, params=[_RULE], security=[{"token": []}])},
        "/api/compare": {"get": _op("compare", "two runs point by point (scope compare's rows), their layers",
                                    _json("Comparison"), 400, 404, params=_SIDES)},
        "/api/runs/{id}": {"get": _op("getRun", "one run as `scope export --format json` writes it (docs/json.md)",
                                      {"description": "OK",
                                       "content": {"application/json": {"schema": {"type": "object"}}}},
                                      404, params=[_ID])},
        "/api/runs/{id}/bundle": {"get": _op("getBundle", "one run's bundle (gzip'd JSON, what `scope import` reads)",
                                             {"description": "the bundle", "content": gz}, 404, params=[_ID])},
        "/api/runs": {"post": push},
    }  # fmt: skip
    return {
        "openapi": "3.1.0",
        "info": {"title": "SCOPE results hub", "version": __version__, "description": "Runs that clusters push."},
        "components": {"schemas": components, "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
        "paths": paths,
    }


SCHEMA = _schema()


def api_page() -> str:
    rows = []
    for path, ops in SCHEMA["paths"].items():
        for method, op in ops.items():
            rows.append(f"<tr><td class='l'>{method.upper()}</td><td class='l'><code>{escape(path)}</code></td>"
                        f"<td class='l'>{escape(op['summary'])}</td></tr>")  # fmt: skip
    return render(
        "message.html.j2",
        title="API",
        message="The JSON API; its OpenAPI 3.1 schema is at /openapi.json.",
        table="".join(rows),
    )
