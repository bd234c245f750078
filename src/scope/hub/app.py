"""`scope hub serve`: the results hub as an ASGI application (Starlette), its pages and its JSON
API over one database (hub/db.py).  Every handler that touches the database is synchronous and
runs in Starlette's thread pool; only request bodies are read asynchronously, so a slow client
holds no thread while its bytes arrive.  Handlers raise HubError with their status; one handler
answers JSON under /api and a page elsewhere (hub/guard.py has the limits and headers)."""

from __future__ import annotations

import logging
import os
import threading
import urllib.parse
from dataclasses import dataclass

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from scope.analysis.headline import trend
from scope.errors import ScopeError
from scope.hub import db, events, listing, metrics, pages, series, tokens
from scope.hub.alerting import Alerting
from scope.hub.announcing import Announcing
from scope.hub.answers import HANDLERS, as_json, as_typed
from scope.hub.comparing import Comparing, run_id
from scope.hub.guard import REPORT_CSP, Gate, Headers, HubError, OnePerKey, bearer, body
from scope.hub.kept import Pages, draw_report
from scope.hub.metrics import Timed
from scope.hub.openapi import SCHEMA, Cluster, ClusterList, Health, api_page, typed
from scope.hub.picking import Picking
from scope.hub.pushes import Pushes
from scope.hub.runs import UPLOAD_LIMIT, cluster_changes, regression, run_json
from scope.hub.sending import Alerter
from scope.hub.tables import FIGURES
from scope.version import __version__

log = logging.getLogger("scope.hub")
COOKIE = "scope_hub"
LOGIN_BODY = 4096  # a token form: a few hundred bytes


@dataclass
class Config:
    url: str | None = None
    private: bool = False
    upload_limit: int = UPLOAD_LIMIT
    public_url: str = ""  # the address readers reach the hub at (links in answers); none: relative

    @classmethod
    def from_env(cls) -> Config:
        return cls(
            url=os.environ.get("SCOPE_HUB_DB") or None,
            private=os.environ.get("SCOPE_HUB_PRIVATE") == "1",
            upload_limit=int(os.environ.get("SCOPE_HUB_UPLOAD_LIMIT") or UPLOAD_LIMIT),
            public_url=(os.environ.get("SCOPE_HUB_PUBLIC_URL") or "").rstrip("/"),
        )


class Hub(Pushes, Comparing, Picking, Alerting, Announcing):
    def __init__(self, config: Config):
        self.config = config
        self.engine = db.open_engine(config.url)
        db.migrate(self.engine)
        self.pages = Pages()
        self.comparisons = Pages(most=64)  # runs never change: a comparison computed is kept
        self.large = threading.Lock()  # the worker's one large push at a time (guard.Inflation)
        self.comparing = Gate(2, "comparing runs")
        self.drawing = Gate(2, "drawing reports")
        self.report_of = OnePerKey()
        self.alerter = Alerter(self.engine, config.public_url)  # judges new runs, sends alerts: never in a push
        self.alerter.start()
        self.metrics = metrics.Metrics(self)

    # ---------------------------------------------------------------- access

    def may_read(self, request: Request) -> None:
        """A private hub answers a reader with a live read token, or a live session, only."""
        if not self.config.private:
            return
        if tokens.reader(self.engine, bearer(request)) or tokens.in_session(self.engine, request.cookies.get(COOKIE)):
            return
        raise HubError(401, "this hub is private: give a read token", "send Authorization: Bearer TOKEN, or log in")

    def _page(self, request: Request, make) -> Response:
        self.may_read(request)
        made = make()
        return made if isinstance(made, Response) else HTMLResponse(made)

    def _api(self, request: Request, make) -> Response:
        self.may_read(request)
        made = make()  # a document kept as its bytes (Pages), or one made for this request
        return Response(made, media_type="application/json") if isinstance(made, bytes) else as_json(made)

    # ---------------------------------------------------------------- pages

    def home(self, request: Request) -> Response:
        key = ("list page", db.list_version(self.engine))  # never the request's Host: that fills no cache
        return self._page(request, lambda: self.pages.get(key, self._home))

    def _home(self) -> str:
        return pages.clusters_page(self._list(), self.config.public_url)

    def _list(self) -> list[dict]:
        return self.pages.get(("list", db.list_version(self.engine)), self._listed)

    def _listed(self) -> list[dict]:
        """The cluster list, each with its regression badge from its own page's changes (drawn
        once a push and kept, so the list reads them rather than judging every history again)."""
        rows = listing.cluster_list(self.engine)
        for r in rows:
            try:
                changes = msgspec.json.decode(self._drawn(r["name"], "json")).get("changes") or []
            except (HubError, msgspec.DecodeError):
                changes = []
            r["regression"] = regression(changes)
            for f in FIGURES:
                r[f"{f}_change"] = trend(r[f"{f}_trend"])
        return rows

    def cluster_page(self, request: Request) -> Response:
        return self._page(request, lambda: self._drawn(request.path_params["name"], "page").decode())

    def _cluster_id(self, name: str) -> tuple[int, str]:
        """A cluster's id and its version's key (a new push or a new scope draws it again)."""
        version = db.cluster_version(self.engine, name) if db.CLUSTER_NAME.fullmatch(name) else None
        if version is None:
            raise HubError(404, f"no cluster {name[:80]!r} on this hub")
        return version[0], "|".join(map(str, (__version__, *version[1:])))

    def _drawn(self, name: str, kind: str) -> bytes:
        """A cluster's page or JSON: drawn once a push (at the push, kept in the database for
        every worker, and here in memory), never once a reader; drawn again by a new scope."""
        cid, key = self._cluster_id(name)
        return self.pages.get((cid, kind, key), lambda: self._fetch_or_draw(name, cid, kind, key))

    def _fetch_or_draw(self, name: str, cid: int, kind: str, key: str) -> bytes:
        body = db.drawn_body(self.engine, cid, kind, key)
        if body is None:
            c = db.cluster(self.engine, name)
            if c is None:
                raise HubError(404, f"no cluster {name[:80]!r} on this hub")
            with self.engine.connect() as conn:
                c["events"] = events.listed(conn, cid)
            c["changes"] = cluster_changes(c)
            self.read_series(cid)
            with self.engine.connect() as conn:
                c["series"] = series.listed(conn, cid)
            body = pages.cluster_page(c).encode() if kind == "page" else typed(c, Cluster)
            db.keep_drawn(self.engine, cid, kind, key, body)  # best effort: served either way
        return body

    def draw_cluster(self, name: str) -> None:
        """Both of a cluster's documents drawn for its new version (after a push)."""
        for kind in ("page", "json"):
            self._drawn(name, kind)

    def run_page(self, request: Request) -> Response:
        def make():
            rid = self._existing(request.path_params["id"])
            html = db.report_of(self.engine, rid)
            if html is None:
                with self.report_of(rid):  # readers asking together wait for the one drawing
                    html = db.report_of(self.engine, rid) or self._draw(rid)
            return HTMLResponse(html, headers={"Content-Security-Policy": REPORT_CSP})

        return self._page(request, make)

    def _draw(self, rid: int) -> bytes:
        with self.drawing():
            try:
                row = db.run_row(self.engine, rid) or {}
                html = draw_report(db.bundle_of(self.engine, rid), rid, row.get("cluster"))
            except ScopeError as e:
                log.warning("scope hub: %s", e.message)
                raise HubError(
                    500, f"the report of run {rid} cannot be drawn", "its JSON and bundle still serve"
                ) from None
        db.keep_report(self.engine, rid, html)
        return html

    def _existing(self, text: str) -> int:
        rid = run_id(text)
        if db.run_row(self.engine, rid) is None:
            raise HubError(404, f"no run {rid} on this hub")
        return rid

    def login(self, request: Request) -> Response:
        return HTMLResponse(pages.message_page("Read token", "Give a read token to open this hub.", True))

    async def login_post(self, request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
            raise HubError(415, "the login form is sent as application/x-www-form-urlencoded", "use the form at /login")
        form = await body(request, LOGIN_BODY, HubError(413, "a login is a token, not an upload"))
        token = (urllib.parse.parse_qs(form.decode("latin-1")).get("token") or [""])[0]
        sid = await run_in_threadpool(tokens.open_session, self.engine, token.strip())
        if sid is None:
            raise HubError(401, "that is not a live read token of this hub", "a push token does not open pages")
        resp = RedirectResponse("/", status_code=303)
        secure = request.url.scheme == "https"
        resp.set_cookie(
            COOKIE, sid, max_age=tokens.SESSION_HOURS * 3600, httponly=True, samesite="strict", secure=secure
        )
        return resp

    def logout(self, request: Request) -> Response:
        tokens.close_session(self.engine, request.cookies.get(COOKIE))
        resp = RedirectResponse("/login" if self.config.private else "/", status_code=303)
        resp.delete_cookie(COOKIE)
        return resp

    # ---------------------------------------------------------------- API

    def api_clusters(self, request: Request) -> Response:
        return self._api(request, lambda: self.pages.get(("list JSON", db.list_version(self.engine)), self._list_doc))

    def _list_doc(self) -> bytes:
        return typed({"clusters": self._list()}, ClusterList)

    def api_cluster(self, request: Request) -> Response:
        return self._api(request, lambda: self._drawn(request.path_params["name"], "json"))

    def api_run(self, request: Request) -> Response:
        return self._run_document(request, run_json, "application/json")

    def api_bundle(self, request: Request) -> Response:
        return self._run_document(request, lambda data: data, "application/gzip")

    def _run_document(self, request: Request, made, media: str) -> Response:
        """A stored run as `made` makes it from its bundle: its JSON, or the bundle itself."""
        self.may_read(request)
        rid = self._existing(request.path_params["id"])
        return Response(made(db.bundle_of(self.engine, rid)), media_type=media)

    def api_schema(self, request: Request) -> Response:
        self.may_read(request)
        return as_json(SCHEMA)

    def api_docs(self, request: Request) -> Response:
        return self._page(request, api_page)

    def metrics_text(self, request: Request) -> Response:
        """The hub's figures, alerts and request times for Prometheus (hub/metrics.py)."""
        self.may_read(request)
        return Response(self.metrics.text(), media_type=metrics.MEDIA)

    def api_health(self, request: Request) -> Response:
        try:
            self.may_read(request)
        except HubError:
            return as_typed({"ok": True}, Health)  # a private hub says it is up, and nothing more
        return as_typed({"ok": True, **db.counts(self.engine)}, Health)


def create(config: Config | None = None) -> Starlette:
    hub = Hub(config or Config.from_env())
    routes = [
        Route("/", hub.home),
        Route("/clusters/{name}", hub.cluster_page),
        Route("/clusters/{name}/series", hub.series_page),
        Route("/clusters/{name}/alerts", hub.alerts_page),
        Route("/clusters/{name}/alerts.atom", hub.alerts_feed),
        Route("/compare", hub.compare_page),
        Route("/runs/{id}", hub.run_page),
        Route("/login", hub.login, methods=["GET"]),
        Route("/login", hub.login_post, methods=["POST"]),
        Route("/logout", hub.logout, methods=["GET", "POST"]),
        Route("/docs/api", hub.api_docs),
        Route("/favicon.ico", lambda request: Response(status_code=204)),  # a browser asks on every page
        Route("/openapi.json", hub.api_schema),
        Route("/api/health", hub.api_health),
        Route("/api/clusters", hub.api_clusters),
        Route("/api/clusters/{name}", hub.api_cluster),
        Route("/api/clusters/{name}/series", hub.api_series_list),
        Route("/api/clusters/{name}/series/{id}", hub.api_series),
        Route("/api/clusters/{name}/alerts", hub.api_alerts),
        Route("/api/alerts/{id}", hub.api_triage, methods=["POST"]),
        Route("/api/clusters/{name}/events", hub.events_route, methods=["GET", "POST"]),
        Route("/api/clusters/{name}/rules", hub.api_add_rule, methods=["POST"]),
        Route("/api/rules/{id}", hub.api_remove_rule, methods=["DELETE"]),
        Route("/api/compare", hub.api_compare),
        Route("/api/runs", hub.api_push, methods=["POST"]),
        Route("/api/runs/{id}", hub.api_run),
        Route("/api/runs/{id}/bundle", hub.api_bundle),
        Route("/metrics", hub.metrics_text),
    ]
    app = Starlette(routes=routes, exception_handlers=HANDLERS)
    app.add_middleware(Headers, private=hub.config.private)
    app.add_middleware(Timed, metrics=hub.metrics, routes=routes)
    app.state.hub = hub
    return app


def from_env() -> Starlette:
    """The application as a uvicorn worker builds it (`scope hub serve --workers N`)."""
    return create(Config.from_env())
