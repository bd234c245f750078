"""`scope compare`: the per-point table of run B against run A."""

from __future__ import annotations

from scope.views.fmt import names_among, num, size, table


def _f(v, fmt: str) -> str:
    return format(v, fmt) if v == v and v is not None else "-"


def render(rows: list[dict], a: int, b: int, markdown: bool, min_effect: float) -> str:
    head = [
        "test",
        "parameters",
        "size",
        "launches",
        f"run {a} us (geo. mean)",
        f"run {b} us (geo. mean)",
        "B/A",
        "CI (Holm)",
        "p (Holm)",
        "verdict",
    ]
    names, shared = names_among([(r["test"], r["params"]) for r in rows])
    body = [
        [
            r["test"],
            name or "-",
            size(r["size"]),
            f"{r['n_a']}/{r['n_b']}",
            num(r["center_a"]),
            num(r["center_b"]),
            _f(r["ratio"], ".3f"),
            f"{r['ci_lo']:.3f}-{r['ci_hi']:.3f}" if r["ci_lo"] == r["ci_lo"] else "-",
            _f(r["p_value"], ".2g"),
            r["verdict"] + (f" (measured {r['verdict_measured']})" if r.get("verdict_measured") else ""),
        ]
        for r, name in zip(rows, names)
    ]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    tally = ", ".join(f"{v}: {n}" for v, n in sorted(counts.items())) or "no matching points"
    note = (
        f"Launches are the replicates: each run's column is the geometric mean of its launch medians "
        f"and B/A their quotient (> 1: run {b} takes longer), its CI and p from Welch's t test on the "
        f"logarithms, both adjusted for the number of points (Holm: p adjusted, each CI at its Holm step's "
        f"level, so a CI clear of 1 and a p below alpha agree). A verdict needs p < alpha and an effect beyond "
        f"{min_effect * 100:g} %; 'no change' needs the ratio's CI within "
        f"±{min_effect * 100:g} %; a side with one launch gives no verdict (scope run --launches 3)."
    )
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        said = [f"Settings: {'; '.join(shared)}.", ""] if shared else []
        return "\n".join([f"### run {b} against run {a}", "", *lines, "", *said, f"{tally}. {note}"])
    said = ["settings:", *(f"  {x}" for x in shared)] if shared else []
    return "\n".join([f"run {b} against run {a}", table(head, body, "lllrrrrrrl"), *said, "", tally, note])
