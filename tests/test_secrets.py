"""Nothing secret leaves the machine (issue 67): scope/secrets.py's one rule, a store and a hub
made by the previous release with a token in their runs migrated clean (tests/fixtures/
old-release, made by scope at commit 8c3a46f with SCOPE_HUB_TOKEN=s3cr3t-tok-PLANTED and
UCX_PASSWORD=pw-PLANTED set, an OSU import from a folder named alice-PRIVATE-home and an io.write run on a
scratch folder named PRIVATE-scratch), and a pushed run of every origin walked for every value
of a private set planted for the test."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import sqlite3

import pytest

from scope import secrets
from scope.errors import ScopeError
from scope.hub import db as hubdb
from scope.hub.client import push
from scope.hub.migrations import MIGRATIONS
from scope.store import Store
from scope.store.bundle import dump, encode
from tests.conftest import ROOT, run_scope
from tests.hub_server import Hub
from tests.test_clock_library import event, header, write

OLD = ROOT / "tests" / "fixtures" / "old-release"
OLD_PLANTED = ("s3cr3t-tok-PLANTED", "pw-PLANTED", "SCOPE_WATCH_PID", "SCOPE_DB")


def unpacked(name: str, to) -> str:
    to.write_bytes(gzip.decompress((OLD / f"{name}.db.gz").read_bytes()))
    return str(to)


@pytest.mark.unit
def test_the_rule_for_the_environment():
    env = {
        "SCOPE_HUB_TOKEN": "abcdefgh1234",
        "FI_PSM3_PASSWORD": "pw",
        "UCX_TLS": "sm,self",
        "MPIR_CVAR_CH4_NETMOD": "ucx",
        "SCOPE_WATCH_PID": "4242",
        "SCOPE_DB": "/home/alice/results.db",
        "SCOPE_HUB_DB": "postgresql://scope:hunter22@db/scope",
        "SCOPE_LAUNCHES": "3",
        "PATH": "/usr/bin",
        "MY_API_KEY": "zzzzzzzz",
        "OMP_URL": "https://u:longpassword@host/x",
        "SSH_AUTH_SOCK": "/usr/lib",  # a path a credential-named variable points at: not searched for in text
    }
    kept = secrets.environment(env)
    assert kept == {
        "SCOPE_HUB_TOKEN": "<redacted>",  # named, so provenance shows it was set
        "FI_PSM3_PASSWORD": "<redacted>",
        "UCX_TLS": "sm,self",
        "MPIR_CVAR_CH4_NETMOD": "ucx",
        "SCOPE_LAUNCHES": "3",
        "MY_API_KEY": "<redacted>",
        "OMP_URL": "https://u:<redacted>@host/x",
        "SSH_AUTH_SOCK": "<redacted>",
    }
    # a credential's value, and a URL's password, are looked for in free text; a short one is not
    assert set(secrets.known(env)) == {"abcdefgh1234", "zzzzzzzz", "hunter22", "longpassword"}


@pytest.mark.unit
def test_free_text_and_command_lines():
    s = secrets.Scrubber(secrets=["abcdefgh1234"], private=["/scratch/alice"])
    assert s.text("bad token abcdefgh1234 in /scratch/alice/io.1") == "bad token <redacted> in <private>/io.1"
    assert s.text("export GITHUB_TOKEN=ghp_x MPIR_CVAR_X=1") == "export GITHUB_TOKEN=<redacted> MPIR_CVAR_X=1"
    assert s.text("postgresql://scope:pw@db/x") == "postgresql://scope:<redacted>@db/x"
    argv = ["mpiexec", "-genv", "MY_SECRET", "v1", "-x", "DB_PASSWORD=v2", "--password", "v3", "--token-file", "f"]
    assert s.argv(argv) == [
        "mpiexec", "-genv", "MY_SECRET", "<redacted>", "-x", "DB_PASSWORD=<redacted>", "--password", "<redacted>",
        "--token-file", "f",
    ]  # fmt: skip
    assert s.argv(["--io-dir", "/scratch/alice/x"]) == ["--io-dir", "<private>/x"]


@pytest.mark.unit
def test_the_engine_records_the_same_variables_the_rule_keeps():
    """The engine's own filter (engine/records.c) is the rule's list of measured prefixes."""
    text = (ROOT / "engine" / "records.c").read_text()
    block = re.search(r"env_prefixes\[\] = \{(.*?)\};", text, re.S).group(1)
    assert tuple(re.findall(r'"([^"]+)"', block)) == secrets.MEASURED


@pytest.mark.unit
def test_a_store_of_the_previous_release_is_migrated_clean(tmp_path):
    path = unpacked("store", tmp_path / "old.db")
    before = sqlite3.connect(path)
    assert before.execute("PRAGMA user_version").fetchone()[0] == 12
    points = before.execute("SELECT count(*) FROM points").fetchone()[0]
    leaked = before.execute("SELECT context FROM runs WHERE id = 1").fetchone()[0]
    assert all(v in leaked for v in OLD_PLANTED)  # what the fixture holds before
    before.close()
    store = Store(path)
    rows = [dict(r) for r in store.db.execute("SELECT command, context, stderr, reason FROM runs")]
    rows += [dict(r) for r in store.db.execute("SELECT message, hint, record FROM events")]
    for row in rows:
        for value in row.values():
            assert not any(v in (value or "") for v in OLD_PLANTED), value
    ctx = json.loads(rows[0]["context"])
    assert ctx["env"]["SCOPE_HUB_TOKEN"] == "<redacted>" and ctx["env"]["SCOPE_LAUNCHES"] == "1"
    assert store.db.execute("SELECT count(*) FROM points").fetchone()[0] == points  # nothing measured is lost
    assert "PRIVATE-scratch" in rows[2]["command"]  # private folders stay in their own store ...
    for rid in (1, 2, 3):  # ... and leave it as <private>
        text = gzip.decompress(encode(dump(store, rid))).decode()
        assert "PRIVATE" not in text and not any(v in text for v in OLD_PLANTED), rid
    assert json.loads(gzip.decompress(encode(dump(store, 2))))["run"]["source"] == "<private>/osu_latency.txt"


@pytest.mark.unit
def test_a_hub_of_the_previous_release_is_migrated_clean(tmp_path):
    path = unpacked("hub", tmp_path / "hub.db")
    old = sqlite3.connect(path)
    assert old.execute("SELECT version FROM hub_schema").fetchone()[0] == 1
    assert old.execute("SELECT count(*) FROM reports").fetchone()[0] == 2  # drawn with the private folders
    assert b"PRIVATE" in old.execute("SELECT html FROM reports WHERE run_id = 3").fetchone()[0]
    raw = [d for (d,) in old.execute("SELECT data FROM bundles ORDER BY run_id")]
    assert b"s3cr3t-tok-PLANTED" in gzip.decompress(raw[0])
    old.close()
    eng = hubdb.open_engine(path)
    assert hubdb.migrate(eng) == len(MIGRATIONS)
    assert hubdb.counts(eng) == {"clusters": 1, "runs": 3}
    for rid in (1, 2, 3):
        body = gzip.decompress(hubdb.bundle_of(eng, rid))
        assert b"PRIVATE" not in body and not any(v.encode() in body for v in OLD_PLANTED), rid
        assert hubdb.run_row(eng, rid)["digest"] == hashlib.sha256(body).hexdigest()
        assert hubdb.report_of(eng, rid) is None  # drawn again from the clean bundle when asked
    assert hubdb.migrate(eng) == len(MIGRATIONS)  # a second time: nothing to do


@pytest.mark.unit
def test_a_push_refuses_a_bundle_that_holds_its_token(tmp_path):
    """The second line: a bundle with the token in it is never sent (nothing listens there)."""
    token = "scope_push_0123456789abcdef"
    data = gzip.compress(json.dumps({"run": {"label": f"x {token}"}}).encode())
    with pytest.raises(ScopeError, match="holds the push token itself; nothing was sent"):
        push("http://127.0.0.1:9", token, data)


PLANTED = {
    "SCOPE_HUB_TOKEN": None,  # the push token itself, set below
    "SCOPE_TEST_SECRET_TOKEN": "tok-5d1e0c9a-PLANTED",
    "UCX_IB_PASSWORD": "pw-77a1-PLANTED",
    "MPIR_CVAR_SERVER_URL": "https://scope:urlpass-PLANTED@db.example/x",
}


def walked(body: bytes, private: list[str]) -> list[str]:
    """The planted values a document still holds."""
    text = body.decode(errors="replace")
    values = [v for k, v in PLANTED.items() if k != "MPIR_CVAR_SERVER_URL"] + ["urlpass-PLANTED", *private]
    return [v for v in values if v and v in text]


@pytest.mark.mpi
def test_a_pushed_run_of_every_origin_holds_no_planted_secret_or_private_value(tmp_path, monkeypatch):
    """A live run (its stream saved, with an I/O test on a scratch folder), that saved stream
    imported, OSU, IMB and CSV imports, a program's events: each pushed to a live hub with
    credentials in the environment and every private folder named PRIVATE; each bundle and
    JSON document the hub serves holds none of them, while the names of the variables remain."""
    hub_url = str(tmp_path / "hub.db")
    p = run_scope("hub", "token", "add", "site", "--db", hub_url)
    token = p.stdout.strip()
    planted = dict(PLANTED, SCOPE_HUB_TOKEN=token)
    home = tmp_path / "alice-PRIVATE-home"
    scratch, saved, events = home / "scratch", home / "saved", home / "ev"
    for d in (scratch, events):
        d.mkdir(parents=True)
    for name in ("osu_latency.txt", "imb.txt"):
        shutil.copy(ROOT / "tests" / "data" / name, home / name)
    (home / "t.csv").write_text("size,time_us\n8,1.5\n64,1.75\n")
    write(events / "ev", {r: [header(r), event("halo", 1000.0 + r, 5.0, 2000)] for r in (0, 1)})
    db = home / "results.db"
    env = dict(planted, SCOPE_DB=str(db))
    argv = ["run", "p2p.pingpong", "io.write", "--sizes", "64K", "--budget", "0.05", "--launches", "1"]
    p = run_scope(*argv, "--io-dir", scratch, "--save-stream", saved, db=db, env=env)
    assert p.returncode == 0, p.stderr
    for source in (saved, home / "osu_latency.txt", home / "imb.txt", home / "t.csv", events / "ev"):
        p = run_scope("import", source, db=db, env=env)
        assert p.returncode == 0, p.stderr
    store = Store(db)
    ids = [r["id"] for r in store.runs()]
    assert len(ids) == 6 and {store.run(i)["origin"] for i in ids} >= {"scope", "osu", "imb", "csv", "events"}
    store.close()
    private = [str(home)]
    with Hub(hub_url) as hub:
        p = run_scope("push", *ids[:-1], "--hub", hub.base, db=db, env=env)  # the events run is no bundle
        assert p.returncode == 0, p.stderr
        for rid in range(1, 6):
            for path in (f"/api/runs/{rid}/bundle", f"/api/runs/{rid}"):
                code, body, _ = hub.get(path)
                text = gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body
                where = re.findall(rb".{80}PRIVATE-home.{80}", text)[:3]
                assert code == 200 and walked(text, private) == [], (path, where)
        first = json.loads(gzip.decompress(hub.get("/api/runs/1/bundle")[1]))
        assert first["context"]["env"]["SCOPE_HUB_TOKEN"] == "<redacted>"
        assert first["context"]["env"]["UCX_IB_PASSWORD"] == "<redacted>"
        assert first["context"]["env"]["MPIR_CVAR_SERVER_URL"] == "https://scope:<redacted>@db.example/x"
        assert "SCOPE_WATCH_PID" not in first["context"]["env"] and "SCOPE_DB" not in first["context"]["env"]
        code, page, _ = hub.get("/runs/1")  # the report the hub draws
        assert code == 200 and walked(page, private) == []
    # the events run stays local (no bundle carries it), and its local exports hold no secret
    p = run_scope("export", str(ids[-1]), "--format", "json", db=db, env=env)
    assert p.returncode == 0 and walked(p.stdout.encode(), []) == []
    for f in saved.iterdir():  # the saved stream, as written
        assert walked(f.read_bytes(), []) == [], f.name


@pytest.mark.unit
def test_an_older_scopes_push_is_kept_under_the_rule(tmp_path):
    """A bundle from the previous release, with the pusher's token and the rest, pushed as it is:
    the hub keeps it, and serves it, redacted."""
    old = sqlite3.connect(unpacked("hub", tmp_path / "old.db"))
    data = old.execute("SELECT data FROM bundles WHERE run_id = 1").fetchone()[0]
    old.close()
    url = str(tmp_path / "hub.db")
    token = run_scope("hub", "token", "add", "site", "--db", url).stdout.strip()
    with Hub(url) as hub:
        code, answer = hub.push(data, token)
        assert code == 201, answer
        body = gzip.decompress(hub.get("/api/runs/1/bundle")[1])
        assert not any(v.encode() in body for v in OLD_PLANTED) and b'"SCOPE_HUB_TOKEN":"<redacted>"' in body
        # and a push carrying its own token anywhere is redacted too, not served
        doc = json.loads(gzip.decompress(data))
        doc["run"]["label"] = f"pushed with {token}"
        code, answer = hub.push(gzip.compress(json.dumps(doc).encode()), token)
        assert code == 201, answer
        body = gzip.decompress(hub.get(f"/api/runs/{answer['id']}/bundle")[1])
        assert token.encode() not in body and b"pushed with <redacted>" in body


@pytest.mark.unit
def test_what_a_failed_run_keeps_holds_no_credential(tmp_path, monkeypatch):
    """The stderr and reason of a failed launch, an error event's message: the environment's
    credentials and any NAME=value of a credential's name redacted before they are stored."""
    monkeypatch.setenv("SCOPE_HUB_TOKEN", "scope_tok_77aa55bb")
    store = Store(tmp_path / "r.db")
    rid = store.begin_run(["mpiexec", "-genv", "DB_PASSWORD", "hunter22x", "engine"], "mpiexec", 2)
    store.add_event(rid, {"type": "error", "test": "p2p.pingpong", "message": "auth scope_tok_77aa55bb refused"})
    stderr = "rank 0: SCOPE_HUB_TOKEN=scope_tok_77aa55bb\nAPI_KEY=abc123 failed\n"
    store.finish_run(rid, "incomplete", "exit 1: token scope_tok_77aa55bb", stderr)
    row = store.run(rid)
    assert "scope_tok_77aa55bb" not in row["stderr"] + row["reason"] and "abc123" not in row["stderr"]
    assert json.loads(row["command"]) == ["mpiexec", "-genv", "DB_PASSWORD", "<redacted>", "engine"]
    assert row["stderr"] == "rank 0: SCOPE_HUB_TOKEN=<redacted>\nAPI_KEY=<redacted> failed\n"
    (event,) = store.events(rid)
    assert event["message"] == "auth <redacted> refused" and "scope_tok" not in event["record"]
