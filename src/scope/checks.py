"""Everything `scope run` refuses before building or launching anything: engine options against
the engine's table, test names, parameters, rank counts, the --pattern file.  Each refusal is
one ScopeError naming the fix (exit 2)."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING

from scope.errors import USAGE, ScopeError
from scope.launcher import local_cores
from scope.options import EngineOption, check_relations

if TYPE_CHECKING:
    from scope.runner import RunOptions

# More ranks per usable core than this is a mistake, not a measurement: refused without --force.
OVERSUBSCRIBE_MAX = 64


def select_tests(patterns: list[str], registry: list[dict]) -> list[str]:
    names = [t["name"] for t in registry]
    chosen: list[str] = []
    for pat in patterns:
        for part in pat.split(","):
            part = part.strip()
            if not part:
                continue
            hits = [n for n in names if fnmatch.fnmatchcase(n, part)]
            if not hits:
                raise ScopeError(f"unknown test '{part}'", f"valid tests: {', '.join(names)}", USAGE)
            chosen += [h for h in hits if h not in chosen]
    return [n for n in names if n in chosen]


def _value_ok(p: dict, v: str) -> bool:
    if p["type"] == "int":
        try:
            return p["min"] <= int(v) <= p["max"]
        except ValueError:
            return False
    if p["type"] == "bool":
        return v.lower() in ("yes", "no", "true", "false", "1", "0", "on", "off")
    return v.lower() in (c.lower() for c in p["choices"])


def check_params(assignments: list[str], tests: list[str], registry: list[dict]) -> None:
    """The same rules as the engine, checked before any launch: a name some selected test has,
    and every value valid for at least one of those tests."""
    by_name = {t["name"]: t for t in registry}
    for a in assignments:
        name, eq, values = a.partition("=")
        if not eq or not name or not values:
            raise ScopeError(f"--param expects NAME=VALUE[,VALUE...], got '{a}'", "e.g. --param mode=standard,sync")
        specs = [p for t in tests for p in by_name[t]["params"] if p["name"] == name]
        if not specs:
            known = sorted({p["name"] for t in tests for p in by_name[t]["params"]})
            raise ScopeError(
                f"no selected test has a parameter '{name}'",
                f"parameters of the selected tests: {', '.join(known) or 'none'}",
            )
        for v in values.split(","):
            if not any(_value_ok(p, v) for p in specs):
                p = specs[0]
                dom = (
                    f"a whole number from {p['min']} to {p['max']}"
                    if p["type"] == "int"
                    else "yes or no"
                    if p["type"] == "bool"
                    else "one of " + ", ".join(p["choices"])
                )
                raise ScopeError(f"parameter {name}={v} is not valid: expected {dom}", "see 'scope list'")


def check_ranks(o: RunOptions, tests: list[str], registry: list[dict], procs: str) -> None:
    """Rank counts every selected test can use: its minimum, the --procs counts within the
    run's ranks, and a sane number of ranks per core on this machine."""
    by_name = {t["name"]: t for t in registry}
    short = [t for t in tests if by_name[t]["min_ranks"] > o.ranks]
    if short:
        need = max(by_name[t]["min_ranks"] for t in short)
        raise ScopeError(
            f"{', '.join(short)} need{'s' if len(short) == 1 else ''} at least {need} ranks; this run has {o.ranks}",
            f"run with -n {need}",
            USAGE,
        )
    windowed = [t for t in tests if by_name[t].get("timing") in ("window", "kernel", "barrier")]
    if procs not in ("all", "pow2") and windowed:
        counts = [int(x) for x in procs.split(",")]
        over = [c for c in counts if c > o.ranks]
        if over:
            raise ScopeError(
                f"--procs {over[0]} is more than the run's {o.ranks} ranks",
                f"run with -n {max(counts)} or list counts up to {o.ranks}",
                USAGE,
            )
        low = min(by_name[t]["min_ranks"] for t in windowed)
        if all(c < low for c in counts):
            raise ScopeError(
                f"--procs {procs}: every count is below {low}, the fewest ranks these tests use", "", USAGE
            )
    if not o.hosts and not o.testbed and not o.force and o.ranks > OVERSUBSCRIBE_MAX * local_cores():
        raise ScopeError(
            f"{o.ranks} ranks on {local_cores()} usable cores is more than {OVERSUBSCRIBE_MAX} per core",
            "use fewer ranks, --hosts for other machines, or --force",
            USAGE,
        )


def check_engine_options(given: dict[str, object], table: list[EngineOption]) -> dict[str, object]:
    """Every given option against the engine's own table (values given through the Python API
    are checked here too), and the table's cross-option rules."""
    by_name = {t.name: t for t in table}
    values: dict[str, object] = {}
    for name, v in given.items():
        if name not in by_name:
            raise ScopeError(f"the engine has no option --{name}", "see 'scope run --help'", USAGE)
        spec = by_name[name]
        try:
            values[name] = v if spec.kind in ("flag", "list") else spec.parse(str(v))
        except ValueError as e:
            raise ScopeError(str(e), "see 'scope run --help'", USAGE) from None
    broken = check_relations(values, table)
    if broken:
        raise ScopeError(broken, "see 'scope run --help'", USAGE)
    return values


def default_of(table: list[EngineOption], name: str) -> str | None:
    return next(t.default for t in table if t.name == name)


def check_pattern(path: str, ranks: int) -> str:
    """The same rules as the engine, with the line at fault: 'SOURCE DESTINATION SIZE' per
    line, '#' comments, distinct ranks below the run's rank count.  Errors name the line's
    number, never its text: the file may be anything the user pointed at."""
    from scope.sizes import parse_size

    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ScopeError(f"cannot read pattern file {path}: {e.strerror}", "check the path") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ScopeError(
            f"pattern file {path} is not text (line {line})", "give a file of 'SOURCE DESTINATION SIZE' lines"
        ) from None
    if "\0" in text:
        line = text[: text.index("\0")].count("\n") + 1
        raise ScopeError(
            f"pattern file {path} is not text (line {line})", "give a file of 'SOURCE DESTINATION SIZE' lines"
        )
    n = 0
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        if len(line) != 3 or not line[0].isdigit() or not line[1].isdigit():
            raise ScopeError(f"{path} line {i}: expected 'SOURCE DESTINATION SIZE'", "e.g. '0 1 64K'")
        src, dst = int(line[0]), int(line[1])
        try:
            parse_size(line[2])
        except ValueError:
            raise ScopeError(f"{path} line {i}: the size is not a byte count", "sizes like 64, 8K, 1M") from None
        if src == dst:
            raise ScopeError(f"{path} line {i}: rank {src} sends to itself", "a message needs two ranks")
        if max(src, dst) >= ranks:
            raise ScopeError(
                f"{path} line {i}: rank {max(src, dst)} is out of range for {ranks} ranks",
                f"run with -n {max(src, dst) + 1} or more",
            )
        n += 1
    if not n:
        raise ScopeError(f"pattern file {path} has no messages", "one 'SOURCE DESTINATION SIZE' per line")
    return text


# What a sized problem needs in all, bytes, from its size parameter and the ranks it runs on,
# checked before launch (node.stream's arrays follow the cache and stay small).
MEMORY = {
    # an array asked for (the default, 4x the cache, is capped by the engine to what the node holds)
    "node.stream": ("array", lambda a, p: 3 * a * p, "3 arrays of that many bytes on each rank"),
    "node.dgemm": ("n", lambda n, p: 3 * 8 * n * n * p, "3 matrices of n x n doubles on each rank"),
    "kernel.matmul": ("n", lambda n, p: 8 * n * n * (5 + 3 * (p - 1)), "whole matrices on rank 0, one on the others"),
    "kernel.cannon": ("n", lambda n, p: 6 * 8 * n * n, "6 blocks a rank, n x n doubles each over the grid"),
    "kernel.jacobi": ("n", lambda n, p: 6 * 8 * (n + 2) ** 2, "3 grids, and 3 more for rank 0's serial check"),
    "kernel.multigrid": ("n", lambda n, p: 14 * 8 * (n + 2) ** 2, "4 grids a level, and the same again for the check"),
    "kernel.psrs": ("n", lambda n, p: 5 * 8 * n, "input, work, received and merged keys"),
    "app.lu": ("n", lambda n, p: 2 * 8 * n * n, "the matrix over the ranks, and again on rank 0 for the check"),
    "app.ft": (
        "class",
        lambda c, p: 88 * FT_POINTS.get(c.upper(), 0),
        "5 complex grids and a real one, split over the ranks",
    ),
}
FT_POINTS = {"S": 64**3, "W": 128 * 128 * 32, "A": 256 * 256 * 128}  # NPB's FT grids


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo, bytes; None where there is none."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def param_values(assignments: list[str], name: str) -> list[str]:
    """The values -p NAME=V1,V2 assigns to parameter `name` (every assignment of it)."""
    return [v for a in assignments if a.startswith(name + "=") for v in a.partition("=")[2].split(",")]


def check_memory(assignments: list[str], tests: list[str], ranks: int, hosts: str | None) -> None:
    """A problem too large for this machine's memory is refused before launch, with what it
    would need (only for a run on this host: other hosts' memory is not known here)."""
    asked = [
        (test, param, v, need_of(int(v) if v.isdigit() else v, ranks), what)
        for test, (param, need_of, what) in MEMORY.items()
        if test in tests
        for v in param_values(assignments, param)
    ]
    avail = available_memory() if asked and not hosts else None
    if avail is None:
        return
    for test, param, v, need, what in asked:
        if need > 0.9 * avail:
            raise ScopeError(
                f"{test} {param}={v} needs {need / 2**30:.1f} GiB ({what}; {ranks} ranks); "
                f"this machine has {avail / 2**30:.1f} GiB available",
                f"a smaller {param}, or fewer ranks",
            )


def check_test_sizes(items: list[str], tests: list[str]) -> None:
    """--test-sizes TESTS=SIZES: each item well formed and matching a selected test (the
    engine's rules, checked before launch)."""
    from scope.sizes import parse_sizes

    for item in items:
        glob, eq, sizes = item.partition("=")
        if not eq or not glob:
            raise ScopeError(f"--test-sizes expects TESTS=SIZES, got '{item}'", "e.g. --test-sizes 'io.*=1M'", USAGE)
        parse_sizes(sizes)
        if not any(fnmatch.fnmatchcase(t, glob) for t in tests):
            raise ScopeError(
                f"--test-sizes '{item}' matches no selected test", f"the tests are {', '.join(tests)}", USAGE
            )
