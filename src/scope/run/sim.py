"""Runs on a simulated cluster (issue 55): SimGrid's SMPI runs the engine (built with smpicc,
`make -C engine sim`) on a platform file, every rank a thread of smpirun's one process, time the
simulated clock.  This module reads the hosts of one, builds the simulation engine, and says
what a simulated run records; run/simxml.py writes the platform files.

SMPI's defaults are kept but two: the engine's own code between MPI calls takes no simulated
time (smpi/simulate-computation:no), so a simulated figure is the platform's communication and
not this host's speed at running the engine's loop; and collectives choose their algorithms as
MPICH does (smpi/coll-selector:mpich), the MPI SCOPE installs, where SMPI's own default takes
naive ones (its allgather posts every pair's messages at once)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

from scope.catalog.baseline import SIM_HOST_CLOCKS
from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.run.simplatform import Platform

INSTALL_HINT = "install SimGrid (Debian: apt-get install libsimgrid-dev), which brings smpicc and smpirun"
CONFIG = ("smpi/simulate-computation:no", "smpi/coll-selector:mpich")  # see the module's docstring
# MPICH broadcasts by a binomial tree at every size below MPIR_CVAR_BCAST_MIN_PROCS (8) ranks;
# SMPI's mpich selector takes its SMP-aware binomial tree for a communicator across hosts (its
# own addition to MPICH's rules: 1.5x MPICH's time at 64 KiB on 2 testbed hosts, docs/sim.md)
BCAST_MIN_PROCS = 8
SMALL_BCAST = "smpi/bcast:binomial_tree"


def tools() -> tuple[str, str]:
    """(smpicc, smpirun), or the one-line refusal that names the package."""
    cc, run = shutil.which("smpicc"), shutil.which("smpirun")
    if not cc or not run:
        raise ScopeError("SimGrid's smpicc and smpirun are not on PATH", INSTALL_HINT, ENVIRONMENT)
    return cc, run


def version() -> str:
    """SimGrid's version, as smpirun says it."""
    _, run = tools()
    p = subprocess.run([run, "--version"], capture_output=True, text=True, timeout=60)
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)", p.stdout + p.stderr)
    return m.group(1) if m else "unknown"


def placement(ranks: int, per_host: int, hosts: int) -> list[int]:
    """Each rank's host index: `per_host` ranks on each host in turn, round again from the
    first host when the ranks outnumber them."""
    return [(r // per_host) % hosts for r in range(ranks)]


def check_cores(p: Platform, ranks: int, per_host: int) -> int:
    """Refuse ranks a host has no core for (docs/sim.md: a simulated rank has a core, or its
    time would be shared in a way SMPI does not model); the most ranks any host holds."""
    on = Counter(placement(ranks, per_host, len(p.hosts)))
    worst = max(on, key=lambda h: on[h] - p.cores[h])
    if on[worst] > p.cores[worst]:
        cores = sum(p.cores)
        raise ScopeError(
            f"{ranks} ranks, {per_host} a host in turn, put {on[worst]} on host {p.hosts[worst]!r}, which has "
            f"{p.cores[worst]} core(s): a simulated rank has a core of its own",
            f"run at most {cores} ranks on this platform (with --sim-ppn up to its hosts' cores), or describe more "
            "hosts or cores (scope sim platform --hosts N --cores C)",
            USAGE,
        )
    return max(on.values())


def hostfile(hosts: list[str], ranks: int, per_host: int, out: Path) -> Path:
    """smpirun's hostfile: `per_host` ranks on each host in turn (a rank a line)."""
    lines = [hosts[h] for h in placement(ranks, per_host, len(hosts))]
    out.write_text("\n".join(lines) + "\n")
    return out


# A SimGrid message that ends a simulation: "[time] ./src/...cpp:NN: [category/CRITICAL] text"
CRITICAL = re.compile(r"\[[\w./-]+/CRITICAL\]\s*(.+)")
NOT_A_REASON = ("Backtrace", "Current backtrace")  # SimGrid's lines after the reason


def simgrid_reason(stderr: str) -> str | None:
    """SimGrid's own first line on why it stopped (its CRITICAL log), or None."""
    for line in stderr.splitlines():
        m = CRITICAL.search(line)
        if not m:
            continue
        text = m.group(1).strip()
        if text.startswith("Uncaught exception"):  # "... by maestro/0: the reason"
            text = text.split(": ", 1)[-1] if ": " in text else text
        if text and not text.startswith(NOT_A_REASON):
            return text[:200]
    return None


def preflight(smpirun: str, exe: Path, platform: str, hosts_file: Path, config: list[str]) -> None:
    """SimGrid itself reads the platform and every setting, as the run would, with one rank of
    the engine asked only for its list of tests (no MPI, no measurement): what it refuses is
    refused here, in its own words, before a run is stored."""
    argv = [smpirun, "-np", "1", "-platform", platform, "-hostfile", str(hosts_file),
            *[f"--cfg={c}" for c in config], str(exe), "--list"]  # fmt: skip
    try:
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=120, env=engine_env())
    except subprocess.TimeoutExpired:
        raise ScopeError("SimGrid took over 120 s to read the platform", "describe fewer hosts", USAGE) from None
    if p.returncode != 0:
        why = simgrid_reason(p.stderr) or (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1][:200]
        raise ScopeError(f"SimGrid refuses this platform or --sim-cfg: {why}", "fix what it names (docs/sim.md)", USAGE)


# SimGrid's factors set so a link's payload time is exactly latency + size / rate (its default
# SMPI model is calibrated on real clusters instead): what `--sim-cfg exact` asks for
EXACT = (
    "network/model:CM02",
    "network/latency-factor:1",
    "network/bandwidth-factor:1",
    "network/weight-S:0",
    "network/crosstraffic:0",
)
# Thousands of ranks: SMPI's own collectives (the mpich selector's SMP-aware set-up cost the host
# ~16 s a full-size communicator at 1,024 ranks) and no detached sends. SimGrid 3.32 keeps every
# detached send (below smpi/send-is-detached-thresh, 64 KiB) in one std::list that each one's
# completion scans (CommImpl::finish, activities_.remove; a std::set from SimGrid 3.33 on): with
# thousands of ranks sending at once, 42 % of the host's time at 1,024 ranks went there, and a
# 4,096-rank clock run took 13.7 min against 2.1 min without (docs/sim.md).
SCALE = ("smpi/coll-selector:default", "smpi/send-is-detached-thresh:0")
SCALE_HINT_RANKS = 1024  # from here a run without SCALE is told of it
# SimGrid judges the rest (preflight); `;` parts a piecewise setting (smpi/ois:0:1e-6:0;1023:2e-7:8e-9)
CFG = re.compile(r"[a-z][a-z0-9_/-]{0,99}:[A-Za-z0-9_.:/;-]{1,2000}")


def config_of(given: list[str], ranks: int = 0) -> list[str]:
    """The SimGrid settings of a run of `ranks` ranks: CONFIG (and MPICH's broadcast below
    BCAST_MIN_PROCS ranks), then each --sim-cfg (KEY:VALUE, `exact` or `scale`); a later setting
    of a key overrides an earlier one, as SimGrid reads them."""
    out = [*CONFIG, SMALL_BCAST] if 0 < ranks < BCAST_MIN_PROCS else list(CONFIG)
    for g in given:
        if g == "exact":
            out += EXACT
        elif g == "scale":
            out += SCALE
        elif CFG.fullmatch(g):
            out.append(g)
        else:
            raise ScopeError(
                f"--sim-cfg {g[:80]!r}{'...' if len(g) > 80 else ''} is not a SimGrid setting",
                "KEY:VALUE, e.g. network/model:CM02, or exact, or scale",
                USAGE,
            )
    return out


DETACHED_DEFAULT = 65536  # smpi/send-is-detached-thresh unless a setting says otherwise (SimGrid 3.32)


def detached_thresh(config: list[str]) -> int:
    """The bytes below which the run's sends are detached: the last smpi/send-is-detached-thresh
    of its settings, SimGrid's default without one."""
    given = [c.split(":", 1)[1] for c in config if c.startswith("smpi/send-is-detached-thresh:")]
    try:
        return int(float(given[-1])) if given else DETACHED_DEFAULT
    except ValueError:
        return DETACHED_DEFAULT  # SimGrid itself refuses it (preflight)


# SMPI privatises each rank's globals with memory maps of its own: 8,360 maps at 1,024 ranks here
# (SimGrid 3.32), about 8 a rank. Past vm.max_map_count the job aborts at start (exit 134).
MAPS_PER_RANK, MAPS_BASE = 8, 512
MAX_MAP_COUNT = Path("/proc/sys/vm/max_map_count")


def check_maps(ranks: int, limit_file: Path = MAX_MAP_COUNT) -> None:
    """Refuse a simulation whose ranks need more memory maps than the kernel allows, before it
    is built or launched (it would abort with a bare exit 134). Where the limit cannot be read
    (not Linux), nothing is checked."""
    try:
        limit = int(limit_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    need = ranks * MAPS_PER_RANK + MAPS_BASE
    if need > limit:
        raise ScopeError(
            f"{ranks} simulated ranks need about {need:,} memory maps (SMPI's privatisation, "
            f"{MAPS_PER_RANK} a rank), more than vm.max_map_count ({limit:,}) allows",
            f"raise it as root: sysctl -w vm.max_map_count={max(need * 2, 262144)}, or run fewer ranks",
            ENVIRONMENT,
        )


def scale_hint(ranks: int, config: list[str]) -> str | None:
    """What a run of thousands of ranks without SCALE's settings is told, or None."""
    if ranks < SCALE_HINT_RANKS or all(c in config[len(CONFIG) :] for c in SCALE):
        return None
    return (
        f"{ranks} simulated ranks without --sim-cfg scale: SimGrid 3.32's detached sends and the mpich "
        "selector's set-up cost this machine's time superlinearly in ranks (4,096 ranks: 13.7 min against 2.1)"
    )


def launch_argv(
    run: str, ranks: int, platform: str, hosts_file: Path, exe: Path, engine_args: list[str], config=CONFIG
) -> list[str]:
    cfg = [f"--cfg={c}" for c in config]
    return [run, "-np", str(ranks), "-platform", platform, "-hostfile", str(hosts_file), *cfg, str(exe), *engine_args]


def context_of(platform: str, sha: str, hosts: list[str], per_host: int, config=CONFIG, clocks=None) -> dict:
    """What a simulated run records, so every view can say so; `clocks` (host_clocks) how its
    hosts' clocks were drawn (the truth itself is in the clock records)."""
    return {
        "simgrid": version(),
        "platform": str(Path(platform).resolve()),
        "platform_sha256": sha,
        "hosts": len(hosts),
        "ranks_per_host": per_host,
        "config": list(config),
        "host_clocks": clocks,
    }


def engine_env(clocks: dict | None = None) -> dict:
    # one BLAS thread: OpenBLAS starts its thread pool when loaded, and SMPI, loading the engine
    # into its one process, then aborts reading its own arguments (SimGrid 3.32)
    env = {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), "OPENBLAS_NUM_THREADS": "1"}
    if clocks:  # engine/clock/clock_local.c draws each host's offset and drift from these
        env["SCOPE_SIM_CLOCKS"] = f"{clocks['seed']}:{clocks['max_offset_us']:g}:{clocks['max_drift_ppm']:g}"
    return env


def host_clocks(given: str | None) -> dict | None:
    """A simulated run's host clocks: {seed, max_offset_us, max_drift_ppm} from
    SEED:MAX_OFFSET_US:MAX_DRIFT_PPM (None: SIM_HOST_CLOCKS), or None for 'none' (every host
    on SimGrid's one clock)."""
    text = SIM_HOST_CLOCKS if given is None else given.strip()
    if text == "none":
        return None
    parts = text.split(":")
    try:
        seed, off, ppm = int(parts[0]), float(parts[1]), float(parts[2])
        if len(parts) != 3 or seed < 0 or seed >= 1 << 63 or not 0 <= off <= 1e7 or not 0 <= ppm <= 1e4:
            raise ValueError
    except (ValueError, IndexError):
        raise ScopeError(
            f"--sim-clocks {given!r} is not SEED:MAX_OFFSET_US:MAX_DRIFT_PPM",
            "e.g. --sim-clocks 7:1000:20 (offsets to 1 ms, drift to 20 ppm), or none",
            USAGE,
        ) from None
    return {"seed": seed, "max_offset_us": off, "max_drift_ppm": ppm}
