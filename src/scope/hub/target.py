"""Where a push goes and with what token, checked before anything runs: no HTTP here, so the
commands that may push (run, submit) load the client only when they do (issue 52)."""

from __future__ import annotations

import os
import stat
import urllib.parse
from pathlib import Path

from scope.errors import USAGE, ScopeError
from scope.views.fmt import safe

TOKEN_ENV = "SCOPE_HUB_TOKEN"
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
