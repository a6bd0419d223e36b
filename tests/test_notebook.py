"""Result in a notebook: the HTML table and the per-query plot (Agg backend)."""

from html import escape

import pytest

import judged
from judged.core.errors import UsageError

QRELS = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}, "q3": {"d": 0}}
BM25 = {"q1": {"a": 1.0, "b": 0.5}, "q2": {"x": 1.0, "c": 0.5}, "q3": {"d": 1.0}}
DENSE = {"q1": {"z": 1.0, "a": 0.5}, "q2": {"c": 1.0}, "q3": {"d": 1.0}}


@pytest.fixture
def result():
    return judged.evaluate(QRELS, {"bm25": BM25, "dense<x>": DENSE}, ["nDCG@10", "RR", "NumRet"])


def test_html_table_has_runs_means_counts_and_conventions(result):
    html = result._repr_html_()
    assert html.count("<tr>") == 3  # header + two runs
    assert "dense&lt;x&gt;" in html and "<x>" not in html  # escaped
    rr_bm25 = result.mean().loc["bm25", "RR"]
    assert f"{rr_bm25:.4f}" in html and rr_bm25 == pytest.approx((1 + 0.5 + 0) / 3)
    assert ">5<" in html  # NumRet is a sum, printed as an integer
    for conv in result.conventions.values():
        assert escape(conv) in html


def test_plot_draws_per_query_bars_and_points(result):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = result.plot("RR")
    bars = [p.get_height() for p in ax.patches]
    assert bars == [1.0, 0.5, 0.0]  # bm25's RR per query, best first
    (points,) = ax.lines
    assert list(points.get_ydata()) == [0.5, 1.0, 0.0]  # dense on the same queries
    assert [t.get_text() for t in ax.get_xticklabels()] == ["q1", "q2", "q3"]
    assert "RR" in ax.get_title(loc="left") and "ties=" in ax.get_title(loc="left")
    import matplotlib.pyplot as plt

    plt.close("all")


def test_plot_unknown_measure(result):
    pytest.importorskip("matplotlib")
    with pytest.raises(UsageError, match="not in this result"):
        result.plot("AP")


# -- Comparison -----------------------------------------------------------

CMP_QRELS = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
CMP_BASE = {"q1": {"a": 1.0}, "q2": {"x": 1.0, "b": 0.5}, "q3": {"c": 1.0}}
CMP_NEW = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"u": 1.0, "c": 0.5}}  # u: unjudged, on top


@pytest.fixture
def comparison():
    return judged.compare(CMP_QRELS, {"base": CMP_BASE, "new<x>": CMP_NEW}, ["RR"], permutations=500)


def test_comparison_html_has_means_deltas_holes_and_conventions(comparison):
    html = comparison._repr_html_()
    assert "new&lt;x&gt;" in html and "<x>" not in html
    # RR per query: base 1, 1/2, 1; new 1, 1, 1/2: means equal, delta 0, W/L/T 1/1/1
    assert '<td class="num">0.8333</td>' in html and '<td class="num">+0.0000</td>' in html
    assert '<td class="num">1/1/1</td>' in html
    # Judged@10 of new: u unjudged on q3 (1 of 2 judged); judging u relevant lifts new's q3 to 1,
    # judging base's hole x (q2, rank 1) relevant lifts base's q2 to 1: delta anywhere in [-1/6, +1/6]
    assert '<td class="num">0.8333</td><td class="num">[-0.1667, +0.1667] ⇄ can flip</td>' in html
    assert escape(comparison.measures["RR"]) in html


def test_comparison_plot_draws_sorted_difference_bars(comparison):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = comparison.plot()
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([0.5, 0.0, -0.5])  # q2 won, q1 tied, q3 lost; sorted
    colors = [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches]
    assert colors == ["#2e7d32", "#9e9e9e", "#c62828"]
    assert "W/L/T 1/1/1" in ax.get_xlabel()
    with pytest.raises(UsageError, match="not compared"):
        comparison.plot(run="base")
    with pytest.raises(UsageError, match="not in this comparison"):
        comparison.plot("AP")
    import matplotlib.pyplot as plt

    plt.close("all")
