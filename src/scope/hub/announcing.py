"""What a site tells its hub (issue 71), by the API as `scope hub event` and `scope hub alert` do
it by the database: known events (`/api/clusters/NAME/events`: read them; post one with the
cluster's push token or an admin token) and alert rules (`POST /api/clusters/NAME/rules`,
`DELETE /api/rules/ID`: an admin token).  A mixin of the hub's Hub (hub/app.py)."""

from __future__ import annotations

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from scope.errors import ScopeError
from scope.hub import alerts, db, events, tokens
from scope.hub.answers import as_typed
from scope.hub.documents import EventBody, EventList, Made, RuleBody
from scope.hub.guard import HubError, bearer, body, path_id

SAID_BODY = 16 << 10  # bytes: an event or a rule


async def holder(hub, request: Request, cluster: str | None, push: bool) -> dict:
    """The live token a change is made with: an admin token, or (`push`) `cluster`'s push token."""
    tok = await run_in_threadpool(tokens.token_of, hub.engine, bearer(request))
    if tok is None or tok["kind"] not in ("admin", "push"):
        who = "an admin token" + (" or the cluster's push token" if push else "")
        raise HubError(401, f"no live token for this: it needs {who}", "send Authorization: Bearer TOKEN "
                       "(scope hub token add --admin)")  # fmt: skip
    if tok["kind"] == "push" and not (push and tok["cluster"] == cluster):
        raise HubError(403, "this token may not do that", "an admin token (scope hub token add --admin)"
                       + (" or this cluster's push token" if push else ""))  # fmt: skip
    return tok


async def said(request: Request, kind):
    """A body as its type, the one the API's schema is made from (hub/documents.py): unknown
    fields, wrong types, values out of range and a null where the schema has none refused."""
    raw = await body(request, SAID_BODY, HubError(413, "at most 16 KiB", "send less"))
    try:
        return msgspec.json.decode(raw, type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise HubError(400, f"the body does not fit its schema: {str(e)[:200]}", "see /docs/api") from None


def _refused(e: ScopeError) -> HubError:
    return HubError(400, e.message, e.hint)


class Announcing:
    """Mixed into Hub: `self.engine`, `self._api`, `self._cluster_id`, `self.pages`."""

    async def events_route(self, request: Request) -> Response:
        """One route for both methods, so a 405 names both in its Allow header."""
        if request.method == "POST":
            return await self.api_announce(request)
        return await run_in_threadpool(self.api_events, request)

    def api_events(self, request: Request) -> Response:
        def make():
            cid, _ = self._cluster_id(request.path_params["name"])
            with self.engine.connect() as conn:
                return msgspec.json.encode(msgspec.convert({"events": events.listed(conn, cid)}, EventList))

        return self._api(request, make)

    async def api_announce(self, request: Request) -> Response:
        """An event announced: {"text": "MPICH 4.2 -> 5.0", "at": "2026-12-05T03:00Z", "bound": 0.3}."""
        name = request.path_params["name"]
        await holder(self, request, name, push=True)
        doc = await said(request, EventBody)
        try:
            text = events.check_text(doc.text)  # more than spaces: what the schema cannot say
            at = events.at_of(None if doc.at is msgspec.UNSET else doc.at)  # a date that could have been
            bound = events.check_bound(None if doc.bound is msgspec.UNSET else doc.bound)
        except ScopeError as e:
            raise _refused(e) from None
        return await self._made(name, lambda conn, cid, now: events.add_event(conn, cid, at, text, bound, now))

    async def api_add_rule(self, request: Request) -> Response:
        """A rule made: {"channel": "webhook", "target": URL, "max_slowdown": 0.05, "tests": [...],
        "quiet": "22:00-06:00"}; a secret in the target only as ${VAR}."""
        name = request.path_params["name"]
        await holder(self, request, name, push=False)
        doc = await said(request, RuleBody)
        channel, target, limit, tests = doc.channel, doc.target, doc.max_slowdown, doc.tests
        if not all(t.isprintable() for t in tests):
            raise HubError(400, "tests is a list of test name prefixes", '["p2p.", "coll.allreduce"]')
        try:
            alerts.check_target(channel, target)
            quiet = alerts.check_quiet(None if doc.quiet is msgspec.UNSET else doc.quiet)
        except ScopeError as e:
            raise _refused(e) from None
        return await self._made(
            name, lambda conn, cid, now: alerts.add_rule(conn, cid, channel, target, float(limit), tests, now, quiet)
        )

    async def _made(self, name: str, add) -> Response:
        """`add(conn, cluster id, now)` written for cluster `name` (404 when it has none): 201 with its id."""
        cid, _ = await run_in_threadpool(self._cluster_id, name)

        def write():
            with db.writing(self.engine) as conn:
                return add(conn, cid, db.now_utc())

        return as_typed({"id": await run_in_threadpool(write)}, Made, 201)

    async def api_remove_rule(self, request: Request) -> Response:
        rid = path_id(request.path_params["id"], "alert rule")
        await holder(self, request, None, push=False)

        def write():
            with db.writing(self.engine) as conn:
                return alerts.remove_rule(conn, rid, db.now_utc())

        if not await run_in_threadpool(write):
            raise HubError(404, f"no live alert rule {rid}", "see GET /api/clusters/NAME/alerts")
        return as_typed({"id": rid}, Made)
