"""Screening a cluster: which link, which host is slow (issue 43).

From the pairs a pairs-timed test measured (p2p.allpairs: every pair of ranks, every launch),
per point (test, size, mode):

- a rank x rank matrix: each pair's one-way time, the median over launches, with an interval:
  the pair's own 95 % interval in one launch, the span of its launches' intervals over several
  (what launches explain);
- a host x host matrix (hosts: the ranks' shared-memory nodes, as the context places them): a
  host pair's figure is the median of its rank pairs'; the diagonal holds pairs within a host;
- flags, each with its figure beside the typical one.  A figure is slow when its whole
  interval lies above the threshold max(typical x (1 + MIN_EXCESS), typical + Z x 1.4826 x
  MAD): far from the peers in their own spread (the robust z of Iglewicz & Hoaglin, 1993) and
  by a margin that matters, and not by the luck of one launch.  Hosts are judged first, by the
  median of each host's links: a host whose links are slow to every other host is one slow
  host, not N - 1 slow links (a median over its links resists one slow link among them).
  Then the links among the hosts not flagged, against each other; pairs within a host against
  the other hosts' within-host pairs.  With 2 hosts a slow link cannot be told from a slow host
  and is reported as the link.

Every figure is a one-way time in us (slow = more); MB/s is size / time for a reader, not a
second judgement."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from scope.analysis.evidence import weak_reason
from scope.analysis.placement import host_names
from scope.model import PairStep, Run

MIN_EXCESS = 0.25  # a slow figure is at least this much above typical
Z = 4.0  # ... and this many robust standard deviations above it
MAD_SCALE = 1.4826  # MAD to a normal distribution's sd
RANK_MATRIX_MAX = 64  # ranks up to which the rank x rank matrix is carried in full (JSON, report)


def finite(x) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def _matrix(m: np.ndarray) -> list[list[float | None]]:
    return [[finite(v) for v in row] for row in m]


@dataclass(frozen=True)
class Flag:
    kind: str  # host | link | within (pairs inside one host)
    hosts: tuple[str, ...]  # one host, or the link's two
    figure_us: float
    lo_us: float
    hi_us: float
    typical_us: float
    threshold_us: float
    links: int  # host: its links the median is over; link: rank pairs in it

    @property
    def ratio(self) -> float:
        return self.figure_us / self.typical_us if self.typical_us > 0 else float("inf")


@dataclass(frozen=True)
class Judged:
    """The peers a figure was judged against: their median, spread and the threshold."""

    what: str  # hosts | links | within
    count: int
    typical_us: float
    mad_us: float
    threshold_us: float


@dataclass
class Screen:
    test: str
    size: int
    mode: str
    launches: int
    ranks: int
    hosts: list[str]  # host order (the matrix's rows), by first rank
    host_of_rank: list[int]
    pairs_measured: int  # rank pairs with a figure
    pairs_expected: int  # N (N - 1) / 2
    steps: int  # the sweep's: N - 1 (N even) or N
    steps_measured: int  # of them (fewer in a sampled sweep, p2p.allpairs -p steps=K)
    seconds: float | None  # the point's time in one launch, all steps (the engine's)
    matrix_us: np.ndarray  # hosts x hosts, NaN where no pair was measured
    matrix_lo_us: np.ndarray
    matrix_hi_us: np.ndarray
    rank_us: np.ndarray | None  # ranks x ranks, up to RANK_MATRIX_MAX ranks
    pair_us: np.ndarray  # every rank pair's figure (the histogram's values)
    typical_us: float  # their median: the typical pair
    judged: list[Judged] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)  # hosts first, then links, slowest first
    weak: str | None = None  # why this run's flags are weak evidence (said beside each): None when sound

    def as_dict(self) -> dict:
        """The screen as `show --json` and `export --format json` carry it (docs/json.md)."""
        return {
            "test": self.test,
            "size": self.size,
            "mode": self.mode,
            "launches": self.launches,
            "ranks": self.ranks,
            "hosts": self.hosts,
            "host_of_rank": self.host_of_rank,
            "pairs_measured": self.pairs_measured,
            "pairs_expected": self.pairs_expected,
            "steps": self.steps,
            "steps_measured": self.steps_measured,
            "seconds": finite(self.seconds),
            "typical_us": finite(self.typical_us),
            "weak": self.weak,
            "flags": [self._flag(f) for f in self.flags],
            "judged": [
                {
                    "among": j.what,
                    "count": j.count,
                    "typical_us": j.typical_us,
                    "mad_us": j.mad_us,
                    "threshold_us": j.threshold_us,
                }
                for j in self.judged
            ],
            "host_matrix_us": _matrix(self.matrix_us),
            "rank_matrix_us": _matrix(self.rank_us) if self.rank_us is not None else None,
        }

    def _flag(self, f: Flag) -> dict:
        return {
            "kind": f.kind,
            "hosts": list(f.hosts),
            "figure_us": f.figure_us,
            "ci_lo_us": f.lo_us,
            "ci_hi_us": f.hi_us,
            "typical_us": f.typical_us,
            "threshold_us": f.threshold_us,
            "ratio": finite(f.ratio),
            "figure_MBps": finite(self.mbps(f.figure_us)),
            "typical_MBps": finite(self.mbps(f.typical_us)),
            "links": f.links,
        }

    def mbps(self, us: float) -> float | None:
        """MB/s (10^6 bytes/s) of a one-way time at this size; None for empty messages."""
        return self.size / us if self.size and us > 0 else None


def threshold(values: np.ndarray) -> tuple[float, float, float]:
    typical = float(np.median(values))
    mad = float(np.median(np.abs(values - typical)))
    return typical, mad, max(typical * (1 + MIN_EXCESS), typical + Z * MAD_SCALE * mad)


def _combine(steps: list[PairStep], n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The measured rank pairs, sparse (issue 55: three ranks x ranks arrays a launch took 2 GB
    each at 16,384 ranks): each pair's key a * n + b in ascending order, the median of its
    launches' figures, and its interval (the lowest low and the highest high of the launches'
    own intervals; one launch: its own)."""
    keys, med, lo, hi = [], [], [], []
    for s in steps:
        a = np.frombuffer(s.a, dtype=np.int64)
        b = np.frombuffer(s.b, dtype=np.int64)
        ok = (a < n) & (b < n)
        keys.append(a[ok] * n + b[ok])
        med.append(np.frombuffer(s.median_us)[ok])
        lo.append(np.frombuffer(s.ci_lo_us)[ok])
        hi.append(np.frombuffer(s.ci_hi_us)[ok])
    key, m = np.concatenate(keys or [np.zeros(0, np.int64)]), np.concatenate(med or [np.zeros(0)])
    low, high = np.concatenate(lo or [np.zeros(0)]), np.concatenate(hi or [np.zeros(0)])
    keep = ~np.isnan(m)  # a pair a launch did not measure
    key, m = key[keep], m[keep]
    low, high = np.where(np.isnan(low[keep]), m, low[keep]), np.where(np.isnan(high[keep]), m, high[keep])
    if key.size == 0:
        return key, m, low, high
    keys_out, fig, _ = _group_medians(key, m)
    order = np.argsort(key, kind="stable")
    starts = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]])
    return keys_out, fig, np.minimum.reduceat(low[order], starts), np.maximum.reduceat(high[order], starts)


def _group_medians(key: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The median of `values` within each group of equal `key`, all groups at once (one sort:
    a 1,024-host matrix has 523,776 groups): the keys, the medians, the counts."""
    order = np.lexsort((values, key))
    k, v = key[order], values[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if k.size else np.array([], dtype=int)
    counts = np.diff(np.r_[starts, k.size])
    return k[starts], (v[starts + (counts - 1) // 2] + v[starts + counts // 2]) / 2, counts


def _host_matrix(pairs, host_of: np.ndarray, H: int):
    """Each host pair's figure and interval ends: the medians over its rank pairs (`pairs`:
    _combine's keys, figures, lows and highs)."""
    key, fig, low, high = pairs
    a, b = np.divmod(key, host_of.size)
    ha, hb = host_of[a], host_of[b]
    if H == host_of.size:  # a rank a host: the host matrix is the rank matrix, reordered
        out = []
        for src in (fig, low, high):
            m = np.full((H, H), np.nan)
            m[ha, hb] = m[hb, ha] = src
            out.append(m)
        count = (~np.isnan(out[0])).astype(int)
        return out[0], out[1], out[2], count
    key = np.minimum(ha, hb) * H + np.maximum(ha, hb)  # the host pair's
    out = []
    for src in (fig, low, high):
        m = np.full((H, H), np.nan)
        keys, med, counts = _group_medians(key, src)
        i, j = np.divmod(keys, H)
        m[i, j] = m[j, i] = med
        out.append(m)
    count = np.zeros((H, H), dtype=int)
    count[i, j] = count[j, i] = counts
    return out[0], out[1], out[2], count


def _rank_matrix(key: np.ndarray, fig: np.ndarray, n: int) -> np.ndarray:
    """The ranks x ranks matrix of a small run (both triangles), NaN where not measured."""
    m = np.full((n, n), np.nan)
    a, b = np.divmod(key, n)
    m[a, b] = fig
    return np.where(np.isnan(m), m.T, m)


def screen_point(steps: list[PairStep], run: Run, seconds: float | None) -> Screen:
    names, host_list = host_names(run)
    n = len(host_list)
    host_of = np.asarray(host_list, dtype=int)
    H = len(names)
    pairs = _combine(steps, n)
    mat, mlo, mhi, count = _host_matrix(pairs, host_of, H)
    key, fig = pairs[0], pairs[1]
    pairs_measured = int(key.size)
    s0 = steps[0]
    sc = Screen(
        test=s0.test,
        size=s0.size,
        mode=s0.mode,
        launches=len({s.launch for s in steps}),
        ranks=n,
        hosts=names,
        host_of_rank=host_list,
        pairs_measured=pairs_measured,
        pairs_expected=n * (n - 1) // 2,
        steps=s0.steps,
        steps_measured=len({s.step for s in steps}),
        seconds=seconds,
        matrix_us=mat,
        matrix_lo_us=mlo,
        matrix_hi_us=mhi,
        rank_us=_rank_matrix(key, fig, n) if n <= RANK_MATRIX_MAX else None,
        pair_us=fig,
        typical_us=float(np.median(fig)) if pairs_measured else float("nan"),
    )
    _judge(sc, count)
    sc.weak = weak_reason(run, steps)  # a flag is a claim: where the machine cannot support it, said so
    return sc


def _judge_cells(sc: Screen, kind: str, i: np.ndarray, j: np.ndarray, count: np.ndarray) -> None:
    """Cells (i, j) of the host matrix judged against each other (3 at least): `link` cells
    between two hosts, `within` cells on the diagonal (the pairs inside a host)."""
    if i.size < 3:
        return
    mat, lo, hi = sc.matrix_us, sc.matrix_lo_us, sc.matrix_hi_us
    typical, mad, thr = threshold(mat[i, j])
    sc.judged.append(Judged("links" if kind == "link" else kind, int(i.size), typical, mad, thr))
    for x, y in zip(i[lo[i, j] > thr], j[lo[i, j] > thr]):
        where = (sc.hosts[x], sc.hosts[y]) if kind == "link" else (sc.hosts[x],)
        sc.flags.append(
            Flag(kind, where, float(mat[x, y]), float(lo[x, y]), float(hi[x, y]), typical, thr, int(count[x, y]))
        )


def _judge(sc: Screen, count: np.ndarray) -> None:
    H = len(sc.hosts)
    mat, lo, hi = sc.matrix_us, sc.matrix_lo_us, sc.matrix_hi_us
    off = ~np.eye(H, dtype=bool) & ~np.isnan(mat)
    slow_hosts: set[int] = set()
    if H >= 3:  # a host's figure: the median of its links to the others
        rows = [(h, off[h]) for h in range(H) if off[h].any()]
        fig = np.array([np.median(mat[h, m]) for h, m in rows])
        if fig.size >= 3:
            typical, mad, thr = threshold(fig)
            sc.judged.append(Judged("hosts", fig.size, typical, mad, thr))
            for (h, m), f in zip(rows, fig):
                low = float(np.median(lo[h, m]))
                if low > thr:
                    slow_hosts.add(h)
                    sc.flags.append(
                        Flag(
                            "host",
                            (sc.hosts[h],),
                            float(f),
                            low,
                            float(np.median(hi[h, m])),
                            typical,
                            thr,
                            int(m.sum()),
                        )
                    )
    keep = np.triu(off, 1)
    if slow_hosts:
        out = np.zeros(H, dtype=bool)
        out[list(slow_hosts)] = True
        keep &= ~out[:, None] & ~out[None, :]
    li, lj = np.nonzero(keep)
    _judge_cells(sc, "link", li, lj, count)
    diag = np.flatnonzero(~np.isnan(np.diag(mat)))
    _judge_cells(sc, "within", diag, diag, count)
    rank = {"host": 0, "within": 1, "link": 2}
    sc.flags.sort(key=lambda f: (rank[f.kind], -f.ratio))


def _point_key(test: str, params: dict) -> tuple:
    """A point by its test and parameters, size included: its steps and its record meet here."""
    return test, tuple(sorted((k, str(v)) for k, v in params.items()))


def screens(run: Run) -> list[Screen]:
    """One Screen per pairs-timed point of the run, in the points' order."""
    groups: dict[tuple, list[PairStep]] = defaultdict(list)
    for s in run.pairs:
        groups[_point_key(s.test, s.params)].append(s)
    seconds = {}
    for p in run.points:
        seconds[_point_key(p.test, dict(p.params, size=p.size) if p.size is not None else p.params)] = p.seconds
    return [screen_point(steps, run, seconds.get(key)) for key, steps in groups.items()]
