"""compare and report show holes (issue 3) and the checks beyond the score (issue 7)."""

import json
import math
from pathlib import Path

import pytest

from judged.cli import main
from judged.analyses.comparison import compare
from judged.analyses.holes.unjudged import holes_report
from judged.core.conventions import Settings

ROOT = Path(__file__).resolve().parents[2]
BEYOND = ROOT / "docs" / "examples" / "beyond"

QRELS = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}, "q3": {"d": 1, "e": 0}, "q4": {"f": 1}}
BASE = {"q1": {"a": 3.0, "b": 2.0}, "q2": {"c": 1.0}, "q3": {"d": 2.0, "e": 1.0}, "q4": {"f": 1.0}}
NEW = {"q1": {"zz": 9.0, "a": 3.0}, "q2": {"c": 1.0}, "q3": {"d": 2.0}}  # zz unjudged on top; q4 missing


def test_flip_interval_by_hand():
    c = compare(QRELS, {"base": BASE, "new": NEW}, ["RR", "nDCG@2"], permutations=1000)
    h = c.holes
    # Judged@10 per query of new: q1 1/2 (zz), q2 1, q3 1, q4 missing 0
    assert h.runs["new"]["judged"] == pytest.approx((0.5 + 1 + 1 + 0) / 4)
    assert h.runs["new"]["holes"] == 1 and h.runs["base"]["holes"] == 0
    rr = c.flip(c.get("RR", "new"))
    # RR new - base: q1 1/2 - 1, q4 0 - 1; zz relevant lifts q1 to 1: the difference stays negative
    assert (rr.difference, rr.low, rr.high) == pytest.approx((-0.375, -0.375, -0.25))
    assert not rr.can_flip
    nd = c.flip(c.get("nDCG@2", "new"))
    # best case: zz graded 2, shared by both runs: new q1 = 1, and the baseline's q1 ideal rises:
    # base q1 = (2 + 1/log2 3) / (2 + 2/log2 3); q4 still costs 1
    base_q1 = (2 + 1 / math.log2(3)) / (2 + 2 / math.log2(3))
    assert nd.high == pytest.approx((1 - base_q1 - 1) / 4)
    assert nd.exact and not nd.can_flip


@pytest.mark.parametrize("negative", ["nonrelevant", "unjudged"])
def test_flip_difference_is_the_zero_filled_means_difference(negative):
    """Each pair interval's difference is mean(run) - mean(baseline) of the zero-filled
    measure on the (negative-adjusted) alignments: taken from the evaluation's values when
    they are those, computed otherwise; the same bits either way."""
    import numpy as np

    from judged.analyses.holes.unjudged import comparison_holes, negative_as
    from judged.core.measures.bounds import zero_filled

    rng = np.random.default_rng(3)
    docs = [f"d{i}" for i in range(30)]
    qrels = {f"q{q}": {d: int(rng.integers(-1, 3)) for d in rng.choice(docs, 10, replace=False)} for q in range(8)}
    runs = {name: {f"q{q}": {d: float(rng.random()) for d in rng.choice(docs, 15, replace=False)} for q in range(8)}
            for name in ("base", "new")}
    c = compare(qrels, runs, ["AP", "nDCG@5", "P@5", "RR", "nDCG(unjudged=max)@5"], permutations=100,
                negative=negative)
    for (given, run), flip in comparison_holes(c.result, "base", 5).flips.items():
        m = zero_filled(c.result.measures[given])
        a, b = (negative_as(c.result.runs[n].aligned, negative) for n in (run, "base"))
        assert flip.difference == float(m.compute(a).mean()) - float(m.compute(b).mean()), given


def test_compare_skips_holes_a_measure_cannot_bound(capsys):
    """ERR and nERR bounds refuse grades above max_rel (the stopping chance would pass 1): on
    such qrels compare still compares, and says in one line (text) / one key (JSON) why
    that measure's holes were not bounded; the other measures keep their intervals."""
    qrels = {"q1": {"a": 3, "b": 1}, "q2": {"c": 2}, "q3": {"d": 1}}
    base = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}, "q3": {"d": 1.0}}
    new = {"q1": {"zz": 3.0, "b": 2.0}, "q2": {"c": 1.0}, "q3": {"yy": 2.0, "d": 1.0}}
    measures = ["ERR(max_rel=2)@5", "nERR(max_rel=2)@5", "P@5"]
    c = compare(qrels, {"base": base, "new": new}, measures, permutations=100)
    assert [x.measure for x in c.comparisons] == measures  # every comparison stands
    h = c.to_dict()["holes"]
    assert set(h["skipped_measures"]) == {"ERR(max_rel=2)@5", "nERR(max_rel=2)@5"}
    assert all("up to max_rel=2" in why and "got maxgrade 3" in why for why in h["skipped_measures"].values())
    assert list(h["bounded_measures"]) == ["P@5"] and [f["measure"] for f in h["comparisons"]] == ["P@5"]
    assert c.flip(c.get("ERR(max_rel=2)@5", "new")) is None
    with_room = compare(qrels, {"base": base, "new": new}, measures, permutations=100, maxgrade=2).to_dict()["holes"]
    assert "skipped_measures" not in with_room and len(with_room["comparisons"]) == 3


def test_compare_table_says_which_holes_were_not_bounded(example, capsys, monkeypatch):
    monkeypatch.chdir(example)
    assert main(["compare", "qrels.txt", "bm25.run", "dense.run", "-m", "ERR(max_rel=2)@10", "-m", "nDCG@10",
                 "--permutations", "100", "--regressions", "0"]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if "holes not bounded for" in line]
    assert len(notes) == 1 and notes[0].startswith("  holes not bounded for ERR(max_rel=2)@10: ERR bounds need")
    assert "Δ could become anything in (exact): dense.run [" in out  # nDCG@10 keeps its interval
    assert main(["compare", "qrels.txt", "bm25.run", "dense.run", "-m", "ERR(max_rel=2)@10", "--format", "json",
                 "--permutations", "100"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert list(d["holes"]["skipped_measures"]) == ["ERR(max_rel=2)@10"] and len(d["comparisons"]) == 1


def test_compare_json_adds_holes_and_checks_keys_only(example, capsys, monkeypatch):
    monkeypatch.chdir(example)
    assert main(["compare", "qrels.txt", "bm25.run", "dense.run", "tuned.run", "-m", "nDCG@10", "-m", "AP",
                 "--permutations", "1000", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"comparisons", "baseline", "runs", "measures", "settings", "queries", "regressions"} <= set(out)
    assert out["holes"]["runs"]["dense.run"]["judged"] == pytest.approx(0.555)  # as judged eval prints
    assert out["holes"]["runs"]["dense.run"]["holes"] == 178
    flips = {(f["measure"], f["run"]): f for f in out["holes"]["comparisons"]}
    assert [(f["measure"], f["run"]) for f in out["holes"]["comparisons"]] == \
        [(c["measure"], c["run"]) for c in out["comparisons"]]
    dense = flips[("nDCG@10", "dense.run")]
    assert dense["can_flip"] and dense["exact"] and dense["min"] < 0 < dense["max"]
    assert not flips[("nDCG@10", "tuned.run")]["can_flip"]  # tuned loses whatever the holes hold
    # the same interval as `judged holes` over the qrels' queries
    pair = holes_report("qrels.txt", ["dense.run", "bm25.run"], k=10, settings=Settings(complete=True)).pairs[0]
    assert (dense["min"], dense["max"]) == pytest.approx((pair.low, pair.high))
    assert out["checks"]["warnings"] == [] and "answer_key" in out["checks"]


def test_compare_table_marks_flips_and_no_holes_option(example, capsys, monkeypatch):
    monkeypatch.chdir(example)
    args = ["compare", "qrels.txt", "bm25.run", "dense.run", "tuned.run", "--permutations", "1000",
            "--regressions", "0"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Judged@10: bm25.run 0.9525 (19 holes), dense.run 0.5550 (178 holes)" in out
    dense_row = next(line for line in out.splitlines() if line.lstrip().startswith("dense.run"))
    assert dense_row.rstrip().endswith("▼⇄")
    # only the comparisons the holes could flip are listed (tuned's cannot flip: [-0.0242, -0.0059])
    assert "⇄ judging the holes could flip 1 of 2 comparisons; Δ could become anything in (exact): dense.run [" in out
    assert "tuned.run [" not in out
    assert main(args + ["--no-holes"]) == 0
    out = capsys.readouterr().out
    assert "⇄" not in out.replace("⇄:", "") and "Judged@10:" not in out
    assert main(args + ["--no-holes", "--format", "json"]) == 0
    assert "holes" not in json.loads(capsys.readouterr().out)


BEYOND_ARGS = ["qrels.txt", "bm25.run", "dense.run", "-m", "nDCG@10", "--scale", "grades.toml",
               "--requirements", "requirements.txt", "--eligibility", "eligibility.txt",
               "--unanswerable", "unanswerable.txt", "--answers", "answers.tsv", "--permutations", "1000",
               "--regressions", "0"]


def test_compare_flags_leaks_gaps_answers_and_scale(capsys, monkeypatch):
    monkeypatch.chdir(BEYOND)
    assert main(["compare", *BEYOND_ARGS]) == 0
    out = capsys.readouterr().out
    assert "baseline bm25.run (2 leaks)" in out  # the run with leaks is flagged
    assert "bm25.run: LEAKS: 2" in out and "dense.run: no leaks" in out
    assert "query q1: nDCG@10 0.7112, 1 of 2 groups, missing exception" in out
    assert "2 direct support:" in out  # the grade scale
    assert "bm25.run: high nDCG@10, failed answer: query q1" in out
    assert main(["compare", *BEYOND_ARGS, "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [x["docid"] for x in d["checks"]["runs"]["bm25.run"]["leaks"]] == ["hr-salaries", "hr-salaries"]
    assert d["checks"]["runs"]["dense.run"]["leaks"] == []
    assert d["checks"]["scale"]["grades"][2]["name"] == "direct support"
    assert [g["qid"] for g in d["checks"]["runs"]["bm25.run"]["evidence_gaps"]] == ["q1"]
    assert d["answers"]["bm25.run"]["acceptance_rate"] == 0.75
    assert d["checks"]["runs"]["dense.run"]["abstention"]["recall"] == 1.0


def test_compare_warns_on_thin_answer_keys(capsys, monkeypatch):
    monkeypatch.chdir(BEYOND / "thin")
    assert main(["compare", "qrels.txt", "run.txt", "run.txt", "--permutations", "100", "--regressions", "0"]) == 0
    out = capsys.readouterr().out
    assert "warning: thin answer key: queries with something relevant average 1.25 relevant documents" in out


def test_report_shows_holes_and_flip_marks(example, tmp_path, monkeypatch):
    monkeypatch.chdir(example)
    out = tmp_path / "r.html"
    assert main(["report", "qrels.txt", "bm25.run", "dense.run", "tuned.run", "-m", "nDCG@10", "-o", str(out),
                 "--permutations", "1000", "--regressions", "0"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<h2 id='holes'>Holes</h2>" in text
    assert "<td class='l'>dense.run</td><td>0.5550</td><td>178</td><td>40/40</td>" in text
    # dense's nDCG@10 cell: significantly worse, and the holes could flip it; tuned's cannot flip
    assert "0.5145▼<span class='flip'" in text and "0.7179<br>" in text
    assert "nDCG@10: tuned.run − bm25.run = -0.0131; with the holes judged anything in [-0.0242, -0.0059] " \
           "(exact): order cannot flip" in text


def test_report_says_which_holes_were_not_bounded_and_how_gmap_was_tested(example, tmp_path, monkeypatch):
    monkeypatch.chdir(example)
    out = tmp_path / "r.html"
    assert main(["report", "qrels.txt", "bm25.run", "dense.run", "-m", "ERR(max_rel=2)@10", "-m", "GMAP", "-o",
                 str(out), "--permutations", "100", "--regressions", "0"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<li>ERR(max_rel=2)@10: holes not bounded (ERR bounds need holes&#x27; grades up to max_rel=2" in text
    assert text.count("paired tests, W/L/T and d_z on log(max(value, 1e-05)) per query") == 1


def test_report_checks_section_and_paper_table_flags_leaks(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(BEYOND)
    out = tmp_path / "r.html"
    assert main(["report", *BEYOND_ARGS, "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<h2 id='checks'>Checks beyond the score</h2>" in text
    assert "bm25.run <span class='sub'>(baseline)</span> <span class='leak'>2 leaks</span>" in text
    assert "<td class='l'>direct support</td>" in text  # the grade scale
    assert "query q1: nDCG@10 0.7112, 1 of 2 groups, missing exception" in text
    assert "bm25.run: nDCG@10 ≥ 0.5, answer failed: query q1 (0.7112) — the answer missed the EU exception" in text
    assert "<td class='l'>bm25.run</td><td>4</td><td>3</td><td>0.7500</td>" in text  # answers table
    assert main(["report", *BEYOND_ARGS, "--format", "md"]) == 0
    assert "| bm25.run (baseline) (2 leaks) |" in capsys.readouterr().out


def test_report_power_section_matches_judged_meta_power(example, tmp_path, monkeypatch):
    from judged.analyses.meta import discriminative_power

    monkeypatch.chdir(example)
    out = tmp_path / "r.html"
    runs = ["bm25.run", "dense.run", "tuned.run"]
    assert main(["report", "qrels.txt", *runs, "-o", str(out), "--permutations", "200", "--regressions", "0",
                 "--power", "--power-measure", "nDCG@10", "--power-measure", "RR", "--power-samples", "500"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<h2 id='power'>Discriminative power</h2>" in text
    # the same ASLs as `judged meta power` over the qrels' queries (complete=True), same seed
    ref = discriminative_power("qrels.txt", runs, ["nDCG@10", "RR"], samples=500, seed=0,
                               settings=Settings(complete=True))
    for row in ref.summary():
        assert (f"<tr><td class='l'>{row['measure']}</td><td>{row['significant']}/{row['pairs']}</td>"
                f"<td>{row['power']:.0%}</td><td>{row['median_asl']:.4f}</td></tr>") in text
    # the ranking; nDCG@10 and the added Judged@10: 2 x 2 difference plots, 2 distributions; the ASL curves
    assert text.count("<svg") == 1 + 2 * 2 + 2 + 1
    assert main(["report", "qrels.txt", *runs, "--format", "md", "--power"]) == 2  # curves need HTML


def test_report_with_every_section_opens_in_chromium(tmp_path, monkeypatch, screenshot):
    monkeypatch.chdir(BEYOND)
    out = tmp_path / "r.html"
    assert main(["report", *BEYOND_ARGS, "-o", str(out), "--power", "--power-measure", "nDCG@10",
                 "--power-samples", "200"]) == 0
    errors, page_errors, outside, n_svg, table = screenshot(out, tmp_path / "r.png")
    assert errors == [] and page_errors == [] and outside == []
    assert n_svg == 1 + 2 * 1 + 2 + 1  # the ranking, the differences, the distributions, the ASL curves
    assert "2 leaks" in table


def test_eval_with_qrels_versions_is_the_rejudging_report(example, capsys, monkeypatch):
    monkeypatch.chdir(example)
    runs = ["bm25.run", "dense.run", "tuned.run"]
    assert main(["rejudge", "--qrels", "qrels.txt", "--qrels", "qrels-more.txt", *runs, "--format", "json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert main(["eval", "qrels.txt", *runs, "--qrels", "qrels-more.txt", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got == expected
    assert got["runs"]["dense.run"]["score"] == pytest.approx([0.5144717675766058, 0.8230], abs=1e-4)
    assert {"pair": ["bm25.run", "dense.run"], "before": "bm25.run > dense.run",
            "after": "dense.run > bm25.run"} in got["flipped"]
    assert main(["eval", "qrels.txt", "bm25.run", "-m", "AP", "-m", "P@10", "--qrels", "qrels-more.txt"]) == 2
    assert "give one measure" in capsys.readouterr().err
    assert main(["eval", "qrels.txt", "bm25.run", "--qrels", "qrels-more.txt", "--save", "x.json"]) == 2
    assert "drop --save" in capsys.readouterr().err


def test_holes_doc_compare_block_is_what_the_cli_prints(tmp_path, capsys, monkeypatch):
    import re

    text = (ROOT / "docs" / "holes.md").read_text(encoding="utf-8")
    command = "judged compare qrels.txt lexical.run dense.run --regressions 0"
    documented = re.search(r"```\n\$ " + re.escape(command) + r"\n(.*?)```", text, re.S).group(1)
    assert main(["demo", "--write", str(tmp_path)]) == 0
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")  # the doc shows a 120-column terminal
    assert main(command.split()[1:]) == 0
    out = "\n".join(line.rstrip() for line in capsys.readouterr().out.splitlines())
    assert out.strip() == documented.strip()


def test_beyond_doc_compare_block_is_what_the_cli_prints(capsys, monkeypatch):
    import re

    text = (ROOT / "docs" / "beyond-ndcg.md").read_text(encoding="utf-8")
    cmd, documented = re.search(r"```\n\$ (judged compare [^\n]*)\n(.*?)```", text, re.S).groups()
    monkeypatch.chdir(BEYOND)
    monkeypatch.setenv("COLUMNS", "120")  # the doc shows a 120-column terminal
    assert main(cmd.split()[1:]) == 0
    out = "\n".join(line.rstrip() for line in capsys.readouterr().out.splitlines())
    assert out.strip() == documented.strip()
