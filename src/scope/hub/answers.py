"""How the hub answers what is not a 200: one handler per kind of failure, JSON under /api and a
page elsewhere, each with its status and a hint (Datasette's way: handlers only raise)."""

from __future__ import annotations

import logging

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from scope.errors import ScopeError
from scope.hub import db, pages
from scope.hub.guard import HubError
from scope.hub.openapi import typed

log = logging.getLogger("scope.hub")


def as_json(obj, status: int = 200, headers: dict | None = None) -> Response:
    # msgspec: strict JSON (a NaN or an infinity is null), a cluster of 500 runs in 1 ms, not 20
    return Response(msgspec.json.encode(obj), status_code=status, media_type="application/json", headers=headers)


def as_typed(doc, kind, status: int = 200) -> Response:
    """A document checked against its published type (hub/openapi.py), as JSON."""
    return Response(typed(doc, kind), status_code=status, media_type="application/json")


def is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path == "/openapi.json"


def answer(request: Request, status: int, message: str, hint: str = "", headers: dict | None = None) -> Response:
    """An error as the asker reads it: JSON under the API, a page elsewhere."""
    if is_api(request):
        return as_json({"error": message, "hint": hint}, status, headers)
    title = {401: "Read token needed", 429: "Busy", 503: "Storage unavailable"}.get(status, "Not available")
    page = pages.message_page(title, message + (f" ({hint})" if hint else ""), status == 401)
    return HTMLResponse(page, status_code=status, headers=headers)


async def hub_error(request: Request, e: HubError) -> Response:
    retry = {"Retry-After": str(e.retry_after)} if e.retry_after else None
    return answer(request, e.status, e.message, e.hint, retry)


async def bad_input(request: Request, e: ScopeError) -> Response:
    return answer(request, 400, e.message, e.hint or "")


async def storage(request: Request, e: Exception) -> Response:
    log.warning("scope hub: the database failed: %s", db.storage_reason(e))
    why = f"the hub's database cannot be used now: {db.storage_reason(e)}"
    return answer(request, 503, why, "try again later; a site's operator sees it in the log", {"Retry-After": "30"})


async def http(request: Request, e: HTTPException) -> Response:
    """Starlette's own answers (no such route, a method a route does not take), as ours."""
    what = {404: "no such page or API path", 405: f"{request.method} is not taken here"}.get(e.status_code, e.detail)
    return answer(request, e.status_code, what, "see /docs/api", e.headers)


async def internal(request: Request, e: Exception) -> Response:
    log.exception("scope hub: %s %s failed", request.method, request.url.path)
    return answer(request, 500, "the hub failed on this request", "its operator finds why in the hub's log")


HANDLERS = {HubError: hub_error, ScopeError: bad_input, HTTPException: http, Exception: internal}
HANDLERS.update({e: storage for e in db.STORAGE_ERRORS})
