"""Figures as inline SVG (matplotlib's object API, no pyplot state, no network)."""

from __future__ import annotations

import io

import numpy as np

BETTER, WORSE, NEUTRAL = "#2e7d32", "#c62828", "#9e9e9e"
MAX_BARS = 300  # above this many queries, outlines and rasterized points instead of one shape per query


def _figure(width: float, height: float):
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - matplotlib is in the 'report' extra
        from ..core.errors import JudgedError

        raise JudgedError("the HTML report needs matplotlib: pip install 'judged[report]'") from exc
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
    """Per-query differences run - baseline (ties exactly 0, :func:`judged.stats.differences`)
    as sorted bars: green above 0, red below."""
    d = np.sort(np.asarray(d, dtype=np.float64))[::-1]
    fig = _figure(5.2, 2.3)
    ax = fig.add_subplot()
    x = np.arange(len(d))
    if len(d) <= MAX_BARS:
        colors = np.where(d > 0, BETTER, np.where(d < 0, WORSE, NEUTRAL))
        ax.bar(x, d, width=1.0, color=colors, linewidth=0)
    else:  # one filled outline per sign, sampled at 600 points of the sorted curve (monotone:
        # nothing is lost at this width), so the file stays small whatever the number of queries
        xs = np.linspace(0, len(d) - 1, 600)
        ys = np.interp(xs, x, d)
        ax.fill_between(xs, 0, ys, where=ys > 0, interpolate=True, color=BETTER, linewidth=0)
        ax.fill_between(xs, 0, ys, where=ys < 0, interpolate=True, color=WORSE, linewidth=0)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xlim(-0.5, len(d) - 0.5)
    ax.set_xticks([])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Δ")
    ax.set_title(title, fontsize=10)
    return svg(fig)


def distributions(values: dict, title: str) -> str:
    """Per-query scores of each run: a box plot with the queries as jittered points."""
    names = list(values)
    fig = _figure(7.0, 0.6 + 0.55 * len(names))
    ax = fig.add_subplot()
    data = [np.asarray(values[n], dtype=np.float64) for n in names]
    import matplotlib

    sideways = ({"orientation": "horizontal"} if tuple(map(int, matplotlib.__version__.split(".")[:2])) >= (3, 10)
                else {"vert": False})  # the keyword changed in matplotlib 3.10
    ax.boxplot(data, widths=0.5, showfliers=False, medianprops={"color": "black"}, **sideways)
    rng = np.random.default_rng(0)
    for i, v in enumerate(data, 1):
        ax.scatter(v, i + rng.uniform(-0.18, 0.18, len(v)), s=6, alpha=0.5, color="#1565c0", linewidths=0,
                   rasterized=len(v) > MAX_BARS)  # many points: an embedded PNG inside the SVG
        ax.scatter([v.mean()] if len(v) else [], [i], marker="D", s=28, color="#ef6c00", zorder=3)
    ax.set_yticks(range(1, len(names) + 1), labels=[_short(n) for n in names])
    ax.invert_yaxis()
    ax.set_title(title + "  (◆ mean)", fontsize=10)
    return svg(fig)


def _short(name: str, width: int = 28) -> str:
    return name if len(name) <= width else "…" + name[-(width - 1):]


def asl_curves(power) -> str:
    """Sakai's ASL curves of a :class:`judged.meta.PowerResult` as inline SVG."""
    from ..analyses.meta.power import draw_asl_curves

    fig = _figure(7.0, 4.2)
    draw_asl_curves(power, fig.add_subplot())
    return svg(fig)
