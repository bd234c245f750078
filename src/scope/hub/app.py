"""`scope hub serve`: the results hub as an ASGI application (Starlette), its pages and its JSON
API over one database (hub/db.py).  Every handler that touches the database is synchronous and
runs in Starlette's thread pool; only the upload is read asynchronously, so a slow client holds
no thread while its bytes arrive."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from dataclasses import dataclass

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from scope.errors import ScopeError
from scope.hub import db, pages, tokens
from scope.hub.kept import Pages, draw_report
from scope.hub.openapi import SCHEMA, api_page
from scope.hub.runs import UPLOAD_LIMIT, cluster_changes, compared, ingest, run_json
from scope.version import __version__

log = logging.getLogger("scope.hub")
COOKIE = "scope_hub"
LARGE_PUSH = 1 << 20  # bytes on the wire
# Hub pages carry no script; a run's report carries its one self-check (views/report.py)
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
REPORT_CSP = CSP + "; script-src 'unsafe-inline'"


@dataclass
class Config:
    url: str | None = None
    private: bool = False
    upload_limit: int = UPLOAD_LIMIT

    @classmethod
    def from_env(cls) -> Config:
        return cls(
            url=os.environ.get("SCOPE_HUB_DB") or None,
            private=os.environ.get("SCOPE_HUB_PRIVATE") == "1",
            upload_limit=int(os.environ.get("SCOPE_HUB_UPLOAD_LIMIT") or UPLOAD_LIMIT),
        )


def _json(obj, status: int = 200) -> Response:
    # msgspec: strict JSON (a NaN or an infinity is null), a cluster of 500 runs in 1 ms, not 20
    return Response(msgspec.json.encode(obj), status_code=status, media_type="application/json")


# A push over the limit is read to its end (up to this many times the limit) before the 413 is
# sent: a client that sends its whole body before reading the answer (urllib, requests) would
# otherwise meet a closed connection, a broken pipe, and never see why (CI saw it under load).
DRAINED = 8


async def _drain(request: Request, most: int) -> None:
    """Reads and drops what is left of the request's body, at most `most` bytes."""
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen >= most:
            return


def _error(status: int, message: str, hint: str = "", html: bool = False) -> Response:
    if html:
        page = pages.message_page("Not available" if status != 401 else "Read token needed", message, status == 401)
        return HTMLResponse(page, status_code=status, headers={"Content-Security-Policy": CSP})
    return _json({"error": message, "hint": hint}, status)


def _bearer(request: Request) -> str | None:
    """The token of the Authorization header: the only way a push is authorised."""
    h = request.headers.get("authorization", "")
    return h[7:].strip() if h[:7].lower() == "bearer " else None


def _token(request: Request) -> str | None:
    """A reader's token: the header's, or the browser's cookie."""
    return _bearer(request) or request.cookies.get(COOKIE)


class Hub:
    def __init__(self, config: Config):
        self.config = config
        self.engine = db.open_engine(config.url)
        db.migrate(self.engine)
        self.pages = Pages()
        self.large = threading.Lock()

    # ---------------------------------------------------------------- access

    def readable(self, request: Request) -> bool:
        return not self.config.private or tokens.token_of(self.engine, _token(request)) is not None

    def _page(self, request: Request, make) -> Response:
        if not self.readable(request):
            return _error(401, "this hub is private: give a read token", html=True)
        try:
            body = make()
        except LookupError as e:
            return _error(404, str(e.args[0]), html=True)
        if isinstance(body, Response):
            return body
        return HTMLResponse(body, headers={"Content-Security-Policy": CSP})

    def _api(self, request: Request, make) -> Response:
        if not self.readable(request):
            return _error(401, "this hub is private", "send Authorization: Bearer TOKEN (a read token)")
        try:
            made = make()  # a document kept as its bytes (Pages), or one made for this request
            return Response(made, media_type="application/json") if isinstance(made, bytes) else _json(made)
        except LookupError as e:
            return _error(404, str(e.args[0]))
        except ScopeError as e:
            return _error(400, e.message, e.hint or "")

    # ---------------------------------------------------------------- pages

    def home(self, request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        key = ("list page", base, db.list_version(self.engine))
        return self._page(request, lambda: self.pages.get(key, lambda: pages.clusters_page(self._list(), base)))

    def _list(self) -> list[dict]:
        return self.pages.get(("list", db.list_version(self.engine)), lambda: db.cluster_list(self.engine))

    def cluster_page(self, request: Request) -> Response:
        name = request.path_params["name"]
        return self._page(request, lambda: self._drawn(name, "page").decode())

    def _drawn(self, name: str, kind: str) -> bytes:
        """A cluster's page or JSON: drawn once a push (at the push, kept in the database for
        every worker, and here in memory), never once a reader."""
        version = db.cluster_version(self.engine, name) if db.CLUSTER_NAME.fullmatch(name) else None
        if version is None:
            raise LookupError(f"no cluster {name!r} on this hub")
        cid, key = version[0], "|".join(map(str, (__version__, *version[1:])))  # an upgrade draws it anew
        return self.pages.get((cid, kind, key), lambda: self._fetch_or_draw(name, cid, kind, key))

    def _fetch_or_draw(self, name: str, cid: int, kind: str, key: str) -> bytes:
        body = db.drawn_body(self.engine, cid, kind, key)
        if body is None:
            c = db.cluster(self.engine, name)
            if c is None:
                raise LookupError(f"no cluster {name!r} on this hub")
            c["changes"] = cluster_changes(c)
            body = pages.cluster_page(c).encode() if kind == "page" else msgspec.json.encode(c)
            db.keep_drawn(self.engine, cid, kind, key, body)
        return body

    def draw_cluster(self, name: str) -> None:
        """Both of a cluster's documents drawn for its new version (after a push)."""
        for kind in ("page", "json"):
            self._drawn(name, kind)

    def compare_page(self, request: Request) -> Response:
        a, b = request.query_params.get("a"), request.query_params.get("b")

        def make():
            names = [r["name"] for r in self._list()]
            if not a or not b:
                return pages.compare_page(a, b, names)
            try:
                ra, rb, result = self._compared(a, b)
            except (LookupError, ScopeError) as e:
                return pages.compare_page(a, b, names, error=getattr(e, "message", None) or e.args[0])
            return pages.compare_page(a, b, names, ra, rb, result)

        return self._page(request, make)

    def _side(self, ref: str) -> dict:
        """A run named as run/ID, or a cluster (its latest run)."""
        if ref.startswith("run/") and ref[4:].isascii() and ref[4:].isdigit() and len(ref) < 24:
            rid = int(ref[4:])
        elif db.CLUSTER_NAME.fullmatch(ref):
            rid = db.latest_run(self.engine, ref)
            if rid is None:
                raise LookupError(f"no cluster {ref!r} with runs on this hub")
        else:
            raise LookupError(f"{ref!r} is neither a cluster name nor run/ID")
        row = db.run_row(self.engine, rid)
        if row is None:
            raise LookupError(f"no run {rid} on this hub")
        return row

    def _compared(self, a: str, b: str):
        ra, rb = self._side(a), self._side(b)
        if ra["id"] == rb["id"]:
            raise LookupError(f"{a} and {b} are the same run (run {ra['id']}): compare two")
        result = compared(db.bundle_of(self.engine, ra["id"]), db.bundle_of(self.engine, rb["id"]))
        return _public(ra), _public(rb), result

    def run_page(self, request: Request) -> Response:
        def make():
            rid = self._run_id(request)
            html = db.report_of(self.engine, rid)
            if html is None:
                html = draw_report(db.bundle_of(self.engine, rid), rid)
                db.keep_report(self.engine, rid, html)
            return HTMLResponse(html, headers={"Content-Security-Policy": REPORT_CSP})

        return self._page(request, make)

    def _run_id(self, request: Request) -> int:
        text = request.path_params["id"]
        if not (text.isascii() and text.isdigit() and len(text) < 19) or db.run_row(self.engine, int(text)) is None:
            raise LookupError(f"no run {text!r} on this hub")
        return int(text)

    def login(self, request: Request) -> Response:
        return HTMLResponse(pages.message_page("Read token", "Give a read token to open this hub.", True))

    async def login_post(self, request: Request) -> Response:
        form = await request.form()
        token = str(form.get("token") or "")
        known = await run_in_threadpool(tokens.token_of, self.engine, token)
        if known is None:
            return _error(401, "that token is not a live token of this hub", html=True)
        resp = RedirectResponse("/", status_code=303)
        resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return resp

    # ---------------------------------------------------------------- API

    def api_clusters(self, request: Request) -> Response:
        return self._api(request, lambda: self.pages.get(("list JSON", db.list_version(self.engine)), self._list_doc))

    def _list_doc(self) -> bytes:
        return msgspec.json.encode({"clusters": self._list()})

    def api_cluster(self, request: Request) -> Response:
        return self._api(request, lambda: self._drawn(request.path_params["name"], "json"))

    def api_compare(self, request: Request) -> Response:
        a, b = request.query_params.get("a") or "", request.query_params.get("b") or ""

        def make():
            ra, rb, result = self._compared(a, b)
            layers = [[pages._layer(x) for x in side] for side in result["layers"]]
            return {"a": ra, "b": rb, "rows": result["rows"], "machine": result["shifts"], "layers": layers}

        return self._api(request, make)

    def api_run(self, request: Request) -> Response:
        return self._run_document(request, run_json, "application/json")

    def api_bundle(self, request: Request) -> Response:
        return self._run_document(request, lambda data: data, "application/gzip")

    def _run_document(self, request: Request, made, media: str) -> Response:
        """A stored run as `made` makes it from its bundle: its JSON, or the bundle itself."""
        if not self.readable(request):
            return _error(401, "this hub is private", "send Authorization: Bearer TOKEN (a read token)")
        try:
            rid = self._run_id(request)
        except LookupError as e:
            return _error(404, e.args[0])
        return Response(made(db.bundle_of(self.engine, rid)), media_type=media)

    def api_schema(self, request: Request) -> Response:
        return _json(SCHEMA)

    def api_docs(self, request: Request) -> Response:
        return HTMLResponse(api_page(), headers={"Content-Security-Policy": CSP})

    async def api_push(self, request: Request) -> Response:
        token = _bearer(request)  # never the browser's cookie: a page cannot push for its reader
        tok = await run_in_threadpool(tokens.token_of, self.engine, token)
        if tok is None:
            return _error(401, "no live push token given", "send Authorization: Bearer TOKEN ('scope hub token add')")
        if tok["kind"] != "push":
            return _error(403, "a read token cannot push", "use the cluster's push token")
        claimed = request.headers.get("x-scope-cluster")
        if claimed is not None and claimed != tok["cluster"]:
            return _error(403, "this token pushes to another cluster", "use the token made for that cluster")
        limit = self.config.upload_limit
        too_large = _error(413, f"a push is at most {limit >> 20} MiB", "push a smaller run")
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            if declared.isdigit() and int(declared) <= DRAINED * limit:
                await _drain(request, DRAINED * limit)
            return too_large
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                await _drain(request, DRAINED * limit - len(body))
                return too_large
        try:
            rid, new = await run_in_threadpool(self._store, tok["cluster_id"], tok["cluster"], bytes(body), token)
        except ScopeError as e:
            return _error(400, e.message, e.hint or "")
        url = f"{str(request.base_url).rstrip('/')}/runs/{rid}"
        return _json({"id": rid, "cluster": tok["cluster"], "stored": new, "url": url}, 201 if new else 200)

    def _store(self, cluster_id: int, cluster: str, body: bytes, token: str) -> tuple[int, bool]:
        # a push holds ~16x its size while it is read (a 10 MB one 166 MB): large ones one at a
        # time, so a worker's memory stays bounded however many arrive together
        with self.large if len(body) > LARGE_PUSH else contextlib.nullcontext():
            digest, row, data = ingest(body, self.config.upload_limit, token)
        rid, new = db.store_run(self.engine, cluster_id, digest, row, data)
        if new:
            try:
                self.draw_cluster(cluster)  # its readers find it drawn
            except Exception:  # noqa: BLE001 - stored whatever the drawing does: a reader draws it again
                log.exception("scope hub: run %d of %s is stored; drawing its cluster's page failed", rid, cluster)
        return rid, new

    def api_health(self, request: Request) -> Response:
        return _json({"ok": True, **db.counts(self.engine)})


def _public(row: dict) -> dict:
    keep = ("id", "cluster", "started_utc", "pushed_utc", "status", "label", "ranks", "mpi", "launches", "points")
    return {k: row[k] for k in keep}


def create(config: Config | None = None) -> Starlette:
    hub = Hub(config or Config.from_env())
    routes = [
        Route("/", hub.home),
        Route("/clusters/{name}", hub.cluster_page),
        Route("/compare", hub.compare_page),
        Route("/runs/{id}", hub.run_page),
        Route("/login", hub.login, methods=["GET"]),
        Route("/login", hub.login_post, methods=["POST"]),
        Route("/docs/api", hub.api_docs),
        Route("/favicon.ico", lambda request: Response(status_code=204)),  # a browser asks on every page
        Route("/openapi.json", hub.api_schema),
        Route("/api/health", hub.api_health),
        Route("/api/clusters", hub.api_clusters),
        Route("/api/clusters/{name}", hub.api_cluster),
        Route("/api/compare", hub.api_compare),
        Route("/api/runs", hub.api_push, methods=["POST"]),
        Route("/api/runs/{id}", hub.api_run),
        Route("/api/runs/{id}/bundle", hub.api_bundle),
    ]
    app = Starlette(routes=routes)
    app.state.hub = hub
    return app


def from_env() -> Starlette:
    """The application as a uvicorn worker builds it (`scope hub serve --workers N`)."""
    return create(Config.from_env())
