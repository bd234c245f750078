"""`scope predict`: a kernel's time at process counts it may never have run on (up to 10^4
and beyond), from the newest stored runs of the lower levels (analysis/predict.py), with the
inputs named and the measured points beside the predicted where the store has them.  Every
prediction is stored as it is made, with its inputs: it never changes when runs are added.

`scope predict --check RUN`: a measured kernel run against its prediction from the lower
levels of the same machine, as frozen when the run was stored (`--again`: anew, a new record)."""

from __future__ import annotations

import statistics

from scope.analysis.facts import cores_of, derive, l2_of
from scope.analysis.frozen import input_runs, inputs_record, prediction_record
from scope.analysis.inputs import gather_inputs
from scope.analysis.kernels import kernel_points
from scope.analysis.predict import KERNELS, OWN_RATE, counts, predict
from scope.catalog.names import DGEMM, NODE_STREAM, PINGPONG
from scope.cli.common import emit
from scope.cli.simpredict import simulated
from scope.errors import USAGE, ScopeError
from scope.fetch.facts import derive_stored, lower_runs
from scope.run.plan import ask
from scope.run.toolchain import engine_path, find_toolchain
from scope.store import Store
from scope.views.fmt import num, params_label, table
from scope.views.jsonout import dumps

LOWER = (PINGPONG, DGEMM, NODE_STREAM, *OWN_RATE)
PLAN_RANKS = 1 << 20  # the plan's world: any count a prediction may ask for


def planned(kernel: str, params: list[str], procs: str | None) -> tuple[dict, list[int]]:
    """The setting and process counts to predict, as the engine's plan reads them: it checks
    the parameters and counts as a run would and says which points the kernel refuses (a
    non-square count for Cannon, fewer rows than ranks), so nothing it would not run is
    predicted.  Counts given with --procs that it refuses are an error; of the default counts
    (up to 10^4) those it refuses are left out."""
    if procs is not None and any(w.strip() in ("all", "pow2") for w in procs.split(",")):
        # a run's words for its own ranks: a prediction has no run, so 'all' was 2^20 processes
        raise ScopeError(f"--procs {procs}: a prediction has no run whose ranks 'all' or 'pow2' could mean",
                         "list the process counts, e.g. --procs 1,4,16,64,1024", USAGE)  # fmt: skip
    exe = engine_path(find_toolchain(None), quiet=True)
    wanted = procs or ",".join(map(str, counts(kernel)))
    argv = ["--tests", kernel, *(x for a in params for x in ("--param", a)), "--procs", wanted]
    try:
        plan = ask(exe, argv, PLAN_RANKS).tests[0]
    except ScopeError as e:
        if "the run's" not in e.message:
            raise
        # the engine's words name a run and its -n, which predict does not have (issue 58)
        raise ScopeError(f"--procs {procs}: a prediction goes up to {PLAN_RANKS:,} processes",
                         f"list counts up to {PLAN_RANKS}", USAGE) from None  # fmt: skip
    several = {k: v for k, v in plan.params.items() if len(v) != 1}
    if several:
        name, values = next(iter(several.items()))
        raise ScopeError(
            f"{name} has {len(values)} values: a prediction is of one setting", f"e.g. -p {name}={values[0]}"
        )
    setting = {k: v[0] for k, v in plan.params.items()}  # typed as the engine wrote them
    refused = {r.procs: r.reason for r in plan.refused}
    if procs and refused:
        n, why = next(iter(refused.items()))
        raise ScopeError(f"{kernel} does not run on {n} processes with {params_label(setting)}: {why}",
                         "predict process counts the kernel runs", USAGE)  # fmt: skip
    left = [n for n in plan.procs if n not in refused]
    if not left:  # every default count refused: the setting itself is one the kernel never runs
        n, why = next(iter(refused.items()))
        raise ScopeError(f"{kernel} does not run with {params_label(setting)}: {why}",
                         "predict a setting the kernel runs (scope list says its parameters)", USAGE)  # fmt: skip
    return setting, left


def predict_text(store, test: str, setting: dict, procs: list[int], sim: bool = False) -> tuple[str, dict]:
    """The table of `scope predict KERNEL`, and its JSON document; the prediction is stored
    (frozen) as it is made. `sim`: also the kernel run under SMPI on a platform calibrated from
    the same inputs (cli/simpredict.py), each figure marked as what it is."""
    own, runs = input_candidates(store, test)
    anchor = own or (runs[0] if runs else None)
    inp = gather_inputs(runs, cores_of(anchor) if anchor else None, l2_of(anchor) if anchor else None)
    preds = [predict(test, setting, p, inp) for p in procs]
    missing = next((x.missing for x in preds if x.missing), None)
    if missing and not any(not x.missing for x in preds):
        raise ScopeError(f"{test} cannot be predicted: an input is missing", f"measure it: {missing}")
    measured = {}
    for k in kernel_points(own) if own else []:
        if k.test == test and all(str(k.setting.get(n)) == str(v) for n, v in setting.items()):
            measured.setdefault(k.procs, (k.median, own.id))
    sims, simdoc = simulated(store, test, setting, procs, runs) if sim else ({}, None)
    one = next((x.total_us for x in preds if x.procs == 1 and not x.missing), None)
    rows, records = [], []
    for x in preds:
        m = measured.get(x.procs)
        t_sim = sims.get(x.procs)
        sim_err = t_sim / m[0] - 1 if t_sim and m and m[0] else None
        records.append(dict(prediction_record(x), total_us=None if x.missing else x.total_us,
                            measured_us=m[0] if m else None, error=x.error(m[0] if m else None),
                            **({"simulated_us": t_sim, "simulated_error": sim_err} if sim else {})))  # fmt: skip
        extra = [num(t_sim), f"{sim_err:+.0%}" if sim_err is not None else "-"] if sim else []
        if x.missing:
            rows.append([str(x.procs), "-", "-", "-", "-", "-", "-", "-", f"({x.missing})", *extra])
            continue
        sp = one / x.total_us if one and x.total_us > 0 else None
        err = records[-1]["error"]
        rows.append(
            [str(x.procs), num(x.init_us), num(x.comp_us), num(x.comm_us), num(x.total_us)]
            + [num(sp) if sp else "-", f"{sp / x.procs:.0%}" if sp else "-"]
            + [f"{num(m[0])} (run {m[1]})" if m else "-", f"{err:+.0%}" if err is not None else "-"]
            + extra
        )
    used = sorted({u for x in preds for u in x.used})
    label = params_label(setting) or "defaults"
    kept = store.add_prediction(None, test, inputs_record(inp), [prediction_record(x) for x in preds])
    head = ["procs", "T_init us", "T_comp us", "T_comm us", "predicted T us", "speedup", "eff", "measured us", "error"]
    head += ["simulated T us", "sim error"] if sim else []
    title = f"{test} {label}: predicted from the lower levels (stored as prediction {kept})"
    doc = {
        "format": "scope-predict",
        "prediction": kept,
        "test": test,
        "setting": setting,
        "rows": records,
        "inputs": inputs_record(inp),
        "used": used,
        **({"simulated": simdoc} if sim else {}),
    }
    lacking = sorted({m for x in preds for m in x.lacking})
    more = ["inputs that would match better, not measured yet:", *(f"  {m}" for m in lacking)] if lacking else []
    said = []
    if simdoc:
        said = [
            f"simulated: run {simdoc['run']}, the kernel's code under SimGrid's SMPI on a platform calibrated from "
            + ", ".join(f"{s['test']} of run {s['run']}" for s in simdoc["calibration"]["sources"])
            + f", computation at {simdoc['host_speed_flops'] / 1e9:.3g} Gflop/s a core (each burst as long as here);"
            " predicted: the analytic cost model; measured: this machine"
        ]
    return "\n".join([title, table(head, rows), *said, "inputs:"] + [f"  {u}" for u in used] + more), doc


def input_candidates(store, test: str) -> tuple:
    """The newest run of `test` (None without one) and the runs the prediction may draw on,
    newest first: those of the same MPI library and hosts as that run, or, without one, as the
    newest ping-pong's (inputs.RULE); a run of another MPI or other hosts never counts."""
    own_id = store.latest_with(test)
    anchor_id = own_id or store.latest_with(PINGPONG) or next(filter(None, map(store.latest_with, LOWER)), None)
    if anchor_id is None:
        return None, []
    anchor = store.load_run(anchor_id, samples=False)
    runs = [anchor]
    for t in LOWER:
        runs += [r for r in store.candidates_for(anchor, t) if all(x.id != r.id for x in runs)]
    return (anchor if own_id else None), [anchor, *sorted(runs[1:], key=lambda r: -r.id)]


GOAL_MEDIAN, GOAL_MAX = 0.15, 0.35  # issue 28: median |error| at most 15 %, none above 35 %


def check_text(store, run_id: int, again: bool) -> tuple[str, dict]:
    """A measured kernel run beside its prediction from the lower levels: predicted, measured
    and the error per point, with the inputs and when the prediction was made."""
    facts = derive_stored(store, run_id, samples=False)
    if not facts.kernels:
        raise ScopeError(f"run {run_id} has no kernel or application points", "check a run of kernel.* tests", USAGE)
    if again or facts.frozen is None:  # made now, from the runs stored now, and kept
        fresh = derive(facts.run, None, lower_runs(store, facts.run))
        kept = store.add_prediction(
            run_id, None, inputs_record(fresh.inputs), [prediction_record(x) for x in fresh.predicted]
        )
        facts = derive_stored(store, run_id, samples=False)
        made = f"made now (prediction {kept})"
    else:
        made = f"frozen at {facts.frozen['made_utc']} (prediction {facts.frozen['id']})"
    used = sorted({u for x in facts.predicted for u in x.used})
    number = {u: i + 1 for i, u in enumerate(used)}  # each point names its inputs by number
    rows, errors, points = [], [], []
    for k, x in zip(facts.kernels, facts.predicted):
        err = x.error(k.median)
        predicted = None if x.missing else x.total_us
        points.append({"test": k.test, "setting": k.setting, "procs": k.procs, "missing": x.missing,
                       "predicted_us": predicted, "measured_us": k.median, "error": err, "used": x.used,
                       "lacking": x.lacking})  # fmt: skip
        if err is not None:
            errors.append((abs(err), k, x))
        over = k.procs > (facts.inputs.cores or k.procs) if facts.inputs else False
        rows.append([
            k.test, params_label(k.setting) or "-", f"{k.procs}" + (" (oversubscribed)" if over else ""),
            num(x.total_us) if not x.missing else "-", num(k.median),
            f"{err:+.0%}" if err is not None else f"({x.missing})" if x.missing else "-",
            ",".join(str(number[u]) for u in x.used) or "-",
        ])  # fmt: skip
    lines = [
        f"run {run_id}: measured against the prediction from the lower levels, {made}; "
        + (
            f"inputs from runs {', '.join(map(str, ids))}"
            if (ids := input_runs(facts.inputs))
            else "no input runs: this machine has no lower-level runs stored (pingpong, dgemm, stream)"
        ),
        table(["test", "setting", "procs", "predicted T us", "measured T us", "error", "inputs"], rows),
    ]
    med = worst_err = ok = None
    if errors:
        med = float(statistics.median(e for e, _, _ in errors))
        worst = max(errors, key=lambda e: e[0])
        worst_err = worst[0]
        ok = med <= GOAL_MEDIAN and worst[0] <= GOAL_MAX
        lines.append(
            f"median |error| {med:.0%}, largest {worst[0]:.0%} ({worst[1].test} {params_label(worst[1].setting)}, "
            f"{worst[1].procs} procs); goal: median at most {GOAL_MEDIAN:.0%}, none above {GOAL_MAX:.0%}: "
            + ("met" if ok else "not met")
        )
    rule = facts.inputs.rule if facts.inputs and facts.inputs.rule else "the newest of each (made before the rule)"
    lines += [f"inputs (chosen by: {rule}):", *(f"  {number[u]}. {u}" for u in used)]
    lacking = sorted({m for x in facts.predicted for m in x.lacking})
    if lacking:
        lines += ["inputs that would match the points better, not measured yet:", *(f"  {m}" for m in lacking)]
    doc = {
        "format": "scope-predict-check",
        "run": run_id,
        "prediction": dict(facts.frozen or {}),
        "input_runs": input_runs(facts.inputs),
        "rule": facts.inputs.rule if facts.inputs else None,
        "points": points,
        "median_abs_error": med,
        "largest_abs_error": worst_err,
        "goal": {"median": GOAL_MEDIAN, "largest": GOAL_MAX, "met": ok},
        "used": used,
    }
    return "\n".join(lines), doc


def cmd_predict(args) -> int:
    if args.check:
        if args.sim:
            raise ScopeError("--sim simulates a prediction, not a check", "leave out --sim, or --check")
        if args.kernel or args.param or args.procs:
            raise ScopeError("--check RUN predicts that run's own points", "leave out the kernel, -p and --procs")
        store = Store(args.db, create=False)
        text, doc = check_text(store, store.resolve_run(args.check), args.again)
        emit((dumps(doc) if args.json else text) + "\n")
        return 0
    if args.again:
        raise ScopeError("--again re-predicts a run checked with --check RUN", "add --check RUN")
    if not args.kernel:
        raise ScopeError("name a kernel to predict, or --check RUN", f"one of {', '.join(KERNELS)}", USAGE)
    if args.kernel not in KERNELS:
        raise ScopeError(f"no cost model for '{args.kernel}'", f"predict one of {', '.join(KERNELS)}", USAGE)
    setting, procs = planned(args.kernel, args.param, args.procs)
    text, doc = predict_text(Store(args.db, create=False), args.kernel, setting, procs, sim=args.sim)
    emit((dumps(doc) if args.json else text) + "\n")
    return 0
