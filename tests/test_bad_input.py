"""A corpus of bad inputs, as a hostile but fair user types them: each one is refused with one
line naming the fix, the exit code it promises (2 bad input, 3 environment), no traceback,
and nothing launched or stored."""

import io
import sys

import pytest

from scope.cli.main import main
from scope.store import Store
from tests.conftest import replay, run_scope

RUN = [
    # options the engine's table bounds
    (["--warmup-max", "1"], "from 2 to"),
    (["--budget", "inf"], "--budget"),
    (["--budget", "0.0001"], "from 0.001 to 86400"),
    (["--budget", "100000"], "from 0.001 to 86400"),
    (["--budget", "-1"], "--budget"),
    (["--budget", "abc"], "--budget"),
    (["--precision", "0"], "--precision"),
    (["--precision", "2"], "--precision"),
    (["--precision", "nan"], "--precision"),
    (["--min-count", "0"], "--min-count"),
    (["--min-count", "100", "--max-count", "10"], "larger than --max-count"),
    (["--max-count", "1e9"], "--max-count"),
    (["--seed", "abc"], "--seed"),
    (["--seed", "-1"], "--seed"),
    (["--seed", "9007199254740993"], "--seed"),
    (["--timer", "sundial"], "--timer"),
    (["--timing", "sometimes"], "--timing"),
    (["--sync-span", "0"], "--sync-span"),
    (["--sync-bound", "0"], "--sync-bound"),
    (["--procs", "abc"], "--procs"),
    (["--procs", "2,"], "--procs"),
    (["--procs", "0"], "--procs"),
    (["--procs", "-2"], "--procs"),
    # sizes
    (["--sizes", "1-1G:+1"], "more than 4096 sizes"),
    (["--sizes", "1-1G:x1.0000000001"], "more than 4096 sizes"),
    (["--sizes", "1KB"], "ambiguous"),
    (["--sizes", "4M-1K"], "runs backwards"),
    (["--sizes", "2G"], "--sizes"),
    (["--sizes", ""], "--sizes"),
    (["--sizes", "1-8:x1"], "factor above 1"),
    (["--sizes", "0-8:+0"], "never advances"),
    (["--sizes", "abc"], "--sizes"),
    # tests, parameters, ranks
    (["p2p.nosuch"], "unknown test"),
    (["x.*"], "unknown test"),
    (["p2p.pingpong", "-p", "mode=fast"], "not valid"),
    (["p2p.pingpong", "-p", "nosuch=1"], "no selected test has a parameter"),
    (["p2p.pingpong", "-p", "mode"], "NAME=VALUE"),
    (["p2p.stream", "-p", "window=0"], "not valid"),
    (["p2p.stream", "-p", "window=99999"], "not valid"),
    (["p2p.pingpong", "-n", "1"], "at least 2 ranks"),
    (["coll.bcast", "-n", "2", "--procs", "3"], "more than the run's 2 ranks"),
    (["coll.bcast", "-n", "4", "--procs", "1"], "every count is below 2"),
    (["-n", "100000"], "per core"),
    (["-n", "0"], "at least 1"),
    (["-n", "two"], "not a whole number"),
    (["--env", "NOEQUALS"], "NAME=VALUE"),
    (["--testbed", "nosuch"], "no testbed named"),
    (["--launcher", "qsub"], "invalid choice"),
    (["--timeout", "0"], "must be positive"),
    (["--nonsense"], "unrecognized arguments"),
]


@pytest.mark.mpi
@pytest.mark.parametrize("args,words", RUN, ids=[" ".join(a) for a, _ in RUN])
def test_run_refuses_before_launch(engine, tmp_path, args, words):
    db = tmp_path / "r.db"
    p = run_scope("run", *args, db=db)
    assert p.returncode == 2, (args, p.returncode, p.stderr)
    assert words in p.stderr and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert not db.exists() or not Store(db).runs()  # nothing launched, nothing stored


PATTERNS = [
    (b"0 1\n", "line 1: expected 'SOURCE DESTINATION SIZE'"),
    (b"0 1 8X\n", "line 1: the size is not a byte count"),
    (b"0 0 8\n", "line 1: rank 0 sends to itself"),
    (b"0 9 8\n", "names rank 9 but the run has 2 ranks"),
    (b"# only a comment\n", "has no messages"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "is not text (line 1)"),
    (b"0 1 8\n\xff\xfe 1 2\n", "is not text (line 2)"),
    (b"0 1 8\nroot:$6$secret:19000:0\n", "line 2: expected"),
    (b"a b c\n", "line 1: expected"),
    (b"0 1 -8\n", "line 1: the size is not a byte count"),
]


@pytest.mark.mpi
@pytest.mark.parametrize("content,words", PATTERNS)
def test_pattern_files(engine, tmp_path, content, words):
    f = tmp_path / "p.txt"
    f.write_bytes(content)
    p = run_scope("run", "p2p.pattern", "--pattern", f, db=tmp_path / "r.db")
    assert p.returncode == 2 and words in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert "secret" not in p.stderr  # a line's text is never quoted


# Files that are no pattern at all: a device read for ever, a pipe that would block the run
# before it starts, a file too large to be one (each refused before anything is opened).
def _special(kind: str, tmp_path):
    import os

    if kind == "device":
        return "/dev/zero"
    if kind == "fifo":
        f = tmp_path / "fifo"
        os.mkfifo(f)
        return f
    if kind == "directory":
        return tmp_path
    f = tmp_path / "huge.txt"
    f.write_bytes(b"0 1 8\n" * 200_000)  # 1.2 MB
    return f


SPECIAL = [
    ("device", "not a regular file"),
    ("fifo", "not a regular file"),
    ("directory", "not a regular file"),
    ("huge", "larger than 1 MiB"),
]


@pytest.mark.mpi
@pytest.mark.parametrize("kind,words", SPECIAL)
def test_a_pattern_that_is_no_file_is_refused_without_reading_it(engine, tmp_path, kind, words):
    p = run_scope("run", "p2p.pattern", "--pattern", _special(kind, tmp_path), db=tmp_path / "r.db", timeout=60)
    assert p.returncode == 2 and words in p.stderr and p.stderr.count("\n") == 1, p.stderr


@pytest.mark.unit
@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_an_import_that_is_no_file_is_refused_without_reading_it(tmp_path, kind):
    db = tmp_path / "r.db"
    p = run_scope("import", _special(kind, tmp_path), "--format", "csv", db=db)  # in process: a read would hang it
    assert p.returncode == 2 and "is not a regular file" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not db.exists() or not Store(db).runs()


IMPORTS = [
    ("# OSU MPI Latency Test\n# Size Latency\n8 nan\n", "line 3: time nan"),
    ("# OSU MPI Latency Test\n# Size Latency\n8 -3.0\n", "line 3: time -3.0"),
    ("# OSU MPI Latency Test\n# Size Latency\n8 inf\n", "line 3: time inf"),
    ("# OSU MPI Latency Test\n# Size Latency\n8\n", "line 3: expected 'SIZE VALUE'"),
    ("# OSU MPI Latency Test\n# Size Latency\nx 1.0\n", "line 3: expected 'SIZE VALUE'"),
    ("# OSU MPI Latency Test\n# Size Latency\n", "no data lines"),
    ("8,inf\n", "line 1: time inf"),
    ("8,1e308\n", "line 1: time 1e308"),
    ("8,-1\n", "line 1: time -1"),
    ("-8,1\n", "line 1: negative size"),
    ("size,time\n8,abc\n", "line 2: time is not a number"),
    ("", "no rows"),
    ("#----\n# Benchmarking PingPong\n#bytes #repetitions t[usec]\n0 1000 0.9\n8 1000\n", "cut short"),
    ("#----\n# Benchmarking PingPong\n#bytes #repetitions t[usec]\n0 1000 nan\n", "t[usec] nan"),
    ("#----\n# Benchmarking PingPong\n", "no benchmark with a time column"),
]


@pytest.mark.unit
@pytest.mark.parametrize("content,words", IMPORTS)
def test_imports(tmp_path, content, words):
    f = tmp_path / "in.txt"
    f.write_text(content)
    db = tmp_path / "r.db"
    p = run_scope("import", f, db=db)
    assert p.returncode == 2 and words in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not db.exists() or not Store(db).runs()


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    d = tmp_path_factory.mktemp("stored")
    f = d / "in.csv"
    f.write_text("8,1.0\n1024,2.0\n")
    db = d / "r.db"
    assert run_scope("import", f, db=db).returncode == 0
    return db, d


OTHERS = [
    (["compare", "1", "1", "--alpha", "2"], 2, "--alpha"),
    (["compare", "1", "1", "--alpha", "0"], 2, "--alpha"),
    (["compare", "1", "1", "--min-effect", "5"], 2, "--min-effect"),
    (["compare", "1", "1", "--min-effect", "nan"], 2, "--min-effect"),
    (["compare", "1", "9"], 2, "no run 9"),
    (["show", "9"], 2, "no run 9"),
    (["show", "abc"], 2, "is not a run id"),
    (["show", "-5"], 2, "no run -5"),
    (["show", "--ranks", "x"], 2, "bad --ranks"),
    (["export", "9"], 2, "no run 9"),
    (["export", "1", "--format", "xml"], 2, "invalid choice"),
    (["export", "1", "--format", "parquet"], 2, "-o"),
    (["export", "1", "-o", "/no/such/dir/x.csv"], 2, "does not exist"),
    (["report", "9"], 2, "no run 9"),
    (["report", "1", "-o", "/no/such/dir/r.html"], 2, "does not exist"),
    (["layers", "9"], 2, "no run 9"),
    (["import", "/no/such/file.txt"], 2, "cannot read"),
    (["import", "IN", "--format", "xls"], 2, "invalid choice"),
    (["testbed", "up", "--hosts", "0"], 2, "2 to 64 hosts"),
    (["testbed", "up", "--hosts", "2", "--rate", "fast"], 2, "not a rate"),
    (["testbed", "up", "--name", "BAD NAME"], 2, "is not allowed"),
    (["testbed", "up", "--hosts", "2", "--mtu", "100"], 2, "MTU"),
    (["testbed", "down", "--name", "nosuch"], 2, "no testbed named"),
    (["nosuchcommand"], 2, "invalid choice"),
]


# Issue 29's second round: io, modules, import, export, predict, compare; each refused in one
# line with the exit code it promises, nothing lost, nothing added.
MORE = [
    (["run", "io.write", "--io-dir", "/no/such", "--sizes", "1M"], 2, "is not a directory"),
    (["run", "io.write", "--io-dir", "IN", "--sizes", "1M"], 2, "is not a directory"),
    (["run", "io.write", "--io-dir", "/proc", "--sizes", "1M"], 3, "free"),
    (["run", "io.write", "-p", "total=1", "--sizes", "1M"], 2, "from 4096 to"),
    (["run", "io.write", "-p", "file=bogus", "--sizes", "1M"], 2, "expected one of shared, per_process"),
    (["run", "io.read", "-p", "total=1T", "--sizes", "1M"], 2, "not valid for io.read"),
    (["run", "io.write", "-p", "total=1099511627776", "--sizes", "1M"], 3, "free"),
    (["modules", "--time-limit", "0"], 2, "must be positive"),
    (["modules", "--time-limit", "1e9"], 2, "at most 604800 s"),
    (["modules", "--time-limit", "nan"], 2, "must be positive"),
    (["run", "--module", "nosuch"], 2, "invalid choice"),
    (["run", "--module", "baseline", "--budget", "1"], 2, "the baseline module sets its own workload"),
    (["run", "--module", "baseline", "--sizes", "8"], 2, "the baseline module sets its own workload"),
    (["import", "IN", "--format", "stream"], 2, "is not a saved stream"),
    (["import", "IN", "--format", "osu"], 2, "no '# OSU ...' title line"),
    (["import", "IN", "--format", "imb"], 2, "no '# Benchmarking ...' section"),
    (["import", "IN", "--test", "bad name"], 2, "is not a test name"),
    (["import", "IN", "--test", ""], 2, "--test: is empty"),
    (["import", "IN", "--test", "Upper.Case"], 2, "is not a test name"),
    (["export", "1", "-o", "/tmp"], 2, "it is a directory"),
    (["export", "1", "-o", "/proc/x.csv"], 3, "cannot write /proc/x.csv"),
    (["export", "1", "-o", "/dev/full"], 3, "No space left on device"),
    (["report", "1", "-o", "/dev/full"], 3, "No space left on device"),
    (["report", "1", "-o", "/tmp"], 2, "it is a directory"),
    (["predict"], 2, "name a kernel to predict"),
    (["predict", "kernel.matmul", "-p", "n=0"], 2, "from 2 to 16384"),
    (["predict", "kernel.psrs", "-p", "n=8", "--procs", "4"], 2, "PSRS needs at least procs^2 keys"),
    (["predict", "kernel.cannon", "--procs", "2"], 2, "square number of ranks"),
    (["predict", "--check", "1"], 2, "has no kernel or application points"),
    (["predict", "--check", "99"], 2, "no run 99"),
    (["predict", "kernel.matmul", "--again"], 2, "add --check RUN"),
    (["predict", "--check", "1", "kernel.matmul"], 2, "leave out the kernel"),
    (["compare", "1", "1", "--rerun"], 2, "against itself compares nothing"),
    (["compare", "1", "1", "--rerun", "--launches", "1"], 2, "from 2 to 100"),
    (["compare", "1", "9", "--rerun"], 2, "no run 9"),
    (["show", "1", "--rows", "-1"], 2, "0 (all) or more"),
    (["doctor", "-n", "0"], 2, "at least 1"),
    (["testbed", "up", "--hosts", "2", "--rate", "0mbit"], 2, "outside 8kbit"),
    (["testbed", "up", "--hosts", "2", "--rate", "9999gbit"], 2, "outside 8kbit"),
    # issue 44: empty is an error, a filter that matches nothing says so
    (["show", "1", "--test", "no.such"], 2, "has no points of a test matching 'no.such'"),
    # issue 44: every number from a user gets a range (these ended in OverflowError, exit 70, or
    # built a range until the kernel killed the process)
    (["show", "9223372036854775808"], 2, "is not a run id"),
    (["show", "1_0"], 2, "is not a run id"),
    (["export", "-99999999999999999999"], 2, "is not a run id"),
    (["show", "1", "--ranks", "0-999999999999"], 2, "beyond any run's ranks"),
    (["run", "--osu", ""], 2, "argument --osu: is empty"),
    (["run", "--testbed", ""], 2, "argument --testbed: is empty"),
    (["tune", "coll.allreduce", "--algorithms", ""], 2, "argument --algorithms: is empty"),
    (["run", "p2p.pingpong", "-p", "mode=standard,,sync"], 2, "parameter mode=standard,,sync has an empty value"),
    (["run", "p2p.pingpong", "-p", "mode=sync,"], 2, "has an empty value"),
]


@pytest.mark.mpi
@pytest.mark.parametrize("args,code,words", OTHERS + MORE, ids=[" ".join(a) for a, _, _ in OTHERS + MORE])
def test_other_commands(stored, args, code, words):
    db, d = stored
    args = [str(d / "in.csv") if a == "IN" else a for a in args]
    p = run_scope(*args, db=db)
    assert p.returncode == code, (args, p.returncode, p.stderr)
    assert words in p.stderr and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert len(Store(db).runs()) == 1  # nothing lost, nothing added


@pytest.mark.unit
@pytest.mark.parametrize("command", [["runs"], ["show", "1"], ["export", "1"]])
def test_an_empty_db_is_refused_not_read_as_the_default(command):
    p = run_scope("--db", "", *command, db=None)
    assert p.returncode == 2 and "argument --db: is empty" in p.stderr and p.stderr.count("\n") == 1, p.stderr


@pytest.mark.unit
def test_the_corpus_is_large_enough():
    """Issue 29: the corpus grows by at least 60 cases beyond the first round's 84."""
    from tests.test_slurm import SUBMIT_BAD
    from tests.test_store_faults import DAMAGE
    from tests.test_tuning import TUNE_BAD

    first = len(RUN) + len(PATTERNS) + len(SPECIAL) + len(IMPORTS) + len(OTHERS)
    assert first >= 84
    assert len(MORE) + len(TUNE_BAD) + len(SUBMIT_BAD) + len(DAMAGE) >= 60


class _GonePipe(io.StringIO):
    """stdout whose reader has gone: writes land in a buffer, as a pipe's do, and the flush that
    must deliver them fails."""

    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.unit
@pytest.mark.parametrize("command", [["export", "1", "--samples"], ["show", "1"], ["runs"]])
def test_a_reader_gone_is_a_closed_pipe_not_success(db, command, monkeypatch):
    """`scope export 1 --samples | head -c1` (issue 44): what the reader never took is found at
    the flush, and every command exits 141 as a shell's SIGPIPE says, not 0."""
    replay("launches", db)
    monkeypatch.setattr(sys, "stdout", _GonePipe())
    assert main(["--db", str(db), *command]) == 141
