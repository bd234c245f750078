"""`scope push`: stored runs uploaded to a hub as bundles, over HTTP(S) with the standard
library only (nothing beyond what scope installs).  The token comes from $SCOPE_HUB_TOKEN or a
file, never from the command line, where `ps` shows it (hub/target.py).  A hub that is down, slow or refusing
gets one line saying which, and a non-zero exit; a push is stored whole by the hub or not at all."""

from __future__ import annotations

import io
import json
import time
import urllib.error
import urllib.request

from scope.errors import ENVIRONMENT, ScopeError
from scope.secrets import SHORTEST
from scope.store import gz
from scope.views.fmt import safe

TIMEOUT_S = 120.0


def push(url: str, token: str, data: bytes, cluster: str | None = None, timeout: float = TIMEOUT_S) -> dict:
    """One bundle to the hub: its answer ({id, cluster, stored, url}).  A bundle that holds the
    token it is sent with is refused here, before anything is sent (store/bundle.py leaves every
    credential out; this is the second line)."""
    if len(token) >= SHORTEST and _holds(data, token.encode()):  # a shorter one is in any text
        raise ScopeError(
            "the run's bundle holds the push token itself; nothing was sent",
            "report this as a bug of scope, and revoke the token ('scope hub token revoke ID')",
        )
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/gzip",
        "User-Agent": "scope-push",
    }
    if cluster:
        headers["X-Scope-Cluster"] = cluster
    req = urllib.request.Request(f"{url}/api/runs", data=data, headers=headers, method="POST")
    for wait in RETRIES:
        try:
            return _located(url, _send(req, timeout))
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError):
            # dropped mid-push (a worker restarting, a proxy's reset): sent again, which is safe,
            # as the hub stores a run's content once
            time.sleep(wait)
    return _located(url, _send(req, timeout))


def _holds(data: bytes, needle: bytes) -> bool:
    """Whether a bundle's text holds `needle`, read a MiB at a time (a bundle of a large run is
    gigabytes of text, more than one piece of memory should hold); the plain text of a bundle
    that is not gzip'd as it is."""
    if data[:2] != b"\x1f\x8b":
        return needle in data
    tail = b""
    with gz.reader(io.BytesIO(data)) as f:
        while chunk := f.read(1 << 20):
            if needle in tail + chunk:
                return True
            tail = chunk[-(len(needle) - 1) :] if len(needle) > 1 else b""
    return False


def _located(url: str, answer: dict) -> dict:
    """The run's address as the pusher reaches the hub: a hub with no public address configured
    answers a path (never an address made from the request's Host header)."""
    where = answer.get("url") if isinstance(answer, dict) else None
    if isinstance(where, str) and where.startswith("/"):
        answer["url"] = url.rstrip("/") + where
    return answer


RETRIES = (0.5, 2.0)  # seconds before each retry of a push whose connection dropped


def _send(req, timeout: float) -> dict:
    url = req.full_url.rsplit("/api/runs", 1)[0]
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read(1 << 20))
    except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError):
        raise
    except urllib.error.HTTPError as e:
        raise ScopeError(*_refusal(e), ENVIRONMENT) from None
    except (TimeoutError, OSError) as e:  # URLError is an OSError; a socket timeout too
        why = getattr(e, "reason", e)
        if isinstance(why, TimeoutError) or "timed out" in str(why):
            raise ScopeError(
                f"the hub at {url} did not answer in {timeout:g} s; nothing is known to be stored",
                "try again later: a run pushed twice is stored once",
                ENVIRONMENT,
            ) from None
        raise ScopeError(
            f"cannot reach the hub at {url}: {safe(why)}", "check --hub and that the hub is up", ENVIRONMENT
        ) from None
    except ValueError:
        raise ScopeError(f"{url} answered, but not as a SCOPE hub", "check --hub", ENVIRONMENT) from None


def _refusal(e) -> tuple[str, str]:
    """The hub's reason for refusing, from its JSON answer (shown with control characters escaped)."""
    try:
        body = json.loads(e.read(65536) or b"{}")
        message, hint = str(body.get("error", "")), str(body.get("hint", ""))
    except (ValueError, OSError, AttributeError):
        message, hint = "", ""
    what = {401: "refused the token", 403: "refused the push", 413: "refused the run as too large"}.get(
        e.code, f"answered HTTP {e.code}"
    )
    text = f"the hub {what}" + (f": {safe(message)}" if message else "") + "; nothing was stored"
    return text, safe(hint) or "see the hub's log"
