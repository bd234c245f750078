"""A cluster's alerts on the hub (issue 71): the page (`/clusters/NAME/alerts`, with triage's
precision beside the threshold), the Atom feed (`/clusters/NAME/alerts.atom`), the JSON
(`/api/clusters/NAME/alerts`) and triage (`POST /api/alerts/ID` with the cluster's push token).
A mixin of the hub's Hub (hub/app.py), which owns the engine."""

from __future__ import annotations

from xml.sax.saxutils import escape

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from scope.hub import alerts, db, pages, series, tokens
from scope.hub.answers import as_typed
from scope.hub.documents import AlertList, Triaged, plain
from scope.hub.guard import HubError, bearer, body, path_id
from scope.hub.sending import message

TRIAGE_BODY = 4096  # bytes: a status and a note


class Alerting:
    """Mixed into Hub: `self.engine`, `self.config`, `self._page`, `self._api`, `self._cluster_id`."""

    def _alerts(self, name: str) -> tuple[list[dict], list[dict]]:
        cid, _ = self._cluster_id(name)
        with self.engine.connect() as conn:
            rows, rules = alerts.listed(conn, cid), alerts.rules(conn, cid)
        alerts.by_rule(rows, rules)
        return rows, rules

    def alerts_page(self, request: Request) -> Response:
        name = request.path_params["name"]

        def make():
            rows, rules = self._alerts(name)
            for a in rows:
                a["text"] = message([a], name, self.config.public_url)["text"]
                a["where"] = ", ".join(series.where(a))  # 8 B, 2 ranks, blocking=yes: as the picker says it
            return pages.alerts_page(name, rows, rules, alerts.precision(rows))

        return self._page(request, make)

    def api_alerts(self, request: Request) -> Response:
        name = request.path_params["name"]

        def make():
            rows, rules = self._alerts(name)
            shown = [{k: r[k] for k in ("id", "channel", "max_slowdown", "tests", "quiet", "triage")} for r in rules]
            return msgspec.json.encode(
                msgspec.convert({"alerts": rows, "rules": shown, "triage": alerts.precision(rows)}, AlertList,
                                strict=False)
            )  # fmt: skip

        return self._api(request, make)

    def alerts_feed(self, request: Request) -> Response:
        """The cluster's alerts as an Atom feed (RFC 4287), newest first."""
        name = request.path_params["name"]
        self.may_read(request)
        rows, _ = self._alerts(name)
        base = self.config.public_url or str(request.base_url).rstrip("/")
        entries = []
        for a in rows[:50]:
            m = message([a], name, base)
            entries.append(
                f"<entry><id>tag:scope-hub,2026:{escape(name)}/alert/{a['id']}</id><title>{escape(m['subject'])}</title>"
                f'<updated>{a["updated_utc"]}</updated><link href="{escape(m["json"]["alerts"][0]["url"])}"/>'
                f'<content type="text">{escape(m["text"])}</content></entry>'
            )
        updated = rows[0]["updated_utc"] if rows else db.now_utc()
        feed = (
            '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
            f"<id>tag:scope-hub,2026:{escape(name)}/alerts</id><title>SCOPE alerts: {escape(name)}</title>"
            f'<updated>{updated}</updated><link rel="self" href="{escape(base)}/clusters/{escape(name)}/alerts.atom"/>'
            f"<author><name>SCOPE hub</name></author>{''.join(entries)}</feed>"
        )
        return Response(feed, media_type="application/atom+xml")

    async def api_triage(self, request: Request) -> Response:
        """An alert set open, acknowledged (a real change), expected (a planned one) or false,
        with a note, by a holder of its cluster's push token."""
        aid = path_id(request.path_params["id"], "alert")
        tok = await run_in_threadpool(tokens.token_of, self.engine, bearer(request))
        if tok is None or tok["kind"] not in ("push", "admin"):
            raise HubError(
                401, "no live push or admin token given", "send Authorization: Bearer TOKEN (the cluster's push token)"
            )
        raw = await body(request, TRIAGE_BODY, HubError(413, "a triage is at most 4 KiB", "send a shorter note"))
        try:
            doc = msgspec.json.decode(raw, type=dict)
        except msgspec.DecodeError:
            raise HubError(400, "the body is not JSON", 'send {"status": "false", "note": "..."}') from None
        status, note = doc.get("status"), doc.get("note")
        if status not in alerts.STATUSES or not (note is None or plain(note, 1000)):
            said = f"status is one of {', '.join(alerts.STATUSES)}; a note 1000 characters at most, no control"
            raise HubError(400, said, 'e.g. {"status": "expected", "note": "MPICH upgrade"}')
        if not await run_in_threadpool(self._triage, aid, tok["cluster_id"], status, note):
            raise HubError(404, f"no alert {aid}" + (f" of cluster {tok['cluster']}" if tok["cluster"] else ""))
        return as_typed({"id": aid, "status": status}, Triaged)

    def _triage(self, aid: int, cluster_id: int | None, status: str, note: str | None) -> bool:
        with db.writing(self.engine) as conn:
            return alerts.triage(conn, aid, cluster_id, status, note, db.now_utc())
