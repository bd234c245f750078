"""Independent re-statements of engine rules, for tests to check the engine's records against.
They live here, not in src/: the front end asks the engine and never computes these twice."""

import math

# engine/core/rep.h: REP_RELAX, REP_TARGET_CAP
RELAX = 0.5
TARGET_CAP = 0.25


def launch_target(earlier: list[tuple[float, float]], median: float, ci_rel: float | None, precision: float) -> float:
    """The engine's rule (engine/core/rep.c, rep_target) written again from its description, as
    a test's oracle (the front end itself never recomputes it): the
    relative CI half-width a launch measures a point to, from its earlier launches' (median, CI)
    and its own running median and CI.  The spread of the log medians, less what the launches'
    own errors explain, x 1.96 x RELAX; capped, never below `precision`."""
    if not earlier or not median > 0 or ci_rel is None or ci_rel != ci_rel:  # no CI yet (JSON null: NaN)
        return precision
    logs = [math.log(m) for m, _ in earlier] + [math.log(median)]
    own = [(c / 1.96) ** 2 for _, c in earlier] + [(ci_rel / 1.96) ** 2]
    mean = sum(logs) / len(logs)
    between = sum((x - mean) ** 2 for x in logs) / (len(logs) - 1) - sum(own) / len(own)
    if not between > 0:
        return precision
    return max(precision, min(TARGET_CAP, 1.96 * RELAX * math.sqrt(between)))


def phase_sums_off(rec: dict) -> list[str]:
    """The invariant of a kernel-timed record: per rank, init + comp + comm + idle (each that
    rank's mean over the repetitions the point counts) equals that rank's own mean time over
    the same repetitions (per_rank: end - start): the accounts run between the very timestamps
    the timing takes, so only the clock's drift to the global one parts them (0.5 us, or 1e-4 of
    the time).  The ranks where it fails, said."""
    ph, pr = rec["phases"], rec["per_rank"]
    out = []
    assert ph["repetitions"] == len(pr["start_us"][0]), (ph["repetitions"], len(pr["start_us"][0]))
    for r, (st, en) in enumerate(zip(pr["start_us"], pr["end_us"])):
        own = sum(e - s for s, e in zip(st, en)) / len(st)
        total = sum(ph[q][r] for q in ("init", "comp", "comm", "idle"))
        if not abs(total - own) <= max(0.5, 1e-4 * own):
            out.append(f"{rec['test']} {rec['params']} rank {r}: phases {total:.3f} us, own mean {own:.3f} us")
    return out
