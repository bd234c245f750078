"""The engine's option table is the one definition: the front end offers its options with its
ranges and refuses what the engine would refuse, before anything is launched or stored."""

import pytest

from scope.catalog.options import bound_text, from_records
from scope.run.toolchain import describe
from scope.store import Store
from tests.conftest import run_scope

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def table(engine):
    return from_records(describe(engine))


def test_run_offers_every_engine_option(table):
    names = {o.name for o in table}
    assert {"precision", "budget", "min-count", "max-count", "warmup-max", "sizes", "param", "procs"} <= names
    help_text = run_scope("run", "--help").stdout
    for o in table:
        assert f"--{o.name}" in help_text
        if o.default:
            assert f"(default {o.default})" in " ".join(help_text.split())


def _outside(o):
    """Values just outside an option's range, as text."""
    if o.kind == "int":
        return [str(int(o.min) - 1), str(int(o.max) + 1)]
    return [repr(o.min / 10) if o.min > 0 else repr(o.min - 1), repr(o.max * 10), "inf", "nan"]


def test_every_out_of_range_value_is_refused_before_launch(table, engine, tmp_path):
    """The engine's plan refuses every value outside its table's range, naming the range; the
    CLI says it in one line, exit 2, with nothing launched or stored (once an option: it is the
    same call for every value)."""
    from scope.errors import ScopeError
    from scope.run.plan import ask

    db = tmp_path / "r.db"
    ranged = [o for o in table if o.kind in ("int", "real")]
    assert len(ranged) >= 7
    for o in ranged:
        rng = f"from {bound_text(o.min)} to {bound_text(o.max)}"
        for bad in _outside(o):
            with pytest.raises(ScopeError) as e:
                ask(engine, [f"--{o.name}", bad], 2)
            assert rng in e.value.message and e.value.code == 2, (o.name, bad, e.value.message)
        p = run_scope("run", f"--{o.name}", _outside(o)[0], db=db)  # refused before a launch
        assert p.returncode == 2 and rng in p.stderr and p.stderr.count("\n") == 1, (o.name, p.stderr)
    assert not db.exists() or not Store(db).runs()  # nothing launched, nothing stored


@pytest.mark.parametrize(
    "args,words",
    [
        (["--warmup-max", "1"], "from 2 to"),
        (["--min-count", "50", "--max-count", "10"], "--min-count (50) is larger than --max-count (10)"),
        (["--procs", "abc"], "all, pow2, or process counts"),
        (["--timing", "windows"], "one of window, barrier"),
        (["--seed", "abc"], "a whole number"),
    ],
)
def test_bad_options_are_one_line_exit_2(engine, tmp_path, args, words):
    p = run_scope("run", *args, db=tmp_path / "r.db")
    assert p.returncode == 2 and words in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_defaults_come_from_the_engine(table, engine, tmp_path):
    """A run with no options records the table's defaults in its settings."""
    db = tmp_path / "r.db"
    assert run_scope("run", "p2p.pingpong", "--sizes", "8", "--budget", "0.05", "--quiet", db=db).returncode == 0
    settings = Store(db).load_run(1).context.settings
    by = {o.name: o for o in table}
    assert settings["precision"] == float(by["precision"].default)
    assert settings["max_count"] == int(by["max-count"].default)
    assert settings["warmup_max"] == int(by["warmup-max"].default)
