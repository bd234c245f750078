"""The kernel level as text and report rows (analysis/kernels.py, analysis/predict.py): per
point the phases of the slowest rank, the rate, speedup and efficiency and the prediction beside
the measurement; the operations in context beside their loop figures.  The report's figure of
predicted scalability is in plots.py."""

from __future__ import annotations

import math

from scope.analysis.facts import RunFacts
from scope.analysis.kernels import PHASES
from scope.views.fmt import names_among, num, size, table


def _opt(v, fmt: str = "{:.2f}") -> str:
    return fmt.format(v) if v is not None and math.isfinite(v) else "-"


def point_rows(facts: RunFacts) -> list[dict]:
    """One row per kernel point: what the terminal and the report both show."""
    speed = {(sc.test, tuple(sorted(sc.setting.items())), r.procs): r for sc in facts.scaling for r in sc.rows}
    out = []
    for k, pred, name in zip(facts.kernels, facts.predicted, _names([(k.test, k.setting) for k in facts.kernels])):
        r = k.slowest_rank
        row = speed.get((k.test, tuple(sorted(k.setting.items())), k.procs))
        rate = k.rate
        err = pred.error(k.median)
        p = k.point
        out.append(
            {
                "test": k.test,
                "setting": name,
                "procs": k.procs,
                "median": num(k.median),
                "ci": f"{num(p.ci_lo)} .. {num(p.ci_hi)}" if p.ci_lo is not None else "-",
                "rate": f"{num(rate[0])} {rate[1]}" if rate else "-",
                "speedup": _opt(row.speedup if row else None),
                "efficiency": _opt(row.efficiency if row else None, "{:.0%}"),
                "dgemm": _opt(row.dgemm_efficiency if row else None, "{:.0%}"),
                **{q: num(k.phases[q][r]) if r < len(k.phases[q]) else "-" for q in PHASES},
                "phase_sum": num(k.slowest_mean_us),
                "idle_note": "" if k.idle_measured else " (idle not measured)",
                "imbalance": _opt(k.imbalance),
                "predicted": num(pred.total_us) if not pred.missing else "-",
                "error": f"{err:+.0%}" if err is not None else "-",
                "missing": pred.missing,
            }
        )
    return out


def _names(items: list[tuple[str, dict]]) -> list[str]:
    """Each row's setting named by what differs among its test's rows ("-" when nothing does);
    what they share is in the run's settings lines (fmt.names_among)."""
    return [n or "-" for n in names_among(items)[0]]


def _loop_where(op) -> str:
    if op.loop_between:
        return f"interpolated between {size(op.loop_between[0])} and {size(op.loop_between[1])}"
    return f"at {size(op.loop_size)}"


def op_rows(facts: RunFacts) -> list[dict]:
    out = []
    for k, name in zip(facts.kernels, _names([(k.test, k.setting) for k in facts.kernels])):
        for op in k.ops:
            ratio = op.comm_us / op.loop_us if op.loop_us else None
            out.append(
                {
                    "test": k.test,
                    "setting": name,
                    "procs": k.procs,
                    "op": op.name,
                    "bytes": size(int(op.bytes)),
                    "calls": num(op.calls),
                    "context": num(op.comm_us),
                    "idle": num(op.idle_us),
                    "loop": f"{num(op.loop_us)} ({op.test} {_loop_where(op)}, run {op.loop_run})"
                    if op.loop_us
                    else f"- (no {op.test} around this size and procs)",
                    "ratio": _opt(ratio, "{:.2f}x"),
                }
            )
    return out


def step_rows(facts: RunFacts) -> tuple[list[str], list[dict]]:
    """T_comp's named steps (e.g. FT's fft, pack, evolve, checksum), the slowest rank's, with
    their share of its T_comp: the step names, and one row per point that has steps."""
    names = list(dict.fromkeys(n for k in facts.kernels for n in k.steps))
    rows = []
    for k, name in zip(facts.kernels, _names([(k.test, k.setting) for k in facts.kernels])):
        if not k.steps:
            continue
        r = k.slowest_rank
        comp = k.phases["comp"][r] if r < len(k.phases["comp"]) else math.nan
        cells = {}
        for n in names:
            v = k.steps.get(n, [])
            us = v[r] if r < len(v) else math.nan
            cells[n] = f"{num(us)} ({us / comp:.0%})" if math.isfinite(us) and comp > 0 else "-"
        rows.append({"test": k.test, "setting": name, "procs": k.procs, "rank": r, "steps": cells})
    return names, rows


def switch_rows(facts: RunFacts) -> list[dict]:
    return [
        {
            "setting": name,
            "procs": w.procs,
            "transpose": w.transpose,
            "median": num(w.median_us),
            "ratio": f"{w.ratio:.3f}" if math.isfinite(w.ratio) else "-",
            "ci": f"{w.ci_lo:.3f}-{w.ci_hi:.3f}" if math.isfinite(w.ci_lo) else "-",
            "verdict": w.verdict,
        }
        for w, name in zip(facts.switches, _names([("", w.setting) for w in facts.switches]))
    ]


def overlap_rows(facts: RunFacts) -> list[dict]:
    return [
        {
            "setting": name,
            "procs": o.procs,
            "alltoall": num(o.alltoall_us),
            "nonblocking": num(o.nonblocking_us),
            "transposes": num(o.transposes_us),
            "overlap": f"{o.overlap:+.0%}",
            "ci": f"{o.lo:+.0%} .. {o.hi:+.0%}",
            "covers": o.covers,
        }
        for o, name in zip(facts.overlaps, _names([("", o.setting) for o in facts.overlaps]))
    ]


def get_rows(facts: RunFacts) -> list[dict]:
    return [
        {
            "setting": name,
            "procs": g.procs,
            "gets": num(g.gets),
            "in_gets": num(g.in_gets_us),
            "share": f"{g.share:.1%}",
            "loop": num(g.loop_us) if g.loop_us else "- (no rma.get run at this size and procs)",
            "explained": f"{g.explained:.0%}" if g.explained is not None else "-",
        }
        for g, name in zip(facts.get_shares, _names([("", g.setting) for g in facts.get_shares]))
    ]


def verification_rows(facts: RunFacts) -> list[dict]:
    """NPB's verification of each point: every value beside NPB's reference, the relative error
    against NPB's bound."""
    return [
        {
            "test": v.test,
            "setting": name,
            "procs": str(v.procs),
            "values": "; ".join(f"{n} = {val:.15g} (NPB: {ref:.15g})" for n, val, ref in v.values),
            "error": f"{v.error:.1e}",
            "bound": f"{v.bound:.0e}",
            "result": "passed" if v.passed else "FAILED",
        }
        for v, name in zip(facts.verified, _names([(v.test, v.setting) for v in facts.verified]))
    ]


def _app_blocks(facts: RunFacts) -> list[str]:
    out = []
    ver = verification_rows(facts)
    if ver:
        out += [
            "",
            "NPB verification (the engine's check before and after measuring; a failure is an error, not a point)",
            table(
                ["test", "setting", "procs", "values (NPB's reference)", "relative error", "bound", "result"],
                [list(r.values()) for r in ver],
                "llrlrrl",
            ),
        ]
    names, rows = step_rows(facts)
    if rows:
        out += [
            "",
            "Steps of T_comp (the slowest rank's, us, and share of its T_comp)",
            table(
                ["test", "setting", "procs", "rank", *names],
                [[r["test"], r["setting"], str(r["procs"]), str(r["rank"]), *r["steps"].values()] for r in rows],
                "llrr" + "r" * len(names),
            ),
        ]
    gets = get_rows(facts)
    if gets:
        out += [
            "",
            "LU: time in one-sided gets (the rank with the most), and the share the one-sided layer's own get latency "
            "(rma.get's loop figure x gets) explains",
            table(
                ["setting", "procs", "gets", "in gets us", "share of T", "rma.get loop us", "explained"],
                [[g["setting"], str(g["procs"]), *list(g.values())[2:]] for g in gets],
                "lrrrrrr",
            ),
        ]
    sw = switch_rows(facts)
    if sw:
        out += [
            "",
            "FT: each transpose against alltoall (T / T alltoall; launches as replicates, as scope compare)",
            table(
                ["setting", "procs", "transpose", "T us", "vs alltoall", "95% CI", "verdict"],
                [[w["setting"], str(w["procs"]), *list(w.values())[2:]] for w in sw],
                "lrlrrrl",
            ),
        ]
    ov = overlap_rows(facts)
    if ov:
        out += [
            "",
            "FT: the non-blocking transpose's overlap = (T alltoall - T nonblocking) / T in the alltoall run's "
            "transposes (negative: it costs more than it hides)",
            table(
                ["setting", "procs", "alltoall us", "nonblocking us", "transposes us", "overlap", "95% CI", "covers"],
                [[o["setting"], str(o["procs"]), *list(o.values())[2:]] for o in ov],
                "lrrrrrrl",
            ),
        ]
    return out


def kernel_block(facts: RunFacts) -> list[str]:
    """`scope show`'s kernel section."""
    if not facts.kernels:
        return []
    rows = point_rows(facts)
    head = ["test", "setting", "procs", "T us", "95% CI us", "rate", "speedup", "eff", "vs DGEMM"]
    head += ["init", "comp", "comm", "idle", "= mean us", "imbal", "predicted us", "error"]
    cells = [
        [r["test"], r["setting"], str(r["procs"]), r["median"], r["ci"], r["rate"], r["speedup"], r["efficiency"]]
        + [r["dgemm"], *(r[q] + (r["idle_note"] if q == "idle" else "") for q in PHASES), r["phase_sum"]]
        + [r["imbalance"]]
        + [r["predicted"], r["error"]]
        for r in rows
    ]
    out = [
        "",
        "Kernels and applications (T: the median over repetitions of the last rank's completion; phases: the "
        "slowest rank's, us, each its mean over the same repetitions, adding up to its mean time (= mean us); idle = "
        "waiting for a partner, measured on the global clock; kernels predicted from the lower levels)",
        table(head, cells, "llr" + "r" * 16),
    ]
    missing = sorted({r["missing"] for r in rows if r["missing"] and r["test"].startswith("kernel.")})
    out += [f"  not predicted: {m}" for m in missing]
    ops = op_rows(facts)
    if ops:
        out += [
            "",
            "Operations in context (per call: slowest rank once its partners were there, us) beside the loop figure",
            table(
                ["test", "setting", "procs", "operation", "bytes", "calls", "in context us", "idle us", "loop us"]
                + ["context/loop"],
                [
                    [o["test"], o["setting"], str(o["procs"]), o["op"], o["bytes"], o["calls"], o["context"]]
                    + [o["idle"], o["loop"], o["ratio"]]
                    for o in ops
                ],
                "lllrrrrrlr",
            ),
        ]
    return out + _app_blocks(facts)
