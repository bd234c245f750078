"""A hostile corpus for the results hub (issue 67): authentication, uploads, names and ids,
headers, methods, private mode and storage faults, each case a request to a live hub on SQLite
and on PostgreSQL (Debian's, started for the bench).  A case holds when the hub answered what
it must: a 4xx (or 503 for storage) with a JSON reason under /api and a page elsewhere, nothing
stored from a refused push, and, over the whole corpus, no traceback and no ERROR in its log.

    .venv/bin/python bench/hub_corpus.py            # both databases
    .venv/bin/python bench/hub_corpus.py --sqlite   # SQLite only (no PostgreSQL here)

Writes bench/results/hub_corpus.md and .json."""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, write

sys.path.insert(0, str(ROOT))
from scope.hub.openapi import EXAMPLE_BUNDLE  # noqa: E402
from tests import pg_server  # noqa: E402
from tests.hub_server import Hub  # noqa: E402

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
GZ = {"Content-Type": "application/gzip"}


def scope(*args: str) -> str:
    p = subprocess.run(
        [sys.executable, "-m", "scope", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
        timeout=120,
    )
    if p.returncode != 0:
        raise SystemExit(f"scope {' '.join(args)}: {p.stderr}")
    return p.stdout.strip()


def bundle(**run) -> bytes:
    doc = json.loads(json.dumps(EXAMPLE_BUNDLE))
    doc["run"].update(run)
    return json.dumps(doc).encode()


def with_doc(change) -> bytes:
    doc = json.loads(json.dumps(EXAMPLE_BUNDLE))
    change(doc)
    return json.dumps(doc).encode()


def field_cases(group: str, where: str, values: dict, headers: dict) -> list[tuple]:
    """A push of the example bundle with one field at `where` ('' the document, 'run', or
    'imported') set to each hostile value: each must be refused (400)."""

    def part(d):
        return d if not where else d["imported"][0] if where == "imported" else d[where]

    return [
        (group, f"{where + '.' if where else ''}{key}={str(v)[:30]!r}", "POST", "/api/runs",
         with_doc(lambda d, k=key, v=v: part(d).__setitem__(k, v)), headers, (400,))
        for key, vs in values.items()
        for v in vs
    ]  # fmt: skip


def f64(*v) -> str:
    return base64.b64encode(struct.pack(f"<{len(v)}d", *v)).decode()


def push_cases(push: str, read: str, other: str) -> list[tuple]:
    """(group, name, method, path, body, headers, expected statuses) of pushes that must be refused."""
    auth = {"Authorization": f"Bearer {push}"}
    out = []
    for name, h in [
        ("no Authorization", {}),
        ("empty bearer", {"Authorization": "Bearer "}),
        ("Basic scheme", {"Authorization": "Basic eDp5"}),
        ("unknown token", {"Authorization": "Bearer scope_nope"}),
        ("a read token", {"Authorization": f"Bearer {read}"}),
        ("token of 5000 characters", {"Authorization": "Bearer " + "t" * 5000}),
        ("token with a newline-like escape", {"Authorization": "Bearer scope_x%0d%0aSet-Cookie:a=b"}),
        ("token with non-ASCII", {"Authorization": "Bearer scope_\u00e9\u00e8"}),
        ("bearer without a space", {"Authorization": f"Bearer{push}"}),
        ("the token as a cookie", {"Cookie": f"scope_hub={push}"}),
        ("a forged session cookie", {"Cookie": "scope_hub=scope_session_forged"}),
        ("another cluster claimed", {**auth, "X-Scope-Cluster": "someone-else"}),
        (
            "the other cluster's token claiming this one",
            {"Authorization": f"Bearer {other}", "X-Scope-Cluster": "site"},
        ),
        ("claimed cluster with a path", {**auth, "X-Scope-Cluster": "../site"}),
    ]:
        out.append(("authentication", name, "POST", "/api/runs", bundle(label=name), {**h, **GZ}, (401, 403)))
    bad = [
        ("an empty body", b""),
        ("random bytes", os.urandom(4096)),
        ("a truncated gzip", gzip.compress(bundle())[:40]),
        ("gzip of text", gzip.compress(b"hello")),
        ("a JSON array", b"[1,2,3]"),
        ("JSON null", b"null"),
        ("a JSON string", b'"scope-run"'),
        ("NaN literal", bundle().replace(b'"complete"', b"NaN")),
        ("nesting 100,000 deep", b'{"format":"scope-run","run":' + b"[" * 100000 + b"]" * 100000 + b"}"),
        ("UTF-16", bundle().decode().encode("utf-16")),
        ("a lone surrogate", '{"format":"\udcff"}'.encode("utf-8", "surrogatepass")),
        ("a BOM and JSON", b"\xef\xbb\xbf" + bundle()),
        ("XML", b"<run/>"),
        ("a gzip bomb of blanks", gzip.compress(b"{") + gzip.compress(b" " * (1 << 20), 9) * 600),
    ]
    for name, body in bad:
        out.append(("uploads: bytes", name, "POST", "/api/runs", body, {**auth, **GZ}, (400,)))
    fields = {
        "format": ["scope", "", 1, None],
        "version": [0, 2, 99, -1, "1", 1.5],
        "scope": [None, 7, "x" * 300],
    }
    out += field_cases("uploads: document", "", fields, {**auth, **GZ})
    run_fields = {
        "started_utc": [
            "2026-01-05T09:00:00Z\n",
            "2026-01-05 09:00:00",
            "2026-13-05T09:00:00Z",
            "2026-02-30T09:00:00Z",
            "\u0662\u0660\u0662\u0666-01-05T09:00:00Z",
            "9999-01-01T00:00:00Z",
            "1900-01-01T00:00:00Z",
            "",
            None,
            20260105,
            "2026-01-05T09:00:00+01:00",
            "2026-01-05T25:00:00Z",
        ],
        "status": ["running", "COMPLETE", "", None, 1, "complete\n"],
        "origin": ["o" * 65, "o" * 256, "OSU", "../x", "", "sc ope", "scope\n", 5],
        "label": ["nul\x00", "x" * 300, 12, ["a"]],
        "launches": [0, -1, 10001, 1.5, "3", True],
        "ranks": [0, -5, 1 << 40, "2"],
        "command": ["mpiexec", [1, 2], ["x" * 70000], ["a"] * 5000],
        "reason": ["r" * 70000, 3],
        "finished_utc": ["yesterday", "9999-01-01T00:00:00Z"],
        "unknown_field": ["x"],
    }
    out += field_cases("uploads: run columns", "run", run_fields, {**auth, **GZ})
    imported = {
        "sizes": [f64(1.0), base64.b64encode(b"\x00" * 7).decode(), "!!!"],
        "times": [f64(1.0, -2.0, 3.0), f64(1.0, float("nan"), 3.0), f64(1.0, float("inf"), 3.0), f64(1.0)],
        "test": ["", "x" * 300, 5],
        "credit": [-1, 1e9, "1"],
        "first_seq": [-1, "0"],
        "extra": [{"min": "!!"}, {"min": f64(1.0)}],
    }
    unsorted = base64.b64encode(b"".join(v.to_bytes(8, "little", signed=True) for v in (64, 8, 1024))).decode()
    negative = base64.b64encode(b"".join(v.to_bytes(8, "little", signed=True) for v in (-8, 8, 1024))).decode()
    imported["sizes"] += [unsorted, negative]
    out += field_cases("uploads: columns", "imported", imported, {**auth, **GZ})
    records = [
        ("a context of another type", lambda d: d.__setitem__("context", {"type": "point"})),
        ("a context nested 200 deep", lambda d: d.__setitem__("context", _deep({"type": "context"}, 200))),
        ("a point record without samples' place", lambda d: d.__setitem__("points", [{"record": {"type": "point"}}])),
        (
            "a point with a string median",
            lambda d: d.__setitem__(
                "points", [{"record": {"type": "point", "test": "x", "stats": {"median": "fast"}}}]
            ),
        ),
        ("an event of an unknown kind", lambda d: d.__setitem__("events", [{"record": {"type": "exploit"}}])),
        ("pairs at launch 0", lambda d: d.__setitem__("pairs", [{"launch": 0, "record": {"type": "pairs"}}])),
        ("a test descriptor of another type", lambda d: d.__setitem__("tests", [{"type": "context"}])),
        (
            "samples not a float64 array",
            lambda d: d.__setitem__("points", [{"record": {"type": "point"}, "samples": "AAA="}]),
        ),
        ("a NUL in the context", lambda d: d.__setitem__("context", {"type": "context", "mpi": {"library": "x\x00"}})),
    ]
    for name, change in records:
        out.append(("uploads: records", name, "POST", "/api/runs", with_doc(change), {**auth, **GZ}, (400,)))
    out.append(
        (
            "uploads: size",
            "declared 1 TB",
            "POST",
            "/api/runs",
            b"{}",
            {**auth, **GZ, "Content-Length": str(1 << 40)},
            (400, 413),
        )
    )
    out.append(
        ("uploads: size", "over the upload limit", "POST", "/api/runs", os.urandom(65 << 20), {**auth, **GZ}, (413,))
    )
    return out


def _deep(top: dict, depth: int) -> dict:
    d = top
    for _ in range(depth):
        d["x"] = {}
        d = d["x"]
    return top


NAMES = [
    "..",
    "../etc/passwd",
    "%2e%2e%2fetc",
    "a%2Fb",
    "x'%20OR%201=1--",
    "%00",
    "%0d%0aSet-Cookie:x",
    "%E2%80%AE",
    "x" * 65,
    "-start",
    ".hidden",
    "%C3%A9",
    "CON",
    "a" * 5000,
    "%25%32%65",
    "%ff%fe",
    "site%20",
    "SITE",
]
IDS = [
    "0",
    "-1",
    str(2**31),
    str(2**31 - 1),
    str(2**63),
    str(2**64),
    "1e3",
    "0x10",
    "%201",
    "1%20",
    "%D9%A1",
    "01a",
    "9" * 400,
    "1.0",
    "+1",
    "%00",
    "nan",
    "inf",
]


def read_cases() -> list[tuple]:
    out = []
    for n in NAMES:
        for prefix in ("/clusters/", "/api/clusters/"):
            out.append(("names and ids", f"{prefix}{n[:30]}", "GET", prefix + n, None, {}, (404,)))
    for i in IDS:
        for tmpl in ("/runs/{}", "/api/runs/{}", "/api/runs/{}/bundle"):
            out.append(("names and ids", tmpl.format(i[:30]), "GET", tmpl.format(i), None, {}, (404,)))
        out.append(
            ("names and ids", f"compare run/{i[:30]}", "GET", f"/api/compare?a=run/{i}&b=site", None, {}, (404,))
        )
    for q in [
        "",
        "?a=site",
        "?b=site",
        "?a=&b=",
        "?a=site&b=site",
        "?a=nosuch&b=site",
        "?a=run/1&b=run/1",
        "?a=" + "x" * 5000 + "&b=site",
        "?a=site&a=site2&b=run/1",
        "?a=%00&b=site",
    ]:
        out.append(("names and ids", f"/api/compare{q[:30]}", "GET", "/api/compare" + q, None, {}, (400, 404)))
    for path in [
        "/api/nothing",
        "/api",
        "/api/runs/1/bundle/x",
        "/api/clusters/site/x",
        "/.env",
        "/etc/passwd",
        "/runs/1/../../etc/passwd",
        "/static/../../x",
        "/wp-login.php",
        "/api/runs/1%2F..%2F2",
    ]:
        out.append(("names and ids", path, "GET", path, None, {}, (404,)))
    methods = ["PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"]
    for path in [
        "/",
        "/api/clusters",
        "/api/clusters/site",
        "/api/runs/1",
        "/api/runs/1/bundle",
        "/api/runs",
        "/login",
        "/api/health",
        "/openapi.json",
    ]:
        for m in methods:
            out.append(("methods", f"{m} {path}", m, path, b"", {}, (405,)))
    for path in ["/api/clusters", "/api/runs/1", "/api/health", "/openapi.json"]:
        out.append(("methods", f"POST {path}", "POST", path, b"{}", {"Content-Type": "application/json"}, (405,)))
    heads = [
        ("Host evil", {"Host": "evil.example"}),
        ("Host with a path", {"Host": "a/b"}),
        ("X-Forwarded-Host", {"X-Forwarded-Host": "evil.example"}),
        ("X-Forwarded-For junk", {"X-Forwarded-For": "x" * 4000}),
        ("Accept odd", {"Accept": "x" * 3000}),
        ("Range", {"Range": "bytes=0-1,2-3"}),
        ("If-None-Match", {"If-None-Match": "*"}),
        ("Cookie of 6 kB", {"Cookie": "a=" + "b" * 6000}),
        ("Accept-Encoding bomb", {"Accept-Encoding": "gzip;q=1," * 300}),
    ]
    for name, h in heads:
        for path in ["/", "/api/clusters", "/api/runs/999999"]:
            out.append(("headers", f"{name} {path}", "GET", path, None, h, (200,) if "999999" not in path else (404,)))
    for name, body, h in [
        ("login: a multipart upload", b"--x\r\n" * 20000, {"Content-Type": "multipart/form-data; boundary=x"}),
        ("login: a 1 MB form", b"token=" + b"t" * (1 << 20), FORM),
        ("login: JSON", b'{"token":"x"}', {"Content-Type": "application/json"}),
        ("login: no content type", b"token=x", {}),
        ("login: an unknown token", b"token=scope_nope", FORM),
        ("login: an empty token", b"token=", FORM),
        ("login: a NUL", b"token=%00", FORM),
        ("login: latin-1 bytes", b"token=\xff\xfe", FORM),
    ]:
        out.append(("authentication", name, "POST", "/login", body, h, (400, 401, 413, 415)))
    return out


def private_cases(push: str, read: str, revoked: str) -> list[tuple]:
    out = []
    paths = [
        "/",
        "/clusters/site",
        "/compare?a=site&b=run/1",
        "/runs/1",
        "/docs/api",
        "/openapi.json",
        "/api/clusters",
        "/api/clusters/site",
        "/api/compare?a=site&b=run/1",
        "/api/runs/1",
        "/api/runs/1/bundle",
    ]
    who = [
        ("no token", {}),
        ("a push token", {"Authorization": f"Bearer {push}"}),
        ("a revoked read token", {"Authorization": f"Bearer {revoked}"}),
        ("the read token as a cookie", {"Cookie": f"scope_hub={read}"}),
        ("a forged session", {"Cookie": "scope_hub=scope_session_x"}),
        ("a read token in the query", {}),
    ]
    for name, h in who:
        for p in paths:
            path = p + (("&" if "?" in p else "?") + f"token={read}" if name.endswith("query") else "")
            out.append(("private mode", f"{name}: {p}", "GET", path, None, h, (401,)))
    return out


def run_case(hub: Hub, case: tuple) -> tuple[bool, int, str]:
    group, name, method, path, body, headers, want = case
    code, answer, got_headers = hub.request(method, path, body, headers)
    why = ""
    if code not in want:
        why = f"{code}, not {want}"
    elif code >= 400 and (path.startswith("/api/") or path.startswith("/openapi")):
        try:
            doc = json.loads(answer)
            if not (isinstance(doc, dict) and doc.get("error")):
                why = "no JSON reason"
        except ValueError:
            why = "not JSON"
    elif code >= 400 and b"<html" not in answer[:300].lower():
        why = "no page"
    return not why, code, why


def storage_cases(hub: Hub, push: str, make_read_only) -> list[tuple]:
    """Pushes and reads with the database made unwritable under the running hub: its disk full
    (SQLite), its database read-only (PostgreSQL)."""
    make_read_only()
    auth = {"Authorization": f"Bearer {push}", **GZ}
    out = [
        ("storage faults", f"push {i}", "POST", "/api/runs", bundle(label=f"after {i}"), auth, (503,)) for i in range(5)
    ]
    out += [
        ("storage faults", f"read {p}", "GET", p, None, {}, (200,))
        for p in ("/", "/api/clusters", "/clusters/site", "/api/runs/1", "/api/runs/1/bundle")
    ]
    return out


def corpus(kind: str, url: str, make_read_only) -> dict:
    push, other, read = (
        scope("hub", "token", "add", "site", "--db", url),
        scope("hub", "token", "add", "site2", "--db", url),
        scope("hub", "token", "add", "--read", "--db", url),
    )
    results: dict[str, list] = {}
    with Hub(url) as hub:
        assert hub.push(gzip.compress(bundle()), push)[0] == 201
        runs = json.loads(hub.get("/api/health")[1])["runs"]
        for case in push_cases(push, read, other) + read_cases():
            ok, code, why = run_case(hub, case)
            results.setdefault(case[0], []).append((case[1], ok, code, why))
        stored = json.loads(hub.get("/api/health")[1])["runs"]
        results["uploads: nothing stored"] = [("runs after every refused push", stored == runs, stored, "")]
        for case in storage_cases(hub, push, make_read_only):
            ok, code, why = run_case(hub, case)
            results.setdefault(case[0], []).append((case[1], ok, code, why))
        hub.log.seek(0)
        log = hub.log.read()
    results["the log"] = [("no traceback", "Traceback" not in log, 0, ""), ("no ERROR line", "ERROR" not in log, 0, "")]
    return results


def private(kind: str, url: str) -> dict:
    push = scope("hub", "token", "add", "site", "--db", url)
    read = scope("hub", "token", "add", "--read", "--db", url)
    revoked = scope("hub", "token", "add", "--read", "--db", url)
    last = scope("hub", "token", "list", "--db", url).splitlines()[-1].split()[0]
    scope("hub", "token", "revoke", last, "--db", url)
    out: dict[str, list] = {}
    with Hub(url, "--private") as hub:
        assert hub.push(gzip.compress(bundle()), push)[0] == 201
        for case in private_cases(push, read, revoked):
            ok, code, why = run_case(hub, case)
            out.setdefault(case[0], []).append((case[1], ok, code, why))
        ok = hub.get("/api/clusters", read)[0] == 200
        out["private mode"].append(("a read token reads", ok, 200, ""))
    return out


def main() -> int:
    kinds = ["sqlite"] if "--sqlite" in sys.argv else ["sqlite", "postgresql"]
    table, data, failed = [], {}, []
    for kind in kinds:
        with contextlib.ExitStack() as stack:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            if kind == "sqlite":
                disk = tmp / "disk"
                disk.mkdir()
                subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(disk)], check=True)
                stack.callback(subprocess.run, ["umount", "-l", str(disk)])
                url, url2 = str(disk / "hub.db"), str(tmp / "private.db")

                def read_only(disk=disk):  # a full disk: the file system a live hub writes to, filled
                    subprocess.run(["dd", "if=/dev/zero", f"of={disk / 'filler'}", "bs=1M"], capture_output=True)
            else:
                server = stack.enter_context(pg_server.server())
                url, url2 = pg_server.fresh_database(server, "corpus"), pg_server.fresh_database(server, "private")

                def read_only(url=url):
                    import psycopg

                    name = url.rsplit("/", 1)[1]
                    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as c:
                        c.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
                        c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
                    time.sleep(0.5)

            results = corpus(kind, url, read_only)
            results.update({k: results.get(k, []) + v for k, v in private(kind, url2).items()})
        for group, cases in results.items():
            held = sum(ok for _, ok, _, _ in cases)
            table.append(f"| {kind} | {group} | {held} | {len(cases)} |")
            failed += [f"{kind}: {group}: {name} ({why})" for name, ok, _, why in cases if not ok]
        data[kind] = {g: [dict(case=n, held=ok, status=c, why=w) for n, ok, c, w in v] for g, v in results.items()}
        print(
            f"{kind}: {sum(ok for v in results.values() for _, ok, _, _ in v)} of "
            f"{sum(len(v) for v in results.values())} held",
            file=sys.stderr,
        )
    totals = {
        k: (sum(c["held"] for v in d.values() for c in v), sum(len(v) for v in d.values())) for k, d in data.items()
    }
    lines = [
        "Every case a request to a live hub (`bench/hub_corpus.py`); a case holds when the answer is the one the hub "
        "promises: a 4xx (503 for storage) with a JSON reason under /api and a page elsewhere, nothing stored from a "
        "refused push, and no traceback or ERROR in the hub's log over the whole corpus.",
        "",
        "| database | group | held | cases |",
        "|---|---|---|---|",
        *table,
        "",
        *(f"**{k}: {h} of {t} held.**" for k, (h, t) in totals.items()),
        *([""] + [f"- failed: {x}" for x in failed] if failed else []),
        "",
        "Reproduce: .venv/bin/python bench/hub_corpus.py",
    ]
    write("hub_corpus", "The hub's hostile corpus (issue 67)", lines, {"totals": totals, "cases": data})
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
