"""Small inline SVG charts for the hub's pages: a series with its interval band, curves on log
axes, a colour scale.  Drawn as text on the server: a cluster page with 500 runs is a few
kilobytes, with no script and nothing fetched (matplotlib would cost a second a figure)."""

from __future__ import annotations

import math

from scope.views.fmt import html_text

W, H, PAD = 640, 220, 44
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
EVENT_INK = "#6b6b6b"  # an announced event: grey, dotted, apart from the detected changes (red)


def _ticks(lo: float, hi: float, log: bool, base: int = 10) -> list[float]:
    if log and base == 2:  # message sizes: powers of two, at most about eight of them (1, 16, 256, 4K ...)
        a, b = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
        step = max(1, math.ceil((b - a) / 8))
        return [2.0**e for e in range(a - a % step, b + 1, step)]
    if log:
        decades = [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]
        inside = [t for t in decades if lo <= t <= hi]
        # fewer than four decades shown: 1, 2 and 5 of each, so the axis still reads (issue 70: four labels)
        if len(inside) >= 4:
            return decades
        fine = [d * m for d in decades for m in (1, 2, 5)]
        if sum(lo <= t <= hi for t in fine) >= 4:
            return fine
        return _ticks(lo, hi, False)  # within less than a factor of ten: plain steps, placed on the log axis
    step = 10 ** math.floor(math.log10(hi - lo or abs(hi) or 1))
    while (hi - lo) / step > 6:
        step *= 2
    while hi > lo and (hi - lo) / step < 4:  # a narrow axis still reads: four ticks inside it at least
        step /= 2
    return [step * k for k in range(math.floor(lo / step), math.ceil(hi / step) + 1)]


def _label(v: float) -> str:
    if v >= 1 << 20 and v == int(v) and int(v) % (1 << 20) == 0:
        return f"{int(v) >> 20}M"
    if v >= 1024 and v == int(v) and int(v) % 1024 == 0:
        return f"{int(v) >> 10}K"
    return f"{v:g}"


class Axes:
    def __init__(self, xs, ys, xlog: bool, ylog: bool, zero: bool = True):
        self.xlog, self.ylog = xlog, ylog
        xs = [x for x in xs if x is not None and (not xlog or x > 0)] or [1.0]
        ys = [y for y in ys if y is not None and (not ylog or y > 0)] or [1.0]
        self.x0, self.x1 = min(xs), max(xs)
        self.y0, self.y1 = min(ys), max(ys)
        if not ylog and zero:
            self.y0 = min(0.0, self.y0)
        if self.x1 == self.x0:
            self.x1 = self.x0 * 2 if xlog else self.x0 + 1
        if self.y1 == self.y0:
            self.y1 = self.y0 * 2 if ylog and self.y0 > 0 else self.y0 + 1

    def _f(self, v, a, b, log):
        if log:
            v, a, b = math.log10(max(v, 1e-300)), math.log10(a), math.log10(b)
        return (v - a) / (b - a)

    def x(self, v) -> float:
        return PAD + self._f(v, self.x0, self.x1, self.xlog) * (W - 2 * PAD)

    def y(self, v) -> float:
        return 10 + (1 - self._f(v, self.y0, self.y1, self.ylog)) * (H - PAD - 20)

    def frame(self, xlabel: str, ylabel: str, xtext=None) -> list[str]:
        out = [f'<rect x="{PAD}" y="10" width="{W - 2 * PAD}" height="{H - PAD - 20}" fill="none" stroke="#bbb"/>']
        for t in _ticks(self.y0, self.y1, self.ylog):
            if self.y0 <= t <= self.y1:
                y = self.y(t)
                out.append(f'<line x1="{PAD}" x2="{W - PAD}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
                label = html_text(_label(t))
                out.append(f'<text class="tick-y" x="{PAD - 4}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
        if xtext is None:
            for t in _ticks(self.x0, self.x1, self.xlog, 2):
                if self.x0 <= t <= self.x1:
                    x = self.x(t)
                    tick = html_text(_label(t))
                    at = f'x="{x:.1f}" y="{H - PAD + 26}"'
                    out.append(f'<text class="tick-x" {at} text-anchor="middle">{tick}</text>')
        else:
            out += xtext
        out.append(f'<text x="{W / 2}" y="{H - 4}" text-anchor="middle">{html_text(xlabel)}</text>')
        turned = f'transform="rotate(-90 12 {H / 2})"'
        out.append(f'<text x="12" y="{H / 2}" {turned} text-anchor="middle">{html_text(ylabel)}</text>')
        return out


def _svg(body: list[str], title: str) -> str:
    return (
        f'<svg viewBox="0 0 {W} {H}" role="img" aria-label="{html_text(title)}" class="chart" '
        f'font-size="11" font-family="sans-serif"><title>{html_text(title)}</title>' + "".join(body) + "</svg>"
    )


def band_path(ax: Axes, pts: list[tuple[float, float | None, float | None]]) -> str:
    """The polygon of an interval band: along the upper bounds, back along the lower."""
    up = [(ax.x(x), ax.y(hi)) for x, lo, hi in pts if lo is not None and hi is not None]
    down = [(ax.x(x), ax.y(lo)) for x, lo, hi in reversed(pts) if lo is not None and hi is not None]
    if len(up) < 2:
        return ""
    return "M" + " L".join(f"{a:.1f},{b:.1f}" for a, b in up + down) + " Z"


def robust_limits(values: list[float]) -> tuple[float, float]:
    """A value axis the values fill, that one run's wide interval cannot flatten: the values'
    range and 60 % of it each side (5 % of the value for a flat series), never below zero for
    positive values; bands are clipped to it."""
    lo, hi = min(values), max(values)
    span = hi - lo or abs(hi) * 0.05 or 1.0
    y0, y1 = lo - 0.6 * span, hi + 0.6 * span
    return (max(y0, 0.0) if lo >= 0 else y0), y1


def series(
    values: list[tuple[str, float | None, float | None, float | None]],
    title: str,
    unit: str,
    marks=(),
    far=(),
    events=(),
) -> str:
    """A figure over a cluster's runs in time order: (run label, value, lo, hi) each; the runs
    evenly spaced (their order, not their dates: a month without runs is no gap to read), up to
    six of them named on the x axis; `marks`: (index of the first run after a change, its
    label), drawn as a dashed line; `far`: the indices of outliers (analysis/headline.outlying),
    marked on the axis' edge instead of stretching it; `events`: (index of the first run after an
    announced event, its text), a dotted line labelled at the foot."""
    pts = [(i, v, lo, hi) for i, (_, v, lo, hi) in enumerate(values) if v is not None]
    if not pts:
        return ""
    far = set(far)
    y0, y1 = robust_limits([v for i, v, _, _ in pts if i not in far])
    clip = [(i, min(max(v, y0), y1), None if lo is None or i in far else max(lo, y0),
             None if hi is None or i in far else min(hi, y1)) for i, v, lo, hi in pts]  # fmt: skip
    ax = Axes([0, max(len(values) - 1, 1)], [y0, y1], False, False, zero=False)
    n = len(values)
    named = sorted({round(k * (n - 1) / 5) for k in range(6)}) if n > 1 else [0]
    anchor = {0: "start", n - 1: "end"}
    xt = [
        f'<text class="tick-x" x="{ax.x(i):.1f}" y="{H - PAD + 26}" text-anchor="{anchor.get(i, "middle")}">'
        f"{html_text(values[i][0])}</text>"
        for i in named
    ]
    body = ax.frame("runs in time order", unit, xt)
    band = band_path(ax, [(i, lo, hi) for i, v, lo, hi in clip])
    if band:
        body.append(f'<path d="{band}" fill="{COLOURS[0]}" fill-opacity="0.18" stroke="none"/>')
    line = " ".join(f"{ax.x(i):.1f},{ax.y(v):.1f}" for i, v, _, _ in clip)
    body.append(f'<polyline points="{line}" fill="none" stroke="{COLOURS[0]}" stroke-width="1.5"/>')
    body += [f'<circle cx="{ax.x(i):.1f}" cy="{ax.y(v):.1f}" r="2.2" fill="{COLOURS[0]}"/>'
             for i, v, _, _ in clip if i not in far]  # fmt: skip
    body += _outliers(ax, [(i, v) for i, v, _, _ in pts if i in far], y1)
    for i, label in marks:
        x = ax.x(i - 0.5)
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="10" y2="{H - PAD + 10}" stroke="{COLOURS[1]}" '
                    'stroke-dasharray="4 3"/>')  # fmt: skip
        body.append(f'<text x="{x + 3:.1f}" y="22" fill="{COLOURS[1]}">{html_text(label)}</text>')
    for k, (i, label) in enumerate(events):
        x = ax.x(i - 0.5)
        body.append(f'<line class="event" x1="{x:.1f}" x2="{x:.1f}" y1="10" y2="{H - PAD}" stroke="{EVENT_INK}" '
                    'stroke-dasharray="1 3" stroke-width="1.5"/>')  # fmt: skip
        short = label if len(label) <= 28 else label[:27] + "…"
        body.append(f'<text class="event" x="{x + 3:.1f}" y="{H - PAD - 6 - 12 * (k % 3)}" fill="{EVENT_INK}">'
                    f"{html_text(short)}<title>{html_text(label)}</title></text>")  # fmt: skip
    return _svg(body, title)


def _outliers(ax: Axes, far: list[tuple[int, float]], top: float) -> list[str]:
    """Each outlier as an open triangle on the axis' edge it lies past, pointing out, with its
    value beside it: marked, not stretching the axis the other runs are read on."""
    out = []
    for i, v in far:
        x, up = ax.x(i), v > top
        y = ax.y(top) + 1 if up else ax.y(ax.y0) - 1
        tip, base = (y - 7, y) if up else (y + 7, y)
        out.append(
            f'<path class="outlier" d="M{x - 5:.1f},{base:.1f} L{x:.1f},{tip:.1f} L{x + 5:.1f},{base:.1f} Z" '
            f'fill="#fff" stroke="{COLOURS[1]}" stroke-width="1.5"><title>outlier: {v:.4g}</title></path>'
        )
        out.append(f'<text x="{x + 7:.1f}" y="{(tip + 4 if up else tip):.1f}" fill="{COLOURS[1]}">{v:.3g}</text>')
    return out


DASHES = ("", ' stroke-dasharray="5 3"')  # B dashed over A: two equal curves both show


def curves(named: list[tuple[str, list[tuple[int, float, float | None, float | None]]]], title: str, unit: str) -> str:
    """Curves over message size on log axes, each with its band: (name, [(size, median, lo, hi)])."""
    xs = [s for _, pts in named for s, *_ in pts if s > 0]
    ys = [y for _, pts in named for _, m, lo, hi in pts for y in (m, lo, hi) if y]
    if not xs or not ys:
        return ""
    ax = Axes(xs, ys, True, True)
    body = ax.frame("message size (bytes)", unit)
    for k, (name, pts) in enumerate(named):
        c = COLOURS[k % len(COLOURS)]
        pts = [p for p in pts if p[0] > 0 and p[1]]
        band = band_path(ax, [(s, lo, hi) for s, _, lo, hi in pts])
        if band:
            body.append(f'<path d="{band}" fill="{c}" fill-opacity="0.15" stroke="none"/>')
        line = " ".join(f"{ax.x(s):.1f},{ax.y(m):.1f}" for s, m, _, _ in pts)
        dash = DASHES[k % 2]
        body.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="1.5"{dash}/>')
        body.append(f'<text x="{PAD + 6}" y="{24 + 13 * k}" fill="{c}">{html_text(name)}</text>')
    return _svg(body, title)


def errors(pts: list[tuple[int, float, float | None, float | None]], tolerance: float, title: str) -> str:
    """A simulation's error over message size (log x, linear %): (size, error %, the measured
    interval's low and high edge as % of its median) a point; the interval as a band round zero
    (an error inside it is within the measurement's own spread) and the tolerance dashed."""
    pts = [p for p in pts if p[0] > 0]
    if not pts:
        return ""
    ys = [y for _, e, lo, hi in pts for y in (e, lo, hi) if y is not None] + [tolerance, -tolerance]
    ax = Axes([s for s, *_ in pts], ys, True, False)
    body = ax.frame("message size (bytes)", "simulated / measured - 1 (%)")
    band = band_path(ax, [(s, lo, hi) for s, _, lo, hi in pts])
    if band:
        body.append(f'<path d="{band}" fill="{COLOURS[0]}" fill-opacity="0.15" stroke="none"/>')
    for t in (tolerance, 0.0, -tolerance):
        y = ax.y(t)
        dash = "" if t == 0 else ' stroke-dasharray="4 3"'
        body.append(f'<line x1="{PAD}" x2="{W - PAD}" y1="{y:.1f}" y2="{y:.1f}" stroke="#999"{dash}/>')
    line = " ".join(f"{ax.x(s):.1f},{ax.y(e):.1f}" for s, e, _, _ in pts)
    body.append(f'<polyline points="{line}" fill="none" stroke="{COLOURS[1]}" stroke-width="1.5"/>')
    body += [f'<circle cx="{ax.x(s):.1f}" cy="{ax.y(e):.1f}" r="2.2" fill="{COLOURS[1]}"/>' for s, e, _, _ in pts]
    body.append(f'<text x="{PAD + 6}" y="24" fill="{COLOURS[1]}">simulated against measured</text>')
    body.append(f'<text x="{PAD + 6}" y="37" fill="{COLOURS[0]}">measured 95 % interval</text>')
    return _svg(body, title)


def spark(values: list[float], title: str) -> str:
    """A figure's trend in a table cell: its values in time order as a line 84 x 20 px, the
    newest dotted; the axis the values' own range (a sparkline shows shape, the cell the number)."""
    if len(values) < 2:
        return ""
    lo, hi = min(values), max(values)
    span = hi - lo or 1.0
    pts = [(2 + 80 * k / (len(values) - 1), 18 - 16 * (v - lo) / span) for k, v in enumerate(values)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
    x, y = pts[-1]
    return (f'<svg class="spark" viewBox="0 0 84 20" width="84" height="20" role="img" aria-label="{html_text(title)}">'
            f"<title>{html_text(title)}</title>"
            f'<polyline points="{line}" fill="none" stroke="{COLOURS[0]}" stroke-width="1.2"/>'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2" fill="{COLOURS[0]}"/></svg>')  # fmt: skip


def ink(v: float, lo: float, hi: float) -> str:
    """The text colour that reads on colour(v, lo, hi): dark on the light half, white on the dark."""
    f = 0.0 if hi <= lo else (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return "#ffffff" if f > 0.5 else "#1d2330"


def colour(v: float, lo: float, hi: float) -> str:
    """Time by colour on a log scale, light (fast) to dark (slow): a sequential blue."""
    f = 0.0 if hi <= lo else (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
    f = min(1.0, max(0.0, f))
    r, g, b = (int(a + (z - a) * f) for a, z in ((239, 8), (243, 48), (255, 107)))
    return f"#{r:02x}{g:02x}{b:02x}"
