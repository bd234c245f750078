"""scope push (stored runs to a hub), scope hub serve (the hub itself), scope hub token (who may
push and read).  The server's libraries (Starlette, uvicorn, SQLAlchemy, psycopg) are the `hub`
extra, imported only by `scope hub`; `scope push` needs nothing beyond what scope installs."""

from __future__ import annotations

import importlib.util
import os
import sys

from scope.cli.common import open_store
from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.hub.client import hub_url, push, read_token
from scope.store.bundle import dump, encode
from scope.views.fmt import safe

SERVER_LIBS = ("starlette", "uvicorn", "sqlalchemy")
EXTRA_HINT = "pip install 'scope-bench[hub]' (Starlette, uvicorn, SQLAlchemy, psycopg)"


def push_target(args, url: str | None) -> tuple[str, str] | None:
    """The hub and token a command pushes with, checked before anything runs: None when no hub."""
    if url is None:
        if args.token_file or args.cluster:
            raise ScopeError("--token-file and --cluster say how to push, but no hub is named", "add --push URL", USAGE)
        return None
    return hub_url(url), read_token(args.token_file)


def push_runs(store, ids: list[int], url: str, token: str, cluster: str | None, timeout: float = 120) -> None:
    for rid in ids:
        data = encode(dump(store, rid))
        answer = push(url, token, data, cluster, timeout)
        said = "stored" if answer.get("stored") else "already there: stored once"
        print(
            f"run {rid} pushed to {url} as run {safe(answer.get('id'))} of cluster {safe(answer.get('cluster'))} "
            f"({said}; {len(data) / 1e6:.2f} MB): {safe(answer.get('url'))}"
        )


def cmd_push(args) -> int:
    url, token = push_target(args, args.hub)
    store = open_store(args, create=False)
    ids = list(dict.fromkeys(store.resolve_run(r) for r in args.runs))  # every name checked before a push
    for rid in ids:
        status = store.run(rid)["status"]
        if status == "running":
            raise ScopeError(f"run {rid} is still running", "push it when it has ended", USAGE)
    push_runs(store, ids, url, token, args.cluster, args.timeout)
    return 0


def _server():
    missing = [m for m in SERVER_LIBS if importlib.util.find_spec(m) is None]
    if missing:
        raise ScopeError(f"the hub needs {', '.join(missing)}, which are not installed", EXTRA_HINT, ENVIRONMENT)
    from scope.hub import app, db  # the extra's libraries, only for the server

    return app, db


def cmd_hub(args) -> int:
    if args.action is None:
        raise ScopeError("scope hub needs an action", "scope hub serve, or scope hub token add|revoke|list", USAGE)
    app, db = _server()
    if args.action == "token":
        return _tokens(args, db)
    return _serve(args, app, db)


def _tokens(args, db) -> int:
    if args.token_action is None:
        raise ScopeError("scope hub token needs an action", "add, revoke or list", USAGE)
    if args.token_action == "add":
        if bool(args.read) == bool(args.cluster):
            raise ScopeError(
                "name the cluster the token pushes to, or ask for a read token", "e.g. token add frontier", USAGE
            )
        if args.cluster:
            db.check_name(args.cluster)
    eng = db.open_engine(args.hub_db, pool=1)
    db.migrate(eng)
    if args.token_action == "add":
        tid, token = db.add_token(eng, args.cluster)
        what = f"push token {tid} of cluster {args.cluster}" if args.cluster else f"read token {tid}"
        print(f"scope: {what}; it is shown this once (the hub keeps only its hash):", file=sys.stderr)
        print(token)
    elif args.token_action == "revoke":
        if not db.revoke_token(eng, args.id):
            raise ScopeError(f"no live token {args.id}", "see scope hub token list", USAGE)
        print(f"token {args.id} revoked")
    else:
        for t in db.list_tokens(eng):
            state = f"revoked {t['revoked_utc']}" if t["revoked_utc"] else "live"
            print(f"{t['id']:>5}  {t['kind']:<4}  {t['name'] or '-':<24}  made {t['created_utc']}  {state}")
    return 0


def _serve(args, app, db) -> int:
    import uvicorn

    os.environ["SCOPE_HUB_DB"] = db.engine_url(args.hub_db)
    os.environ["SCOPE_HUB_PRIVATE"] = "1" if args.private else "0"
    os.environ["SCOPE_HUB_UPLOAD_LIMIT"] = str(args.max_upload_mb << 20)
    db.migrate(db.open_engine(args.hub_db, pool=1))  # once, before the workers start
    print(
        f"scope hub: serving {db.engine_url(args.hub_db).split('://')[0]} at http://{args.host}:{args.port}/ "
        f"({args.workers} worker{'s' * (args.workers > 1)}{', private' if args.private else ''}); Ctrl-C stops it",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(
        "scope.hub.app:from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level="warning",
        access_log=False,
        proxy_headers=True,
    )
    return 0
