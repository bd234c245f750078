"""scope compare A B: per matching point, B against A."""

from __future__ import annotations

import json

from scope.analysis.compare import compare_samples
from scope.show import num, params_label, table
from scope.sizes import format_size
from scope.store import Store, samples_of


def compare_runs(store: Store, a: int, b: int, alpha: float, min_effect: float) -> list[dict]:
    pa = {(p["test"], p["params"], p["size"]): p for p in store.points(a)}
    rows = []
    for p in store.points(b):
        key = (p["test"], p["params"], p["size"])
        if key not in pa:
            continue
        c = compare_samples(samples_of(pa[key]), samples_of(p), alpha, min_effect)
        if c.n_a == 0 or c.n_b == 0:  # imported points carry no samples: compare the values, no verdict
            ma, mb = pa[key]["median"], p["median"]
            c.median_a, c.median_b = ma, mb
            c.ratio = mb / ma if ma else float("nan")
        rows.append({"test": p["test"], "params": json.loads(p["params"]), "size": p["size"], **c.as_dict()})
    return rows


def render(rows: list[dict], a: int, b: int, markdown: bool, min_effect: float) -> str:
    head = ["test", "parameters", "size", f"run {a} us", f"run {b} us", "B/A", "95% CI", "p", "verdict"]
    body = []
    for r in rows:
        ci = f"{r['ci_lo']:.3f}-{r['ci_hi']:.3f}" if r["ci_lo"] == r["ci_lo"] else "-"
        p = f"{r['p_value']:.2g}" if r["p_value"] == r["p_value"] else "-"
        body.append(
            [
                r["test"],
                params_label(json.dumps(r["params"])) or "-",
                format_size(r["size"]),
                num(r["median_a"]),
                num(r["median_b"]),
                f"{r['ratio']:.3f}" if r["ratio"] == r["ratio"] else "-",
                ci,
                p,
                r["verdict"],
            ]
        )
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    tally = ", ".join(f"{v}: {n}" for v, n in sorted(counts.items())) or "no matching points"
    note = (
        f"B/A is the ratio of medians (> 1: run {b} takes longer). A verdict needs p < alpha and an effect "
        f"beyond {min_effect * 100:g} %; 'no difference' needs the ratio's CI within ±{min_effect * 100:g} %."
    )
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join([f"### run {b} against run {a}", "", *lines, "", f"{tally}. {note}"])
    return "\n".join([f"run {b} against run {a}", table(head, body, "lllrrrrrl"), "", tally, note])
