"""scope hub serve (the results hub) and scope hub token (who may push and read).  Its libraries
(Starlette, uvicorn, SQLAlchemy, psycopg) are the `hub` extra: main imports this module only
for `scope hub`, and where they are missing the command says how to install them."""

from __future__ import annotations

import os
import sys

from scope.cli.argtypes import slowdown_of
from scope.errors import ENVIRONMENT, USAGE, ScopeError

EXTRA_HINT = "pip install 'scope-bench[hub]' (Starlette, uvicorn, SQLAlchemy, psycopg, prometheus_client)"
try:
    import uvicorn

    from scope.hub import alerts, db, events, tokens
except ImportError as e:  # said by cmd_hub, as a one-line error, not at import
    MISSING = e.name or str(e)
else:
    MISSING = None


def cmd_hub(args) -> int:
    if args.action is None:
        raise ScopeError(
            "scope hub needs an action",
            "scope hub serve, scope hub token add|revoke|list, scope hub alert add|list|remove, scope hub event",
            USAGE,
        )
    if MISSING:
        raise ScopeError(f"the hub needs {MISSING}, which is not installed", EXTRA_HINT, ENVIRONMENT)
    try:
        if args.action == "alert":
            return _alerts(args)
        if args.action == "event":
            return _events(args)
        return _tokens(args) if args.action == "token" else _serve(args)
    except db.STORAGE_ERRORS as e:  # unreachable, read-only, full: one line, not a traceback
        raise ScopeError(
            f"the hub's database cannot be used: {db.storage_reason(e)}",
            "check --db: that the database is up, reachable and writable",
            ENVIRONMENT,
        ) from None


def _tokens(args) -> int:
    if args.token_action is None:
        raise ScopeError("scope hub token needs an action", "add, revoke or list", USAGE)
    if args.token_action == "add":
        if (args.read or args.admin) == (args.cluster is not None) or (args.read and args.admin):
            raise ScopeError(
                "name the cluster the token pushes to, or ask for a read or an admin token",
                "e.g. token add frontier, token add --read, token add --admin",
                USAGE,
            )
        if args.cluster is not None:
            db.check_name(args.cluster)
    eng = db.open_engine(args.hub_db, pool=1)
    db.migrate(eng)
    if args.token_action == "add":
        tid, token = tokens.add_token(eng, args.cluster, admin=args.admin)
        what = (
            f"push token {tid} of cluster {args.cluster}"
            if args.cluster
            else f"{'admin' if args.admin else 'read'} token {tid}"
        )
        print(f"scope: {what}; it is shown this once (the hub keeps only its hash):", file=sys.stderr)
        print(token)
    elif args.token_action == "revoke":
        if not tokens.revoke_token(eng, args.id):
            raise ScopeError(f"no live token {args.id}", "see scope hub token list", USAGE)
        print(f"token {args.id} revoked")
    else:
        for t in tokens.list_tokens(eng):
            state = f"revoked {t['revoked_utc']}" if t["revoked_utc"] else "live"
            print(f"{t['id']:>5}  {t['kind']:<5}  {t['name'] or '-':<24}  made {t['created_utc']}  {state}")
    return 0


def _alerts(args) -> int:
    if args.alert_action is None:
        raise ScopeError("scope hub alert needs an action", "add, list or remove", USAGE)
    if args.alert_action == "add":  # every argument checked before the database is touched
        db.check_name(args.cluster)
        channel = "webhook" if args.webhook else "slack" if args.slack else "email"
        target = alerts.check_target(channel, args.webhook or args.slack or args.email)
        limit = slowdown_of(args.max_slowdown)
        tests = [t.strip() for t in (args.tests or "").split(",") if t.strip()]
        quiet = alerts.check_quiet(args.quiet)
    eng = db.open_engine(args.hub_db, pool=1)
    db.migrate(eng)
    if args.alert_action == "add":
        with db.writing(eng) as conn:
            cid = tokens.cluster_id(conn, args.cluster, create=True)
            rid = alerts.add_rule(conn, cid, channel, target, limit, tests, db.now_utc(), quiet)
        print(f"alert rule {rid}: {args.cluster}'s alerts past {limit * 100:g} % slower go to {channel} "
              f"{target}{' (tests ' + ', '.join(tests) + ')' if tests else ''}"
              f"{f', quiet {quiet} UTC' if quiet else ''}")  # fmt: skip
    elif args.alert_action == "remove":
        with db.writing(eng) as conn:
            if not alerts.remove_rule(conn, args.id, db.now_utc()):
                raise ScopeError(f"no live alert rule {args.id}", "see scope hub alert list", USAGE)
        print(f"alert rule {args.id} removed")
    else:
        with eng.connect() as conn:
            for r in alerts.rules(conn):
                tests = ", ".join(r["tests"]) if r["tests"] else "every test"
                quiet = f", quiet {r['quiet']} UTC" if r["quiet"] else ""
                print(f"{r['id']:>5}  {r['cluster']:<24}  {r['channel']:<7}  past {r['max_slowdown'] * 100:g} %  "
                      f"{r['target']}  ({tests}{quiet})")  # fmt: skip
    return 0


def _events(args) -> int:
    """scope hub event CLUSTER "TEXT" [--at] [--bound] (announce), CLUSTER (list), --remove ID."""
    db.check_name(args.cluster)  # every argument checked before the database is touched
    if args.text is not None:
        said, at = events.check_text(args.text), events.at_of(args.at)
        bound = slowdown_of(args.bound, "--bound") if args.bound is not None else None
    elif args.at is not None or args.bound is not None:
        example = f'scope hub event {args.cluster} "MPICH 4.2 -> 5.0" --at 2026-12-05T03:00 --bound 30%'
        raise ScopeError("--at and --bound go with an event's text", example, USAGE)
    eng = db.open_engine(args.hub_db, pool=1)
    db.migrate(eng)
    with db.writing(eng) as conn:
        cid = tokens.cluster_id(conn, args.cluster, create=args.text is not None)
        if args.remove is not None:
            if cid is None or not events.remove_event(conn, cid, args.remove, db.now_utc()):
                hint = f"see scope hub event {args.cluster}"
                raise ScopeError(f"no live event {args.remove} of {args.cluster}", hint, USAGE)
            print(f"event {args.remove} removed")
        if args.text is not None:
            eid = events.add_event(conn, cid, at, said, bound, db.now_utc())
            cost = f"; an alert past {bound * 100:g} % slower stays open" if bound else ""
            print(f"event {eid} of {args.cluster} at {at}: {said}{cost}")
        if args.text is None and args.remove is None:
            for e in events.listed(conn, cid) if cid is not None else []:
                cost = f"  (at most {e['bound'] * 100:g} % slower)" if e["bound"] is not None else ""
                print(f"{e['id']:>5}  {e['at_utc']}  {e['text']}{cost}")
    return 0


def _serve(args) -> int:
    os.environ["SCOPE_HUB_DB"] = db.engine_url(args.hub_db)
    os.environ["SCOPE_HUB_PRIVATE"] = "1" if args.private else "0"
    os.environ["SCOPE_HUB_UPLOAD_LIMIT"] = str(args.max_upload_mb << 20)
    os.environ["SCOPE_HUB_PUBLIC_URL"] = args.public_url or ""
    eng = db.open_engine(args.hub_db, pool=1)
    db.migrate(eng)  # once, before the workers start
    db.check_writable(eng)  # a hub takes pushes: one that could not store them says so now
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
        timeout_keep_alive=5,  # an idle connection is closed; a body that stalls is answered 408 (hub/guard.py)
    )
    return 0
