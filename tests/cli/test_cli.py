"""The command line's contracts: JSON keys, trec_eval lines, tsv/csv, the convention flags,
``judged explain`` and ``judged demo``."""

from __future__ import annotations

import csv
import hashlib
import io
import json

import pytest
import pytrec_eval

import judged
from judged.demo import worked_examples
from synth import make_collection, trec_qrels_text, trec_run_text, write_qrels, write_run


def eval_json(cli, *argv) -> dict:
    code, out, err = cli("eval", *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


# Query 1: c scores highest; a (the relevant one) ties with b. Query 2 has nothing
# relevant; query 3 is missing from the run; query 4 is only in the run.
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 0\n2 0 x 0\n3 0 y 1\n"
RUN = "1 Q0 b 1 0.5 t\n1 Q0 a 3 0.5 t\n1 Q0 c 2 0.9 t\n2 Q0 x 1 1 t\n4 Q0 z 1 1 t\n"


@pytest.fixture
def small(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.run").write_text(RUN)
    (tmp_path / "b.run").write_text(RUN.replace("0.9", "0.1"))
    return tmp_path


def test_json_contract(small, cli):
    measures = ["nDCG@10", "AP(rel=2)", "ndcg_cut.5", "nDCG(gain=exp)@10"]
    d = eval_json(cli, "qrels.txt", "runs/a.run", "./b.run", *[a for m in measures for a in ("-m", m)])
    # the core contract; the checks beyond the ranking score (issue 7) add their own top-level keys
    assert {"qrels", "measures", "runs"} <= set(d)
    assert set(d) - {"qrels", "measures", "runs"} <= {"answer_key", "warnings", "scale", "eligibility", "requirements",
                                                      "query_set"}  # issue 14: which queries the means are over
    assert d["qrels"] == {"path": "qrels.txt", "sha256": hashlib.sha256(QRELS.encode()).hexdigest(),
                          "queries": 3, "judgments": 5}
    assert list(d["measures"]) == measures  # as given, in order
    assert d["measures"]["nDCG(gain=exp)@10"] == (
        "nDCG@10 gain=exp discount=log2(rank+1) ideal=judged unjudged=zero "
        "ties=score-desc,docid-desc queries=run-and-qrels no-relevant=zero identical-ids=kept")
    assert d["measures"]["AP(rel=2)"].startswith("AP rel>=2 unjudged=zero ")
    assert list(d["runs"]) == ["runs/a.run", "./b.run"]  # exactly as given on the command line
    for entry in d["runs"].values():
        assert set(entry) == {"mean", "queries"}  # no per_query without --per-query
        assert list(entry["mean"]) == measures
        assert all(isinstance(v, float) for v in entry["mean"].values())
        assert entry["queries"] == {"evaluated": 2, "skipped": 0, "missing_from_run": 1, "only_in_run": 1,
                                    "no_relevant": 1}


def test_json_per_query(small, cli):
    d = eval_json(cli, "qrels.txt", "runs/a.run", "-m", "RR", "-m", "P@1", "--per-query")
    entry = d["runs"]["runs/a.run"]
    assert set(entry) == {"mean", "queries", "per_query"}
    assert entry["per_query"] == {"1": {"RR": 1 / 3, "P@1": 0.0}, "2": {"RR": 0.0, "P@1": 0.0}}


def test_default_measures_are_named(small, cli):
    d = eval_json(cli, "qrels.txt", "runs/a.run")
    assert list(d["measures"]) == ["nDCG@10", "Judged@10"]


@pytest.mark.parametrize("ties,rr", [("trec", 1 / 3), ("input", 1 / 2), ("rank", 1 / 3)])
def test_ties(small, cli, ties, rr):
    """Query 1 ranks a: trec = score desc, docid desc (c 0.9; b, a tie at 0.5 -> b first),
    input = file order (b, a, c), rank = rank column (b 1, c 2, a 3)."""
    d = eval_json(cli, "qrels.txt", "runs/a.run", "-m", "RR", "--per-query", "--ties", ties)
    assert d["runs"]["runs/a.run"]["per_query"]["1"]["RR"] == rr
    assert f"ties={judged.core.conventions.TIES[ties]} " in d["measures"]["RR"]


def test_ties_rank_orders_by_rank_not_file_order(tmp_path, cli):
    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r").write_text("1 Q0 b 2 9 t\n1 Q0 a 10 1 t\n1 Q0 c 1 5 t\n")  # ranks c, b, a (10 > 2 numerically)
    d = eval_json(cli, tmp_path / "q", tmp_path / "r", "-m", "RR", "--ties", "rank")
    assert d["runs"][str(tmp_path / "r")]["mean"]["RR"] == 1 / 3


@pytest.mark.parametrize("complete,no_relevant,mean,counts", [
    (False, "zero", (1 / 3 + 0) / 2, (2, 0)),
    (False, "skip", 1 / 3, (1, 1)),
    (True, "zero", (1 / 3 + 0 + 0) / 3, (3, 0)),
    (True, "skip", (1 / 3 + 0) / 2, (2, 1)),
])
def test_complete_and_no_relevant(small, cli, complete, no_relevant, mean, counts):
    args = ["qrels.txt", "runs/a.run", "-m", "RR", "--no-relevant", no_relevant] + (["--complete"] if complete else [])
    d = eval_json(cli, *args)
    entry = d["runs"]["runs/a.run"]
    assert entry["mean"]["RR"] == pytest.approx(mean, abs=1e-15)
    assert (entry["queries"]["evaluated"], entry["queries"]["skipped"]) == counts
    assert entry["queries"]["no_relevant"] == 1 and entry["queries"]["missing_from_run"] == 1
    queries = "qrels" if complete else "run-and-qrels"
    assert d["measures"]["RR"].endswith(f"queries={queries} no-relevant={no_relevant} identical-ids=kept")


def test_no_relevant_error(small, cli):
    code, out, err = cli("eval", "qrels.txt", "runs/a.run", "--no-relevant", "error")
    assert (code, out) == (2, "")
    assert err == ("judged: error: 1 query with nothing relevant in the qrels (first: '2'); "
                   "choose --no-relevant zero or skip\n")


# ---------------------------------------------------------------------------
# --format trec_eval against pytrec_eval, tsv and csv

TREC_NAMES = ["ndcg_cut_10", "ndcg", "map", "map_cut_10", "P_5", "recall_10", "recip_rank", "Rprec", "bpref",
              "success_1", "num_rel", "num_ret", "num_rel_ret"]
JUDGED_NAMES = ["nDCG@10", "nDCG", "AP", "AP@10", "P@5", "R@10", "RR", "Rprec", "Bpref", "Success@1", "NumRel",
                "NumRet", "NumRelRet"]


@pytest.fixture
def synthetic(tmp_path):
    c = make_collection(3, max_queries=10, max_docs=50, max_ranked=40)
    (tmp_path / "q").write_text(trec_qrels_text(c.qrels))
    (tmp_path / "r").write_text(trec_run_text(c.run))
    return c, tmp_path / "q", tmp_path / "r"


def test_trec_eval_format_equals_pytrec_eval(synthetic, cli):
    c, q, r = synthetic
    code, out, err = cli("eval", q, r, "--format", "trec_eval", *[a for m in JUDGED_NAMES for a in ("-m", m)])
    assert code == 0, err
    ev = pytrec_eval.RelevanceEvaluator(c.qrels, {"ndcg_cut.10", "ndcg", "map", "map_cut.10", "P.5", "recall.10",
                                                  "recip_rank", "Rprec", "bpref", "success.1", "num_rel", "num_ret",
                                                  "num_rel_ret"})
    expected = ev.evaluate(c.run)
    lines = [line.split("\t") for line in out.splitlines()]
    assert all(len(f) == 3 for f in lines)
    got = {(name.strip(), qid): value for name, qid, value in lines}
    counts = {"num_rel", "num_ret", "num_rel_ret"}
    for name in TREC_NAMES:
        for qid, vals in expected.items():
            want = str(int(vals[name])) if name in counts else f"{vals[name]:.4f}"
            assert got[(name, qid)] == want, (name, qid)
        agg = pytrec_eval.compute_aggregated_measure(name, [v[name] for v in expected.values()])
        assert got[(name, "all")] == (str(int(agg)) if name in counts else f"{agg:.4f}"), name
    assert got[("runid", "all")] == "synth"  # the run's tag (its last line's), as trec_eval; was the path
    assert got[("num_q", "all")] == str(len(expected))
    assert len(got) == len(lines)  # one line per (measure, query), trec_eval -q layout
    assert out.splitlines()[0].startswith("ndcg_cut_10           \t")  # %-22s, as trec_eval


@pytest.mark.parametrize("fmt,delim", [("tsv", "\t"), ("csv", ",")])
def test_delimited(synthetic, cli, fmt, delim):
    c, q, r = synthetic
    code, out, err = cli("eval", q, r, "-m", "AP", "-m", "P(rel=2)@5", "--per-query", "--format", fmt)
    assert code == 0, err
    table = list(csv.reader(io.StringIO(out), delimiter=delim))
    assert table[0] == ["run", "qid", "measure", "value"]
    res = judged.evaluate(q, [r], ["AP", "P(rel=2)@5"])
    rr = res.runs[str(r)]
    expected = [[str(r), qid, m, repr(float(rr.values[m][i]))] for i, qid in enumerate(rr.qids.tolist())
                for m in ("AP", "P(rel=2)@5")]
    expected += [[str(r), "all", m, repr(res.aggregate(str(r), m))] for m in ("AP", "P(rel=2)@5")]
    assert table[1:] == expected


def test_compare_csv_holds_the_json_comparisons(example, cli, tmp_path):
    """``judged compare --format csv``: one row per (measure, run), measure-major, with the
    numbers of ``--format json``; an undefined p-value is an empty cell."""
    argv = ["compare", example / "qrels.txt", example / "bm25.run", example / "dense.run", example / "tuned.run",
            "-m", "nDCG@10", "-m", "AP", "--permutations", "200", "--no-holes"]
    code, out, err = cli(*argv, "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    code, js, err = cli(*argv, "--format", "json")
    assert code == 0, err
    comparisons = json.loads(js)["comparisons"]
    assert [(r["measure"], r["run"]) for r in rows] == [(m, str(example / run)) for m in ("nDCG@10", "AP")
                                                         for run in ("dense.run", "tuned.run")]
    tests = ["t-test", "wilcoxon", "sign", "randomization", "bootstrap"]
    assert list(rows[0]) == ["measure", "baseline", "run", "mean_baseline", "mean_run", "mean_delta", "wins", "losses",
                             "ties", "effect_size", "queries", "ci95_lo", "ci95_hi", *(f"p_{t}" for t in tests),
                             *(f"p_adjusted_{t}" for t in tests)]
    for row, c in zip(rows, comparisons):
        assert row["baseline"] == c["baseline"] == str(example / "bm25.run")
        for key in ("mean_baseline", "mean_run", "mean_delta", "effect_size"):
            assert float(row[key]) == c[key], key
        assert (float(row["ci95_lo"]), float(row["ci95_hi"])) == tuple(c["ci95"])
        assert [int(row[k]) for k in ("wins", "losses", "ties", "queries")] == [c[k] for k in ("wins", "losses",
                                                                                                "ties", "queries")]
        for t in tests:
            assert (float(row[f"p_{t}"]) if row[f"p_{t}"] else None) == c["p_values"].get(t), t
            assert (float(row[f"p_adjusted_{t}"]) if row[f"p_adjusted_{t}"] else None) == c["p_adjusted"].get(t), t
    # docs/comparing.md's figures: dense against bm25 on nDCG@10 over the 40 queries
    dense = rows[0]
    assert (round(float(dense["mean_run"]), 4), round(float(dense["mean_delta"]), 4)) == (0.5145, -0.2166)
    assert (round(float(dense["ci95_lo"]), 4), round(float(dense["ci95_hi"]), 4)) == (-0.2833, -0.1499)
    assert (dense["wins"], dense["losses"], dense["ties"], dense["queries"]) == ("6", "34", "0", "40")
    # a run that loses the same amount on every query: the t-test and the bootstrap are not defined
    same = {f"q{i}": {"r": 1, "n": 0} for i in range(6)}
    q = write_qrels(tmp_path / "qrels.txt", same)
    a = write_run(tmp_path / "a.run", {qid: {"r": 2.0, "n": 1.0} for qid in same})
    b = write_run(tmp_path / "b.run", {qid: {"n": 2.0, "r": 1.0} for qid in same})
    code, out, err = cli("compare", q, a, b, "-m", "RR", "--no-holes", "--format", "csv")
    assert code == 0, err
    (row,) = csv.DictReader(io.StringIO(out))
    assert (row["mean_delta"], row["losses"], row["p_t-test"], row["p_bootstrap"]) == ("-0.5", "6", "", "")
    assert float(row["p_sign"]) == 2 * 0.5 ** 6  # exact binomial, two-sided


def test_table_names_conventions_and_counts(small, cli):
    code, out, err = cli("eval", "qrels.txt", "runs/a.run", "-m", "nDCG@10")
    assert code == 0, err
    assert "a.run: 2 evaluated, 0 skipped, 1 missing from the run, 1 only in the run, 1 with nothing relevant" in out
    assert ("nDCG@10 gain=linear discount=log2(rank+1) ideal=judged unjudged=zero ties=score-desc,docid-desc "
            "queries=run-and-qrels no-relevant=zero identical-ids=kept") in out


def test_bad_measure_is_one_line(small, cli):
    code, out, err = cli("eval", "qrels.txt", "runs/a.run", "-m", "nDCG(gain=cubic)@10")
    assert code == 2 and err.startswith("judged: error: unknown gain 'cubic'") and err.count("\n") == 1


# ---------------------------------------------------------------------------
# explain and demo


@pytest.fixture
def worked(tmp_path):
    qrels, run = worked_examples()
    (tmp_path / "q").write_text(trec_qrels_text(qrels))
    (tmp_path / "r").write_text(trec_run_text(run))
    return tmp_path / "q", tmp_path / "r"


def test_explain_works_the_seed_example(worked, cli):
    code, out, err = cli("explain", *worked, "--query", "graded")
    assert code == 0, err
    for header in ("rank", "docid", "grade", "gain", "discount", "discounted gain", "running DCG"):
        assert header in out
    # rank 2: grade 2, discount 1/log2(3) = 0.631, discounted 1.262, running 4.262
    assert _row(out, "d2") == ["2", "d2", "2", "2.000", "0.631", "1.262", "4.262"]
    assert _row(out, "d6") == ["6", "d6", "2", "2.000", "0.356", "0.712", "6.861"]
    assert "ideal grade sequence: 3, 3, 2, 2, 1, 0" in out
    assert "IDCG = 7.141" in out and "nDCG = 6.861 / 7.141 = 0.961" in out
    assert "warning" not in out


def _row(out: str, docid: str) -> list:
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) > 1 and cells[1] == docid:
            return cells
    return []


def test_explain_exponential_gain(worked, cli):
    code, out, err = cli("explain", *worked, "--query", "three", "-m", "nDCG(gain=exp)@10")
    assert _row(out, "p1") == ["1", "p1", "2", "3.000", "1.000", "3.000", "3.000"]
    assert "DCG = 3.500" in out and "IDCG = 3.631" in out and "= 0.964" in out


@pytest.mark.parametrize("rank,value", [(1, "1.000"), (2, "0.631"), (3, "0.500"), (10, "0.289")])
def test_explain_warns_about_one_relevant_document(worked, cli, rank, value):
    code, out, err = cli("explain", *worked, "--query", f"single-at-{rank}")
    assert code == 0, err
    assert f"IDCG = 1.000\nnDCG = {value} / 1.000 = {value}" in out
    assert "warning: one relevant document: nDCG@10 here is 1/log2(1 + rank of the hit)" in out


def test_explain_unknown_query(worked, cli):
    code, out, err = cli("explain", *worked, "--query", "nope")
    assert code == 2 and err.startswith("judged: error: query 'nope' is not in the qrels")


def test_demo_prints_the_seed_numbers(cli):
    code, out, err = cli("demo")
    assert code == 0, err
    assert "nDCG = 6.861 / 7.141 = 0.961" in out
    assert "= 0.949" in out
    assert "DCG = 3.500" in out and "IDCG = 3.631" in out and "= 0.964" in out
    single = {cells[0]: cells[1] for cells in (
        [c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines()) if cells and cells[0].startswith("single-at-")}
    assert single == {"single-at-1": "1.000", "single-at-2": "0.631", "single-at-3": "0.500",
                      "single-at-10": "0.289", "single-at-11": "0.000"}


def test_api_function_survives_the_cli_importing_its_module(small, cli):
    """The CLI imports the engine module; judged.evaluate stays the function."""
    import types

    import judged.core.evaluation  # noqa: F401  (what the CLI does)

    assert cli("eval", "qrels.txt", "runs/a.run")[0] == 0
    assert isinstance(judged.evaluate, types.FunctionType)
    assert judged.evaluate("qrels.txt", ["runs/a.run"], ["RR"]).runs["runs/a.run"].values["RR"][0] == 1 / 3


@pytest.mark.parametrize("second_doc,warning", [
    ("b", None), ("hole", "1 of the top 3 documents is unjudged and counted as not relevant (Judged@3 = 0.67)")])
def test_explain_counts_only_this_querys_holes(tmp_path, cli, second_doc, warning):
    """Query 1 retrieves 3 documents; query 2's unjudged ones must not leak into its warning."""
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n1 0 c 0\n2 0 w 1\n")
    (tmp_path / "r").write_text(f"1 Q0 a 1 3 t\n1 Q0 {second_doc} 2 2 t\n1 Q0 c 3 1 t\n"
                                "2 Q0 x 1 3 t\n2 Q0 y 2 2 t\n2 Q0 z 3 1 t\n")
    code, out, err = cli("explain", tmp_path / "q", tmp_path / "r", "--query", "1")
    assert code == 0, err
    unjudged = [line for line in out.splitlines() if "unjudged and counted" in line]
    assert unjudged == ([f"warning: {warning}; judging them could change this score"] if warning else [])


@pytest.mark.parametrize("command, queries", [("eval", 2), ("compare", 3)])  # compare: every qrels query
def test_save_says_what_it_wrote_on_stderr(small, cli, command, queries):
    """Issue 34: `compare --save` (and eval's) wrote the record without a word. One line on
    stderr names it; stdout keeps the command's own output (JSON here, still parseable)."""
    code, out, err = cli(command, "qrels.txt", "runs/a.run", "b.run", "-m", "AP", "-m", "RR", "--save", "rec.json",
                         "--format", "json")
    assert code == 0, err
    json.loads(out)
    assert (f"saved the evaluation record of 2 runs x 2 measures over {queries} queries (per-query values, conventions, "
            "hashes) to rec.json; `judged compare-records` compares two") in err.splitlines()
    assert json.loads((small / "rec.json").read_text())["format"]


def test_trec_eval_names_every_level_as_trec_eval_does(synthetic, cli):
    """Issue 34: -m Rprec_mult.0.20,1.00 --format trec_eval printed the 1.00 level as Rprec
    (judged's Rprec is trec_eval's Rprec_mult at 1.00); trec_eval names each level by its
    value, append_double's %3.2f (meas_init.c): Rprec_mult_1.00."""
    c, q, r = synthetic
    code, out, err = cli("eval", q, r, "-m", "Rprec_mult.0.20,1.00", "-m", "iprec_at_recall_0.1", "-m", "P_5",
                         "--format", "trec_eval")
    assert code == 0, err
    names = {line.split("\t")[0].strip() for line in out.splitlines()}
    assert names == {"Rprec_mult_0.20", "Rprec_mult_1.00", "iprec_at_recall_0.10", "P_5", "runid", "num_q"}
    theirs = pytrec_eval.RelevanceEvaluator(c.qrels, {"Rprec_mult.0.2,1"}).evaluate(c.run)
    got = {(n.strip(), qid): v for n, qid, v in (line.split("\t") for line in out.splitlines())}
    assert all(got[("Rprec_mult_1.00", qid)] == f"{v['Rprec_mult_1.00']:.4f}" for qid, v in theirs.items())


@pytest.mark.parametrize("family", ["ndcg_cut", "Rprec_mult", "map_cut", "recall", "relative_P", "iprec_at_recall"])
def test_a_trec_eval_family_alone_is_its_default_cutoffs_or_levels(synthetic, cli, family):
    """trec_eval -m ndcg_cut gives ndcg_cut_5 ... ndcg_cut_1000, -m Rprec_mult its levels 0.20 ...
    2.00 (as pytrec_eval). judged read ndcg_cut as nDCG of the whole ranking (printed as ndcg)
    and Rprec_mult as Rprec (one level; the issue 34 naming defect again), and refused the
    others. A command taking one measure says how many it names."""
    c, q, r = synthetic
    code, out, err = cli("eval", q, r, "-m", family, "--format", "trec_eval")
    assert code == 0, err
    got = {(n.strip(), qid): v for n, qid, v in (line.split("\t") for line in out.splitlines())}
    theirs = pytrec_eval.RelevanceEvaluator(c.qrels, {family}).evaluate(c.run)
    keys = set(next(iter(theirs.values())))
    assert {n for n, _ in got} - {"runid", "num_q"} == keys and len(keys) > 5
    if family == "iprec_at_recall":  # trec_eval 10's levels (lround(x * R)), not pytrec_eval's trec_eval 9's
        levels = ",".join(sorted(key.rsplit("_", 1)[1] for key in keys))
        assert cli("eval", q, r, "-m", f"{family}.{levels}", "--format", "trec_eval")[1] == out
    else:
        assert all(got[(key, qid)] == f"{v[key]:.4f}" for qid, v in theirs.items() for key in keys)
    code, _, err = cli("holes", q, r, "-m", family)
    assert code == 2 and err.count("\n") == 1 and f"'{family}' names {len(keys)} measures" in err


def test_trec_eval_runid_is_the_tag_of_the_last_line(tmp_path, cli):
    """Issue 34: the runid line showed the path; trec_eval shows the run's tag, from its last
    data line (get_trec_results.c), for a gzip run too; a run read from no TREC file keeps
    its name."""
    import gzip

    (tmp_path / "q").write_text("1 0 a 1\n2 0 b 1\n")
    text = "1 Q0 a 1 2.0 first\n2 Q0 b 1 1.0 last-tag\n# a comment\n\n"
    (tmp_path / "r.txt").write_text(text)
    (tmp_path / "r.gz").write_bytes(gzip.compress(text.encode()))
    for run in ("r.txt", "r.gz"):
        code, out, err = cli("eval", tmp_path / "q", tmp_path / run, "-m", "P_5", "--format", "trec_eval")
        assert code == 0 and "runid                 \tall\tlast-tag" in out.splitlines(), err
    (tmp_path / "r.json").write_text('{"1": {"a": 2.0}}')
    code, out, err = cli("eval", tmp_path / "q", tmp_path / "r.json", "-m", "P_5", "--format", "trec_eval")
    assert f"runid                 \tall\t{tmp_path / 'r.json'}" in out.splitlines()


def test_all_trec_is_trec_eval_nickname(synthetic, cli):
    """Issue 34: -m all_trec was refused. It gives trec_eval's measures at their default
    cutoffs and levels, in trec_eval's order (pytrec_eval's all_trec keys, the string
    relstring left out; rbp, rbp_resid and unj, which only trec_eval 10 has, said on
    stderr), num_q once."""
    c, q, r = synthetic
    code, out, err = cli("eval", q, r, "-m", "all_trec", "--format", "trec_eval")
    assert code == 0 and "rbp, rbp_resid and unj" in err
    names = [line.split("\t")[0].strip() for line in out.splitlines() if line.split("\t")[1] == "all"]
    theirs = pytrec_eval.RelevanceEvaluator(c.qrels, {"all_trec"}).evaluate(c.run)
    assert set(names) == (set(next(iter(theirs.values()))) - {"relstring"}) | {"num_q"}
    assert len(names) == len(set(names)) and names[:7] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret",
                                                          "map", "gm_map"]
    got = {(n.strip(), qid): v for n, qid, v in (line.split("\t") for line in out.splitlines())}
    for key in ("map", "P_10", "ndcg_cut_10", "recall_100", "bpref", "set_F", "Rprec_mult_0.40", "utility"):
        assert all(got[(key, qid)] == f"{v[key]:.4f}" for qid, v in theirs.items()), key
    code, out, err = cli("eval", q, r, "-m", "official", "--format", "trec_eval")
    assert code == 0 and err == "" and "iprec_at_recall_0.50" in out and "set_F" not in out
