"""The report of many runs in a real browser (issue #34): 17 runs made a 39,000 px page whose
title listed every run. Now its first screen (1,000 px of a 1,400 px wide window) answers
which runs are better, by how much and whether judging could change it (the ranking figure,
the flip summary and matrix), and the page, details folded, stays under 8,000 px."""

import pytest

from judged.analyses.meta.synthetic import pooled_collection
from judged.cli import main

@pytest.fixture(scope="module")
def page_17(tmp_path_factory):
    """The report of 17 runs on 50 queries (every run judged to depth 8: holes in the top 10)."""
    c = pooled_collection(systems=17, queries=50, depth=20, pool_depth=8, pooled_runs=17, seed=2)
    folder = tmp_path_factory.mktemp("many")
    paths = c.write(folder)
    out = folder / "report.html"
    assert main(["report", paths["qrels"], *paths["runs"], "--permutations", "500", "-o", str(out)]) == 0
    return out


def measure_page(page, html_path) -> dict:
    """Where the first screen's parts end (px from the top), the page's height, the folds."""
    page.goto(f"file://{html_path}")
    page.wait_for_load_state("load")
    bottom = (lambda selector: page.eval_on_selector(selector, "e => e.getBoundingClientRect().bottom + window.scrollY"))
    return {"height": page.evaluate("document.documentElement.scrollHeight"), "title": page.inner_text("h1"),
            "figure": bottom("#overview + p + div svg"), "summary": bottom("#overview + p"),
            "matrix": bottom("table.matrix"), "summary_text": page.inner_text("#overview + p"),
            "details": page.eval_on_selector_all("details", "ds => ds.length"),
            "open": page.eval_on_selector_all("details[open]", "ds => ds.length")}


def test_the_first_screen_answers_and_the_page_stays_short(page_17, browser_page):
    with browser_page(1400, 1000) as page:
        m = measure_page(page, page_17)
    assert m["title"] == "judged report: 17 runs, baseline teama-1.run"
    assert "pairs of runs can flip" in m["summary_text"] and "better than the baseline" in m["summary_text"]
    assert max(m["figure"], m["summary"], m["matrix"]) <= 1000  # all on the first screen
    assert m["details"] >= 16 + 3 and m["open"] == 0  # each run's detail, holes, distributions, settings: folded
    assert m["height"] < 8000


def test_the_first_screen_bounds_are_judged_holes(example):
    """The report's ranking and flip matrix read the same bounds and intervals as `judged holes`."""
    import pytest as _pytest

    from judged.analyses.comparison import compare
    from judged.analyses.holes.unjudged import holes_report
    from judged.report.html import overview_holes

    runs = [str(example / n) for n in ("bm25.run", "dense.run", "tuned.run")]
    c = compare(str(example / "qrels.txt"), runs, ["nDCG@10", "AP"], permutations=100)
    got = overview_holes(c)
    want = holes_report(str(example / "qrels.txt"), runs, k=10, samples=5)
    for name in runs:
        assert got.runs[name].low.mean() == _pytest.approx(want.runs[name].low.mean())
        assert got.runs[name].high.mean() == _pytest.approx(want.runs[name].high.mean())
    assert [(p.a, p.b, p.can_flip) for p in got.pairs] == [(p.a, p.b, p.can_flip) for p in want.pairs]
    assert [p.low for p in got.pairs] == _pytest.approx([p.low for p in want.pairs])
