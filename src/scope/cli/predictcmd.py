"""`scope predict`: a kernel's time at process counts it may never have run on (up to 10^4
and beyond), from the newest stored runs of the lower levels (analysis/predict.py), with the
inputs named and the measured points beside the predicted where the store has them."""

from __future__ import annotations

from scope.analysis.facts import cores_of
from scope.analysis.inputs import gather_inputs
from scope.analysis.kernels import kernel_points
from scope.analysis.predict import KERNELS, OWN_RATE, counts, predict
from scope.catalog.names import DGEMM, NODE_STREAM, PINGPONG
from scope.cli.common import descriptors
from scope.errors import USAGE, ScopeError
from scope.store import Store
from scope.views.fmt import num, params_label, table

LOWER = (PINGPONG, DGEMM, NODE_STREAM, *OWN_RATE)


def parse_setting(test: str, assignments: list[str], defaults: dict) -> dict:
    """The kernel's parameters: its descriptor's defaults, with -p NAME=VALUE over them."""
    out: dict = {k: int(v) if v.isdigit() else v for k, v in defaults.items()}
    for a in assignments or []:
        name, eq, value = a.partition("=")
        if not eq or not name or not value:
            raise ScopeError(f"bad -p '{a}'", f"write NAME=VALUE, e.g. -p n=1024 for {test}", USAGE)
        if name not in defaults:
            raise ScopeError(f"{test} has no parameter '{name}'", f"its parameters: {', '.join(defaults)}", USAGE)
        out[name] = int(value) if value.isdigit() else value
    return out


def parse_procs(spec: str) -> list[int]:
    try:
        counts = sorted({int(x) for x in spec.split(",") if x.strip()})
    except ValueError:
        raise ScopeError(f"bad --procs '{spec}'", "list process counts, e.g. --procs 1,16,256,4096", USAGE) from None
    if not counts or counts[0] < 1:
        raise ScopeError(f"bad --procs '{spec}'", "process counts are 1 or more", USAGE)
    return counts


def predict_text(store, test: str, setting: dict, procs: list[int] | None) -> str:
    own_id = store.latest_with(test)
    ids = {i for i in (*(store.latest_with(t) for t in LOWER), own_id) if i}
    loaded = {i: store.load_run(i, samples=False) for i in sorted(ids, reverse=True)}  # newest first
    own = loaded.get(own_id)
    inp = gather_inputs(list(loaded.values()), cores_of(own) if own else None)
    preds = [predict(test, setting, p, inp) for p in procs or counts(test)]
    missing = next((x.missing for x in preds if x.missing), None)
    if missing and not any(not x.missing for x in preds):
        raise ScopeError(f"{test} cannot be predicted: an input is missing", f"measure it: {missing}")
    measured = {}
    for k in kernel_points(own) if own else []:
        if k.test == test and all(str(k.setting.get(n)) == str(v) for n, v in setting.items()):
            measured.setdefault(k.procs, (k.median, own.id))
    one = next((x.total_us for x in preds if x.procs == 1 and not x.missing), None)
    rows = []
    for x in preds:
        if x.missing:
            rows.append([str(x.procs), "-", "-", "-", "-", "-", "-", "-", f"({x.missing})"])
            continue
        sp = one / x.total_us if one and x.total_us > 0 else None
        m = measured.get(x.procs)
        err = x.error(m[0] if m else None)
        rows.append(
            [str(x.procs), num(x.init_us), num(x.comp_us), num(x.comm_us), num(x.total_us)]
            + [num(sp) if sp else "-", f"{sp / x.procs:.0%}" if sp else "-"]
            + [f"{num(m[0])} (run {m[1]})" if m else "-", f"{err:+.0%}" if err is not None else "-"]
        )
    used = sorted({u for x in preds for u in x.used})
    label = params_label(setting) or "defaults"
    head = ["procs", "T_init us", "T_comp us", "T_comm us", "predicted T us", "speedup", "eff", "measured us", "error"]
    return "\n".join(
        [f"{test} {label}: predicted from the lower levels", table(head, rows), "inputs:"] + [f"  {u}" for u in used]
    )


def cmd_predict(args) -> int:
    if args.kernel not in KERNELS:
        raise ScopeError(f"no cost model for '{args.kernel}'", f"predict one of {', '.join(KERNELS)}", USAGE)
    store = Store(args.db, create=False, readonly=True)
    info = next((i for i in descriptors(args) if i.name == args.kernel), None)
    if info is None:
        raise ScopeError(f"this engine has no {args.kernel}", "rebuild it: scope build")
    setting = parse_setting(args.kernel, args.param, dict(info.defaults))
    procs = parse_procs(args.procs) if args.procs else None
    print(predict_text(store, args.kernel, setting, procs))
    return 0
