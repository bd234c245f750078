"""The push (`POST /api/runs`): a mixin of the hub's Hub (hub/app.py), which owns the engine,
the config, the worker's large-push lock and the cluster drawings.  A push is authorised by its
bearer token alone, read with a size and a time limit, inflated within the worker's memory
budget, checked through and stored whole or not at all (hub/runs.py ingest, hub/db.py)."""

from __future__ import annotations

import logging

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from scope.hub import db, tokens
from scope.hub.answers import as_typed
from scope.hub.guard import HubError, Inflation, bearer, body, drain
from scope.hub.openapi import Pushed
from scope.hub.runs import ingest

log = logging.getLogger("scope.hub")
LARGE_PUSH = 1 << 20  # bytes on the wire
# A push over the limit is read to its end (up to this many times the limit) before the 413 is
# sent: a client that sends its whole body before reading the answer (urllib, requests) would
# otherwise meet a closed connection, a broken pipe, and never see why (CI saw it under load).
DRAINED = 8


class Pushes:
    """Mixed into Hub: `self.engine`, `self.config`, `self.large`, `self.draw_cluster`, `self.alerter`."""

    async def api_push(self, request: Request) -> Response:
        token = bearer(request)  # never the browser's cookie: a page cannot push for its reader
        tok = await run_in_threadpool(tokens.token_of, self.engine, token)
        limit = self.config.upload_limit
        refused = None
        if tok is None:
            refused = HubError(
                401, "no live push token given", "send Authorization: Bearer TOKEN ('scope hub token add')"
            )
        elif tok["kind"] != "push":
            refused = HubError(403, "a read token cannot push", "use the cluster's push token")
        elif request.headers.get("x-scope-cluster") not in (None, tok["cluster"]):
            refused = HubError(403, "this token pushes to another cluster", "use the token made for that cluster")
        if refused is not None:  # the body read away first (within the limit), so a client still
            declared = request.headers.get("content-length") or ""  # sending sees the answer, not EPIPE
            if declared.isdigit() and int(declared) <= limit:
                await drain(request, int(declared))
            raise refused
        too_large = HubError(413, f"a push is at most {limit >> 20} MiB", "push a smaller run")
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            if declared.isdigit() and int(declared) <= DRAINED * limit:
                await drain(request, DRAINED * limit)
            raise too_large
        data = await body(request, limit, too_large, drained=DRAINED * limit)
        rid, new = await run_in_threadpool(self._store, tok["cluster_id"], tok["cluster"], data, token)
        path = f"/runs/{rid}"
        url = self.config.public_url + path if self.config.public_url else path
        return as_typed({"id": rid, "cluster": tok["cluster"], "stored": new, "url": url}, Pushed, 201 if new else 200)

    def _store(self, cluster_id: int, cluster: str, data: bytes, token: str) -> tuple[int, bool]:
        # a push holds ~16x its size while it is read, and a gzip bomb up to 8x the upload limit:
        # past a few MB (on the wire, or inflated) one push at a time in a worker (guard.Inflation)
        inflation = Inflation(self.large)
        if len(data) > LARGE_PUSH:
            inflation.take()
        try:
            got = ingest(data, self.config.upload_limit, token, inflation.grew)
        finally:
            inflation.done()
        rid, new = db.store_run(self.engine, cluster_id, got.digest, got.row, got.bundle, got.points)
        if new:
            self.alerter.poke()  # judged after this answer, by the worker's alert thread
            try:
                self.draw_cluster(cluster)  # its readers find it drawn
            except Exception:  # noqa: BLE001 - stored whatever the drawing does: a reader draws it again
                log.exception("scope hub: run %d of %s is stored; drawing its cluster's page failed", rid, cluster)
        return rid, new
