"""Collective tuning: the algorithms read from the MPI, the decision (an algorithm replaces the
default only where it is significantly faster across launches), the switch points, MPICH's
file built from the library's own tree, and the whole loop on this machine's MPICH."""

import json
import signal
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from scope.analysis.tuning import DEFAULT, Band, algorithms_from, bands, decide
from scope.errors import ScopeError
from scope.model import Point
from scope.store import Store
from scope.tune.files import library_tree, mpi_library, openmpi_rules, openmpi_rules_error, tuned_subtree
from tests.conftest import as_at_a_terminal, run_scope, wait_for_first_point

MPICH_TEXT = """Variable to select bcast algorithm
auto - Internal algorithm selection (can be overridden with MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)
binomial                                - Force Binomial Tree
nb                                      - Force nonblocking algorithm
scatter_ring_allgather                  - Force Scatter Ring"""


@pytest.mark.unit
def test_algorithms_are_read_from_the_description_mpich_gives():
    assert algorithms_from(MPICH_TEXT) == ["binomial", "nb", "scatter_ring_allgather"]


def _pt(size: int, launches: list[float]) -> Point:
    rec = {"launches": {"planned": len(launches), "medians": launches}}
    given = {"seq": 0, "test": "coll.bcast", "params": {"procs": 2}, "unit": "us", "size": size}
    med = sorted(launches)[len(launches) // 2]
    return Point(**{f.name: None for f in fields(Point)} | given | {"median": med, "load_record": lambda p: rec})


@pytest.mark.unit
def test_an_algorithm_replaces_the_default_only_where_it_is_significantly_faster():
    pts = {
        DEFAULT: [_pt(8, [10.0, 10.1, 9.9]), _pt(64, [10.0, 10.1, 9.9]), _pt(1024, [20.0, 20.2, 19.8])],
        "ring": [_pt(8, [5.0, 5.1, 4.9]), _pt(64, [5.0, 5.05, 4.95]), _pt(1024, [19.9, 20.3, 19.7])],
    }
    got = {c.size: c for c in decide(pts)}
    assert got[8].algorithm == got[64].algorithm == "ring" and got[8].verdict == "faster"
    assert got[1024].fastest == "ring" and got[1024].algorithm == DEFAULT  # 0.5 % faster: not a gain
    assert [(b.lo, b.hi, b.algorithm) for b in bands(list(got.values()))] == [(8, 64, "ring"), (1024, 1024, DEFAULT)]
    for c in got.values():  # the columns shown are what the ratio divides (geometric means of launches)
        assert c.ratio == pytest.approx(c.fastest_us / c.default_us)
    assert got[8].default_us == pytest.approx((10.0 * 10.1 * 9.9) ** (1 / 3))


@pytest.mark.unit
def test_the_file_keeps_the_library_tree_where_the_default_stays():
    library = {"comm_hierarchy=parent": {"algorithm=MPIR_Bcast_intra_binomial": {}}}
    blob = b"...MPIR_Bcast_intra_scatter_ring_allgather..."
    tree = tuned_subtree(
        "bcast", [Band(2, 8, 64, DEFAULT), Band(2, 512, 1 << 20, "scatter_ring_allgather")], library, blob
    )
    assert list(tree) == ["comm_size<=2", "comm_size=any"]
    assert tree["comm_size<=2"] == {
        "avg_msg_size<=64": library,
        "avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_scatter_ring_allgather": {}},
    }
    assert tree["comm_size=any"] == library
    # k_brucks takes its radix in the file; a tree algorithm's shape is not written: the library decides
    blob += b"MPIR_Alltoall_intra_k_brucks MPIR_Bcast_intra_pipelined_tree"
    kb = tuned_subtree("alltoall", [Band(2, 8, 8, "k_brucks")], library, blob)
    assert kb["comm_size<=2"]["avg_msg_size=any"] == {"algorithm=MPIR_Alltoall_intra_k_brucks": {"k=2": {}}}
    pt = tuned_subtree("bcast", [Band(2, 8, 8, "pipelined_tree")], library, blob)
    assert pt["comm_size<=2"]["avg_msg_size=any"] == library


@pytest.mark.mpi
def test_mpich_s_own_tree_is_read_from_its_library(engine):
    tree, blob = library_tree(mpi_library(engine))
    assert "comm_type=intra" in tree["collective=allreduce"]
    assert b"MPIR_Allreduce_intra_ring" in blob and '"algorithm=MPIR_' in json.dumps(tree)


@pytest.mark.mpi
def test_tune_writes_a_file_the_mpi_accepts_and_apply_measures_it(engine, db, tmp_path):
    out = tmp_path / "tuned.json"
    common = ["--sizes", "8,64K", "--procs", "2", "--launches", "1", "--budget", "0.05"]
    p = run_scope(
        "tune", "allreduce", "--algorithms", "ring,recursive_doubling", *common, "-o", out, db=db, timeout=900
    )
    assert p.returncode == 0, p.stderr
    assert "3 algorithms measured" in p.stdout and "switch points" in p.stdout  # auto, ring, recursive_doubling
    labels = {Store(db).load_run(i).label for i in (1, 2, 3)}
    assert labels == {"tune allreduce auto", "tune allreduce ring", "tune allreduce recursive_doubling"}
    meta = json.loads((tmp_path / "tuned.json.scope.json").read_text())
    assert meta["tuned_for"]["mpi"].startswith("MPICH") and set(meta["collectives"]) == {"allreduce"}
    tree = json.loads(out.read_text())
    assert "comm_size<=2" in tree["collective=allreduce"]["comm_type=intra"]
    a = run_scope("tune", "allreduce", "--apply", out, *common, db=db, timeout=900)
    assert a.returncode == 0, a.stderr
    assert "against tuned.json" in a.stdout and "B/A" in a.stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"collective=allreduce": {"no_such_condition=1": {}}}')
    (tmp_path / "bad.json.scope.json").write_text(out.with_name("tuned.json.scope.json").read_text())
    r = run_scope("tune", "allreduce", "--apply", bad, *common, db=db)
    assert r.returncode != 0 and "bad.json cannot be used" in r.stderr and "\n" not in r.stderr.strip()


@pytest.mark.mpi
def test_tune_refuses_what_it_cannot_tune_before_launching(db):
    p = run_scope("tune", "scan", db=db)
    assert p.returncode != 0 and "cannot tune scan" in p.stderr
    p = run_scope("tune", "bcast", "--algorithms", "warp_drive", db=db)
    assert p.returncode != 0 and "no algorithm warp_drive" in p.stderr and "binomial" in p.stderr


TUNE_BAD = [
    (["-n", "0"], 2, "at least 2"),
    (["-n", "1"], 2, "at least 2"),
    (["-n", "-3"], 2, "at least 2"),
    (["--procs", "0"], 2, "--procs"),
    (["--procs", "3"], 2, "more than the run's 2 ranks"),
    (["--procs", "x"], 2, "--procs"),
    (["--budget", "nan"], 2, "--budget"),
    (["--budget", "-1"], 2, "--budget"),
    (["--budget", "1e9"], 2, "from 0.001 to 86400"),
    (["--sizes", "abc"], 2, "--sizes"),
    (["--sizes", "4M-1K"], 2, "runs backwards"),
    (["--launches", "0"], 2, "from 1 to 100"),
    (["--launches", "1000"], 2, "from 1 to 100"),
    (["--timeout", "-1"], 2, "must be positive"),
    (["--timeout", "nan"], 2, "--timeout"),
    (["--alpha", "2"], 2, "--alpha"),
    (["--min-effect", "0"], 2, "--min-effect"),
    (["-o", "/no/such/dir/t.json"], 2, "does not exist"),
    (["-o", "/tmp"], 2, "it is a directory"),
    (["--report", "/no/such/dir/t.html"], 2, "does not exist"),
    (["--ppn", "1"], 2, "--ppn places processes on testbed hosts"),
    (["--apply", "/no/such/file.json"], 2, "no tuning file"),
    (["--testbed", "nosuch"], 2, "no testbed named"),
]


@pytest.mark.mpi
@pytest.mark.parametrize("args,code,words", TUNE_BAD, ids=[" ".join(a) for a, _, _ in TUNE_BAD])
def test_tune_refuses_bad_options_before_anything_runs(engine, tmp_path, args, code, words):
    db = tmp_path / "r.db"
    p = run_scope("tune", "allreduce", *args, db=db)
    assert p.returncode == code, (args, p.returncode, p.stderr)
    assert words in p.stderr and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert not db.exists() or not Store(db).runs()  # nothing measured, nothing stored


@pytest.mark.mpi
@pytest.mark.parametrize("meta", ["{cut", "[1, 2]", "\x00\x01"])
def test_a_damaged_record_beside_a_tuning_file_is_refused_in_one_line(engine, tmp_path, meta):
    db, f = tmp_path / "r.db", tmp_path / "tuned.json"
    f.write_text("{}")
    (tmp_path / "tuned.json.scope.json").write_text(meta)
    p = run_scope("tune", "allreduce", "--apply", f, db=db)
    assert p.returncode == 2 and "is not the record scope tune writes" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and "internal error" not in p.stderr
    assert not db.exists() or not Store(db).runs()


@pytest.mark.mpi
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_tune_stops_at_once_on_a_signal_and_writes_nothing(engine, tmp_path, sig):
    """Ctrl-C or SIGTERM during the sweep: exit 130 / 143, the run that was going is closed,
    no later algorithm is launched, and no tuning file is written from a partial sweep."""
    db, out = tmp_path / "r.db", tmp_path / "t.json"
    slow = ["--sizes", "8,1K,64K", "--budget", "1", "--launches", "3", "-o", str(out)]
    cmd = [sys.executable, "-m", "scope", "--db", str(db), "tune", "allreduce", "bcast", *slow]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_at_a_terminal)
    wait_for_first_point(db)  # the first algorithm's run is measuring
    p.send_signal(sig)
    rc = p.wait(timeout=60)
    err = p.stderr.read()
    assert rc == (130 if sig == signal.SIGINT else 143), err
    assert not out.exists() and not out.with_name("t.json.scope.json").exists()
    runs = Store(db).runs()
    assert len(runs) == 1 and runs[0]["status"] == "incomplete", [dict(r) for r in runs]


@pytest.mark.unit
def test_open_mpi_rules_are_written_in_its_version_2_grammar_and_checked():
    bands = [Band(2, 8, 64, DEFAULT), Band(2, 512, 4096, "ring"), Band(4, 8, 4096, "ring")]
    text = openmpi_rules({"alltoall": bands}, {"alltoall": {"ring": 4}})
    rows = [ln.split("#")[0].split() for ln in text.splitlines()]
    assert rows[:5] == [["rule-file-version-2"], ["1"], ["3"], ["2"], ["2"]]  # alltoall is id 3; 2 sizes
    assert rows[5:8] == [["2"], ["0", "0", "0", "0", "0"], ["1024", "4", "0", "0", "0"]]  # 512 B x 2 ranks
    assert openmpi_rules_error(text) is None
    assert "first rule must start at 0" in openmpi_rules_error(text.replace("\n0 0 0 0 0", "\n8 0 0 0 0", 1))
    assert "ends early" in openmpi_rules_error("\n".join(text.splitlines()[:-1]))
    # every algorithm id against those this Open MPI offers for the collective (its MPI_T
    # enumeration): ring is 4 here; a file naming 9 once passed the grammar and was ignored
    assert openmpi_rules_error(text, {3: {1, 2, 3, 4}}) is None
    wrong = text.replace("1024 4 0 0 0", "1024 9 0 0 0", 1)
    assert "algorithm 9 does not exist for collective 3 in this Open MPI (it has 0, 1, 2, 3, 4)" in (
        openmpi_rules_error(wrong, {3: {1, 2, 3, 4}})
    )


OPENMPI = Path(sys.prefix) / "openmpi" / "bin" / "mpicc"


@pytest.mark.mpi
@pytest.mark.skipif(not OPENMPI.exists(), reason="Open MPI is not installed in .venv/openmpi (make test installs it)")
def test_tune_drives_open_mpi_through_its_mca_variables(db, tmp_path):
    shm = Path("/dev/shm")
    before = set(shm.iterdir()) if shm.is_dir() else set()
    out = tmp_path / "rules.txt"
    common = ["--mpicc", OPENMPI, "--sizes", "8,64K", "--procs", "2", "--launches", "1", "--budget", "0.05"]
    p = run_scope("tune", "allreduce", "--algorithms", "ring,recursive_doubling", *common, "-o", out, db=db)
    assert p.returncode == 0, p.stderr
    assert openmpi_rules_error(out.read_text()) is None
    forced = {r.label: r for r in (Store(db).load_run(i) for i in (1, 2, 3))}
    assert forced["tune allreduce ring"].context.mpi_library.startswith("Open MPI")
    a = run_scope("tune", "allreduce", "--apply", out, *common, db=db)
    assert a.returncode == 0, a.stderr
    assert "against rules.txt" in a.stdout
    # the MPI's version is read without starting it: an Open MPI singleton left its segment
    left = {p.name for p in (set(shm.iterdir()) if shm.is_dir() else set()) - before if "sm_segment" in p.name}
    assert not left, left


@pytest.mark.unit
def test_the_tuning_report_draws_every_algorithm_with_the_chosen_band(tmp_path):
    from scope.views.tuning import write_report

    pts = {
        DEFAULT: [_pt(8, [10.0, 10.1, 9.9]), _pt(1024, [20.0, 20.2, 19.8])],
        "ring": [_pt(8, [5.0, 5.1, 4.9]), _pt(1024, [19.9, 20.3, 19.7])],
    }
    choices = decide(pts)
    page = write_report(str(tmp_path / "t.html"), [("bcast", pts, choices, bands(choices))]).read_text()
    assert page.count("<img") == 1 and "coll.bcast algorithms at 2 processes" in page
    assert "<b>ring</b>" in page and "<b>auto</b>" in page  # the table's choices: ring at 8 B, the default above


@pytest.mark.unit
def test_processes_per_node_key_mpich_s_tree_and_split_the_bands():
    library, blob = {"algorithm=MPIR_Bcast_intra_binomial": {}}, b"MPIR_Bcast_intra_scatter_ring_allgather"
    pts = {DEFAULT: [_pt(8, [10.0, 10.1, 9.9])], "ring": [_pt(8, [5.0, 5.1, 4.9])]}
    one, two = decide(pts, ppn=1), decide(pts, ppn=2)
    got = bands(one + two)
    assert [(b.ppn, b.procs, b.algorithm) for b in got] == [(1, 2, "ring"), (2, 2, "ring")]  # not merged across ppn
    tree = tuned_subtree("bcast", [Band(2, 8, 64, "scatter_ring_allgather", 2)], library, blob)
    assert list(tree) == ["comm_avg_ppn<=2", "comm_avg_ppn=any"] and tree["comm_avg_ppn=any"] == library
    assert tree["comm_avg_ppn<=2"]["comm_size<=2"]["avg_msg_size=any"] == {
        "algorithm=MPIR_Bcast_intra_scatter_ring_allgather": {}
    }
    with pytest.raises(ScopeError, match="no processes-per-node condition"):
        openmpi_rules({"bcast": got}, {"bcast": {"ring": 1}})


@pytest.mark.mpi
def test_an_algorithm_that_hangs_is_stopped_recorded_and_left_out(engine, db, tmp_path):
    """SCOPE_TEST_HANG holds rank 0 whenever ring is forced: the others wait in the collective
    as under a hanging algorithm, until --timeout stops the launch."""
    p = run_scope(
        "tune", "allreduce", "--algorithms", "ring,recursive_doubling", "--sizes", "8", "--procs", "2",
        "--launches", "1", "--budget", "0.05", "--timeout", "3", "-o", tmp_path / "t.json",
        db=db, env={"SCOPE_TEST_HANG": "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ring"},
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "refused: ring:" in p.stdout and "no record for 3 s" in p.stdout and "2 algorithms measured" in p.stdout
    runs = {r.label: r for r in (Store(db).load_run(i) for i in (1, 2, 3))}
    assert runs["tune allreduce ring"].status == "incomplete"  # recorded, not left running
    assert runs["tune allreduce recursive_doubling"].status == "complete"
    rows = [ln.split() for ln in p.stdout.splitlines() if ln.split()[:2] == ["2", "8"]]
    assert rows and all("ring" not in row for row in rows)  # never the fastest, never chosen
    meta = json.loads((tmp_path / "t.json.scope.json").read_text())
    assert all(b["algorithm"] != "ring" for b in meta["collectives"]["allreduce"])
