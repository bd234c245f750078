"""What keeps the hub standing under attack and under load (issue 67), apart from its routes:
errors that carry their status, the headers every answer carries, heavy work bounded (429 when
busy), one drawing per run however many ask at once, bodies read with a size and a time limit,
and the memory a push may take while it is inflated."""

from __future__ import annotations

import asyncio
import contextlib
import threading

from starlette.datastructures import MutableHeaders
from starlette.requests import Request

# Hub pages carry no script; a run's report carries its one self-check (views/report.py)
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
REPORT_CSP = CSP + "; script-src 'unsafe-inline'"
BODY_IDLE_S = 30.0  # a client that sends nothing of its body for this long is answered 408


class HubError(Exception):
    """An answer other than 200, raised where it is known: its status, the reason and a hint."""

    def __init__(self, status: int, message: str, hint: str = "", retry_after: int | None = None):
        super().__init__(message)
        self.status, self.message, self.hint, self.retry_after = status, message, hint, retry_after


MAX_ID = 2**31 - 1  # an id in a path: PostgreSQL's integer


def path_id(text: str, what: str, hint: str = "") -> int:
    """An id from a request (a run's, a series', an alert's): digits within MAX_ID, else a 404
    naming what was not found."""
    if not (text.isascii() and text.isdigit() and len(text) <= 10 and 0 < int(text) <= MAX_ID):
        raise HubError(404, f"no {what} {text[:40]!r} on this hub", hint)
    return int(text)


def busy(what: str) -> HubError:
    return HubError(429, f"the hub is busy {what}", "try again in a few seconds", retry_after=5)


class Gate:
    """At most `most` of one heavy kind of work at once in a worker (comparisons, first drawings
    of a report); one more is answered 429, so anonymous readers cannot hold every thread."""

    def __init__(self, most: int, what: str):
        self.slots, self.what = threading.BoundedSemaphore(most), what

    @contextlib.contextmanager
    def __call__(self):
        if not self.slots.acquire(blocking=False):
            raise busy(self.what)
        try:
            yield
        finally:
            self.slots.release()


class OnePerKey:
    """Requests for the same key wait for the one already making it (a run's report is drawn once
    however many readers ask for it together); other keys go on."""

    def __init__(self):
        self.lock, self.held = threading.Lock(), {}

    @contextlib.contextmanager
    def __call__(self, key):
        with self.lock:
            entry = self.held.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self.lock:
                entry[1] -= 1
                if entry[1] == 0:
                    del self.held[key]


def bearer(request: Request) -> str | None:
    """The token of the Authorization header: the only way a push is authorised."""
    h = request.headers.get("authorization", "")
    return h[7:].strip() if h[:7].lower() == "bearer " else None


class Inflation:
    """The memory a push takes while it is decompressed, one budget per worker: any number of
    pushes may inflate to FREE bytes at once; past that a push takes the worker's one large slot
    (waiting for it), so six gzip bombs at once hold one bomb's memory, not six."""

    FREE = 8 << 20

    def __init__(self, large: threading.Lock):
        self.large, self.held = large, False

    def grew(self, size: int) -> None:
        if size > self.FREE:
            self.take()

    def take(self) -> None:
        if not self.held:
            self.large.acquire()
            self.held = True

    def done(self) -> None:
        if self.held:
            self.large.release()
            self.held = False


async def body(request: Request, most: int, too_large: HubError, drained: int = 0) -> bytes:
    """A request's body, at most `most` bytes (else `too_large`, once what was sent is read to
    `drained` bytes, so a client that sends before it reads sees the answer), a client idle for
    BODY_IDLE_S mid-body answered 408."""
    got = bytearray()
    chunks = request.stream().__aiter__()
    while True:
        try:
            chunk = await asyncio.wait_for(chunks.__anext__(), BODY_IDLE_S)
        except StopAsyncIteration:
            return bytes(got)
        except asyncio.TimeoutError:
            raise HubError(408, f"the request's body stopped for {BODY_IDLE_S:g} s", "send it whole") from None
        got += chunk
        if len(got) > most:
            if drained > len(got):
                await drain(request, drained - len(got))
            raise too_large


async def drain(request: Request, most: int) -> None:
    """Reads and drops what is left of the request's body, at most `most` bytes."""
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen >= most:
            return


class Headers:
    """ASGI middleware: every answer says what it is and may not be (nosniff, no referrer, never
    framed, a Content-Security-Policy unless its route set one), and a private hub's answers, and
    the login form, are never kept by a cache."""

    def __init__(self, app, private: bool):
        self.app, self.private = app, private

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")

        async def sending(message):
            if message["type"] == "http.response.start":
                h = MutableHeaders(scope=message)
                h.setdefault("Content-Security-Policy", CSP)
                h["X-Content-Type-Options"] = "nosniff"
                h["Referrer-Policy"] = "no-referrer"
                h["X-Frame-Options"] = "DENY"
                if self.private or path in ("/login", "/logout"):
                    h["Cache-Control"] = "no-store"
            await send(message)

        return await self.app(scope, receive, sending)
