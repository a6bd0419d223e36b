"""Result in a notebook: the HTML table and the per-query plot (Agg backend)."""

from html import escape

import pytest

import judged
from judged.errors import UsageError

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
