"""The hub's JSON API as an OpenAPI 3.1 document (served at /openapi.json) and a page that lists
it (/docs/api).  Written by hand, next to the routes in hub/app.py, which a test holds equal."""

from __future__ import annotations

from html import escape

from scope.hub.pages import render
from scope.version import __version__

_ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string"}, "hint": {"type": "string"}},
    "required": ["error"],
}
_FIGURES = {
    f"{f}{s}": {"type": ["number", "null"]} for f in ("latency", "bandwidth", "allreduce") for s in ("", "_lo", "_hi")
}
_CLUSTER_ROW = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "runs": {"type": "integer"},
        "last_push_utc": {"type": ["string", "null"]},
        "latest_run_id": {"type": ["integer", "null"]},
        **_FIGURES,
    },
}
_RUN_ROW = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "started_utc": {"type": "string"},
        "status": {"type": "string"},
        "ranks": {"type": ["integer", "null"]},
        "launches": {"type": ["integer", "null"]},
        "points": {"type": "integer"},
        "collectives": {"type": "array", "description": "[test, processes, size (B), median (us)]"},
        **_FIGURES,
    },
}


def _get(summary: str, schema: dict, params: list[dict] | None = None) -> dict:
    out = {
        "get": {
            "summary": summary,
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {"schema": schema}}},
                "401": {"description": "a private hub without a read token", "content": _err()},
                "404": {"description": "no such cluster or run", "content": _err()},
            },
        }
    }
    if params:
        out["get"]["parameters"] = params
    return out


def _err() -> dict:
    return {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


def _path(name: str, what: str) -> dict:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}, "description": what}


def _query(name: str, what: str) -> dict:
    return {"name": name, "in": "query", "required": True, "schema": {"type": "string"}, "description": what}


SIDE = "a cluster's name (its latest run) or run/ID"
SCHEMA = {
    "openapi": "3.1.0",
    "info": {"title": "SCOPE results hub", "version": __version__, "description": "Runs that clusters push, compared."},
    "components": {
        "schemas": {"Error": _ERROR, "ClusterRow": _CLUSTER_ROW, "RunRow": _RUN_ROW},
        "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
    },
    "paths": {
        "/api/health": _get("the hub is up: how many clusters and runs it holds", {"type": "object"}),
        "/api/clusters": _get(
            "every cluster with its runs, last push and its latest run's headline figures",
            {
                "type": "object",
                "properties": {"clusters": {"type": "array", "items": {"$ref": "#/components/schemas/ClusterRow"}}},
            },
        ),
        "/api/clusters/{name}": _get(
            "one cluster: its runs in time order (the newest 500), each with its figures and intervals",
            {
                "type": "object",
                "properties": {"history": {"type": "array", "items": {"$ref": "#/components/schemas/RunRow"}}},
            },
            [_path("name", "the cluster's name")],
        ),
        "/api/compare": _get(
            "two runs point by point (compare's rows: ratio B/A, interval, Holm-adjusted p, verdict), their layers",
            {"type": "object"},
            [_query("a", SIDE), _query("b", SIDE)],
        ),
        "/api/runs/{id}": _get(
            "one run as `scope export --format json` writes it (docs/json.md)",
            {"type": "object"},
            [_path("id", "run id")],
        ),
        "/api/runs/{id}/bundle": {
            "get": {
                "summary": "one run's bundle (gzip'd JSON, what `scope import` reads)",
                "parameters": [_path("id", "run id")],
                "responses": {"200": {"description": "the bundle", "content": {"application/gzip": {}}}},
            }
        },
        "/api/runs": {
            "post": {
                "summary": "push a run: its bundle (`scope export --format bundle`), with the cluster's push token",
                "security": [{"token": []}],
                "parameters": [
                    {
                        "name": "X-Scope-Cluster",
                        "in": "header",
                        "required": False,
                        "schema": {"type": "string"},
                        "description": "the cluster the pusher means; refused when the token is another's",
                    }
                ],
                "requestBody": {"required": True, "content": {"application/gzip": {}, "application/json": {}}},
                "responses": {
                    "201": {"description": "stored", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "200": {"description": "this run was stored before: nothing stored again"},
                    "400": {"description": "not a whole run bundle: nothing stored", "content": _err()},
                    "401": {"description": "no live push token", "content": _err()},
                    "403": {"description": "a read token, or another cluster's", "content": _err()},
                    "413": {"description": "over the hub's upload limit", "content": _err()},
                },
            }
        },
    },
}


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
