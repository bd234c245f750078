"""`scope run --module NAME`, `scope modules` and `scope doctor --module baseline`: the modules of
modules.py turned into a run's options, listed, and checked against the minimum configuration."""

from __future__ import annotations

from scope.catalog.modules import (
    BASELINE,
    MINIMUM,
    NAMES,
    NOT_MEASUREMENT,
    TIME_LIMIT_S,
    WORKLOAD,
    module_for,
    screen,
    standard,
)
from scope.catalog.names import APP_FT
from scope.cli.minimum import below, render, requirements
from scope.cores import usable_cores
from scope.errors import ENVIRONMENT, ScopeError
from scope.run.checks import available_memory
from scope.run.plan import ask
from scope.run.toolchain import describe, engine_path, find_toolchain, mpi_library


def ft_memory_of(mpicc: str | None):
    """app.ft's classes, in the engine's order, and what each needs at a number of ranks: the
    engine's own choices and memory declaration, through its plan."""

    def of(ranks: int) -> dict[str, float]:
        exe = engine_path(find_toolchain(mpicc))
        ft = next(t for t in describe(exe) if t.get("type") == "test" and t["name"] == APP_FT)
        choices = next(p["choices"] for p in ft["params"] if p["name"] == "class")
        plans = {c: ask(exe, ["--tests", APP_FT, "--param", f"class={c}"], ranks) for c in choices}
        return {c: plan.tests[0].memory_bytes for c, plan in plans.items()}

    return of


def apply_module(args, o, store, ranks_given: bool) -> None:
    """Fills the RunOptions `o` from --module (tests, ranks, sizes, parameters, launches), after
    the minimum configuration check where the module needs one; o.module is what the context
    records."""
    changes = o.engine  # the engine options given
    if args.tests:
        raise ScopeError(
            f"--module {args.module} chooses its own tests", "leave the test names out, or run them without --module"
        )
    memory = available_memory() if not o.hosts else None
    every = args.module in ("standard", "screen") and not o.hosts  # these take every core unless told
    ranks = o.ranks if ranks_given else (usable_cores() if every else None)
    m, said = module_for(args.module, changes, ranks, memory, args.time_limit, ft_memory_of(o.mpicc))
    record = {"name": m.name, "version": m.version, "base": BASELINE.name if m.name != "baseline" else None}
    measured_with = {k: v for k, v in changes.items() if k not in (*WORKLOAD, "budget", *NOT_MEASUREMENT)}
    if measured_with:  # honoured, and part of the workload's digest (Module.digest)
        record["measured_with"] = measured_with
    if m.name == "advanced":
        record["changes"] = said
    if m.name == "standard":
        record["scaled"] = said
        record["time_limit_s"] = args.time_limit or TIME_LIMIT_S
    if m.name == "baseline":
        lib = mpi_library(engine_path(find_toolchain(o.mpicc)))
        short = below(requirements(store, m.ranks, o.hosts, changes.get("io-dir"), lib))
        if short and not args.force:
            raise ScopeError(
                f"this machine is below the baseline's minimum configuration: {'; '.join(short)}",
                "scope doctor --module baseline says what is missing; --force runs it anyway, marked",
                ENVIRONMENT,
            )
        record["below_minimum"] = short
    o.engine = {**changes, **m.engine_options()}  # the module's workload over what was given
    o.tests = list(m.tests)
    o.ranks = m.ranks
    o.launches = args.launches or m.launches
    o.label = o.label or f"{m.name}-{m.version}"
    o.module = (m, record)


def cmd_modules(args) -> int:
    for name in NAMES:
        if name == "baseline":
            m, extra = BASELINE, []
        elif name == "standard":
            ranks = usable_cores()
            try:
                ft = ft_memory_of(getattr(args, "mpicc", None))(ranks)
            except ScopeError as e:  # the listing needs no engine; only the classes do
                ft, unasked = {}, e.message
            else:
                unasked = None
            m, extra = standard(ranks, available_memory() or 4 << 30, args.time_limit, ft)
            extra = [f"scaled here (--time-limit {args.time_limit:g}): " + "; ".join(extra)]
            if unasked:
                extra.append(f"(app.ft's classes are chosen when it runs: the engine could not be asked: {unasked})")
        elif name == "screen":
            m, extra = screen(usable_cores()), ["at every rank the run is given (-n), here every core"]
        else:
            print("advanced: the baseline with your changes (-n, --sizes, --test-sizes, -p, --procs, --mpicc),")
            print("  marked as advanced in the run and never compared with a baseline without saying so")
            print("  e.g. scope run --module advanced -n 8 -p class=A --mpicc /opt/mpi-tuned/bin/mpicc")
            continue
        print(f"{m.name} (version {m.version}): {m.summary}")
        print(f"  ranks {m.ranks}, process counts {m.procs}, {m.launches} launches, budget {m.budget:g} s a point")
        print(f"  tests: {', '.join(m.tests)}")
        print(f"  sizes: {'; '.join([m.sizes, *m.test_sizes])}")
        print(f"  parameters: {', '.join(m.params)} (every other at the engine's default)")
        for e in extra:
            print(f"  {e}")
        print()
    print("minimum configuration of the baseline (Table 8.1 in today's terms; scope doctor --module baseline):")
    print(f"  cores: {MINIMUM['cores']} (one per rank)")
    print(f"  memory: {MINIMUM['memory_bytes'] / 2**30:g} GiB available per node")
    print(f"  io space: {MINIMUM['io_bytes'] / 1e6:,.0f} MB free in --io-dir")
    print(f"  MPI standard: {'.'.join(map(str, MINIMUM['mpi_standard']))} or later (one-sided lock_all, flush)")
    print(f"  latency_us: {MINIMUM['latency_us']} (p2p.pingpong at its smallest size, below)")
    print(f"  bandwidth: {MINIMUM['bandwidth_MBps']:g} MB/s (p2p.stream peak, at least; 10 Mbit/s)")
    return 0


def doctor_module(store, ranks: int, mpicc: str | None) -> tuple[str, bool]:
    reqs = requirements(store, ranks, None, None, mpi_library(engine_path(find_toolchain(mpicc))))
    text = "baseline minimum configuration:\n" + render(reqs)
    return text, not below(reqs)
