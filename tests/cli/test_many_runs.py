"""Many runs at a glance (issue #34): `judged holes` and `judged compare` lead with the
summary and fit a screen (60 lines at 120 columns) for 17 runs; the detail on request
(--pairs all, --regressions N); --baseline picks the baseline."""

import json
import math
import re

import pytest

from judged.analyses.meta.synthetic import pooled_collection
from judged.cli import main


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """17 runs on 50 queries, judged to depth 8 of every run: a few holes in each top 10
    (36 of the 136 pairs can flip)."""
    c = pooled_collection(systems=17, queries=50, depth=20, pool_depth=8, pooled_runs=17, seed=2)
    paths = c.write(tmp_path_factory.mktemp("many"))
    return paths["qrels"], paths["runs"]


def _screen_lines(text: str, width: int = 120) -> int:
    """The lines a terminal ``width`` columns wide shows (a longer line takes several)."""
    return sum(max(1, math.ceil(len(line) / width)) for line in text.splitlines())


def _run(capsys, *argv) -> str:
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_holes_leads_with_the_summary_and_fits_a_screen(many, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    qrels, runs = many
    out = _run(capsys, "holes", qrels, *runs, "--samples", "20")
    d = json.loads(_run(capsys, "holes", qrels, *runs, "--samples", "20", "--format", "json"))
    flips = [p for p in d["pairs"] if p["can_flip"]]
    assert len(d["pairs"]) == 136 and d["summary"]["can_flip"] == len(flips) and 20 < len(flips) < 136
    lines = out.splitlines()
    assert lines[0].startswith("holes in the top 10 of 17 runs")
    summary = " ".join(lines[:5])
    moving = d["summary"]["runs_whose_rank_can_change"]
    assert len(moving) == 17 and summary[summary.index("(not a bound) ") + 14:].startswith(
        f"{len(flips)} of 136 pairs of runs can flip (⇄); the rank of every run can change (17 of 17)")
    # the runs in rank order, each with its row of the flip matrix (its own # on the diagonal)
    rows = [line for line in lines if re.match(r"^\s*\d+\s+team", line)]
    assert len(rows) == 17
    order = d["summary"]["order"]
    for i, row in enumerate(rows):
        cells = row.split()[-1]
        assert len(cells) == 17 and cells[i] == str((i + 1) % 10)
        assert {j for j, c in enumerate(cells) if c == "⇄"} == {
            j for j, other in enumerate(order) if other != order[i] and any(
                {p["a"], p["b"]} == {order[i], other} for p in flips)}
    # only the pairs that can flip are listed, a line per run with the runs below it
    entries = re.compile(r"#\d+ [+-]\d\.\d{4} \[[+-]\d\.\d{4}, [+-]\d\.\d{4}\]")
    listed = out.split("pairs that can flip")[1].split("least judged")[0].replace("\n", "")  # wrapped at 120
    assert len(entries.findall(listed)) == len(flips)
    assert _screen_lines(out) <= 60
    every = _run(capsys, "holes", qrels, *runs, "--samples", "20", "--pairs", "all")
    listed = every.split("every pair")[1].split("least judged")[0].replace("\n", "")
    assert len(entries.findall(listed)) == 136 and listed.count("⇄") == len(flips)
    none = _run(capsys, "holes", qrels, *runs, "--samples", "20", "--pairs", "none", "--worst", "0")
    assert not re.search(r"^  #\d+ ", none, re.M) and "least judged" not in none


def test_holes_on_a_narrow_page_moves_the_matrix_under_the_table(many, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    qrels, runs = many
    out = _run(capsys, "holes", qrels, *runs, "--samples", "20")
    head = out.split("estimate: ")[0]
    assert max(len(line) for line in head.splitlines()[3:]) <= 80  # the tables fit, nothing cut
    assert "…" not in out and out.count("⇄ with #") == 1 and out.count("90% interval") == 1


def test_compare_shows_the_table_and_the_worst_regressions_overall(many, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    qrels, runs = many
    out = _run(capsys, "compare", qrels, *runs, "--permutations", "200")
    assert out.startswith("Judged@10: ") and "least judged: " in out.splitlines()[0]
    assert _screen_lines(out) <= 60
    d = json.loads(_run(capsys, "compare", qrels, *runs, "--permutations", "200", "--format", "json"))
    # JSON keeps each run's 2 worst; the table shows the 2 worst over every run, worst first
    assert {r["run"] for r in d["regressions"]} == set(runs[1:])
    worst = sorted(d["regressions"], key=lambda r: r["delta"])[:2]
    shown = re.findall(r"^(\S+) lost nDCG@10 on query (\S+): ", out, re.M)
    assert shown == [(r["run"].rsplit("/", 1)[-1], r["qid"]) for r in worst]
    more = _run(capsys, "compare", qrels, *runs, "--permutations", "200", "--regressions", "5")
    assert len(re.findall(r"^\S+ lost nDCG@10 on query", more, re.M)) == 5


def test_baseline_is_chosen_by_path_or_shown_name(many, capsys):
    qrels, runs = many
    name = runs[4].rsplit("/", 1)[-1]
    for given in (runs[4], name):
        d = json.loads(_run(capsys, "compare", qrels, *runs[:6], "--permutations", "100", "--baseline", given,
                            "--format", "json"))
        assert d["baseline"] == runs[4] and d["runs"] == runs[:4] + runs[5:6]
    md = _run(capsys, "report", qrels, *runs[:6], "--permutations", "100", "--baseline", name, "--format", "md")
    assert f"| {name} (baseline) |" in md
    assert main(["compare", qrels, *runs[:3], "--baseline", "nosuch.run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--baseline nosuch.run: no run of that name" in err


def test_the_summary_names_the_shorter_list_of_runs():
    from judged.analyses.flips import flip_summary
    from judged.analyses.holes.unjudged import PairFlip

    scores = {f"r{i}": 1.0 - i / 10 for i in range(5)}
    flip, hold = (lambda a, b: PairFlip(a, b, 0.1, -0.1, 0.2)), (lambda a, b: PairFlip(a, b, 0.1, 0.05, 0.2))
    pairs = [flip("r0", "r1"), flip("r1", "r2"), hold("r0", "r2"), *(hold(f"r{i}", f"r{j}") for i in range(3)
                                                                     for j in (3, 4)), hold("r3", "r4")]
    s = flip_summary(scores, pairs)
    assert s.sentence() == "2 of 10 pairs of runs can flip (⇄); runs whose rank can change: 3 of 5, all but r3, r4"
    s = flip_summary(scores, [flip("r3", "r4"), *(hold(p.a, p.b) for p in pairs[:-1])])
    assert s.sentence() == "1 of 10 pairs of runs can flip (⇄); runs whose rank can change (2 of 5): r3, r4"
    assert s.matrix()[3] == [False, False, False, None, True] and s.to_dict()["can_flip"] == 1
    s = flip_summary(scores, [hold(p.a, p.b) for p in pairs])
    assert s.sentence() == "0 of 10 pairs of runs can flip (⇄); judging the holes cannot change the rank of any run"
