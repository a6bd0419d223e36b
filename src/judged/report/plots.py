"""Figures as inline SVG: the report's simple charts (difference bars, distributions) drawn
as SVG elements directly; the ASL curves of --power through matplotlib's object API (no
pyplot state, no network)."""

from __future__ import annotations

import html
import io

import numpy as np

from ..analyses.stats import percentiles
from ..core.errors import JudgedError

BETTER, WORSE, NEUTRAL = "#2e7d32", "#c62828", "#9e9e9e"
MAX_BARS = 300  # above this many queries, outlines and rasterized points instead of one shape per query


def _figure(width: float, height: float):
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - matplotlib is in the 'report' extra
        raise JudgedError("the HTML report's ASL curves need matplotlib, a dependency of judged missing here: "
                          "pip install matplotlib") from exc
    return Figure(figsize=(width, height), layout="constrained")


def svg(fig) -> str:
    """The figure as an ``<svg>`` element (XML prolog and DOCTYPE dropped), reproducible."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "judged", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def difference_bars(d: np.ndarray, title: str, xlabel: str = "queries, sorted by difference") -> str:
    """Per-query differences run - baseline (ties exactly 0, :func:`judged.analyses.stats.differences`)
    as sorted bars: green above 0, red below. Drawn as SVG directly (no matplotlib)."""
    d = np.sort(np.asarray(d, dtype=np.float64))[::-1]
    c = _Canvas(374, 166, left=44, right=8, top=20, bottom=20)
    lo, hi = min(float(d.min()) if len(d) else 0.0, 0.0), max(float(d.max()) if len(d) else 0.0, 0.0)
    c.y_range(lo, hi)
    c.x_range(-0.5, max(len(d), 1) - 0.5)
    c.y_ticks()
    n = len(d)
    if n <= MAX_BARS:  # one bar per query
        x0 = c.x(np.arange(n) - 0.5)
        width = c.x(0.5) - c.x(-0.5)
        y0, y = c.y(0.0), c.y(d)
        for xi, yi, v in zip(x0.tolist(), y.tolist(), d.tolist()):
            if v != 0:
                c.add(f'<rect x="{xi:.2f}" y="{min(yi, y0):.2f}" width="{width:.3f}" height="{abs(yi - y0):.2f}" '
                      f'fill="{BETTER if v > 0 else WORSE}"/>')
    else:  # one filled outline per sign, sampled at 600 points of the sorted curve (monotone:
        # nothing is lost at this width), so the file stays small whatever the number of queries
        xs = np.linspace(0, n - 1, 600)
        ys = np.interp(xs, np.arange(n), d)
        for sign, color in ((1, BETTER), (-1, WORSE)):
            part = sign * ys > 0
            if part.any():
                px, py = xs[part], ys[part]
                pts = [(px[0], 0.0), *zip(px.tolist(), py.tolist()), (px[-1], 0.0)]
                c.add(f'<polygon points="{c.points(pts)}" fill="{color}"/>')
    c.hline(0.0)
    c.frame()
    c.title(title)
    c.xlabel(xlabel)
    c.ylabel("Δ")
    return c.svg()


def distributions(values: dict, title: str) -> str:
    """Per-query scores of each run: a box plot (quartiles, whiskers to the furthest score
    within 1.5 IQR, as matplotlib's), the mean (◆) and the queries as jittered points; past
    MAX_BARS queries, the points become a density strip (one mark per 1/300 of the axis,
    its opacity the share of queries there). Drawn as SVG directly (no matplotlib)."""
    names = list(values)
    data = [np.asarray(values[n], dtype=np.float64) for n in names]
    row = 32
    c = _Canvas(520, 30 + row * max(len(names), 1) + 24, left=180, right=12, top=22, bottom=24)
    seen = np.concatenate([v for v in data if len(v)]) if any(len(v) for v in data) else np.zeros(1)
    c.x_range(float(seen.min()), float(seen.max()), pad=0.05)
    c.y_range(len(names) + 0.5, 0.5, pad=0.0)
    c.x_ticks()
    rng = np.random.default_rng(0)
    for i, v in enumerate(data, 1):
        c.text(c.left - 6, c.y(i) + 4, _short(names[i - 1]), anchor="end")
        if not len(v):
            continue
        q1, med, q3 = percentiles(v, [25, 50, 75])
        iqr = q3 - q1
        low = float(v[v >= q1 - 1.5 * iqr].min())
        high = float(v[v <= q3 + 1.5 * iqr].max())
        yt, yb, ym = c.y(i - 0.25), c.y(i + 0.25), c.y(i)
        for a, b in ((low, q1), (q3, high)):
            c.add(f'<line x1="{c.x(a):.2f}" y1="{ym:.2f}" x2="{c.x(b):.2f}" y2="{ym:.2f}" stroke="black"/>')
        for e in (low, high):
            c.add(f'<line x1="{c.x(e):.2f}" y1="{c.y(i - 0.12):.2f}" x2="{c.x(e):.2f}" y2="{c.y(i + 0.12):.2f}" '
                  f'stroke="black"/>')
        c.add(f'<rect x="{c.x(q1):.2f}" y="{yt:.2f}" width="{c.x(q3) - c.x(q1):.2f}" height="{yb - yt:.2f}" '
              f'fill="none" stroke="black"/>')
        c.add(f'<line x1="{c.x(med):.2f}" y1="{yt:.2f}" x2="{c.x(med):.2f}" y2="{yb:.2f}" stroke="black" '
              f'stroke-width="1.5"/>')
        jitter = rng.uniform(-0.18, 0.18, len(v))
        if len(v) <= MAX_BARS:
            dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="1.5"/>'
                           for x, y in zip(c.x(v).tolist(), c.y(i + jitter).tolist()))
            c.add(f'<g fill="#1565c0" fill-opacity="0.5">{dots}</g>')
        else:
            bins = 300
            lo_x, hi_x = c.x_lo, c.x_hi
            counts = np.bincount(np.clip(((v - lo_x) / (hi_x - lo_x) * bins).astype(np.int64), 0, bins - 1),
                                 minlength=bins)
            share = counts / counts.max()
            step = c.x(lo_x + (hi_x - lo_x) / bins) - c.x(lo_x)
            marks = "".join(f'<rect x="{c.x(lo_x) + k * step:.2f}" y="{c.y(i - 0.18):.2f}" width="{step:.2f}" '
                            f'height="{c.y(i + 0.18) - c.y(i - 0.18):.2f}" fill-opacity="{0.15 + 0.6 * s:.2f}"/>'
                            for k, s in enumerate(share.tolist()) if s > 0)
            c.add(f'<g fill="#1565c0">{marks}</g>')
        mx, my = c.x(float(v.mean())), ym
        c.add(f'<polygon points="{mx:.2f},{my - 5:.2f} {mx + 5:.2f},{my:.2f} {mx:.2f},{my + 5:.2f} '
              f'{mx - 5:.2f},{my:.2f}" fill="#ef6c00"/>')
    c.frame()
    c.title(title + "  (◆ mean)")
    return c.svg()


def ranking(rows: list, title: str) -> str:
    """The runs best first, one line each (``rows``: dicts of label, mean, ci (low, high) or
    None, bounds (low, high) or None, mark: '▲', '▼' or '', flip: bool, baseline: bool):
    the range judging the holes could give (a pale band), the 95% CI of the mean (a bar with
    ends), the mean (a dot: green better, red worse than the baseline, black the baseline),
    the baseline's mean as a dashed line, the marks at the right. Drawn as SVG directly."""
    row = 18
    label = max([len(r["label"]) for r in rows] + [8]) + (11 if any(r.get("baseline") for r in rows) else 0)
    left = min(12 + 5.6 * label, 260)
    c = _Canvas(540, 26 + row * max(len(rows), 1) + 26, left=int(left), right=30, top=26, bottom=26)
    seen = [v for r in rows for v in (r["mean"], *(r["ci"] or ()), *(r["bounds"] or ())) if v == v]
    c.x_range(min(seen, default=0.0), max(seen, default=1.0), pad=0.04)
    c.y_range(len(rows) + 0.5, 0.5, pad=0.0)
    c.x_ticks()
    for i in range(1, len(rows) + 1, 2):  # every other line shaded, to follow a run across
        c.add(f'<rect x="{c.left}" y="{c.y(i - 0.5):.2f}" width="{c.right - c.left}" height="{row}" fill="#f5f5f5"/>')
    base = next((r for r in rows if r.get("baseline")), None)
    if base is not None:
        x = float(c.x(base["mean"]))
        c.add(f'<line x1="{x:.2f}" y1="{c.top}" x2="{x:.2f}" y2="{c.bottom}" stroke="#616161" stroke-dasharray="3 3"/>')
    for i, r in enumerate(rows, 1):
        y = float(c.y(i))
        c.text(c.left - 6, y + 4, _short(r["label"], 44) + (" (baseline)" if r.get("baseline") else ""), anchor="end",
               extra=' font-weight="bold"' if r.get("baseline") else "")
        if r["bounds"] is not None:
            lo, hi = (float(c.x(v)) for v in r["bounds"])
            c.add(f'<rect x="{lo:.2f}" y="{y - 6:.2f}" width="{max(hi - lo, 1.0):.2f}" height="12" fill="#ffcc80" '
                  f'fill-opacity="0.7"><title>with the holes judged: {r["bounds"][0]:.4f} to {r["bounds"][1]:.4f}'
                  '</title></rect>')
        if r["ci"] is not None:
            lo, hi = (float(c.x(v)) for v in r["ci"])
            c.add(f'<path d="M{lo:.2f},{y:.2f}H{hi:.2f}M{lo:.2f},{y - 4:.2f}V{y + 4:.2f}M{hi:.2f},{y - 4:.2f}'
                  f'V{y + 4:.2f}" stroke="#424242" stroke-width="1.6" fill="none"/>')
        color = "black" if r.get("baseline") else {"▲": BETTER, "▼": WORSE}.get(r["mark"], "#757575")
        c.add(f'<circle cx="{float(c.x(r["mean"])):.2f}" cy="{y:.2f}" r="4" fill="{color}"><title>{html.escape(r["label"])}'
              f': {r["mean"]:.4f}</title></circle>')
        marks = r["mark"] + ("⇄" if r.get("flip") else "")
        if marks:
            c.text(c.right + 6, y + 4, marks, extra=f' fill="{color}"')
    c.frame()
    c.title(title)
    return c.svg()


class _Canvas:
    """A small SVG chart: one plot area with linear axes, ticks, labels and a title."""

    def __init__(self, width: int, height: int, *, left: int, right: int, top: int, bottom: int):
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = left, width - right, top, height - bottom
        self.parts: list[str] = []
        self.x_lo, self.x_hi, self.y_lo, self.y_hi = 0.0, 1.0, 0.0, 1.0

    def x_range(self, lo: float, hi: float, pad: float = 0.0) -> None:
        if hi <= lo:
            lo, hi = lo - 0.5, hi + 0.5
        span = hi - lo
        self.x_lo, self.x_hi = lo - pad * span, hi + pad * span

    def y_range(self, lo: float, hi: float, pad: float = 0.05) -> None:
        if hi == lo:
            lo, hi = lo - 1.0, hi + 1.0
        span = hi - lo
        self.y_lo, self.y_hi = lo - pad * span, hi + pad * span

    def x(self, v):
        return self.left + (np.asarray(v, np.float64) - self.x_lo) / (self.x_hi - self.x_lo) * (self.right - self.left)

    def y(self, v):
        return self.bottom - (np.asarray(v, np.float64) - self.y_lo) / (self.y_hi - self.y_lo) * (self.bottom - self.top)

    def add(self, element: str) -> None:
        self.parts.append(element)

    def points(self, pts) -> str:
        return " ".join(f"{float(self.x(a)):.2f},{float(self.y(b)):.2f}" for a, b in pts)

    def text(self, x: float, y: float, text: str, *, anchor: str = "start", size: int = 10, extra: str = "") -> None:
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>'
                 f'{html.escape(text)}</text>')

    def y_ticks(self) -> None:
        for t in _ticks(self.y_lo, self.y_hi):
            y = float(self.y(t))
            self.add(f'<line x1="{self.left - 3}" y1="{y:.2f}" x2="{self.left}" y2="{y:.2f}" stroke="black"/>')
            self.text(self.left - 5, y + 3.5, _tick_label(t), anchor="end", size=9)

    def x_ticks(self) -> None:
        for t in _ticks(self.x_lo, self.x_hi):
            x = float(self.x(t))
            self.add(f'<line x1="{x:.2f}" y1="{self.bottom}" x2="{x:.2f}" y2="{self.bottom + 3}" stroke="black"/>')
            self.text(x, self.bottom + 13, _tick_label(t), anchor="middle", size=9)

    def hline(self, v: float) -> None:
        y = float(self.y(v))
        self.add(f'<line x1="{self.left}" y1="{y:.2f}" x2="{self.right}" y2="{y:.2f}" stroke="black" '
                 f'stroke-width="0.6"/>')

    def frame(self) -> None:
        self.add(f'<rect x="{self.left}" y="{self.top}" width="{self.right - self.left}" '
                 f'height="{self.bottom - self.top}" fill="none" stroke="black" stroke-width="0.8"/>')

    def title(self, text: str) -> None:
        self.text((self.left + self.right) / 2, self.top - 7, text, anchor="middle", size=10)

    def xlabel(self, text: str) -> None:
        self.text((self.left + self.right) / 2, self.height - 5, text, anchor="middle", size=9)

    def ylabel(self, text: str) -> None:
        y = (self.top + self.bottom) / 2
        self.text(12, y, text, anchor="middle", size=10, extra=f' transform="rotate(-90 12 {y:.1f})"')

    def svg(self) -> str:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}pt" height="{self.height}pt" '
                f'viewBox="0 0 {self.width} {self.height}" font-family="DejaVu Sans, Arial, sans-serif">'
                + "".join(self.parts) + "</svg>")


def _ticks(lo: float, hi: float, target: int = 5) -> list:
    """Round tick values (1, 2 or 5 times a power of ten apart) inside [lo, hi]."""
    span = hi - lo
    if not span > 0 or not np.isfinite(span):
        return []
    raw = span / target
    power = 10.0 ** np.floor(np.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = np.ceil(lo / step) * step
    return [float(v) for v in np.arange(first, hi + step * 1e-9, step)][:2 * target + 1]


def _tick_label(v: float) -> str:
    v = 0.0 if abs(v) < 1e-12 else v
    return f"{v:.6g}".replace("-", "−")


def _short(name: str, width: int = 28) -> str:
    return name if len(name) <= width else "…" + name[-(width - 1):]


def asl_curves(power) -> str:
    """Sakai's ASL curves of a :class:`judged.analyses.meta.PowerResult` as inline SVG."""
    from ..analyses.meta.power import draw_asl_curves

    fig = _figure(7.0, 4.2)
    draw_asl_curves(power, fig.add_subplot())
    return svg(fig)
