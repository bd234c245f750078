from pathlib import Path

import numpy as np
import pytest

from scope.analysis.hockney import fit_hockney
from scope.store import Store
from tests.conftest import run_scope

DATA = Path(__file__).parent / "data"


def points(db, run, test=None):
    return [p for p in Store(db).load_run(run).points if test is None or p.test == test]


@pytest.fixture(autouse=True)
def _known_tests(described):
    """Imports name a peer's benchmark after the SCOPE test with its role: the recorded descriptors."""


def medians(db, run, test):
    return {p.size: p.median for p in points(db, run, test)}


@pytest.mark.unit
def test_osu_latency_round_trips(db):
    p = run_scope("import", DATA / "osu_latency.txt", "--label", "old cluster", db=db)
    assert p.returncode == 0, p.stderr
    assert "as run 1 [OSU]" in p.stdout
    m = medians(db, 1, "p2p.pingpong")
    assert m[0] == 1.52 and m[1024] == 2.31 and m[1048576] == 190.40 and len(m) == 9
    run = Store(db).run(1)
    assert run["origin"] == "osu" and run["label"] == "old cluster" and run["source"].endswith("osu_latency.txt")
    show = run_scope("show", "1", db=db).stdout
    assert "imported from OSU" in show and "Hockney" in show


@pytest.mark.unit
def test_osu_bandwidth_becomes_time_per_message(db):
    assert run_scope("import", DATA / "osu_bw.txt", db=db).returncode == 0
    m = medians(db, 1, "p2p.stream")
    assert m[65536] == pytest.approx(65536 / 8000.0)
    bw = {p.size: p.bw_median for p in points(db, 1)}
    assert bw[4194304] == pytest.approx(10000.0)


@pytest.mark.unit
def test_imb_sections(db):
    p = run_scope("import", DATA / "imb.txt", db=db)
    assert p.returncode == 0, p.stderr
    assert medians(db, 1, "p2p.pingpong") == {0: 0.93, 1: 0.95, 1024: 1.85, 4194304: 420.50}
    assert medians(db, 1, "p2p.exchange") == {0: 1.81, 1024: 3.15}  # t_avg
    assert medians(db, 1, "coll.allreduce") == {0: 0.05, 4: 1.25}  # IMB's Allreduce is SCOPE's
    assert Store(db).run(1)["ranks"] == 2


@pytest.mark.unit
def test_csv_and_fit_on_imported_data(db, tmp_path):
    t0, rinf = 3.0, 2500.0
    sizes = [0] + [2**k for k in range(0, 22, 3)]
    f = tmp_path / "old.csv"
    f.write_text("size,time_us\n" + "".join(f"{n},{t0 + n / rinf:.9f}\n" for n in sizes))
    assert run_scope("import", f, "--test", "legacy.latency", db=db).returncode == 0
    m = medians(db, 1, "legacy.latency")
    fit = fit_hockney(list(m), list(m.values()))
    assert fit.t0_us == pytest.approx(t0, rel=1e-6) and fit.rinf_MBps == pytest.approx(rinf, rel=1e-6)


@pytest.mark.unit
def test_a_large_csv_is_stored_by_columns_sorted_and_shown_in_brief(db, tmp_path):
    # 5000 rows in a random order, one size twice: stored as one row of arrays, read back
    # sorted by size (the file's order among equal sizes), shown as an even spread of rows
    rng = np.random.default_rng(4)
    sizes = rng.permutation(np.arange(5000) * 64).tolist()
    sizes[10] = sizes[11]
    f = tmp_path / "big.csv"
    f.write_text("".join(f"{n},{2 + n / 1000 + i * 1e-9:.9f}\n" for i, n in enumerate(sizes)))
    assert run_scope("import", f, db=db).returncode == 0
    pts = points(db, 1)
    assert [p.size for p in pts] == sorted(sizes) and [p.seq for p in pts] == list(range(5000))
    twins = [p.median for p in pts if p.size == sizes[10]]
    assert twins == [pytest.approx(2 + sizes[10] / 1000 + i * 1e-9, abs=1e-12) for i in (10, 11)]
    assert pts[0].record["imported"] == {"origin": "csv", "statistic": "as given"}
    s = Store(db)
    assert s.db.execute("SELECT count(*) FROM points").fetchone()[0] == 0
    assert s.db.execute("SELECT n FROM imported").fetchall()[0][0] == 5000
    assert "5000" in run_scope("runs", db=db).stdout
    out = run_scope("show", "1", "--rows", "7", db=db).stdout
    rows = [ln for ln in out.splitlines() if ln.endswith("imported")]
    assert len(rows) == 7 and rows[0].startswith("0 B") and "(7 of 5,000 points shown" in out
    assert (
        len([ln for ln in run_scope("show", "1", "--rows", "0", db=db).stdout.splitlines() if ln.endswith("imported")])
        == 5000
    )
    bad = run_scope("show", "1", "--rows", "-1", db=db)
    assert bad.returncode == 2 and "must be 0 (all) or more" in bad.stderr


@pytest.mark.unit
def test_imported_points_compare_without_a_verdict(db, tmp_path):
    run_scope("import", DATA / "osu_latency.txt", db=db)
    run_scope("import", DATA / "osu_latency.txt", db=db)
    p = run_scope("compare", "1", "2", db=db)
    rows = [ln for ln in p.stdout.splitlines() if ln.startswith("p2p.pingpong")]
    assert (
        p.returncode == 0 and len(rows) == 9 and all(r.rstrip().endswith("values only (no distribution)") for r in rows)
    )


@pytest.mark.unit
@pytest.mark.parametrize(
    "content,fmt,word",
    [
        ("# OSU MPI Latency Test\n# Size Latency\n8 abc\n", "osu", "line 3: time is not a number"),
        ("# OSU MPI Latency Test\n# Size Latency\n8 1.0\n16 nan\n", "osu", "line 4: time nan is not a positive"),
        ("# OSU MPI Latency Test\n# Size Latency\n8 -3.0\n", "osu", "line 3: time -3.0 is not a positive"),
        ("# OSU MPI Latency Test\n# Size Latency\n8 inf\n", "osu", "line 3: time inf is not a positive"),
        ("# OSU MPI Bandwidth Test\n# Size Bandwidth (MB/s)\n8 0\n", "osu", "line 3: bandwidth 0 is not a positive"),
        ("# OSU MPI Latency Test\n# Size Latency\n-8 1.0\n", "osu", "line 3: negative size"),
        ("size,time_us\n8,1.5\n16,inf\n", "csv", "line 3: time inf is not a positive"),
        ("8,1e308\n", "csv", "line 1: time 1e308 is not a positive"),
        ("8,0\n", "csv", "line 1: time 0 is not a positive"),
        ("8\n", "csv", "line 1: expected 'size,time_us'"),
        ("hello\n", "csv", "size,time_us"),
        ("nothing here\n", "imb", "Benchmarking"),
        (
            "#----\n# Benchmarking PingPong\n#bytes #repetitions t[usec] Mbytes/sec\n0 1000 0.93 0.00\n1 1000\n",
            "imb",
            "PingPong, line 4 of its section: the row is cut short",
        ),
    ],
)
def test_malformed_files(db, tmp_path, content, fmt, word):
    f = tmp_path / "bad.txt"
    f.write_text(content)
    p = run_scope("import", f, "--format", fmt, db=db)
    assert p.returncode == 2 and word in p.stderr and "Traceback" not in p.stderr


@pytest.mark.unit
def test_unreadable_file(db, tmp_path):
    p = run_scope("import", tmp_path / "missing.txt", db=db)
    assert p.returncode == 2 and "cannot read" in p.stderr


@pytest.mark.unit
def test_test_name_cannot_merge_several_benchmarks(db):
    p = run_scope("import", DATA / "imb.txt", "--test", "x.y", db=db)
    assert p.returncode == 2 and "would merge them" in p.stderr
    assert run_scope("import", DATA / "osu_latency.txt", "--test", "old.lat", db=db).returncode == 0
    assert len(points(db, 1, "old.lat")) == 9


@pytest.mark.mpi
def test_native_run_against_an_imported_one(engine, db):
    """OSU names no parameters: its points match a native run's by test and size, for each of
    the native run's settings, and no verdict is drawn from single values."""
    assert run_scope("import", DATA / "osu_latency.txt", db=db).returncode == 0
    p = run_scope(
        "run", "p2p.pingpong", "--sizes", "8,1K,64K", "-p", "mode=standard,sync", "--budget", "0.1", "--quiet", db=db
    )
    assert p.returncode == 0, p.stderr
    out = run_scope("compare", "1", "2", db=db)
    assert out.returncode == 0, out.stderr
    rows = [ln for ln in out.stdout.splitlines() if ln.startswith("p2p.pingpong")]
    assert len(rows) == 6  # 3 shared sizes x 2 native settings
    assert all("mode=" in r and r.rstrip().endswith("values only (no distribution)") for r in rows)


@pytest.mark.mpi
@pytest.mark.parametrize(
    "title,unit,test",
    [
        ("# OSU MPI_Put Latency Test v7.4", "Latency (us)", "rma.put"),
        ("# OSU MPI_Get Bandwidth Test v7.4", "Bandwidth (MB/s)", "rma.get"),
        ("# OSU MPI_Accumulate latency Test v7.4", "Latency (us)", "rma.acc"),
        ("# OSU MPI_Get_accumulate latency Test v7.4", "Latency (us)", "rma.get_acc"),
        ("# OSU MPI_Fetch_and_op latency Test v7.4", "Latency (us)", "rma.fetch_op"),
        ("# OSU MPI_Compare_and_swap latency Test v7.4", "Latency (us)", "rma.cas"),
    ],
)
def test_osu_one_sided_output_is_not_taken_for_two_sided(engine, db, tmp_path, title, unit, test):
    # "Latency" in an MPI_Put title once made it p2p.pingpong
    f = tmp_path / "osu.txt"
    f.write_text(f"{title}\n# Window creation: MPI_Win_allocate\n# Size    {unit}\n8    2.00\n1024    4.00\n")
    p = run_scope("import", f, db=db)
    assert p.returncode == 0, p.stderr
    (pt, _) = points(db, 1)
    assert pt.test == test and "one-sided" in pt.measures
    assert pt.median == (8 / 2.0 if "MB/s" in unit else 2.0)


@pytest.mark.mpi
def test_a_saved_stream_imports_as_the_same_run(engine, db, tmp_path):
    saved = tmp_path / "s"
    quick = ["--sizes", "8,1K", "--launches", "2", "--budget", "0.05", "--quiet"]
    p = run_scope("run", "p2p.pingpong", *quick, "--save-stream", saved, db=db)
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in saved.iterdir()) == ["launch-1.jsonl", "launch-2.jsonl", "tests.jsonl"]
    imp = run_scope("import", saved, "--label", "again", db=db)
    assert imp.returncode == 0 and "as run 2" in imp.stdout, imp.stderr
    a, b = Store(db).load_run(1), Store(db).load_run(2)
    assert b.label == "again" and b.status == "complete" and b.launches == 2
    # the same points, the same statistics: the replay stores what the live run stored
    key = [(p.test, p.size, p.median, p.ci_lo, p.ci_hi, p.count, p.samples) for p in a.points]
    assert key == [(p.test, p.size, p.median, p.ci_lo, p.ci_hi, p.count, p.samples) for p in b.points]
    assert Store(db).run(1)["context"] == Store(db).run(2)["context"]


@pytest.mark.mpi
def test_a_stored_run_syncs_its_database_three_times_not_once_a_record(engine, db, tmp_path, monkeypatch):
    """Each commit is an fsync (4-5 ms here, tens of ms on a network home): a run's start is one
    transaction, its context and events go with its points, and its combined points with its end
    (issue 52: a one-point run committed 9 times). Counted on the replay of a saved stream,
    which stores it as a live run does, with no time-based commit in between."""
    import scope.run.recorder as recorder

    saved = tmp_path / "s"
    p = run_scope(
        "run", "coll.allreduce", "--sizes", "8,64", "--budget", "0.02", "--quiet", "--save-stream", saved, db=db
    )
    assert p.returncode == 0, p.stderr
    store = Store(tmp_path / "replay.db")
    commits = []
    store.db.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
    monkeypatch.setattr(recorder, "COMMIT_EVERY_S", 1e9)
    run_id, points = recorder.replay(store, saved)
    assert points == 2 and len(commits) == 3, commits
    run = store.load_run(run_id)
    assert run.status == "complete" and run.context is not None and run.launches == 1
    assert (
        len(run.points) == 2
        and store.db.execute("SELECT COUNT(*) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0] >= 1
    )


@pytest.mark.unit
@pytest.mark.parametrize(
    "files,word",
    [
        ({}, "not a saved stream"),
        ({"tests.jsonl": ""}, "not a saved stream"),
        ({"tests.jsonl": "", "launch-2.jsonl": "{}"}, "not a saved stream"),  # launch 1 missing
        ({"tests.jsonl": "", "launch-1.jsonl": '{"type": "point"}\n'}, "point record: Object missing required field"),
        ({"tests.jsonl": "", "launch-1.jsonl": '{"type": "a-newer-kind"}\n'}, "no context record"),
    ],
)
def test_what_is_not_a_saved_stream_is_refused_and_nothing_stored(db, tmp_path, files, word):
    d = tmp_path / "s"
    d.mkdir()
    for name, text in files.items():
        (d / name).write_text(text)
    p = run_scope("import", d, db=db)
    assert p.returncode == 2 and word in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not Store(db).runs()


@pytest.mark.mpi
def test_an_unwritable_stream_directory_is_refused_before_launch(engine, db, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    p = run_scope("run", "p2p.pingpong", "--sizes", "8", "--quiet", "--save-stream", blocker / "s", db=db)
    assert p.returncode == 2 and "cannot write the stream" in p.stderr and "Traceback" not in p.stderr
    assert not db.exists() or not Store(db).runs()


@pytest.mark.unit
def test_a_large_csv_is_streamed_into_columns_and_reports_its_progress(tmp_path, monkeypatch):
    """400,000 rows (5.4 MB of text): the import holds its two columns (16 bytes a row), never
    the file's text beside them, and says how far it has read."""
    import tracemalloc

    import scope.store.importers as importers

    n = 400_000
    f = tmp_path / "big.csv"
    with f.open("w") as out:
        out.write("size,time_us\n")
        out.writelines(f"{(i % 4096) * 8},{1 + (i % 997) / 10:.4f}\n" for i in range(n))
    monkeypatch.setattr(importers, "PROGRESS_BYTES", 1 << 20)
    seen = []
    tracemalloc.start()
    try:
        data, _ = importers.load(str(f), progress=lambda done, total: seen.append((done, total)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data.rows == n and data.tests["csv.import"].times[-1] == pytest.approx(1 + (n - 1) % 997 / 10)
    assert peak < 16 * n * 1.25 + (1 << 20), peak  # the columns; the text alone would add 5.4 MB
    assert seen[-1] == (f.stat().st_size, f.stat().st_size) and all(a <= b for (a, _), (b, _) in zip(seen, seen[1:]))


@pytest.mark.unit
def test_omb_7_4_output_is_named_by_its_title_and_keeps_every_column(db):
    """Real OMB 7.4 output (tests/data, run on this machine): osu_allreduce with -f is coll.allreduce
    (never p2p.pingpong because its title says Latency), its min, max and iterations kept;
    osu_mbw_mr is p2p.mbw_mr with its message rate."""
    assert run_scope("import", DATA / "osu_allreduce_f.txt", db=db).returncode == 0
    pts = points(db, 1)
    assert {p.test for p in pts} == {"coll.allreduce"}
    p4 = next(p for p in pts if p.size == 4)
    assert p4.median == 0.25 and p4.extra == {"min_us": 0.23, "max_us": 0.27, "iterations": 200.0}
    assert run_scope("import", DATA / "osu_mbw_mr.txt", db=db).returncode == 0
    rate = {p.size: p for p in points(db, 2)}
    assert {p.test for p in rate.values()} == {"p2p.mbw_mr"}
    assert rate[8].extra["messages_per_s"] == 1973627.40 and rate[8].median == pytest.approx(8 / 15.79)
    assert run_scope("import", DATA / "osu_latency_mt.txt", db=db).returncode == 0  # threads: p2p.pingpong's
    mt = {p.size: p for p in points(db, 3)}
    assert {p.test for p in mt.values()} == {"p2p.pingpong"} and mt[8].median == 2.38
    # osu_neighbor_alltoallw prints osu_alltoallw's title after a topology preamble: told apart
    for k, (name, test) in enumerate((("osu_neighbor_alltoallw", "coll.neighbor_alltoall"),
                                      ("osu_alltoallw", "coll.alltoall")), start=4):  # fmt: skip
        assert run_scope("import", DATA / f"{name}.txt", db=db).returncode == 0
        got = points(db, k)
        assert {p.test for p in got} == {test} and min(p.size for p in got) == 4


@pytest.mark.unit
@pytest.mark.parametrize(
    "text,words",
    [
        ("# OSU MPI Multi-process Latency Test v7.4\n# Size          Latency (us)\n8 2.0\n",
         "osu_latency_mp has no SCOPE test with its definition"),
        ("# OSU MPI Put Bi-directional Bandwidth Test v7.4\n# Size      Bandwidth (MB/s)\n4 1.0\n",
         "osu_put_bibw has no SCOPE test"),
        ("# OSU MPI-CUDA Latency Test v7.4\n# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)\n"
         "# Size          Latency (us)\n8 2.0\n", "buffers on an accelerator (cuda)"),
        ("# OSU MPI Latency Test v7.4\n# Send Buffer on MANAGED (M) and Receive Buffer on HOST (H)\n"
         "# Size          Latency (us)\n8 2.0\n", "buffers on an accelerator"),
        ("# OSU MPI Teleport Test v7.4\n# Size  Latency (us)\n8 2.0\n", "is no OMB 7.4 benchmark SCOPE knows"),
        ("# OSU MPI Hello World Test v7.4\nThis is a test with 2 processes\n", "measures no time per size"),
    ],
)  # fmt: skip
def test_what_has_no_scope_equivalent_is_refused_not_mislabelled(db, tmp_path, text, words):
    f = tmp_path / "omb.txt"
    f.write_text(text)
    p = run_scope("import", f, db=db)
    assert p.returncode == 2 and words in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not db.exists() or not Store(db).runs()


@pytest.mark.unit
def test_real_imb_2021_output_maps_each_benchmark_and_keeps_its_columns(db):
    """IMB-MPI1 2021.11, run on this machine (tests/data/imb_2021.txt): each section under the
    SCOPE test with its definition, t_min and t_max kept, Barrier as size 0, and what SCOPE has
    no test for (Sendrecv, Reduce_scatter's uneven counts, Uniband's rates) left out by name."""
    p = run_scope("import", DATA / "imb_2021.txt", db=db)
    assert p.returncode == 0, p.stderr
    tests = {pt.test for pt in points(db, 1)}
    assert tests == {"p2p.pingpong", "p2p.pingping", "p2p.exchange", "coll.allreduce", "coll.bcast",
                     "coll.barrier", "coll.alltoall"}  # fmt: skip
    for skipped in ("Uniband", "imb_Sendrecv", "imb_Reduce_scatter"):
        assert f"skipped {skipped}" in p.stderr
    ar = {pt.size: pt for pt in points(db, 1, "coll.allreduce")}
    assert ar[512].median == 0.31 and ar[512].extra == {"t_min_us": 0.30, "t_max_us": 0.32}
    (barrier,) = points(db, 1, "coll.barrier")
    assert barrier.size == 0 and barrier.median == 0.25 and barrier.count == 100
    assert Store(db).run(1)["ranks"] == 2


@pytest.mark.unit
def test_an_imported_run_is_held_and_fitted_in_little_memory(db, tmp_path):
    """200,000 imported averages on a known line t = 2 us + n / 4,000 MB/s: the run's points and
    everything show derives from them stay under 300 bytes a point at the peak (176 held: a
    measured point's object alone took 440, and the fits' lists more again: issue 52), and the
    fit finds the line."""
    import tracemalloc

    from scope.fetch.facts import derive_stored

    n = 200_000
    f = tmp_path / "line.csv"
    with f.open("w") as out:
        out.write("size,time_us\n")
        out.writelines(f"{8 * (i % 4096 + 1)},{2 + 8 * (i % 4096 + 1) / 4000:.6f}\n" for i in range(n))
    assert run_scope("import", f, db=db).returncode == 0
    store = Store(db)
    tracemalloc.start()
    try:
        facts = derive_stored(store, 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (s,) = facts.series
    assert len(s.series.points) == n and s.series.points[n - 1].seq == s.series.points[0].seq + n - 1
    assert s.hockney.t0_us == pytest.approx(2, rel=1e-4) and s.hockney.rinf_MBps == pytest.approx(4000, rel=1e-4)
    assert s.hockney.points == n and s.hockney.max_abs_residual < 1e-5
    p, q = [p for p in s.series.points if p.size == 48][:2]  # the same average at the same size
    assert (p.bytes_per_op, p.mean, p.window, p.launches, p.samples, p.record["stop"]) == (
        48,
        p.median,
        None,
        1,
        [],
        "imported",
    )
    assert p.bw_median == pytest.approx(48 / (2 + 48 / 4000), rel=1e-5) and p != q and len({p, q}) == 2
    assert peak < 300 * n, peak
