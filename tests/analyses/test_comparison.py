"""judged compare: the JSON contract, the query set, seeding, corrections, regressions."""

import json

import numpy as np
import pytest

import judged
from judged.analyses import stats
from judged.cli import main
from judged.analyses.comparison import compare

QRELS = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}, "q3": {"d": 1, "e": 0}, "q4": {"f": 1}}
BASE = {"q1": {"a": 3.0, "b": 2.0}, "q2": {"c": 1.0}, "q3": {"d": 2.0, "e": 1.0}, "q4": {"f": 1.0}}
# new: loses q1 (an unjudged doc on top), misses q4 altogether
NEW = {"q1": {"zz": 9.0, "a": 3.0}, "q2": {"c": 1.0}, "q3": {"d": 2.0}}

CONTRACT = {"measure", "baseline", "run", "mean_baseline", "mean_run", "mean_delta", "ci95", "wins", "losses",
            "ties", "effect_size", "p_values", "p_adjusted", "queries"}


def test_missing_query_scores_zero_and_is_counted():
    c = compare(QRELS, {"base": BASE, "new": NEW}, ["RR"], permutations=1000)
    x = c.get("RR", "new")
    # RR per query: base 1,1,1,1; new 1/2, 1, 1, 0 (q4 missing scores 0 over the qrels' queries)
    assert x.mean_baseline == 1.0
    assert x.mean_run == pytest.approx((0.5 + 1 + 1 + 0) / 4)
    assert (x.test.wins, x.test.losses, x.test.ties) == (0, 2, 2)
    assert x.test.n == 4
    assert c.counts["new"]["missing_from_run"] == 1


def test_regression_shows_both_rankings_and_new_unjudged_documents():
    c = compare(QRELS, {"base": BASE, "new": NEW}, ["RR"], permutations=1000)
    worst = c.regressions[0]
    assert (worst.run, worst.qid, worst.delta) == ("new", "q4", -1.0)
    q1 = next(r for r in c.regressions if r.qid == "q1")
    assert q1.baseline_ranking == [(1, "a", 2), (2, "b", 1)]
    assert q1.run_ranking == [(1, "zz", None), (2, "a", 2)]
    assert q1.newly_unjudged == ["zz"]


def test_json_contract(example, capsys):
    runs = [str(example / f) for f in ("bm25.run", "dense.run", "tuned.run")]
    assert main(["compare", str(example / "qrels.txt"), *runs, "-m", "nDCG@10", "-m", "AP", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["comparisons"]) == 4
    for row in out["comparisons"]:
        assert set(row) == CONTRACT | {"methods"}  # shipped keys kept; methods: how each p was obtained
        assert set(row["methods"]) == set(stats.TESTS)
        assert set(row["p_values"]) == set(row["p_adjusted"]) == {"t-test", "wilcoxon", "sign", "randomization",
                                                                   "bootstrap"}
        assert row["baseline"] == runs[0] and row["run"] in runs[1:]  # named exactly as given
        assert row["wins"] + row["losses"] + row["ties"] == row["queries"] == 40
        assert row["ci95"][0] <= row["mean_delta"] <= row["ci95"][1]
        assert row["mean_delta"] == pytest.approx(row["mean_run"] - row["mean_baseline"])
    # Holm across the two runs compared on each measure
    for m in ("nDCG@10", "AP"):
        rows = [r for r in out["comparisons"] if r["measure"] == m]
        for test in stats.TESTS:
            p = np.array([r["p_values"][test] for r in rows])
            assert [r["p_adjusted"][test] for r in rows] == pytest.approx(stats.adjust(p, "holm").tolist())
    assert out["regressions"] and out["regressions"][0]["delta"] < 0


def test_identical_calls_print_identical_numbers_and_seed_matters(example, capsys):
    args = ["compare", str(example / "qrels.txt"), str(example / "bm25.run"), str(example / "tuned.run"),
            "--format", "json", "--permutations", "10000"]
    main(args)
    first = json.loads(capsys.readouterr().out)["comparisons"]
    main(args)
    assert json.loads(capsys.readouterr().out)["comparisons"] == first
    main(args + ["--seed", "1"])
    other = json.loads(capsys.readouterr().out)["comparisons"]
    assert other[0]["p_values"]["randomization"] != first[0]["p_values"]["randomization"]
    assert other[0]["p_values"]["t-test"] == first[0]["p_values"]["t-test"]


def test_draws_depend_on_the_data_not_on_names_or_order(example):
    q, b, d, t = (str(example / f) for f in ("qrels.txt", "bm25.run", "dense.run", "tuned.run"))
    one = compare(q, [b, d, t], permutations=2000).get("nDCG@10", d).test
    other = compare(q, {"base": b, "x": t, "y": d}, permutations=2000).get("nDCG@10", "y").test
    assert one == other


def test_correction_option(example, capsys):
    runs = [str(example / f) for f in ("bm25.run", "dense.run", "tuned.run")]
    main(["compare", str(example / "qrels.txt"), *runs, "--format", "json", "--correction", "bonferroni"])
    rows = json.loads(capsys.readouterr().out)["comparisons"]
    for r in rows:
        assert r["p_adjusted"]["sign"] == pytest.approx(min(1.0, 2 * r["p_values"]["sign"]))


def test_table_output_marks_significance(example, capsys):
    runs = [str(example / f) for f in ("bm25.run", "dense.run", "tuned.run")]
    assert main(["compare", str(example / "qrels.txt"), *runs, "-m", "AP", "--regressions", "1"]) == 0
    out = capsys.readouterr().out
    assert "▼" in out  # dense loses AP significantly (1/39 W/L)
    assert "1/39/0" in out and "5 unjudged documents newly in the run's top 10" in out


def test_errors_are_one_line(example, capsys):
    assert main(["compare", str(example / "qrels.txt"), str(example / "bm25.run")]) == 2
    assert main(["compare", str(example / "qrels.txt"), str(example / "bm25.run"), str(example / "dense.run"),
                 "--permutations", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("judged: error:") for line in err)


def test_progress_is_quiet_when_not_a_terminal(example, capsys):
    compare(str(example / "qrels.txt"), [str(example / "bm25.run"), str(example / "dense.run")], permutations=100)
    assert capsys.readouterr().err == ""


def test_progress_bar_on_a_terminal(example, monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    runs = [str(example / "bm25.run"), str(example / "dense.run")]
    compare(str(example / "qrels.txt"), runs, ["RR", "AP"], permutations=100)
    assert err.getvalue() == ""  # every phase shorter than a second (judged.core.progress.DELAY): no bar
    monkeypatch.setattr("judged.core.progress.DELAY", 0.0)  # every phase shown from its start
    compare(str(example / "qrels.txt"), runs, ["RR", "AP"], permutations=100)
    assert "paired tests" in err.getvalue() and "2/2" in err.getvalue()


def test_judged_compare_is_the_function():
    import judged
    import judged.analyses.comparison  # noqa: F401

    assert callable(judged.compare) and judged.compare.__name__ == "compare"
    assert judged.compare_records.__module__ == "judged.analyses.comparison"


def test_constant_difference_stays_valid_json():
    # every query gains exactly 0.5: sd = 0, so d_z is infinite; JSON carries null, not Infinity
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(5)}
    base = {q: {"b": 2.0, "a": 1.0} for q in qrels}  # RR 1/2
    new = {q: {"a": 2.0, "b": 1.0} for q in qrels}  # RR 1
    c = compare(qrels, {"base": base, "new": new}, ["RR"], permutations=200)
    row = json.loads(c.to_json())["comparisons"][0]
    assert row["effect_size"] is None and row["mean_delta"] == 0.5 and row["wins"] == 5
    assert "Infinity" not in c.to_json()


def test_identical_calls_in_new_processes_print_identical_bytes(example):
    """Whatever the interpreter's string-hash seed, the JSON is byte for byte the same: the
    holes' exact flip interval once summed queries in set order and moved in the last digit."""
    import os
    import subprocess
    import sys

    argv = [sys.executable, "-m", "judged", "compare", str(example / "qrels.txt"),
            *(str(example / f) for f in ("bm25.run", "dense.run", "tuned.run")),
            "-m", "nDCG@10", "-m", "DCG@10", "--permutations", "1000", "--format", "json"]
    outs = [subprocess.run(argv, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")]
    assert json.loads(outs[0])["holes"]["comparisons"][0]["exact"]
    assert outs[0] == outs[1]


def test_judged_at_k_is_described_never_tested(capsys):
    # Judged@k measures coverage, not quality (issue #14): no p-value, no mark, a stated reason
    c = compare(QRELS, {"base": BASE, "new": NEW}, ["RR", "Judged@2"], permutations=1000)
    x = c.get("Judged@2", "new")
    assert all(np.isnan(p) for p in x.test.p_values.values())
    assert all(np.isnan(p) for p in x.p_adjusted.values())
    assert x.mark == "" and "coverage" in x.test.methods["randomization"]
    assert x.test.mean_delta < 0 and x.test.losses >= 1  # still described
    d = x.to_dict()
    assert set(d["p_values"].values()) == {None} and set(d["p_adjusted"].values()) == {None}
    json.loads(c.to_json())  # strict JSON: no NaN


def test_undefined_p_is_printed_as_na_never_marked(capsys):
    # +0.25 RR on both of two queries: t and bootstrap are not defined, randomization p = 1/2
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    base = {"q1": {"x": 2.0, "a": 1.0}, "q2": {"y": 2.0, "b": 1.0}}
    new = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"b": 2.0, "y": 1.0}}
    c = compare(qrels, {"base": base, "new": new}, ["RR"], permutations=1000)
    x = c.get("RR", "new")
    assert x.test.p_values["randomization"] == 0.5 and np.isnan(x.test.p_values["bootstrap"])
    from judged.cli.compare_command import render

    render(c, all_tests=True)
    out = capsys.readouterr().out
    assert "n/a" in out and "▲" not in out.split("▲/▼")[0]


@pytest.mark.parametrize("measures,kept", [(["nDCG@3", "P@2"], 3), (["nDCG@3", "AP"], None), (["RR@2"], 2)])
def test_a_comparison_keeping_the_ranks_it_reads_says_the_same(measures, kept):
    # deep=False: each run keeps the ranks down to the deepest cutoff and k (here the first
    # cutoff), unless a measure reads every rank (AP); every number is the same
    rng = np.random.default_rng(5)
    docs = [f"d{i}" for i in range(20)]
    qrels = {f"q{q}": {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 8, replace=False)} for q in range(6)}
    runs = {name: {f"q{q}": {d: float(rng.random()) for d in rng.choice(docs, 12, replace=False)} for q in range(6)}
            for name in ("base", "new", "other")}
    whole = compare(qrels, runs, measures, permutations=500)
    slim = compare(qrels, runs, measures, permutations=500, deep=False)
    assert slim.to_json() == whole.to_json()
    depth = max(slim.result.runs["new"].aligned.ranked.count)
    assert depth == (12 if kept is None else kept) and max(whole.result.runs["new"].aligned.ranked.count) == 12
    # and keeps of each run only its docids (their hashes and qid blocks): no qid, score or rank
    run = slim.result.runs["new"].aligned.run
    assert run.qid is None and run.score is None and whole.result.runs["new"].aligned.run.score is not None



def test_a_comparison_without_digests_hashes_no_run_file(tmp_path):
    """digests=False (judged compare, which shows no run's hash): the run files are not
    hashed; every number is the same."""
    lines = {"base": ["q1 Q0 a 1 2.0 t", "q1 Q0 b 2 1.0 t", "q2 Q0 c 1 1.0 t"],
             "new": ["q1 Q0 b 1 2.0 t", "q1 Q0 a 2 1.0 t", "q2 Q0 d 1 1.0 t"]}
    paths = []
    for name, rows in lines.items():
        paths.append(tmp_path / name)
        paths[-1].write_text("\n".join(rows) + "\n")
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}
    hashed = compare(qrels, [str(p) for p in paths], ["nDCG@10", "AP"], permutations=200)
    bare = compare(qrels, [str(p) for p in paths], ["nDCG@10", "AP"], permutations=200, digests=False)
    assert bare.to_json() == hashed.to_json()
    assert [rr.aligned.run.sha256 for rr in bare.result.runs.values()] == [None, None]
    assert None not in [rr.aligned.run.sha256 for rr in hashed.result.runs.values()]


def test_run_numbers_use_each_measures_aggregate_as_judged_eval():
    # GMAP: the geometric mean of AP (each query floored at 1e-5), as trec_eval's gm_map;
    # NumRet: the sum. compare's numbers are judged eval's, not arithmetic means of the values.
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    base = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"y": 2.0, "b": 1.0}, "q3": {"c": 1.0}}  # AP 1, 1/2, 1
    new = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"z": 1.0}}  # AP 1, 1, 0
    c = compare(qrels, {"base": base, "new": new}, ["GMAP", "AP", "NumRet"], permutations=100)
    gmap, ap, numret = c.get("GMAP", "new"), c.get("AP", "new"), c.get("NumRet", "new")
    assert gmap.mean_baseline == pytest.approx(0.5 ** (1 / 3))
    assert gmap.mean_run == pytest.approx(1e-5 ** (1 / 3))  # one query at 0: the floor, not 0
    assert (ap.mean_baseline, ap.mean_run) == (pytest.approx(2.5 / 3), pytest.approx(2 / 3))
    assert (numret.mean_baseline, numret.mean_run) == (5.0, 3.0)
    result = judged.evaluate(qrels, {"base": base, "new": new}, ["GMAP", "NumRet"])
    assert gmap.mean_run == result.aggregate("new", "GMAP") and numret.mean_run == result.aggregate("new", "NumRet")


def test_gmap_is_tested_on_the_logs_and_its_delta_is_of_the_geometric_means():
    """GMAP's paired tests run on log(max(AP, 1e-5)) per query (trec_eval's gm_map floor), its
    Δ is GM(run) - GM(base), its CI the t interval of the mean log ratio r as GM(base) x
    (exp(r) - 1). By hand, four queries:
        base AP: 1, 5/6, 0 (floored 1e-5), 1/2    new AP: 1/2, 1, 1, 1/3"""
    from scipy import stats as sps

    qrels = {"q1": {"a": 1}, "q2": {"b": 1, "c": 1}, "q3": {"d": 1}, "q4": {"e": 1}}
    base = {"q1": {"a": 1.0}, "q2": {"b": 3.0, "x": 2.0, "c": 1.0}, "q3": {"x": 1.0}, "q4": {"y": 2.0, "e": 1.0}}
    new = {"q1": {"x": 2.0, "a": 1.0}, "q2": {"b": 2.0, "c": 1.0}, "q3": {"d": 1.0},
           "q4": {"y": 3.0, "z": 2.0, "e": 1.0}}
    ap_base, ap_new = np.array([1, 5 / 6, 1e-5, 1 / 2]), np.array([1 / 2, 1, 1, 1 / 3])
    logs = np.log(ap_new) - np.log(ap_base)
    gm_base, gm_new = np.exp(np.log(ap_base).mean()), np.exp(np.log(ap_new).mean())
    half = sps.t.ppf(0.975, 3) * logs.std(ddof=1) / 2
    c = compare(qrels, {"base": base, "new": new}, ["GMAP"], permutations=100)
    g = c.get("GMAP", "new")
    assert (g.mean_baseline, g.mean_run) == (pytest.approx(gm_base, rel=1e-12), pytest.approx(gm_new, rel=1e-12))
    assert g.test.mean_delta == pytest.approx(gm_new - gm_base, rel=1e-12)  # 0.7598 - 0.0672: not mean(AP) 0.1
    assert g.log_ratio["mean_delta"] == pytest.approx(logs.mean(), rel=1e-12)
    assert g.log_ratio["ci95"] == pytest.approx([logs.mean() - half, logs.mean() + half], rel=1e-12)
    assert g.test.ci95 == pytest.approx((gm_base * np.expm1(logs.mean() - half), gm_base * np.expm1(logs.mean() + half)),
                                        rel=1e-12)
    assert g.test.p_values["t-test"] == pytest.approx(sps.ttest_1samp(logs, 0).pvalue, rel=1e-9)
    assert g.test.p_values["t-test"] != pytest.approx(sps.ttest_1samp(ap_new - ap_base, 0).pvalue, rel=1e-3)
    assert (g.test.wins, g.test.losses) == (2, 2)
    d = json.loads(c.to_json())["comparisons"][0]
    assert d["paired_on"].startswith("paired tests, W/L/T and d_z on log(max(value, 1e-05))") and d["log_ratio"]
    assert "paired_on" not in compare(qrels, {"base": base, "new": new}, ["AP"], permutations=100).to_dict()[
        "comparisons"][0]


def test_compare_table_says_how_gmap_was_tested(example, capsys, monkeypatch):
    """The table's GMAP row: both geometric means and their difference (docs/examples: 0.6340,
    0.2997, -0.3343, where the arithmetic AP difference is -0.3218), and one line saying the
    tests ran on the logs."""
    monkeypatch.chdir(example)
    assert main(["compare", "qrels.txt", "bm25.run", "dense.run", "-m", "GMAP", "--permutations", "100",
                 "--regressions", "0", "--no-holes"]) == 0
    out = capsys.readouterr().out
    row = next(line.split() for line in out.splitlines() if line.strip().startswith("dense.run"))
    assert row[1:3] == ["0.2997", "-0.3343"] and "0.6340" in out
    assert sum("GMAP: paired tests, W/L/T and d_z on log(max(value, 1e-05))" in line for line in out.splitlines()) == 1


def test_trec_eval_forms_naming_several_measures_compare_each():
    # P.1,2 is trec_eval's P_1 and P_2: one comparison each, as judged eval gives one column each
    c = compare(QRELS, {"base": BASE, "new": NEW}, ["P.1,2", "ndcg_cut.3"], permutations=100)
    assert [x.measure for x in c.comparisons] == ["P_1", "P_2", "ndcg_cut.3"]
    assert c.get("P_1", "new").mean_run == judged.evaluate(QRELS, {"new": NEW}, ["P@1"], complete=True).aggregate(
        "new", "P@1")
