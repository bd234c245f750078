"""`scope push`: stored runs uploaded to a hub as bundles, over HTTP(S) with the standard
library only (nothing beyond what scope installs).  The token comes from $SCOPE_HUB_TOKEN or a
file, never from the command line, where `ps` shows it.  A hub that is down, slow or refusing
gets one line saying which, and a non-zero exit; a push is stored whole by the hub or not at all."""

from __future__ import annotations

import json
import os
import stat
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.views.fmt import safe

TOKEN_ENV = "SCOPE_HUB_TOKEN"
TIMEOUT_S = 120.0
TOKEN_HINT = f"set ${TOKEN_ENV} or give --token-file FILE (a token from 'scope hub token add CLUSTER' on the hub)"


def hub_url(url: str) -> str:
    """A hub's base URL (http or https, a host), without its trailing slash."""
    url = url or ""
    u = urllib.parse.urlsplit(url)
    one_word = url.isprintable() and " " not in url  # a newline would end a batch script's line
    if not one_word or u.scheme not in ("http", "https") or not u.netloc or u.query or u.fragment:
        raise ScopeError(f"--hub {safe(url)!r} is not a hub's address", "e.g. --hub https://hub.example.org", USAGE)
    return url.rstrip("/")


def read_token(token_file: str | None) -> str:
    """The push token: from the file given, else $SCOPE_HUB_TOKEN; one line, printable."""
    if token_file:
        p = Path(token_file)
        try:
            st = p.stat()
            if not stat.S_ISREG(st.st_mode) or st.st_size > 4096:
                raise ScopeError(f"--token-file {token_file} is not a small regular file", TOKEN_HINT, USAGE)
            text = p.read_text(encoding="utf-8", errors="replace").strip()
        except OSError as e:
            raise ScopeError(f"cannot read --token-file {token_file}: {e.strerror}", TOKEN_HINT, USAGE) from None
    else:
        text = os.environ.get(TOKEN_ENV, "").strip()
    if not text:
        raise ScopeError("no hub token", TOKEN_HINT, USAGE)
    if not (text.isascii() and text.isprintable()) or " " in text or len(text) > 200:
        raise ScopeError("the hub token is not one word of printable ASCII", TOKEN_HINT, USAGE)
    return text


def push(url: str, token: str, data: bytes, cluster: str | None = None, timeout: float = TIMEOUT_S) -> dict:
    """One bundle to the hub: its answer ({id, cluster, stored, url})."""
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
            return _send(req, timeout)
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError):
            # dropped mid-push (a worker restarting, a proxy's reset): sent again, which is safe,
            # as the hub stores a run's content once
            time.sleep(wait)
    return _send(req, timeout)


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
