"""scope sim platform: a SimGrid platform file for a described cluster, or one calibrated from
stored runs (--from), so a user need not write SimGrid's XML by hand; `scope run --sim FILE`
then runs on it (run/sim.py).  scope sim check: a measured run's own tests simulated on a
platform calibrated from it, point by point against the measurement (issue 73)."""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from scope.analysis.simcal import HINT, calibrate
from scope.analysis.simcheck import check
from scope.analysis.simcoll import SMPI, size_groups
from scope.analysis.simcoll import TESTS as COLL_TESTS
from scope.analysis.simnet import Calibration, pace_config
from scope.catalog.names import LOGGP, PINGPING, PINGPONG, STREAM
from scope.cli.common import emit, open_store
from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.run.checks import writable_output
from scope.run.request import RunOptions
from scope.run.runner import execute, raise_for
from scope.run.simcal import WhatIf, calibrated_xml, computation_config
from scope.run.simplatform import read_platform
from scope.run.simxml import ROUTED_HOSTS, platform_xml
from scope.run.toolchain import engine_path, find_toolchain, mpi_library
from scope.store import Store
from scope.tune import files as tune_files
from scope.tune.files import library_tree
from scope.views.fmt import calibration_text, size
from scope.views.jsonout import dumps
from scope.views.simcheck import check_doc, check_page, check_text

# the levels SMPI simulates (node.* and net.* measure this machine: docs/sim.md); kernels and
# applications with their computation simulated at the calibrated host speed
SIMULATED = ("p2p.", "coll.", "kernel.", "app.")
COMPUTING = ("kernel.", "app.")


def cmd_sim(args) -> int:
    if args.action == "platform":
        return _platform(args)
    if args.action == "check":
        return _check(args)
    raise ScopeError("scope sim needs an action", "scope sim platform --hosts N -o FILE, or scope sim check RUN", USAGE)


def _write(path: str, text: str, flag: str = "-o") -> Path:
    out = writable_output(path, flag)
    try:
        out.write_text(text)
    except OSError as e:
        raise ScopeError(f"cannot write {out}: {e.strerror}", f"choose a writable {flag}", ENVIRONMENT) from None
    return out


def _platform(args) -> int:
    hosts = [h for h, _ in args.slow]
    twice = sorted({h for h in hosts if hosts.count(h) > 1})
    if twice:
        raise ScopeError(f"--slow names host {twice[0]} more than once", "give each host one --slow HOST:SHARE", USAGE)
    pairs = [tuple(sorted(p)) for p, _ in args.slow_link]
    again = sorted({p for p in pairs if pairs.count(p) > 1})
    if again:
        raise ScopeError(f"--slow-link names hosts {again[0][0]}-{again[0][1]} more than once",
                         "give each pair one --slow-link I-J:SHARE", USAGE)  # fmt: skip
    if args.sources:
        if args.slow or args.slow_link:
            raise ScopeError("--slow and --slow-link plant a slow link in a described platform",
                             "leave out --from, or --slow and --slow-link", USAGE)  # fmt: skip
        w = WhatIf(args.hosts, args.cores, args.rate, args.latency, args.topology)
        store = open_store(args, create=False)
        cal = _calibration(store, args.sources)
        out = _write(args.output, calibrated_xml(cal, w))
        print(f"wrote {out}: {_described(cal, w)}; run on it with: scope run --sim {out} -n N", file=sys.stderr)
        return 0
    if args.hosts is None:
        raise ScopeError("scope sim platform needs --hosts, or --from RUN", "e.g. --hosts 64, or --from last", USAGE)
    rate, latency, cores = args.rate or "10Gbps", args.latency or "1us", args.cores or 1
    text = platform_xml(args.hosts, cores, rate, latency, args.topology, slow=dict(args.slow),
                        pairs=dict(args.slow_link))  # fmt: skip
    out = _write(args.output, text)
    print(
        f"wrote {out}: {args.hosts} hosts x {cores} cores, {args.topology}, links {rate} and {latency}"
        + "".join(f", host {h}'s link at {s:g} of the rate" for h, s in args.slow)
        + "".join(f", the route {a} <-> {b} at {s:g} of the rate" for (a, b), s in args.slow_link)
        + ";"
        f" run on it with: scope run --sim {out} -n {args.hosts}",
        file=sys.stderr,
    )
    return 0


def _calibration(store: Store, refs: list[str]) -> Calibration:
    ids = [store.resolve_run(r) for r in refs]
    inputs = {PINGPONG, STREAM, PINGPING, LOGGP, "node.dgemm", "p2p.allpairs"}
    runs = [store.load_run(i, samples=False, tests=inputs) for i in ids]
    for r in runs:
        if r.context and r.context.sim:
            raise ScopeError(f"run {r.id} is simulated", "calibrate from runs measured on a machine", USAGE)
    cal = calibrate(sorted(runs, key=lambda r: r.id, reverse=True))
    if isinstance(cal, str):
        raise ScopeError(f"cannot calibrate from run {', '.join(map(str, ids))}: {cal}", HINT, USAGE)
    return cal


def _described(cal: Calibration, w: WhatIf) -> str:
    where = "within a host" if cal.same_host else "between hosts"
    hosts = w.hosts or max(cal.hosts, 2)
    slow = [f"node-{h}'s link" for h in sorted(cal.host_shares) if h < hosts]
    links = [f"the route node-{a} <-> node-{b}" for a, b, _ in cal.link_shares if b < hosts]
    slow += links if hosts <= ROUTED_HOSTS else []
    unplanted = len(links) if hosts > ROUTED_HOSTS and w.topology == "flat" else 0
    return (
        f"{hosts} hosts x {w.cores or cal.cores} cores, calibrated {where}: route latency "
        f"{cal.latency_us:.3g} us and rate {cal.rate_MBps:,.0f} MB/s, {len(cal.ranges)} message-size ranges"
        + (f", nonblocking send's host time in {len(cal.isend)} ranges" if cal.isend else "")
        + "".join(f", {t}'s own pace in {len(v)}" for t, v in cal.paces.items())
        + (f", then latency {w.latency}" if w.latency else "")
        + (f", rate {w.rate}" if w.rate else "")
        + (f"; slower, as the screen measured: {', '.join(slow)}" if slow and w.topology == "flat" else "")
        + (
            f"; the screen's {unplanted} slow link(s) between two hosts not planted: each route is written, "
            f"at most {ROUTED_HOSTS} hosts"
            if unplanted
            else ""
        )  # fmt: skip
    )


def _algorithm_groups(
    run, tests: list[str], sizes: list[int], per_host: int, given: list[str]
) -> tuple[list[tuple[dict[str, str], list[int]]], str]:
    """The run's sizes in groups, each simulated with the collective algorithms the measured MPI
    ran at its sizes (analysis/simcoll.py), and what the check says of them; one group, with
    SMPI's own choice, where that is not known: an MPI other than MPICH or than this
    environment's, a run that forced its own algorithms, several ranks on a host (MPICH's
    node-aware compositions), or a --sim-cfg that sets a collective's algorithm itself."""
    whole = [({}, sizes or [])]
    points = [(p.test, p.procs or run.ranks or 2, p.size, p.params) for p in run.points if p.test in tests and
              p.test in COLL_TESTS and p.size is not None and p.params.get("nonblocking", "no") == "no"]  # fmt: skip
    if not points:
        return whole, "collective algorithms: none to choose"
    asked = [c.split(":", 1)[0] for c in given]
    if any(a.startswith(f"{SMPI}coll-selector") or a in {f"{SMPI}{c}" for c in COLL_TESTS.values()} for a in asked):
        return whole, "collective algorithms: as --sim-cfg sets them"
    tree, why = _selection_tree(run, per_host)
    if tree is None:
        return whole, f"collective algorithms: SMPI's own selection ({why})"
    groups = size_groups(tree, points, sizes)
    own = "SMPI's own choice"
    shown = "; ".join(
        f"{', '.join(f'{k.removeprefix(SMPI)} {v}' for k, v in settings.items()) or own} at {_sizes_text(group)}"
        for settings, group in groups
    )
    return groups, f"collective algorithms as {why} selects them, one simulation per group: {shown}"


def _ranks_a_host(cal: Calibration, hosts: Counter, per_host: int) -> int:
    """Ranks a simulated host, for a run whose ranks sat `per_host` a host: one where the run and
    the calibration were measured within one host.  Its calibrated route is then a pair's path
    through that host, and each rank on a host of its own crosses links of its own each way:
    two messages crossing at once each keep the whole rate, as the measured exchange does (two
    single copies on two cores: 75.6 us at 1 MiB against a one-way 74.8 us), where the ranks on
    one simulated host shared its link both ways and the exchange simulated 1.7-2.0x from
    64 KiB on.  A run across hosts keeps its own placement (a host's ranks share its NIC)."""
    return 1 if cal.same_host and len(hosts) <= 1 else per_host


def _sizes_text(sizes: list[int], most: int = 6) -> str:
    return ", ".join(size(n) for n in sizes[:most]) + (f" and {len(sizes) - most} more" if len(sizes) > most else "")


def _selection_tree(run, per_host: int) -> tuple[dict | None, str]:
    """MPICH's compiled-in selection tree of the MPI the run measured (read from this
    environment's, the same version) and its name; or None and why not."""
    lib = (run.context.mpi_library.splitlines() or [""])[0].strip() if run.context else ""
    if not lib.startswith("MPICH"):
        return None, "the run's MPI is not MPICH"
    request = (run.context_record or {}).get("request") or {}
    forced = sorted(k for k in [*((request.get("engine") or {}).get("cvars") or {}), *run.context.env]
                    if "ALGORITHM" in k or "SELECTION" in k)  # fmt: skip
    if forced:
        return None, f"the run set {forced[0]}"
    if per_host > 1:
        return None, f"{per_host} ranks a host: MPICH's node-aware compositions are not modelled"
    try:
        exe = engine_path(find_toolchain(None), quiet=True)
        here = (mpi_library(exe).splitlines() or [""])[0].strip()
        if here != lib:
            return None, f"this environment's MPI is {here or 'unknown'}, the run's {lib}"
        tree, _ = library_tree(tune_files.mpi_library(exe))
    except (ScopeError, OSError) as e:
        return None, f"MPICH's selection could not be read: {getattr(e, 'message', e)}"
    return tree, " ".join(lib.replace("Version:", "").split())  # "MPICH Version:  5.0.2" -> "MPICH 5.0.2"


def _engine_options(run, sizes: list[int]) -> dict:
    """The engine options the measured run asked for (its stored request), at its measured
    sizes; a run without one (imported) is simulated with its points' timing method. MPI_T
    control variables are not simulated (SMPI has none)."""
    request = (run.context_record or {}).get("request") or {}
    engine = {k: v for k, v in (request.get("engine") or {}).items() if k not in ("cvars", "sizes", "launches")}
    if not request:
        timings = Counter(p.window.timing for p in run.points if p.window and p.window.timing)
        if timings and timings.most_common(1)[0][0] != "window":
            engine["timing"] = timings.most_common(1)[0][0]
    return {**engine, "sizes": ",".join(map(str, sizes))} if sizes else engine


def _check(args) -> int:
    for path, flag in ((args.page, "--page"), (args.output, "-o")):
        if path:  # said before anything is simulated or stored
            writable_output(path, flag)
    store = open_store(args)  # the simulation is stored as a run
    rid = store.resolve_run(args.run)
    run = store.load_run(rid, samples=False)
    if run.context and run.context.sim:
        raise ScopeError(f"run {rid} is simulated", "check a run measured on a machine", USAGE)
    request = (run.context_record or {}).get("request")
    tests = sorted({p.test for p in run.points if p.test.startswith(SIMULATED) and (request or run.at_defaults(p))})
    if not tests:
        raise ScopeError(f"run {rid} has no p2p, collective, kernel or application test", HINT, USAGE)
    sizes = sorted({p.size for p in run.points if p.test in tests and p.size is not None})
    ranks = run.ranks or 2
    hosts = Counter((p.host, p.netns) for p in run.context.placement) if run.context else Counter()
    per_host = max(hosts.values(), default=1)
    sim_ppn = per_host
    with tempfile.TemporaryDirectory(prefix="scope-simcheck-") as tmp:
        cal = None
        if args.platform:
            platform = args.platform
            described = f"the platform {args.platform}"
        else:
            cal = _calibration(store, args.sources or [str(rid)])
            platform = args.output or str(Path(tmp) / "calibrated.xml")
            sim_ppn = _ranks_a_host(cal, hosts, per_host)
            n_hosts = max(len(hosts), -(-ranks // sim_ppn))
            _write(
                platform, calibrated_xml(cal, WhatIf(hosts=max(n_hosts, cal.hosts, 2), cores=max(cal.cores, per_host)))
            )
            described = "a platform " + calibration_text(cal.record())[2:]
            if sim_ppn != per_host:
                described += "; one rank a simulated host: the run's ranks shared one host, each copying at its rate"
        calibration = read_platform(platform).calibration  # what the platform carries, read once
        computing = computation_config(calibration) if any(t.startswith(COMPUTING) for t in tests) else []
        groups, selection = _algorithm_groups(run, tests, sizes, per_host, args.sim_cfg)
        described += f"; {selection}"
        # a test with a pace of its own (the stream's, the exchange's) in a simulation of its own
        paced = {t: cfg for t in (STREAM, PINGPING) if t in tests and (cfg := pace_config(calibration, t))}
        if paced:
            described += f"; {' and '.join(paced)} at their own pace, each in a simulation of its own"
        ids = []
        unsized = [t for t in tests if all(p.size is None for p in run.points if p.test == t)]  # in the first group
        plans = [  # (tests, sizes, settings, label): a simulation each
            (
                [t for t in tests if t not in paced and any(p.test == t and p.size in group for p in run.points)]
                + (unsized if k == 0 else []),
                group,
                [f"{key}:{v}" for key, v in settings.items()],
                f", at {_sizes_text(group)}" if len(groups) > 1 else "",
            )
            for k, (settings, group) in enumerate(groups)
        ]
        plans += [([t], sorted({p.size for p in run.points if p.test == t}), cfg, f", {t}") for t, cfg in paced.items()]
        for own_tests, group, settings, suffix in plans:
            if not own_tests:
                continue
            o = RunOptions(
                tests=own_tests,
                ranks=ranks,
                engine=_engine_options(run, group),
                label=f"sim check of run {rid}{suffix}",
                progress=not args.json,
                launches=1,
                sim=platform,
                sim_ppn=sim_ppn,
                sim_cfg=computing + settings + args.sim_cfg,
                sim_clocks="none",
            )
            result = execute(o, store)
            raise_for(result)
            ids.append(result.run_id)
    simulated = [store.load_run(i, samples=False) for i in ids]
    chosen = {(t, n): v for settings, group in groups for n in group for t, coll in COLL_TESTS.items()
              if (v := settings.get(f"{SMPI}{coll}"))}  # fmt: skip
    c = check(run, simulated, args.tolerance / 100, cal, chosen)
    if args.page:
        made = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        page = _write(args.page, check_page(c, described, made), "--page")
        print(f"wrote {page}", file=sys.stderr)
    if args.json:
        print(dumps(check_doc(c, calibration)))
    else:
        emit(check_text(c, described) + "\n")
    return 0
