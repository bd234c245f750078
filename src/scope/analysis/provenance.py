"""What a run was measured on and with, flat, and what differs between two runs: the names a
change in a figure's history is explained by (scope history, the hub's cluster page)."""

from __future__ import annotations

from scope.analysis.noise import canary_shifts
from scope.secrets import MEASURED

# what a run keeps of the environment (secrets.py), less SCOPE's own and Slurm's (a job id each run)
EXPLAINING = tuple(p for p in MEASURED if not p.startswith(("SCOPE_", "SLURM_")))


def provenance(run) -> dict[str, str]:
    """What a run was measured on and with, flat: the names a change is explained by."""
    ctx = run.context_record or {}
    mpi = ctx.get("mpi") or {}
    transport = mpi.get("transport") or {}
    out = {
        "MPI": ((mpi.get("library") or "").strip().splitlines() or [""])[0],
        "MPI wrapper": (ctx.get("toolchain") or {}).get("mpicc", ""),
        "transports": ", ".join(sorted(transport.get("libraries") or [])),  # mapped in no set order
        "engine source": (ctx.get("engine") or {}).get("source") or "",
        "compiler": (ctx.get("engine") or {}).get("compiler") or "",
        "timer": (ctx.get("timer") or {}).get("selected") or "",
        "ranks": str(ctx.get("ranks") or run.ranks or ""),
        "oversubscribed": str(bool(ctx.get("oversubscribed"))),
        "nodes": ", ".join(sorted({str(n.get("host")) for n in ctx.get("nodes") or []})),
        "kernel": ", ".join(sorted({str(n.get("kernel")) for n in ctx.get("nodes") or []})),
        "CPU": ", ".join(sorted({str(n.get("cpu_model")) for n in ctx.get("nodes") or []})),
    }
    for k, v in sorted((transport.get("cvars") or {}).items()):
        out[f"cvar {k}"] = str(v)
    # what the user set for the MPI, its transports, OpenMP and the BLAS: a variable that no
    # MPI_T reading shows (MPIR_CVAR_CH4_CMA_ENABLE=0) still explains a step; SCOPE's own and
    # Slurm's (a job id each run) do not
    for k, v in sorted((ctx.get("env") or {}).items()):
        if k.startswith(EXPLAINING) and v != "<redacted>":
            out[f"env {k}"] = str(v)
    bed = ctx.get("testbed") or {}
    for k in ("rate", "burst", "mtu"):
        if bed.get(k) is not None:
            out[f"testbed {k}"] = str(bed[k])
    for k, v in sorted((bed.get("link_rates") or {}).items()):
        out[f"testbed link {k}"] = str(v)
    for k, v in sorted((bed.get("throttles") or {}).items()):
        out[f"testbed host {k} share"] = str(v)
    return {k: v for k, v in out.items() if v != ""}


def what_changed(before, after) -> dict[str, tuple[str, str]]:
    """The provenance that differs between two runs: name -> (before, after)."""
    return differ(provenance(before), provenance(after))


def differ(a: dict, b: dict) -> dict[str, tuple[str, str]]:
    """Two provenances' differences: name -> (before, after), '-' where one has none."""
    return {k: (a.get(k, "-"), b.get(k, "-")) for k in sorted({*a, *b}) if a.get(k) != b.get(k)}


def explain(changes: list, runs: dict) -> None:
    """Each step's provenance difference across it, and the machine's (its canaries') verdict:
    a step the canaries moved with is drift of the machine, as `compare` names it."""
    for c in changes:
        if c.kind == "outlier" or c.index == 0:
            continue
        before, after = runs.get(c.series.obs[c.index - 1].run), runs.get(c.run)
        if before is None or after is None:
            continue
        c.changed = what_changed(before, after)
        moved = [s for s in canary_shifts(before, after) if s.moved]
        if moved:
            c.machine = "; ".join(f"{s.text()}: {s.verdict}" for s in moved)
            if c.kind == "step" and not c.changed:
                c.kind = "drift"  # the machine moved and nothing SCOPE records did: its drift
