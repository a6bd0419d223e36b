"""judged report: one self-contained HTML page, opened in a real headless Chromium; paper tables."""

import os
import re
import shutil
import struct
import subprocess
import sys

import pytest

from judged.cli import main

@pytest.fixture(scope="module")
def report(example, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    here = os.getcwd()
    os.chdir(example)  # runs named as a user would type them
    try:
        assert main(["report", "qrels.txt", "bm25.run", "dense.run", "tuned.run", "-m", "nDCG@10", "-m", "AP",
                     "-o", str(out), "--regressions", "3"]) == 0
    finally:
        os.chdir(here)
    return out


def test_html_is_self_contained(report):
    text = report.read_text(encoding="utf-8")
    assert "<script" not in text and "<link" not in text and "<img" not in text
    # only XML namespaces may name a URL; nothing is fetched
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert not re.search(r"url\(\s*['\"]?https?:", text)
    for section in ("Which runs are better", "Main table", "Paired comparisons", "Each run against the baseline",
                    "Score distributions", "Settings", "Judged@10"):
        assert section in text
    # the ranking; difference bars: 3 measures x 2 runs; distributions: 3 measures
    assert text.count("<svg") == 1 + 3 * 2 + 3


def test_judged_at_k_is_no_table_of_na(report):
    """Issue 34: the Judged@10 comparisons were tables of n/a (coverage is never tested).
    Its means and differences stay in the main table; the paired comparisons leave it out
    and say why."""
    text = report.read_text(encoding="utf-8")
    paired = text.split("Paired comparisons", 1)[1].split("<h2", 1)[0]
    assert "n/a" not in text and "<h3>Judged@10" not in paired
    assert "Judged@10: the share of the top k judged (coverage, not quality), never tested" in paired
    assert [h.split(" ")[0] for h in re.findall(r"<h3>([^<]+)", paired)] == ["nDCG@10", "AP"]


def test_report_opens_in_chromium_without_errors(report, tmp_path, screenshot):
    png = tmp_path / "report.png"
    errors, page_errors, outside, n_svg, table = screenshot(report, png)
    assert errors == [] and page_errors == [] and outside == []
    assert n_svg == 10
    assert "dense.run" in table and "0.3197▼" in table and "/" not in table  # dense loses AP significantly
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1200, 1000)
    if os.environ.get("JUDGED_UPDATE_DOCS_IMG"):  # refresh the docs' screenshot
        shutil.copy(png, os.path.join(os.path.dirname(__file__), "..", "..", "docs", "img", "report.png"))


def test_paper_tables(example, capsys):
    args = ["report", str(example / "qrels.txt"), str(example / "bm25.run"), str(example / "dense.run"),
            "-m", "AP", "--permutations", "2000"]
    assert main(args + ["--format", "md"]) == 0
    md = capsys.readouterr().out
    assert md.splitlines()[0] == "| run | AP | Judged@10 |"
    # Judged@10 is coverage, not quality: shown, never tested nor marked (issue #14)
    assert re.search(r"\| .*dense\.run \| 0\.3197▼ \| 0\.5550 \|", md)
    assert main(args + ["--format", "latex"]) == 0
    tex = capsys.readouterr().out
    assert r"\begin{tabular}{lrr}" in tex and r"0.3197$^{\blacktriangledown}$" in tex
    assert main(args + ["--format", "csv"]) == 0
    csv = capsys.readouterr().out.splitlines()
    assert csv[0] == "run,measure,mean,mean_delta,p_randomization_holm,significant"
    assert any(line.endswith(",worse") and ",AP," in line for line in csv)
    judged = [line for line in csv if ",Judged@10," in line and "dense" in line]
    assert judged and all(line.endswith(",,") for line in judged)  # no p, no verdict


def test_many_queries_keep_the_page_small():
    import numpy as np

    from judged.report import plots

    d = np.random.default_rng(0).normal(0, 0.1, 5000)
    svg = plots.difference_bars(d, "5000 queries")
    few = plots.difference_bars(d[:100], "100 queries")
    assert svg.startswith("<svg") and len(svg) < 100_000  # one outline per sign, not 5000 bars
    assert svg.count("<polygon") == 2 and svg.count("<rect") == 1  # the frame
    assert few.count("<rect") == 1 + 100  # the frame and one bar per query
    dist = plots.distributions({"a": d, "b": d + 0.1}, "AP")
    assert "<circle" not in dist and len(dist) < 100_000  # points as a density strip, not 5000 circles
    assert plots.distributions({"a": d[:50]}, "AP").count("<circle") == 50  # few queries: one point each


def test_the_simple_charts_need_no_matplotlib(tmp_path):
    # issue #19: the report's difference bars and distributions are drawn as SVG directly
    code = ("import sys, numpy as np\nfrom judged.report import plots\nd = np.linspace(-1, 1, 40)\n"
            "plots.difference_bars(d, 't')\nplots.distributions({'a': d}, 't')\nprint('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_markdown_table_escapes_a_pipe_in_a_run_name(example, tmp_path, capsys):
    """A run file named ``a|b.run`` split its Markdown row into one cell too many, shifting
    every mean under the wrong measure; the gate's Markdown escaped it already."""
    shutil.copy(example / "dense.run", tmp_path / "a|b.run")
    assert main(["report", str(example / "qrels.txt"), str(example / "bm25.run"), str(tmp_path / "a|b.run"),
                 "-m", "AP", "--permutations", "200", "--format", "md"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert any("a\\|b.run" in row for row in rows)
    assert {len(re.findall(r"(?<!\\)\|", row)) for row in rows} == {4}     # run, AP, Judged@10: 4 bars
