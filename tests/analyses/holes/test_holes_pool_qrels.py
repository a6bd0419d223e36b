"""Seeing holes, pooling them, merging new labels, diffing versions, and the flip."""

import json

import pytest

from judged.cli import main
from judged.demo import holes_story
from judged.core.conventions import Settings
from judged.core.evaluation import evaluate
from judged.analyses.holes.unjudged import holes_report
from judged.core.io import read_qrels
from judged.core.measures.registry import BOUNDED
from judged.analyses.pooling.strategies import pool
from judged.analyses.pooling.poolfile import read_pool_file
from judged.judge.inputs import pool_pairs
from judged.analyses.qrels_ops import MergeConflict, diff, evaluate_versions, merge, rejudge
from synth import make_collection, write_qrels, write_run

QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "x": 0}, "q2": {"a": 1, "e": 2}}
# "a" is judged for both queries; "c" only for q1, so c retrieved for q2 is a hole there
RUN_A = {"q1": {"a": 9.0, "h1": 8.0, "b": 7.0, "h2": 6.0}, "q2": {"c": 9.0, "a": 8.0, "h3": 7.0}}
RUN_B = {"q1": {"h2": 9.0, "h4": 8.0, "a": 7.0}, "q2": {"e": 9.0, "h3": 8.0}}


# ---------------------------------------------------------------------------
# seeing holes


def test_holes_are_counted_per_query():
    r = holes_report(QRELS, {"A": RUN_A}, k=3, samples=20)
    holes = r.hole_list()
    # c is judged for q1 only: in q2's list it is a hole (BEIR's Hole@k would call it judged)
    assert ("q2", 1, "c") in set(zip(holes.qid, holes["rank"], holes.docid))
    assert set(zip(holes.qid, holes.docid)) == {("q1", "h1"), ("q2", "c"), ("q2", "h3")}
    s = r.runs["A"].summary()
    assert s["holes"] == 3 and s["queries_with_holes"] == 2
    assert s["judged"] == pytest.approx((2 / 3 + 1 / 3) / 2)


def test_negative_grades_nonrelevant_or_unjudged():
    qrels = {"q": {"a": 1, "n": -1}}
    run = {"q": {"n": 2.0, "a": 1.0}}
    default = holes_report(qrels, {"r": run}, k=2, samples=10)
    as_holes = holes_report(qrels, {"r": run}, k=2, settings=Settings(complete=True, negative="unjudged"), samples=10)
    assert default.runs["r"].summary()["holes"] == 0  # trec_eval: -1 is judged not relevant
    assert as_holes.runs["r"].summary()["holes"] == 1
    assert as_holes.runs["r"].summary()["max"] == pytest.approx(1.0)  # n may be a 1 at rank 1
    assert default.runs["r"].summary()["max"] == default.runs["r"].summary()["score"]


def test_estimate_is_between_the_bounds_and_labelled():
    s = holes_story()
    r = holes_report(s.qrels, s.runs, k=10, samples=50)
    d = r.runs["dense"].summary()
    assert d["min"] <= d["estimate"]["low"] <= d["estimate"]["mean"] <= d["estimate"]["high"] <= d["max"]
    assert "not a bound" in r.conventions()["estimate"] and "leave-one-run-out" in r.conventions()["estimate"]
    assert r.to_dict()["estimate"]["method"] in ("loro-logit", "holes-as-zero")


def test_pair_flip_interval_contains_the_truth():
    s = holes_story()
    r = holes_report(s.qrels, s.runs, k=10, samples=10)
    (p,) = r.pairs
    assert (p.a, p.b) == ("lexical", "dense") and p.can_flip
    full = evaluate(s.answer_key, s.runs, ["nDCG@10"]).mean()["nDCG@10"]
    pooled = pool(s.qrels, s.runs, 10)
    labels = s.assessor([(x.qid, x.docid) for x in pooled.pairs])
    after = evaluate(merge(read_qrels(s.qrels), [read_qrels(labels)]).qrels, s.runs, ["nDCG@10"]).mean()
    true_diff = after.loc["lexical", "nDCG@10"] - after.loc["dense", "nDCG@10"]
    assert p.low <= true_diff <= p.high and true_diff < 0 < p.difference
    assert full["dense"] > full["lexical"]
    assert "order can flip" in p.sentence() and p.exact and "exact" in p.sentence()
    # the conservative construction (AP is bounded that way) also contains the truth
    ap = holes_report(s.qrels, s.runs, k=10, measure="AP@10", samples=5).pairs[0]
    true_ap = evaluate(merge(read_qrels(s.qrels), [read_qrels(labels)]).qrels, s.runs, ["AP@10"]).mean()["AP@10"]
    assert not ap.exact and "conservative" in ap.sentence()
    assert ap.low <= true_ap["lexical"] - true_ap["dense"] <= ap.high


def test_pair_cannot_flip_when_no_holes_can_close_the_gap():
    qrels = {"q": {"a": 1, "b": 0}}
    r = holes_report(qrels, {"good": {"q": {"a": 2.0, "b": 1.0}}, "bad": {"q": {"b": 2.0, "a": 1.0}}}, k=2)
    (p,) = r.pairs
    assert not p.can_flip and "order cannot flip" in p.sentence()


# ---------------------------------------------------------------------------
# pooling


def test_depth_pool_is_the_unjudged_pairs_in_the_top_k():
    p = pool(QRELS, {"A": RUN_A, "B": RUN_B}, depth=2)
    got = {(x.qid, x.docid): (x.best_rank, x.runs) for x in p.pairs}
    assert got == {("q1", "h1"): (2, ["A"]), ("q1", "h2"): (1, ["B"]), ("q1", "h4"): (2, ["B"]),
                   ("q2", "c"): (1, ["A"]), ("q2", "h3"): (2, ["B"])}
    ranks = [x.best_rank for x in p.pairs]
    assert ranks == sorted(ranks)  # shallowest first


@pytest.mark.parametrize("budget,expected", [(0, 0), (2, 2), (5, 5), (50, 5)])
def test_budget_gives_exactly_n_pairs(budget, expected):
    for strategy in ("depth", "impact"):
        p = pool(QRELS, {"A": RUN_A, "B": RUN_B}, depth=2, budget=budget, strategy=strategy)
        assert len(p) == expected and p.unjudged == 5


def test_depth_budget_takes_the_shallowest():
    p = pool(QRELS, {"A": RUN_A, "B": RUN_B}, depth=2, budget=2, strategy="depth")
    assert {(x.qid, x.docid) for x in p.pairs} == {("q1", "h2"), ("q2", "c")}


def test_default_strategy_is_depth_with_or_without_a_budget(tmp_path, capsys):
    # no other strategy earned the default (docs/pooling.md: none needed fewer judgments than
    # depth pooling at every tolerance on every collection measured); with a budget, judged
    # pool says why and how to choose one on the user's own judgments
    runs = {"A": RUN_A, "B": RUN_B}
    assert pool(QRELS, runs, depth=2).strategy == "depth"
    with_budget = pool(QRELS, runs, depth=2, budget=3)
    assert with_budget.strategy == "depth" and len(with_budget) == 3
    assert [(x.qid, x.docid) for x in with_budget.pairs] == \
        [(x.qid, x.docid) for x in pool(QRELS, runs, depth=2, budget=3, strategy="depth").pairs]
    q = write_qrels(tmp_path / "qrels.txt", QRELS)
    ra, rb = write_run(tmp_path / "a.run", RUN_A, "A"), write_run(tmp_path / "b.run", RUN_B, "B")
    assert main(["pool", q, ra, rb, "--depth", "2", "--budget", "3", "-o", str(tmp_path / "p.txt")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "strategy depth)" in err and "strategy depth, the default with --budget: no other strategy" in err
    assert "judged meta pooling PAST_QRELS PAST_RUN... --budget N" in err and "with --strategy" in err
    assert "strategy=depth budget=3" in (tmp_path / "p.txt").read_text().splitlines()[0]
    assert main(["pool", q, ra, rb, "--depth", "2", "--budget", "3", "-o", "-"]) == 0  # the pool alone, on stdout
    out, err = capsys.readouterr()
    assert out.startswith("# judged pool: depth=2 strategy=depth budget=3") and err == ""
    for named in (["--budget", "3", "--strategy", "depth"], []):  # a strategy named, or no budget: no note
        assert main(["pool", q, ra, rb, "--depth", "2", *named, "-o", str(tmp_path / "all.txt")]) == 0
        err = capsys.readouterr().err
        assert "strategy depth)" in err and "judged meta pooling" not in err
    with pytest.raises(SystemExit):
        main(["pool", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "The default strategy: depth, with or without --budget" in text and "Why, with a budget: no other" in text
    assert "judged meta pooling past-qrels.txt past-runs/*.run --budget 1000" in text


def test_pool_runs_without_k_and_writes_to_stdout(tmp_path, capsys):
    """Issue 34: `judged pool ... --budget 2000` refused to run without -k (now 10, the
    holes judged holes shows by default, as judged.pool's depth); `-o -` worked but was
    not documented (its --help and docs/pooling.md now say it)."""
    q = write_qrels(tmp_path / "qrels.txt", QRELS)
    ra, rb = write_run(tmp_path / "a.run", RUN_A, "A"), write_run(tmp_path / "b.run", RUN_B, "B")
    assert main(["pool", q, ra, rb, "--budget", "2000", "-o", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# judged pool: depth=10 strategy=depth budget=2000: 5 of 5 unjudged pairs") and err == ""
    assert main(["pool", q, ra, rb, "-k", "10", "--budget", "2000", "-o", "-"]) == 0
    assert capsys.readouterr().out == out
    with pytest.raises(SystemExit):
        main(["pool", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "(default 10:" in said and "'-' writes it to stdout" in said and "-o - |" in said


def test_impact_prefers_pairs_that_can_move_the_comparison():
    # h_top sits at rank 1 of run A only; h_deep at rank 10 of both runs (moves neither order)
    qrels = {"q": {f"j{i}": 0 for i in range(12)} | {"r": 1}}
    a = {"q": {"h_top": 20.0, **{f"j{i}": 19.0 - i for i in range(8)}, "h_deep": 1.0}}
    b = {"q": {**{f"j{i}": 19.0 - i for i in range(9)}, "h_deep": 1.0}}
    p = pool(qrels, {"A": a, "B": b}, depth=10, strategy="impact")
    assert [x.docid for x in p.pairs] == ["h_top", "h_deep"]
    assert p.pairs[0].impact > p.pairs[1].impact > 0
    assert "impact(nDCG@10,maxgrade=1)" in p.header()[0]


def test_pool_file_format(tmp_path):
    q = write_qrels(tmp_path / "qrels.txt", QRELS)
    ra, rb = write_run(tmp_path / "a.run", RUN_A, "A"), write_run(tmp_path / "b.run", RUN_B, "B")
    out = tmp_path / "pool.txt"
    assert main(["pool", q, ra, rb, "--depth", "2", "--budget", "3", "--strategy", "depth", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    header = [x for x in lines if x.startswith("#")]
    body = [x for x in lines if not x.startswith("#")]
    assert lines[: len(header)] == header and len(body) == 3
    for i, line in enumerate(body, 1):
        qid, docid, priority, best_rank, runs, strategy, stratum, inclusion, ranks = line.split()
        assert int(priority) == i and int(best_rank) in (1, 2) and runs
        assert (strategy, stratum, inclusion) == ("depth", "-", "1")  # what the pair was drawn with
        assert min(map(int, ranks.split(","))) == int(best_rank) and len(ranks.split(",")) == len(runs.split(","))
    assert header[-1].startswith("# qid docid priority best_rank runs strategy stratum inclusion ranks")
    assert pool_pairs(read_pool_file(out, pairs_only=True))[0] == [tuple(x.split()[:2]) for x in body]  # as judging reads it


def test_pool_to_pandas_is_the_pool_file_as_a_frame():
    """``Pool.to_pandas()``: the depth pool of test_depth_pool_is_the_unjudged_pairs_in_the_top_k
    as a frame, one row per pair in judging order."""
    p = pool(QRELS, {"A": RUN_A, "B": RUN_B}, depth=2)
    df = p.to_pandas()
    assert tuple(df.columns) == p.all_columns == ("qid", "docid", "priority", "best_rank", "runs", "strategy",
                                                  "stratum", "inclusion", "ranks")
    assert df[["qid", "docid", "priority", "best_rank", "runs", "ranks"]].values.tolist() == [
        ["q1", "h2", 1, 1, "B", "1"], ["q2", "c", 2, 1, "A", "1"], ["q1", "h1", 3, 2, "A", "2"],
        ["q1", "h4", 4, 2, "B", "2"], ["q2", "h3", 5, 2, "B", "2"]]
    assert set(df["strategy"]) == {"depth"} and df["stratum"].isna().all() and (df["inclusion"] == 1).all()


@pytest.mark.parametrize("strategy", ["depth", "impact", "mm", "sample"])
def test_pool_to_pandas_has_the_files_columns_and_values(tmp_path, strategy):
    """Every strategy's frame holds the columns its file holds, in the file's order (a
    strategy's own columns: impact's ``impact``, the bandits' ``score``), with the file's
    values ('-' in the file: missing in the frame)."""
    from judged.analyses.pooling.poolfile import read_pool_file

    s = make_collection(5)
    p = pool(s.qrels, {"x": s.run, "y": {q: {d: -v for d, v in docs.items()} for q, docs in s.run.items()}}, 10,
             budget=12, strategy=strategy, seed=1)
    df = p.to_pandas()
    p.write(tmp_path / "pool.txt")
    back = read_pool_file(tmp_path / "pool.txt")
    assert tuple(df.columns) == p.all_columns == back.columns
    assert len(df) == len(back.pairs) == len(p) > 2 and df["priority"].tolist() == list(range(1, len(p) + 1))
    for row, pair in zip(df.to_dict("records"), back.pairs):
        assert (row["qid"], row["docid"], row["best_rank"], row["runs"].split(","), row["strategy"]) == \
            (pair.qid, pair.docid, pair.best_rank, pair.runs, pair.strategy)
        assert row["ranks"] == ",".join(map(str, pair.ranks))
        assert (None if row["stratum"] is None or row["stratum"] != row["stratum"] else row["stratum"]) == pair.stratum
        assert row["inclusion"] == pytest.approx(pair.inclusion)
        for c in p.columns:  # written with 6 significant digits
            assert row[c] == pytest.approx(pair.impact if c == "impact" else pair.fields[c], rel=1e-5), c


# ---------------------------------------------------------------------------
# merging and diffing


def test_merge_unions_and_keeps_provenance(tmp_path):
    base = write_qrels(tmp_path / "base.txt", {"q1": {"a": 2, "b": 0}})
    new = write_qrels(tmp_path / "new.txt", {"q1": {"a": 2, "h": 1}, "q2": {"z": 0}})
    out = tmp_path / "out.txt"
    assert main(["qrels", "merge", base, new, "-o", str(out), "--assessor", "alice", "--time", "2026-11-29"]) == 0
    assert out.read_text().splitlines() == ["q1 0 a 2", "q1 0 b 0", "q1 0 h 1", "q2 0 z 0"]
    side = (tmp_path / "out.txt.provenance.tsv").read_text().splitlines()
    assert side[0].startswith("# input") and "sha256=" in side[0]
    rows = [x.split("\t") for x in side if not x.startswith("#")]
    assert rows[0] == ["qid", "docid", "grade", "source", "assessor", "time", "replaced"]
    prov = {(r[0], r[1]): r[3:6] for r in rows[1:]}
    assert prov[("q1", "a")] == [base, "", ""]  # judged identically: the base keeps it
    assert prov[("q1", "h")] == [new, "alice", "2026-11-29"]
    # a chained merge keeps the earlier provenance
    more = write_qrels(tmp_path / "more.txt", {"q3": {"y": 3}})
    out2 = tmp_path / "out2.txt"
    assert main(["qrels", "merge", str(out), more, "-o", str(out2)]) == 0
    rows2 = [x.split("\t") for x in (tmp_path / "out2.txt.provenance.tsv").read_text().splitlines()
             if not x.startswith("#")]
    assert {(r[0], r[1]): r[3:6] for r in rows2[1:]}[("q1", "h")] == [new, "alice", "2026-11-29"]


def test_merge_conflicts_are_listed_and_refused(tmp_path, capsys):
    base = write_qrels(tmp_path / "base.txt", {"q1": {"a": 2, "b": 0}})
    new = write_qrels(tmp_path / "new.txt", {"q1": {"a": 0, "b": 1, "c": 1}})
    out = tmp_path / "out.txt"
    assert main(["qrels", "merge", base, new, "-o", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [f"conflict: query q1 docid a: 2 in {base} but 0 in {new}",
                       f"conflict: query q1 docid b: 0 in {base} but 1 in {new}"]
    assert err[-1].startswith("judged: error: 2 conflicting judgments") and len(err) == 3
    assert not out.exists()
    with pytest.raises(MergeConflict):
        merge(base, [new])
    m = merge(base, [new], prefer="new")
    assert dict(zip(m.qrels.docid.to_pylist(), m.qrels.grade.tolist())) == {"a": 0, "b": 1, "c": 1}
    assert [r["replaced"] for r in m.provenance[:2]] == [f"2@{base}", f"0@{base}"]
    m = merge(base, [new], prefer="base")
    assert dict(zip(m.qrels.docid.to_pylist(), m.qrels.grade.tolist())) == {"a": 2, "b": 0, "c": 1}
    assert [c["kept"] for c in m.conflicts] == [2, 0]


def test_diff_counts_added_removed_changed(tmp_path, capsys):
    a = write_qrels(tmp_path / "a.txt", {"q1": {"x": 1, "y": 0}, "q2": {"z": 2}})
    b = write_qrels(tmp_path / "b.txt", {"q1": {"x": 2, "w": 1}, "q2": {"z": 2}, "q3": {"v": 0}})
    d = diff(a, b)
    assert d.added == [("q1", "w", 1), ("q3", "v", 0)]
    assert d.removed == [("q1", "y", 0)]
    assert d.changed == [("q1", "x", 1, 2)]
    assert d.per_query() == {"q1": {"added": 1, "removed": 1, "changed": 1}, "q3": {"added": 1, "removed": 0, "changed": 0}}
    assert main(["qrels", "diff", a, b, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    import hashlib
    assert out["a"]["sha256"] == hashlib.sha256(open(a, "rb").read()).hexdigest()
    assert (out["added"], out["removed"], out["changed"]) == (2, 1, 1)
    assert main(["qrels", "diff", a, a]) == 0
    assert "no differences" in capsys.readouterr().out


def _diff_table(out: str) -> dict:
    """qid -> (added, removed, changed) from the rows of ``judged qrels diff``'s table."""
    rows = [[c.strip() for c in line.strip("│").split("│")] for line in out.splitlines() if line.startswith("│")]
    return {r[0]: tuple(map(int, r[1:])) for r in rows}


def test_diff_table_counts_each_query_and_lists_the_pairs(tmp_path, capsys, monkeypatch):
    """``judged qrels diff`` as a table: both files' sha256 and sizes, per query what was
    added, removed and changed (queries in natural order), a total row, and with --list
    every differing pair."""
    import hashlib

    monkeypatch.setenv("COLUMNS", "200")
    a = write_qrels(tmp_path / "a.txt", {"q2": {"x": 1, "y": 0}, "q10": {"z": 2, "u": 1}, "q3": {"v": 0}})
    b = write_qrels(tmp_path / "b.txt", {"q2": {"x": 2, "w": 1}, "q10": {"z": 2}, "q3": {"v": 0}, "q1": {"t": 3}})
    assert main(["qrels", "diff", a, b, "--list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"A: {a} sha256={hashlib.sha256(open(a, 'rb').read()).hexdigest()} (5 judgments)"
    assert lines[1] == f"B: {b} sha256={hashlib.sha256(open(b, 'rb').read()).hexdigest()} (5 judgments)"
    table = _diff_table(out)
    # q2: w added, y removed, x changed 1 -> 2; q10: u removed; q1 is new; q3 is unchanged (not shown)
    assert table == {"q1": (1, 0, 0), "q2": (1, 1, 1), "q10": (0, 1, 0), "all": (2, 2, 1)}
    assert list(table) == ["q1", "q2", "q10", "all"]  # natural order: q2 before q10
    assert lines[-5:] == ["+ q1 t 3", "+ q2 w 1", "- q2 y 0", "- q10 u 1", "~ q2 x 1 -> 2"]
    assert main(["qrels", "diff", a, b]) == 0  # without --list: the table only
    assert capsys.readouterr().out.splitlines()[-1].startswith("└")


def test_diff_table_shows_query_ids_as_written(tmp_path, capsys, monkeypatch):
    """A query id that reads as Rich markup ('[/i]', 'x[b]y') is shown as written, not
    taken as a style (it stopped the command with a MarkupError traceback)."""
    monkeypatch.setenv("COLUMNS", "200")
    a = write_qrels(tmp_path / "a.txt", {"x[b]y": {"d": 1}, "[/i]": {"d": 1}})
    b = write_qrels(tmp_path / "b.txt", {"x[b]y": {"d": 2}, "[/i]": {"d": 0}})
    assert main(["qrels", "diff", a, b]) == 0
    assert _diff_table(capsys.readouterr().out) == {"[/i]": (0, 0, 1), "x[b]y": (0, 0, 1), "all": (0, 0, 2)}


# ---------------------------------------------------------------------------
# the flip, end to end


def test_the_flip_through_the_cli(tmp_path, capsys):
    s = holes_story()
    s.write(tmp_path)
    q, lex, den = (str(tmp_path / n) for n in ("qrels.txt", "lexical.run", "dense.run"))
    pool_file, labels, v2 = tmp_path / "pool.txt", tmp_path / "labels.txt", tmp_path / "v2.txt"
    assert main(["pool", q, lex, den, "--depth", "10", "-o", str(pool_file)]) == 0
    key = {(a, d): g for a, docs in s.answer_key.items() for d, g in docs.items()}
    labels.write_text("".join(f"{a} 0 {d} {key[(a, d)]}\n" for a, d in pool_pairs(read_pool_file(pool_file))[0]))
    assert main(["qrels", "merge", q, str(labels), "-o", str(v2), "--assessor", "sim"]) == 0
    capsys.readouterr()
    assert main(["rejudge", "--qrels", q, "--qrels", str(v2), lex, den, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["order"] == [[lex, den], [den, lex]]
    assert report["flipped"] == [{"pair": sorted([lex, den]), "before": f"{lex} > {den}", "after": f"{den} > {lex}"}]
    assert report["runs"][den]["judged"][1] == 1.0 > report["runs"][den]["judged"][0]
    # after judging, nothing left to bound: min = max for both runs
    assert main(["holes", str(v2), lex, den, "--format", "json", "--samples", "5"]) == 0
    h = json.loads(capsys.readouterr().out)
    assert all(r["holes"] == 0 and r["min"] == r["max"] for r in h["runs"].values())
    assert h["pairs"][0]["can_flip"] is False


def test_rejudge_needs_two_versions(tmp_path, capsys):
    q = write_qrels(tmp_path / "q.txt", QRELS)
    r = write_run(tmp_path / "a.run", RUN_A)
    assert main(["rejudge", "--qrels", q, r]) == 2
    assert capsys.readouterr().err.strip() == "judged: error: a rejudging report needs two or more qrels versions"
    report = rejudge([q, q], [r])
    assert report.flips() == [] and report.order(0) == [r]


@pytest.mark.parametrize("form", ["text", "ungrouped", "gzip"])
def test_evaluate_versions_is_one_evaluate_per_version(tmp_path, form):
    """Runs read once, scored under each version as they come: the Results (names, order,
    per-query values, counts) of one evaluate per version; a file given twice is two runs.
    Plain-text files are streamed (each block scored under every version); the dense run
    not grouped by query, or gzip, is read whole."""
    import gzip

    s = holes_story()
    s.write(tmp_path)
    q, lex, den = (str(tmp_path / n) for n in ("qrels.txt", "lexical.run", "dense.run"))
    if form == "ungrouped":
        lines = open(den).read().splitlines(keepends=True)
        open(den, "w").write("".join(lines[1::2] + lines[0::2]))
    if form == "gzip":
        with open(den, "rb") as f, gzip.open(den + ".gz", "wb") as out:
            out.write(f.read())
        den += ".gz"
    v2 = read_qrels(q).to_pandas()
    v2 = v2[v2.qid != v2.qid.iloc[0]]  # a version without the first query
    runs, measures = [lex, den, lex], [["nDCG@10", "Judged@10"], ["AP"]]
    got = evaluate_versions([q, v2], runs, measures, Settings(complete=True))
    for res, qrels, ms in zip(got, [q, v2], measures):
        want = evaluate(qrels, runs, ms, complete=True)
        assert list(res.runs) == list(want.runs) == [lex, den, f"{lex} (2)"]
        assert list(res.measures) == ms and res.query_set.to_dict() == want.query_set.to_dict()
        for name, rr in want.runs.items():
            assert (res.runs[name].qids == rr.qids).all() and res.runs[name].counts == rr.counts
            for m in ms:
                assert res.runs[name].values[m].tolist() == rr.values[m].tolist()
    assert got[0].runs[den].values["nDCG@10"].tolist() != got[0].runs[lex].values["nDCG@10"].tolist()
    assert len(got[1].runs[lex].qids) == len(got[0].runs[lex].qids) - 1
    streamed = {"text": [lex, den, f"{lex} (2)"], "ungrouped": [lex, f"{lex} (2)"], "gzip": [lex, f"{lex} (2)"]}[form]
    for res in got:
        assert [name for name, rr in res.runs.items() if getattr(rr, "source", None)] == streamed


@pytest.mark.parametrize("budget", [None, 37])
def test_pool_depth_is_the_depth_policys_order(budget):
    """--strategy depth sorts the pairs itself: the Depth policy's proposals, pair for pair
    (ties of best rank broken by how many runs hold the pair, then qid, then docid)."""
    from judged.analyses.meta.synthetic import pooled_collection
    from judged.analyses.pooling import PoolRows
    from judged.analyses.pooling.strategies import make_policy
    from judged.core.conventions import Settings
    from judged.core.evaluation import ALIGNMENT, Scorer

    coll = pooled_collection(systems=6, queries=12, depth=30, pool_depth=3, pooled_runs=2, seed=4)
    qrels, runs = read_qrels(coll.qrels()), coll.runs()
    got = pool(qrels, runs, 10, budget=budget, strategy="depth")
    cands = PoolRows.of(Scorer(qrels, {}, Settings()).runs(runs, ALIGNMENT).alignments(), 10).candidates(
        None, 10, known=True)[0]
    want = [(cands.qids[int(cands.pair_query[pid])], cands.docids[pid])
            for pid, _ in make_policy("depth", cands).start().propose(budget)]
    assert [(p.qid, p.docid) for p in got.pairs] == want
    assert len(want) == (got.unjudged if budget is None else budget) and got.unjudged > 37
    ranks = [p.best_rank for p in got.pairs]
    assert ranks == sorted(ranks) and len({(r, len(p.runs)) for r, p in zip(ranks, got.pairs)}) > 3


# ---------------------------------------------------------------------------
# CLI: output and one-line errors


def test_holes_cli_table_list_and_json(tmp_path, capsys):
    q = write_qrels(tmp_path / "q.txt", QRELS)
    ra, rb = write_run(tmp_path / "a.run", RUN_A), write_run(tmp_path / "b.run", RUN_B)
    assert main(["holes", q, ra, rb, "-k", "2"]) == 0
    out = capsys.readouterr().out
    assert "Judged@2" in out and "1 of 1 pair of runs can flip" in out and "not a bound" in out
    assert main(["holes", q, ra, "-k", "3", "--list"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{ra} q1 2 h1", f"{ra} q2 1 c", f"{ra} q2 3 h3"]
    assert main(["holes", q, ra, rb, "-k", "2", "-m", "AP@2", "--format", "json", "--list"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["measure"] == "AP@2" and len(d["pairs"]) == 1 and d["holes"][0]["run"] == ra
    assert set(d["runs"][ra]) >= {"judged", "holes", "queries_with_holes", "share_queries_with_holes", "score",
                                  "min", "max", "estimate", "worst"}
    assert d["bounds"] == "exact" and d["bounds_method"].startswith("exact: ")


def test_holes_cli_labels_conservative_bounds(tmp_path, capsys):
    # nERR's bounds hold the extremes but are not them (docs/measures.md): the table's first
    # line, the estimate's interval note, the conventions and the JSON say so
    q = write_qrels(tmp_path / "q.txt", QRELS)
    ra = write_run(tmp_path / "a.run", RUN_A)
    assert main(["holes", q, ra, "-k", "3", "-m", "nERR@3"]) == 0
    out = capsys.readouterr().out
    assert "nERR@3 with holes counted as not relevant, its conservative min and max (bounds that hold the " \
           "extremes, not exact) over grades 0..2" in " ".join(out.split())
    assert "interval = the conservative bounds" in out and "exact" not in out.replace("not exact", "")
    assert "unjudged=min(grades=0..qrels-max,ideal-recomputed,conservative,holes=pool)" in out
    assert main(["holes", q, ra, "-k", "3", "-m", "nERR@3", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["bounds"] == "conservative" and d["bounds_method"].startswith("conservative, not exact")
    s = d["runs"][ra]
    assert 0 <= s["min"] <= s["score"] <= s["max"] <= 1


@pytest.mark.parametrize("argv,message", [
    (["holes", "{q}", "{r}", "-m", "Bpref"], "judged: error: bounds are defined for " + ", ".join(BOUNDED) + ", not Bpref"),
    (["holes", "{q}", "{r}", "-k", "0"], "judged: error: -k must be a positive integer, got 0"),
    (["holes", "{q}", "missing.run"], "judged: error: missing.run: no such file"),
    (["pool", "{q}", "{r}", "--depth", "0", "-o", "-"], "judged: error: --depth must be a positive integer, got 0"),
    (["pool", "{q}", "{r}", "--depth", "3", "--budget", "-1", "-o", "-"], "judged: error: --budget must be 0 or more, got -1"),
    (["eval", "{q}", "{r}", "-m", "nDCG(unjudged=max)"],
     "judged: error: unjudged=max bounds the top k: give a cutoff, e.g. nDCG(unjudged=max)@10"),
])
def test_cli_errors_are_one_line(tmp_path, monkeypatch, capsys, argv, message):
    q = write_qrels(tmp_path / "q.txt", QRELS)
    r = write_run(tmp_path / "a.run", RUN_A)
    monkeypatch.chdir(tmp_path)
    assert main([a.format(q=q, r=r) for a in argv]) == 2
    assert capsys.readouterr().err.strip() == message


def test_eval_accepts_bound_measures(tmp_path, capsys):
    q = write_qrels(tmp_path / "q.txt", QRELS)
    r = write_run(tmp_path / "a.run", RUN_A)
    assert main(["eval", q, r, "-m", "nDCG@3", "-m", "nDCG(unjudged=min)@3", "-m", "nDCG(unjudged=max)@3",
                 "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    mean = d["runs"][r]["mean"]
    assert mean["nDCG(unjudged=min)@3"] <= mean["nDCG@3"] <= mean["nDCG(unjudged=max)@3"]
    assert "ideal-recomputed" in d["measures"]["nDCG(unjudged=max)@3"]


def test_demo_tells_the_holes_story(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for text in ["5. Holes", "#1 lexical vs #2 dense: +0.0220 [-0.1012, +0.0220]", "6. Pool the holes",
                 "simulated assessor",
                 "order under before: lexical > dense", "order under after: dense > lexical",
                 "1. One ranking"]:
        assert text in out
    # the estimate beside the bounds, its method named, then checked against what judging gave
    flat = " ".join(out.split())
    s = holes_story()
    e = holes_report(s.qrels, s.runs, k=10).runs["dense"].summary()
    assert "estimate: loro-logit" in flat and "an estimate (not a bound)" in flat and "90% interval" in flat
    assert (f"dense: section 5 estimated {e['estimate']['mean']:.4f} (loro-logit; interval "
            f"{e['estimate']['low']:.4f}-{e['estimate']['high']:.4f}, the exact bounds: too few runs to calibrate); "
            f"judging its 42 holes gave 0.8313, inside the interval and within the exact bounds") in flat
    assert "9. Does the estimate hold?" in out and "bound violations: 0/12" in flat
    assert "docs/holes.md, 'On real collections'" in flat


def test_estimate_is_deterministic_and_exact_without_holes():
    s = holes_story()
    one = holes_report(s.qrels, s.runs, k=10, samples=30, seed=3).runs
    two = holes_report(s.qrels, s.runs, k=10, samples=30, seed=3).runs
    assert one["dense"].summary()["estimate"] == two["dense"].summary()["estimate"]
    alone = holes_report(s.qrels, {"lexical": s.runs["lexical"]}, k=10, samples=30, seed=3).runs
    lex = alone["lexical"].summary()  # no hole of its own, and no other run's: exact
    assert lex["estimate"]["mean"] == pytest.approx(lex["score"], abs=1e-15)
    assert lex["score"] == lex["min"] == lex["max"]
    lex = one["lexical"].summary()  # beside the dense run, whose holes may raise its ideal
    assert lex["min"] < lex["score"] == lex["max"]
    assert (lex["estimate"]["low"], lex["estimate"]["high"]) == (lex["min"], lex["max"])


def test_negative_unjudged_through_the_cli(tmp_path, capsys):
    q = write_qrels(tmp_path / "q.txt", {"q": {"a": 1, "n": -1}})
    r = write_run(tmp_path / "r.run", {"q": {"n": 2.0, "a": 1.0}})
    assert main(["holes", q, r, "-k", "2", "--list"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["holes", q, r, "-k", "2", "--list", "--negative", "unjudged"]) == 0
    assert capsys.readouterr().out.split() == [r, "q", "1", "n"]
    assert main(["pool", q, r, "--depth", "2", "--negative", "unjudged", "-o", "-"]) == 0
    assert [x.split()[:2] for x in capsys.readouterr().out.splitlines() if not x.startswith("#")] == [["q", "n"]]


def test_docs_quote_the_demos_numbers():
    """docs/holes.md quotes the demo; these are the figures it quotes."""
    from pathlib import Path

    doc = Path(__file__).resolve().parents[3].joinpath("docs", "holes.md").read_text()
    s = holes_story()
    rep = holes_report(s.qrels, s.runs, k=10)
    d = rep.runs["dense"].summary()
    (p,) = rep.pairs
    pooled = pool(s.qrels, s.runs, 10)
    labels = read_qrels(s.assessor([(x.qid, x.docid) for x in pooled.pairs]))
    after = merge(read_qrels(s.qrels), [labels]).qrels
    table = rejudge([read_qrels(s.qrels), after], s.runs)
    figures = [f"{d['judged']:.3f}", str(d["holes"]), f"{d['queries_with_holes']} of 30 queries", f"{d['score']:.4f}",
               f"{d['max']:.4f}", f"{d['estimate']['mean']:.4f}",
               f"{d['estimate']['low']:.4f}-{d['estimate']['high']:.4f}", f"[-{abs(p.low):.4f}, +{p.high:.4f}]",
               f"{table.scores['lexical'][0]:.4f} | 1.000 | {table.scores['lexical'][1]:.4f}",
               f"{table.scores['dense'][0]:.4f} | 0.860 | {table.scores['dense'][1]:.4f}",
               f"{int((labels.grade >= 1).sum())} of {len(pooled)} holes relevant"]
    for f in figures:
        assert f in doc, f


def test_holes_report_without_the_runs_columns_is_the_same_report(example):
    """deep=False (the CLI without --machine or --sample) drops the runs' qid, score and
    rank columns once they are aligned, before the estimate: every number stays."""
    paths = [str(example / "qrels.txt"), [str(example / n) for n in ("bm25.run", "dense.run", "tuned.run")]]
    full, slim = holes_report(*paths, samples=30), holes_report(*paths, samples=30, deep=False)
    assert slim.to_dict(holes=True) == full.to_dict(holes=True)
    assert all(rh.aligned.run.score is None and rh.aligned.run.qid is None for rh in slim.runs.values())
    assert all(rh.aligned.run.score is not None for rh in full.runs.values())


@pytest.mark.parametrize("negative", ["nonrelevant", "unjudged"])
def test_holes_report_without_the_runs_columns_with_references(example, negative):
    """deep=False with reference runs and negative=unjudged (alignments copied): every run
    and reference slimmed, the report the same, the run files not hashed."""
    runs = [str(example / n) for n in ("bm25.run", "dense.run")]
    args = (str(example / "qrels.txt"), runs)
    kw = dict(samples=30, settings=Settings(complete=True, negative=negative), reference=[str(example / "tuned.run")])
    full, slim = holes_report(*args, **kw), holes_report(*args, deep=False, **kw)
    assert slim.to_dict(holes=True) == full.to_dict(holes=True)
    assert all(rh.aligned.run.score is None and rh.aligned.run.sha256 is None for rh in slim.runs.values())
    assert all(rh.aligned.run.sha256 is not None for rh in full.runs.values())
