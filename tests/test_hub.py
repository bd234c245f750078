"""The results hub (issue 53) against live servers: `scope hub serve` on SQLite and on a real
PostgreSQL (tests/pg_server.py), pushed to by `scope push` and read through its JSON API and
pages; every figure checked against what the local store says of the same run."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from scope.hub import db as hubdb
from scope.hub import tokens
from scope.hub.client import push
from scope.store import Store
from tests import pg_server
from tests.conftest import run_scope
from tests.hub_server import Hub, night, relabelled, watched_page

# The quick checks on SQLite are `system` (make test); PostgreSQL, many clients at once, a
# killed server and the browser are `service` (make test-all, .ci/run).
BACKENDS = [pytest.param("sqlite", marks=pytest.mark.system), pytest.param("postgresql", marks=pytest.mark.service)]


def database(kind: str, tmp_path, request) -> str:
    if kind == "sqlite":
        return str(tmp_path / "hub.db")
    url = request.getfixturevalue("postgres")
    return pg_server.fresh_database(url, f"hub_{abs(hash(request.node.nodeid)) % 10**9}")


def token(url: str, *args: str) -> str:
    p = run_scope("hub", "token", "add", *args, "--db", url)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


@pytest.fixture(params=BACKENDS)
def hub_db(request, tmp_path):
    return database(request.param, tmp_path, request)


def test_push_read_compare(hub_db, local, tmp_path):
    """Two clusters pushed with `scope push`; the list, a cluster, a run and a comparison read
    back figure for figure as the local store has them; the same run pushed twice is kept once."""
    db, ids, _ = local
    alpha, beta = token(hub_db, "alpha"), token(hub_db, "beta")
    with Hub(hub_db) as hub:
        for tok, names in ((alpha, ("baseline", "windows")), (beta, ("layers", "baseline"))):
            runs = [str(ids[n]) for n in names]
            p = run_scope("push", *runs, "--hub", hub.base, db=db, env={"SCOPE_HUB_TOKEN": tok})
            assert p.returncode == 0, p.stderr
        again = run_scope("push", str(ids["baseline"]), "--hub", hub.base, db=db, env={"SCOPE_HUB_TOKEN": alpha})
        assert again.returncode == 0 and "already there" in again.stdout
        listed = {c["name"]: c for c in hub.get_json("/api/clusters")["clusters"]}
        assert listed["alpha"]["runs"] == 2 and listed["beta"]["runs"] == 2
        # the baseline's 8 B ping-pong and its stream peak, as the local store has them
        run = Store(db).load_run(ids["baseline"], samples=False)
        p8 = next(p for p in run.points if p.test == "p2p.pingpong" and p.size == 8)
        peak = max(p.bw_median for p in run.points if p.test == "p2p.stream")
        latest = hub.get_json("/api/clusters/alpha")["history"]
        base = next(r for r in latest if r["points"] == len(run.points))
        assert base["latency"] == pytest.approx(p8.median) and base["latency_lo"] == pytest.approx(p8.ci_lo)
        assert base["bandwidth"] == pytest.approx(peak)
        # one run's JSON is `scope export --format json` of it
        mine = json.loads(run_scope("export", str(ids["baseline"]), "--format", "json", db=db).stdout)
        theirs = hub.get_json(f"/api/runs/{base['id']}")
        assert [p["stats"]["median"] for p in theirs["points"]] == [p["stats"]["median"] for p in mine["points"]]
        # the comparison is scope compare's, point for point: beta's copy of the baseline against alpha's
        copy = tmp_path / "copy.gz"
        copy.write_bytes(local[2]["baseline"])
        mine_db = tmp_path / "two.db"
        run_scope("import", copy, db=mine_db)
        run_scope("import", copy, db=mine_db)
        local_rows = json.loads(run_scope("compare", "1", "2", "--json", db=mine_db).stdout)
        beta_base = next(r for r in hub.get_json("/api/clusters/beta")["history"] if r["points"] == len(run.points))
        cmp = hub.get_json(f"/api/compare?a=run/{base['id']}&b=run/{beta_base['id']}")
        assert len(cmp["rows"]) == len(local_rows) > 30
        for theirs_row, mine_row in zip(cmp["rows"], local_rows):
            assert (theirs_row["test"], theirs_row["size"], theirs_row["verdict"]) == (
                mine_row["test"],
                mine_row["size"],
                mine_row["verdict"],
            )
            assert theirs_row["ratio"] == pytest.approx(mine_row["ratio"], nan_ok=True)
        # the bundle comes back as the run it was
        code, body, _ = hub.get(f"/api/runs/{base['id']}/bundle")
        (tmp_path / "back.gz").write_bytes(body)
        back = tmp_path / "back.db"
        assert run_scope("import", tmp_path / "back.gz", db=back).returncode == 0
        assert json.loads(run_scope("export", "last", "--format", "json", db=back).stdout)["points"] == mine["points"]
        # pages: the list, a cluster, the comparison (a run's report: test_pages_in_a_browser)
        for path, needle in (
            ("/", b"alpha"),
            ("/clusters/alpha", b"Headline figures"),
            ("/compare?a=alpha&b=beta", b"Point by point"),
        ):
            code, page, headers = hub.get(path)
            assert code == 200 and needle in page, path
            assert "content-security-policy" in {k.lower() for k in headers}


def test_tokens_and_hostile_pushes(hub_db, local):
    """Who may push, and what is refused: nothing of a refused push is stored."""
    _, ids, bundles = local
    alpha, beta, reader = token(hub_db, "alpha"), token(hub_db, "beta"), token(hub_db, "--read")
    with Hub(hub_db, "--max-upload-mb", "1") as hub:
        good = bundles["layers"]
        assert hub.push(good, None)[0] == 401
        assert hub.push(good, "scope_not-a-token")[0] == 401
        assert hub.push(good, reader)[0] == 403
        assert hub.push(good, beta, cluster="alpha")[0] == 403
        assert hub.push(good, alpha, cluster="alpha")[0] == 201
        huge = gzip.compress(os.urandom(2 << 20), compresslevel=0)
        assert hub.push(huge, alpha)[0] == 413
        member = gzip.compress(b" " * (1 << 20), compresslevel=9)  # gzip members in a row are one stream:
        bomb = gzip.compress(b"{") + member * 20  # 20 MB of blanks in 20 kB, past 8x the 1 MiB limit
        assert hub.push(bomb, alpha)[0] == 400
        assert hub.push(good[: len(good) // 2], alpha)[0] == 400
        deep = b'{"format":"scope-run","version":1,"scope":"x","run":' + b"[" * 100000 + b"]" * 100000 + b"}"
        assert hub.push(deep, alpha)[0] == 400
        doc = json.loads(gzip.decompress(good))
        doc["context"]["cvars"] = nested = {}
        for _ in range(200):
            nested["x"] = nested = {}
        assert hub.push(json.dumps(doc).encode(), alpha)[0] == 400
        assert hub.push(b"\xff\xfe" + good, alpha)[0] == 400
        assert hub.push('{"format": "scope-run", "é": "\udcff"}'.encode("utf-8", "surrogatepass"), alpha)[0] == 400
        doc = json.loads(gzip.decompress(good))
        doc["points"][0]["record"]["stats"]["median"] = "fast"
        code, answer = hub.push(json.dumps(doc).encode(), alpha)
        assert code == 400 and "point 1" in answer["error"]
        assert hub.get_json("/api/health")["runs"] == 1  # only the one good push
        # text a push carries is shown escaped, never run or passed to a terminal
        doc = json.loads(gzip.decompress(good))
        doc["run"]["label"] = "<script>alert(1)</script>\x1b[31mred\x1b]0;title\x07"
        code, answer = hub.push(json.dumps(doc).encode(), alpha)
        assert code == 201
        page = hub.get("/clusters/alpha")[1].decode()
        assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert "\x1b" not in page and "\\x1b[31mred" in page
        assert "\x1b" not in hub.get("/api/clusters/alpha")[1].decode()  # JSON escapes it
        # revoked: refused from then on
        tid = next(t for t in _tokens(hub_db) if t[2] == "beta")[0]
        assert run_scope("hub", "token", "revoke", tid, "--db", hub_db).returncode == 0
        assert hub.push(good, beta)[0] == 401
        # a cluster name that is a path or SQL: refused where it is made, and not found where read
        for name in ("../etc", "a/b", "x'; DROP TABLE runs; --", "", ".hidden", "x" * 65):
            p = run_scope("hub", "token", "add", name, "--db", hub_db)
            assert p.returncode == 2 and "not a cluster name" in p.stderr
        assert hub.get("/clusters/..%2Fetc")[0] == 404
        assert hub.get("/api/clusters/x'%3B%20DROP%20TABLE%20runs")[0] == 404
        assert hub.get_json("/api/health")["runs"] == 2


def test_the_hostile_passs_failures(hub_db, local):
    """Each failure of issue 67's hostile pass on this database, as a test: the same answer on
    SQLite and PostgreSQL, a 4xx with a JSON reason, nothing stored from a refused push."""
    _, ids, bundles = local
    alpha = token(hub_db, "alpha")
    with Hub(hub_db) as hub:
        code, answer = hub.push(bundles["layers"], alpha)
        assert code == 201 and answer["url"] == "/runs/1"  # a path: no Host header makes an address
        # ids past what the database holds: 404, not 500, on every route that takes one
        big, huge = str(2**31), str(2**63)
        paths = [f"/runs/{big}", f"/api/runs/{big}", f"/api/runs/{big}/bundle", f"/api/runs/{huge}", "/api/runs/-1"]
        for path in [*paths, f"/api/compare?a=run/{big}&b=run/1", f"/api/compare?a=run/{huge}&b=alpha"]:
            code, body, _ = hub.get(path)
            assert code == 404, (path, code, body[:200])
            if path.startswith("/api/"):
                assert "error" in json.loads(body), path
        # one strict reading before the database, the same on both
        good = json.loads(gzip.decompress(bundles["layers"]))
        hostile = {
            "label": {"label": "nul\x00inside"},
            "started_utc": {"started_utc": good["run"]["started_utc"] + "\n"},
            "origin": {"origin": "o" * 100},
            "digits": {"started_utc": "\u0662\u0660\u0662\u0666-01-05T09:00:00Z"},
            "future": {"started_utc": "9999-01-01T00:00:00Z"},
        }
        for what, change in hostile.items():
            doc = json.loads(gzip.decompress(bundles["layers"]))
            doc["run"].update(change)
            doc["run"]["label"] = doc["run"].get("label") if what == "label" else f"hostile {what}"
            code, answer = hub.push(json.dumps(doc).encode(), alpha)
            assert code == 400 and answer["error"], (what, code, answer)
        assert hub.get_json("/api/health")["runs"] == 1
        # a question missing a part, a path or method the hub has not: JSON reasons
        for path, want in (("/api/compare?a=alpha", 400), ("/api/nothing", 404)):
            code, body, _ = hub.get(path)
            assert code == want and "error" in json.loads(body), path
        code, body, _ = hub.request("DELETE", "/api/runs/1")
        assert code == 405 and "error" in json.loads(body)
        # what every answer says of itself; the login form is never framed nor kept
        for path in ("/", "/login", "/api/clusters", "/api/nothing"):
            headers = {k.lower(): v for k, v in hub.get(path)[2].items()}
            assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
            assert "frame-ancestors 'none'" in headers["content-security-policy"], path
        assert {k.lower(): v for k, v in hub.get("/login")[2].items()}["cache-control"] == "no-store"
        # the Host header fills no cache and makes no link
        code, page, _ = hub.request("GET", "/", headers={"Host": "evil.example"})
        assert code == 200 and b"evil.example" not in page
        # control characters (ESC, BEL, C1) are escapes on every page: the cluster's, the comparison's SVG
        doc = json.loads(gzip.decompress(bundles["launches"]))
        doc["run"]["label"] = "\x1b[31mred\x07bell\x9bcsi"
        code, answer = hub.push(json.dumps(doc).encode(), alpha)
        assert code == 201
        cluster_name = "c\x1b[2Jx"  # a curve's key carries test parameters; a cluster name cannot hold one
        assert run_scope("hub", "token", "add", cluster_name, "--db", hub_db).returncode == 2
        for path in ("/clusters/alpha", f"/compare?a=run/1&b=run/{answer['id']}", f"/runs/{answer['id']}"):
            page = hub.get(path)[1].decode()
            assert not any(c in page for c in "\x1b\x07\x9b"), path
        assert "\\x1b[31mred\\x07bell\\x9bcsi" in hub.get("/clusters/alpha")[1].decode()
    # names are unique regardless of case
    p = run_scope("hub", "token", "add", "ALPHA", "--db", hub_db)
    assert p.returncode == 2 and "unique regardless of case" in p.stderr and len(p.stderr.splitlines()) == 1


def _tokens(url: str) -> list[list[str]]:
    p = run_scope("hub", "token", "list", "--db", url)
    assert p.returncode == 0, p.stderr
    return [line.split() for line in p.stdout.splitlines()]


@pytest.mark.system
def test_private_hub(tmp_path, local):
    """--private: nothing is read without a live read token, the schema and the docs included;
    a push token pushes and reads nothing; a browser's cookie holds a session that expires and
    ends at /logout or with its token, never the token, and never authorises a push."""
    url = str(tmp_path / "hub.db")
    alpha, reader = token(url, "alpha"), token(url, "--read")
    with Hub(url, "--private") as hub:
        assert hub.push(local[2]["layers"], alpha)[0] == 201
        paths = ("/", "/clusters/alpha", "/api/clusters", "/api/runs/1", "/api/runs/1/bundle", "/runs/1")
        for path in (*paths, "/openapi.json", "/docs/api", "/compare?a=alpha&b=run/1"):
            assert hub.get(path)[0] == 401, path
            assert hub.get(path, alpha)[0] == 401, path  # a machine's push token opens nothing
            assert hub.get(path, reader)[0] in (200, 400), path
        assert json.loads(hub.get("/api/health")[1]) == {"ok": True}  # up, and nothing more
        assert json.loads(hub.get("/api/health", reader)[1]) == {"ok": True, "clusters": 1, "runs": 1}
        assert b"read token" in hub.get("/")[1]
        headers = {k.lower(): v for k, v in hub.get("/", reader)[2].items()}
        assert headers["cache-control"] == "no-store" and headers["x-content-type-options"] == "nosniff"
        # a browser gives the token once, at /login: an HttpOnly cookie with a session id, never the token
        login = {"Content-Type": "application/x-www-form-urlencoded"}
        assert hub.request("POST", "/login", f"token={alpha}".encode(), login)[0] == 401  # not a push token
        code, _, headers = hub.request("POST", "/login", f"token={reader}".encode(), login)
        cookie = next(v for k, v in headers.items() if k.lower() == "set-cookie")
        assert code == 303 and "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
        assert reader not in cookie and "scope_session_" in cookie and "Max-Age=43200" in cookie
        jar = {"Cookie": cookie.split(";")[0]}
        assert hub.request("GET", "/clusters/alpha", headers=jar)[0] == 200
        code, body, _ = hub.request("POST", "/api/runs", local[2]["baseline"], jar)
        assert code == 401  # the cookie never pushes: a page cannot push for its reader
        assert hub.request("POST", "/logout", b"", jar)[0] == 303
        assert hub.request("GET", "/clusters/alpha", headers=jar)[0] == 401  # ended
        assert hub.request("POST", "/login", b"token=scope_wrong", login)[0] == 401
        assert hub.request("POST", "/login", b"token=x" * 2000, login)[0] == 413  # a form, not an upload
        multipart = {"Content-Type": "multipart/form-data; boundary=x"}
        assert hub.request("POST", "/login", b"--x\r\n" * 1000, multipart)[0] == 415
        _, _, headers = hub.request("POST", "/login", f"token={reader}".encode(), login)
        jar = {"Cookie": next(v for k, v in headers.items() if k.lower() == "set-cookie").split(";")[0]}
        tid = next(t["id"] for t in tokens.list_tokens(hubdb.open_engine(url, pool=1)) if t["kind"] == "read")
        assert run_scope("hub", "token", "revoke", str(tid), "--db", url).returncode == 0
        assert hub.request("GET", "/clusters/alpha", headers=jar)[0] == 401  # a revoked token's sessions end


@pytest.mark.unit
def test_the_openapi_schema_names_every_route(tmp_path):
    """/openapi.json lists every API route the app serves, with its methods, and nothing else."""
    from scope.hub.app import Config, create
    from scope.hub.openapi import SCHEMA

    app = create(Config(url=str(tmp_path / "hub.db")))
    served = {(r.path, m.lower()) for r in app.routes if r.path.startswith("/api/") for m in r.methods - {"HEAD"}}
    listed = {(path, m) for path, ops in SCHEMA["paths"].items() for m in ops}
    assert served == listed


@pytest.mark.system
def test_push_client_refusals(tmp_path, local):
    """scope push says what went wrong in one line, exits non-zero, stores nothing: no token,
    a token on the command line, a hub that is down, a bad address."""
    db, ids, _ = local
    rid = str(ids["layers"])
    p = run_scope("push", rid, "--hub", "http://127.0.0.1:9", db=db, env={"SCOPE_HUB_TOKEN": ""})
    assert p.returncode == 2 and "no hub token" in p.stderr
    p = run_scope("push", rid, "--hub", "http://127.0.0.1:9", "--token", "x", db=db)
    assert p.returncode == 2  # there is no --token: a token is never a command-line value
    port = pg_server.free_port()
    p = run_scope("push", rid, "--hub", f"http://127.0.0.1:{port}", db=db, env={"SCOPE_HUB_TOKEN": "t"})
    assert p.returncode == 3 and "cannot reach the hub" in p.stderr and len(p.stderr.splitlines()) == 1
    p = run_scope("push", rid, "--hub", "ftp://example.org", db=db, env={"SCOPE_HUB_TOKEN": "t"})
    assert p.returncode == 2 and "not a hub's address" in p.stderr
    (tmp_path / "tok").write_text("scope_abc\n")
    p = run_scope("push", rid, "--hub", f"http://127.0.0.1:{port}", "--token-file", tmp_path / "tok", db=db)
    assert p.returncode == 3  # the file's token was read; the hub is down


@pytest.mark.service
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_many_clients_at_once(kind, local, request, tmp_path):
    """20 clients pushing 10 runs each at once store exactly 200 runs (2 workers on PostgreSQL)."""
    from concurrent.futures import ThreadPoolExecutor

    hub_db = database(kind, tmp_path, request)
    alpha = token(hub_db, "alpha")
    base = local[2]["layers"]
    workers = 2 if hub_db.startswith("postgresql") else 1
    with Hub(hub_db, workers=workers) as hub:

        def client(k: int) -> list[bool]:  # scope push's own client, as 20 clusters' jobs would run it
            return [push(hub.base, alpha, relabelled(base, f"client {k} run {j}"))["stored"] for j in range(10)]

        with ThreadPoolExecutor(20) as pool:
            stored = [c for cs in pool.map(client, range(20)) for c in cs]
        assert stored.count(True) == 200
        assert hub.get_json("/api/health")["runs"] == 200
        assert hub.get_json("/api/clusters")["clusters"][0]["runs"] == 200


def integrity(url: str) -> dict:
    """What the hub's database holds, read directly: runs, runs without their bundle, and
    clusters whose counter disagrees with their runs."""
    from sqlalchemy import text

    from scope.hub import db

    eng = db.open_engine(url, pool=1)
    with eng.connect() as conn:
        one = lambda q: conn.execute(text(q)).scalar()  # noqa: E731
        out = {
            "runs": one("SELECT count(*) FROM runs"),
            "without_bundle": one(
                "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM bundles b WHERE b.run_id = r.id)"
            ),
            "miscounted": one(
                "SELECT count(*) FROM clusters c"
                " WHERE c.runs != (SELECT count(*) FROM runs r WHERE r.cluster_id = c.id)"
            ),
        }
    eng.dispose()
    return out


@pytest.mark.service
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_killed_mid_push(kind, local, request, tmp_path):
    """kill -9 in the middle of pushes: no partial run, and after a restart every push that was
    acknowledged is served."""
    import signal
    import threading
    import time

    from scope.errors import ScopeError

    url = database(kind, tmp_path, request)
    alpha = token(url, "alpha")
    base = local[2]["baseline"]  # 1.1 MB: a push long enough to be cut in its middle
    hub = Hub(url).start()
    acked: list[int] = []
    stop = threading.Event()

    def pusher(k: int) -> None:
        j = 0
        while not stop.is_set():
            try:
                acked.append(push(hub.base, alpha, relabelled(base, f"pusher {k} push {j}"), timeout=30)["id"])
            except ScopeError:
                return  # the hub is gone
            j += 1

    threads = [threading.Thread(target=pusher, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120
    while len(acked) < 8 and time.monotonic() < deadline:
        time.sleep(0.05)
    hub.stop(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join(60)
    assert len(acked) >= 8
    held = integrity(url)
    assert held["without_bundle"] == 0 and held["miscounted"] == 0
    assert held["runs"] >= len(set(acked))  # a push stored but not yet acknowledged may be there too
    with Hub(url) as again:
        for rid in set(acked):
            code, body, _ = again.get(f"/api/runs/{rid}/bundle")
            assert code == 200 and json.loads(gzip.decompress(body))["format"] == "scope-run"


@pytest.mark.service
def test_pages_in_a_browser(local, tmp_path):
    """The list, a cluster, the comparison and a run in Chromium (Playwright) at 1280 and 375 px:
    the figures are there, nothing overflows the page sideways, no console error."""
    from tests.test_report import CHROMIUM

    if not CHROMIUM:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (.ci/run installs it)")
        pytest.skip("chromium not installed")
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    url = str(tmp_path / "hub.db")
    alpha, beta = token(url, "alpha"), token(url, "beta")
    _, _, bundles = local
    with Hub(url) as hub:
        for tok, name in ((alpha, "baseline"), (alpha, "windows"), (beta, "layers"), (beta, "baseline")):
            assert hub.push(relabelled(bundles[name], f"{name} <b>bold</b>"), tok)[0] == 201
        p8 = hub.get_json("/api/clusters/alpha")["history"]
        lat = next(r["latency"] for r in p8 if r["latency"])
        pages = {
            "/": ["alpha", "beta", f"{lat:.3g}"],
            "/clusters/alpha": ["Headline figures over time", "coll.allreduce", "<b>bold</b>"],
            # run 4: beta's baseline (its latest only while the replays that made it fell in one
            # second: a cluster's latest is the run started last, and beta's layers ran after it)
            "/compare?a=run/1&b=run/4": ["Point by point", "coll.allreduce", "Layers side by side"],
            # alpha's latest is its collectives' run: the clusters are matched on older runs (issue 70)
            "/compare?a=alpha&b=beta": ["matched on run", "The answer"],
            "/runs/1": ["SCOPE hub: run 1"],
        }
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            for width in (1280, 375):
                ctx, page, errors = watched_page(browser, width)
                for path, needles in pages.items():
                    assert page.goto(hub.base + path).status == 200, path
                    text = page.inner_text("body")
                    for needle in needles:
                        assert needle in text, (path, width, needle)
                    if path != "/runs/1":  # the report is SCOPE's own, checked by tests/test_report.py
                        wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                        assert wide <= 0, f"{path} overflows {width} px by {wide} px"
                assert errors == [], errors
                ctx.close()
            browser.close()


@pytest.mark.service
def test_a_clusters_history_marks_its_change(tmp_path, local):
    """12 runs pushed, the last 6 with every median 25 % higher and another MPI: the cluster's
    page and JSON find the step in the latency at run 7 and name the MPI (scope history's
    detector, on the hub's figures)."""
    url = str(tmp_path / "hub.db")
    alpha = token(url, "alpha")
    base = json.loads(gzip.decompress(local[2]["launches"]))
    with Hub(url) as hub:
        for k in range(1, 13):
            doc = json.loads(json.dumps(base))
            doc["run"]["started_utc"] = f"2026-11-{k:02d}T10:00:00Z"
            doc["run"]["label"] = f"nightly {k}"
            factor = (1 + 0.003 * ((k * 7) % 5)) * (1.25 if k >= 7 else 1.0)
            for p in doc["points"]:
                if p["launch"] is None:
                    stats = p["record"]["stats"]
                    for key in ("median", "ci_lo", "ci_hi"):
                        stats[key] = stats[key] * factor
            if k >= 7:
                doc["context"]["mpi"]["library"] = "MPICH Version: 5.1.0"
            assert hub.push(json.dumps(doc).encode(), alpha)[0] == 201
        c = hub.get_json("/api/clusters/alpha")
        (step,) = [ch for ch in c["changes"] if ch["figure"] == "latency" and ch["kind"] == "step"]
        assert c["history"][6]["id"] == step["run"] and step["step_ci"][0] < 0.25 < step["step_ci"][1]
        assert step["changed"]["MPI"][1] == "MPICH Version: 5.1.0"
        page = hub.get("/clusters/alpha")[1].decode()
        changes = page[page.find('id="changes"') :]
        assert 'stroke-dasharray="4 3"' in page and "MPI: " in changes[: changes.find("</table>")], changes[:3000]
        (row,) = hub.get_json("/api/clusters")["clusters"]  # issue 70: the list wears the step as its badge
        assert row["regression"].startswith("latency +2") and f"since run {step['run']} (a step)" in row["regression"]


@pytest.mark.unit
def test_the_frozen_migrations_make_the_tables_the_queries_read(tmp_path):
    """hub/migrations.py freezes each shipped step (issue 67); together they must make exactly
    the tables and columns hub/tables.py declares for the queries."""
    from sqlalchemy import inspect

    from scope.hub.tables import meta

    eng = hubdb.open_engine(str(tmp_path / "hub.db"))
    hubdb.migrate(eng)
    made = inspect(eng)
    assert set(made.get_table_names()) == set(meta.tables)
    for name, table in meta.tables.items():
        columns = {c["name"]: c for c in made.get_columns(name)}
        assert set(columns) == {c.name for c in table.columns}, name
        for c in table.columns:
            assert columns[c.name]["nullable"] == c.nullable or c.primary_key, (name, c.name)


@pytest.mark.service
def test_every_series_is_picked_and_read(tmp_path, local):
    """Issue 70: every series on the hub, not only three headline figures.  12 runs pushed,
    the last 6 with every point 25 % slower and another MPI: the large ping-pong (no headline)
    is listed, picked in the server-rendered form and found to step at run 7 with the MPI named;
    a hub whose runs were stored before series were kept reads them from their bundles."""
    url = str(tmp_path / "hub.db")
    alpha = token(url, "alpha")
    base = json.loads(gzip.decompress(local[2]["launches"]))
    with Hub(url) as hub:
        for k in range(1, 13):
            factor = (1 + 0.003 * ((k * 7) % 5)) * (1.25 if k >= 7 else 1.0)
            assert hub.push(night(base, k, factor, "MPICH Version: 5.1.0" if k >= 7 else None), alpha)[0] == 201
        (row,) = hub.get_json("/api/clusters")["clusters"]  # the list's trend: 12 runs, the newest 25 % over
        assert len(row["latency_trend"]) == 12 and row["latency_change"] == pytest.approx(
            0.25, rel=1e-6
        )  # 1.012 its median
        every = hub.get_json("/api/clusters/alpha/series")["series"]
        tests = {s["test"] for s in every}
        assert tests == {"p2p.pingpong"} and len(every) == 2 and all(s["runs"] == 12 for s in every)
        s4k = max(every, key=lambda s: s["size"])
        got = hub.get_json(f"/api/clusters/alpha/series/{s4k['id']}")
        assert [r["id"] for r in got["runs"]] == list(range(1, 13))
        assert got["runs"][6]["median"] / got["runs"][0]["median"] == pytest.approx(
            1.25 * 1.012 / 1.006, rel=1e-9
        )  # the factors planted at runs 7 and 1
        (step,) = [c for c in got["changes"] if c["kind"] == "step"]
        assert step["run"] == 7 and step["step_ci"][0] < 0.25 < step["step_ci"][1]
        assert step["changed"]["MPI"] == ["MPICH Version: 5.0.2", "MPICH Version: 5.1.0"] or "MPI" in step["changed"]
        cluster = hub.get("/clusters/alpha")[1].decode()  # the cluster page's form names every test
        assert 'action="/clusters/alpha/series"' in cluster and ">p2p.pingpong (" in cluster
        listing = hub.get("/clusters/alpha/series?test=p2p.pingpong")[1].decode()
        assert f'<option value="{s4k["id"]}">{s4k["size"] // 1024} KiB · 2 ranks · blocking=yes' in listing
        page = hub.get(f"/clusters/alpha/series?series={s4k['id']}")[1].decode()
        changes = page[page.find('id="changes"') :]
        assert 'stroke-dasharray="4 3"' in page and "MPI: " in changes[: changes.find("</table>")]
        assert page.count('<tr><td><a href="/runs/') == 12
        for bad in ("?series=x1", "?series=99999", "?test=%3Cscript%3E"):  # hostile or absent: a 404 page, escaped
            code, body, _ = hub.get("/clusters/alpha/series" + bad)
            assert code == 404 and b"<script>" not in body, (bad, code)
        assert hub.get(f"/api/clusters/alpha/series/{s4k['id'] + 10**6}")[0] == 404
    eng = hubdb.open_engine(url)  # a hub from before series were kept: its rows gone, its runs unread
    with hubdb.writing(eng) as conn:
        for table in ("deliveries", "alerts", "observations"):  # alerts name series: gone first
            conn.execute(hubdb.text(f"DELETE FROM {table}"))
        conn.execute(hubdb.text("DELETE FROM series"))
        conn.execute(hubdb.text("UPDATE runs SET series = NULL"))
    eng.dispose()
    with Hub(url) as hub:
        again = hub.get_json("/api/clusters/alpha/series")["series"]
        assert len(again) == len(every) and all(s["runs"] == 12 for s in again)
