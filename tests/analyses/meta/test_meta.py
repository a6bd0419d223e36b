"""Meta-evaluation: paired tests, discriminative power, tau / tau_AP, preference agreement,
the Wang et al. discount simulation and the ``judged meta`` commands."""

import json
import math
import os

import numpy as np
import pytest
from scipy.stats import binomtest, kendalltau

from judged.cli import main
from judged.core.errors import JudgedError, ParseError
from judged.analyses.meta import (bootstrap_test, discriminative_power, kendall_tau, preference_agreement,
                         randomization_pvalues, randomization_test, ranking_stability, read_preferences,
                         simulate_discount, synthetic_collection, tau_ap, write_collection)
from judged.analyses.meta.power import power_from_scores
from judged.analyses.meta.scores import ScoreMatrix

# ---------------------------------------------------------------------------
# the paired randomization test


def test_identical_runs_give_p_one():
    # every sign flip of all-zero differences reaches |sum| = 0: b = m, p = (m+1)/(m+1)
    assert randomization_test(np.zeros(30), 500, 1) == 1.0
    assert bootstrap_test(np.zeros(30), 500, 1) == 1.0


def test_constant_difference_is_as_significant_as_the_draws_allow():
    # +0.1 on every one of 50 queries: only the all-plus (or all-minus) flip reaches the observed
    # sum, chance 2 / 2^50, so no draw does and p = 1 / (m + 1)
    assert randomization_test(np.full(50, 0.1), 999, 3) == pytest.approx(1 / 1000)
    # the bootstrap has no null distribution (the mean-shifted differences are all 0): not defined,
    # where it used to give 1 / (m + 1) and count as significant in meta power (issue #14)
    assert np.isnan(bootstrap_test(np.full(50, 0.1), 999, 3))


def test_meta_power_bootstrap_does_not_count_constant_differences():
    from judged.analyses.meta.power import power_from_scores
    from judged.analyses.meta.scores import ScoreMatrix

    base = np.linspace(0.1, 0.8, 20)
    noisy = np.clip(base + np.random.default_rng(3).normal(0.2, 0.05, 20), 0, 1)
    scores = ScoreMatrix(["a", "b", "c"], [f"q{i}" for i in range(20)], {"m": np.vstack([base, base + 0.1, noisy])},
                         {"m": "m"})
    res = power_from_scores(scores, test="bootstrap", samples=999)
    # a-b: +0.1 on every query up to float rounding; b-c and a-c: real, varying differences
    assert np.isnan(res.pvalues["m"][0]) and res.significant("m") == 2
    row = res.summary()[0]
    assert row["undefined"] == 1 and row["significant"] == 2


def test_exact_sign_flip_distribution_on_two_queries():
    # diffs (1, 1): of the four sign patterns, two reach |sum| = 2, so p -> 1/2 as draws grow
    p = randomization_test(np.array([1.0, 1.0]), 20000, 0)
    assert p == pytest.approx(0.5, abs=0.02)


def test_randomization_is_seeded_and_two_sided():
    rng = np.random.default_rng(7)
    d = rng.normal(0.05, 0.2, size=40)
    assert randomization_test(d, 1000, 11) == randomization_test(d, 1000, 11)
    assert randomization_test(d, 1000, 11) == randomization_test(-d, 1000, 11)


def test_vectorised_rows_equal_single_calls():
    rng = np.random.default_rng(1)
    diffs = rng.normal(0.02, 0.3, size=(300, 25))  # more rows than one block
    many = randomization_pvalues(diffs, 400, 5)
    assert many[0] == randomization_test(diffs[0], 400, 5)
    assert many[299] == randomization_test(diffs[299], 400, 5)


def test_randomization_agrees_with_scipy_permutation_test():
    from scipy.stats import permutation_test

    rng = np.random.default_rng(3)
    d = rng.normal(0.08, 0.3, size=30)
    ours = randomization_test(d, 20000, 0)
    ref = permutation_test((d,), lambda x: np.sum(x), permutation_type="samples", n_resamples=20000,
                           alternative="two-sided", random_state=0).pvalue
    assert ours == pytest.approx(ref, abs=0.01)


def test_empty_or_bad_input_is_refused():
    with pytest.raises(JudgedError):
        randomization_test(np.array([]), 10, 0)
    with pytest.raises(JudgedError):
        randomization_test(np.array([np.nan, 1.0]), 10, 0)
    with pytest.raises(JudgedError):
        randomization_test(np.ones(3), 0, 0)

# ---------------------------------------------------------------------------
# discriminative power on constructed cases


def _matrix(rows):
    rows = np.asarray(rows, dtype=float)
    names = [f"r{k}" for k in range(len(rows))]
    return ScoreMatrix(names, [f"q{i}" for i in range(rows.shape[1])], {"M": rows}, {"M": "M"})


def test_power_identical_runs_no_pair_significant():
    base = np.random.default_rng(0).random(40)
    res = power_from_scores(_matrix([base, base, base]), samples=500)
    assert res.significant("M") == 0 and res.power("M") == 0.0
    assert (res.pvalues["M"] == 1.0).all()


def test_power_constant_gaps_every_pair_significant():
    # four runs 0.1 apart on every query: all 6 pairs significant, ASL = 1/(m+1)
    base = np.random.default_rng(0).random(40) * 0.5
    res = power_from_scores(_matrix([base + 0.1 * k for k in range(4)]), samples=999)
    assert res.significant("M") == 6 and res.power("M") == 1.0
    assert np.allclose(res.asl_curve("M"), 1 / 1000)


def test_power_end_to_end_counts_pairs_and_measures():
    qrels = {f"q{i}": {"rel": 1, "other": 0} for i in range(12)}
    top = {q: {"rel": 2.0, "other": 1.0} for q in qrels}  # relevant at rank 1 everywhere
    bottom = {q: {"rel": 1.0, "other": 2.0} for q in qrels}  # relevant at rank 2 everywhere
    res = discriminative_power(qrels, {"top": top, "top-too": top, "bottom": bottom}, ["RR", "P@1"], samples=999)
    assert res.pairs == [("top", "top-too"), ("top", "bottom"), ("top-too", "bottom")]
    for m in ("RR", "P@1"):
        assert res.significant(m) == 2  # top vs bottom twice; the identical pair never
    assert res.differences["RR"].tolist() == [0.0, 0.5, 0.5]
    d = res.to_dict()
    assert d["measures"]["RR"]["significant"] == 2 and d["test"]["samples"] == 999


def test_power_refuses_one_run():
    with pytest.raises(JudgedError):
        power_from_scores(_matrix([[0.1, 0.2]]))

# ---------------------------------------------------------------------------
# Kendall's tau and tau_AP


@pytest.mark.parametrize("seed", range(5))
def test_kendall_tau_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, size=15).astype(float)  # with ties: tau-b
    y = x + rng.normal(0, 2, size=15)
    assert kendall_tau(x, y) == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)


def test_kendall_taus_is_each_rows_tau():
    # rows with their own tie tolerance (scores within 1e-12 x max(1, |largest|) tied), a
    # constant row (NaN), a row with a NaN, a large-scale row; the per-pair loop written out
    from judged.analyses.meta.stability import kendall_taus

    rng = np.random.default_rng(3)
    y = rng.integers(0, 5, size=9).astype(float)
    xs = np.vstack([rng.normal(size=9), np.full(9, 0.5), y + 1e-13, y * 1e6 + rng.integers(0, 2, 9) * 1e-7,
                    np.where(np.arange(9) == 4, np.nan, y), rng.integers(0, 3, 9).astype(float)])
    got = kendall_taus(xs, y)

    def by_pairs(x):
        def sign(a, b, v):
            tol = 1e-12 * max(1.0, np.nanmax(np.abs(v)))
            return 1 if a - b > tol else (-1 if a - b < -tol else 0)
        pairs = [(i, j) for i in range(9) for j in range(i + 1, 9)]
        sx = [sign(x[i], x[j], x) for i, j in pairs]
        sy = [sign(y[i], y[j], y) for i, j in pairs]
        nx, ny = sum(s != 0 for s in sx), sum(s != 0 for s in sy)
        return sum(a * b for a, b in zip(sx, sy)) / np.sqrt(nx * ny) if nx * ny else float("nan")

    want = [by_pairs(x) for x in xs]
    assert np.array_equal(got, want, equal_nan=True)
    assert np.isnan(got[1]) and got[2] == 1.0 and got[0] != got[5]
    assert [kendall_tau(x, y) for x in xs] == pytest.approx(list(got), nan_ok=True)


def test_tau_ap_hand_computed():
    # reference A B C D. Ranking B A C D: C(2) = 0 (B above A is wrong), C(3) = 2, C(4) = 3
    # tau_AP = 2/3 * (0/1 + 2/2 + 3/3) - 1 = 1/3, while Kendall's tau = (5 - 1)/6 = 2/3
    assert tau_ap("ABCD", "BACD") == pytest.approx(1 / 3)
    assert kendall_tau([4, 3, 2, 1], [3, 4, 2, 1]) == pytest.approx(2 / 3)
    # the same single swap at the bottom: C = 1, 2, 2 -> 2/3 * (1 + 1 + 2/3) - 1 = 7/9
    assert tau_ap("ABCD", "ABDC") == pytest.approx(7 / 9)
    assert tau_ap("ABCD", "ABCD") == 1.0 and tau_ap("ABCD", "DCBA") == -1.0


def test_tau_ap_refuses_different_items():
    with pytest.raises(JudgedError):
        tau_ap("ABC", "ABD")


def test_stability_two_measures_and_swaps():
    # run x finds the relevant document at rank 1 on q1 only; run y at rank 2 on both queries
    qrels = {"q1": {"r": 1, "n1": 0, "n2": 0}, "q2": {"r": 1, "n1": 0, "n2": 0}}
    x = {"q1": {"r": 3.0, "n1": 2.0, "n2": 1.0}, "q2": {"n1": 3.0, "n2": 2.0, "r": 1.0}}
    y = {"q1": {"n1": 3.0, "r": 2.0, "n2": 1.0}, "q2": {"n1": 3.0, "r": 2.0, "n2": 1.0}}
    # RR: x = (1 + 1/3)/2 = 0.667 > y = 0.5; P@1: x = 0.5 > y = 0; Success@2 (hits in top 2): x 0.5 < y 1.0
    res = ranking_stability(qrels, {"x": x, "y": y}, "RR", versus_measure="Success@2")
    assert res.order_a == ["x", "y"] and res.order_b == ["y", "x"]
    assert res.tau == -1.0 and res.swap_rate == 1.0
    assert res.swaps()[0]["above_under_a"] == "x"
    same = ranking_stability(qrels, {"x": x, "y": y}, "RR", versus_measure="P@1")
    assert same.tau == 1.0 and same.swaps() == []


def test_stability_two_qrels_versions():
    coll = synthetic_collection(systems=6, queries=20, preferences=10, seed=2)
    res = ranking_stability(coll.qrels_pooled, coll.runs, "nDCG@10", versus_qrels=coll.qrels)
    assert -1 <= res.tau <= 1 and len(res.runs) == 6 and res.runs[0] == "lex-1"
    lex = np.array([n.startswith("lex") for n in res.runs])
    change = res.scores_b - res.scores_a
    # a lexical run's top 10 lies inside the lexical top-20 pool: its DCG@10 is the same under both
    # qrels, while the complete qrels can only raise the ideal DCG, so its nDCG@10 cannot rise
    assert (change[lex] <= 1e-12).all()
    # the dense runs' holes turn into judged relevant documents: they gain on the lexical runs
    assert change[~lex].mean() > change[lex].mean()


# ---------------------------------------------------------------------------
# agreement with preferences


AGREE_QRELS = {q: {"rel": 1, "x": 0, "y": 0} for q in ("q1", "q2", "q3", "q4")}
FIRST = {"rel": 3.0, "x": 2.0, "y": 1.0}  # relevant at rank 1
SECOND = {"x": 3.0, "rel": 2.0, "y": 1.0}  # relevant at rank 2
NOTHING = {"x": 3.0, "y": 2.0}  # nothing relevant retrieved


def _agree_runs():
    good = {"q1": FIRST, "q2": FIRST, "q3": FIRST, "q4": FIRST}
    mid = {"q1": SECOND, "q2": SECOND, "q3": NOTHING, "q4": FIRST}
    return {"good": good, "mid": mid}


def test_agreement_known_counts(tmp_path):
    prefs = tmp_path / "prefs.txt"
    prefs.write_text("# comment\nqid run_a run_b preferred\n"
                     "q1 good mid a\n"  # both relevant, RR 1 vs 1/2: agrees
                     "q2 mid good a\n"  # both relevant: disagrees
                     "q3 good mid a\n"  # mid found nothing: agrees
                     "q4 good mid b\n"  # identical rankings: a tie for every measure
                     "q1 good mid none\n")
    res = preference_agreement(str(prefs), AGREE_QRELS, _agree_runs(), ["RR", "P@10"])
    rr = res.tally("RR")
    assert (rr.agree, rr.disagree, rr.ties) == (2, 1, 1)
    assert rr.share == pytest.approx(2 / 3)
    assert rr.pvalue() == pytest.approx(binomtest(2, 3, 0.5).pvalue)
    assert res.tally("RR", "both-relevant").agree == 1 and res.tally("RR", "both-relevant").decided == 2
    assert res.tally("RR", "one-side-nothing").agree == 1 and res.tally("RR", "one-side-nothing").decided == 1
    # P@10 gives 0.1 to both sides when both found the one relevant document: only q3 is decided
    p10 = res.tally("P@10")
    assert (p10.agree, p10.disagree, p10.ties) == (1, 0, 3)
    assert res.no_preference == 1 and res.preferences == 5
    assert res.category_pairs == {"all": 4, "one-side-nothing": 1, "both-relevant": 3, "neither-relevant": 0}


def test_cli_agreement_json_known_counts(tmp_path, capsys):
    """``judged meta agreement --format json`` on test_agreement_known_counts' example, from
    files: the tallies per measure and category, the counts of preferences, and a
    category no preference fell in as null share and p (not NaN, which JSON lacks)."""
    from synth import write_qrels, write_run

    qrels = write_qrels(tmp_path / "qrels.txt", AGREE_QRELS)
    runs = [write_run(tmp_path / f"{name}.run", run) for name, run in _agree_runs().items()]
    prefs = tmp_path / "prefs.txt"
    prefs.write_text("q1 good mid a\nq2 mid good a\nq3 good mid a\nq4 good mid b\nq1 good mid none\n")
    assert main(["meta", "agreement", str(prefs), qrels, *runs, "-m", "RR", "-m", "P@10", "--format",
                 "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["preferences"], out["no_preference"], out["skipped"], out["depth"]) == (5, 1, 0, 10)
    assert out["category_pairs"] == {"all": 4, "one-side-nothing": 1, "both-relevant": 3, "neither-relevant": 0}
    assert list(out["measures"]) == ["RR", "P@10"]
    rr = out["measures"]["RR"]
    assert rr["convention"].startswith("RR rel>=1 ")
    assert rr["all"] == {"agree": 2, "disagree": 1, "ties": 1, "decided": 3, "share": 2 / 3,
                         "binomial_p": binomtest(2, 3, 0.5).pvalue}
    assert (rr["both-relevant"]["agree"], rr["both-relevant"]["decided"]) == (1, 2)
    assert (rr["one-side-nothing"]["agree"], rr["one-side-nothing"]["decided"]) == (1, 1)
    assert rr["neither-relevant"] == {"agree": 0, "disagree": 0, "ties": 0, "decided": 0, "share": None,
                                      "binomial_p": None}
    p10 = out["measures"]["P@10"]["all"]
    assert (p10["agree"], p10["disagree"], p10["ties"]) == (1, 0, 3)
    assert out["query_set"]["rule"] == "qrels"  # runs compared with each other: every qrels query


def test_preferences_name_runs_by_file_name(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, run in _agree_runs().items():
        (runs / f"{name}.run").write_text("".join(f"{q} Q0 {d} 0 {s} {name}\n" for q, docs in run.items()
                                                  for d, s in docs.items()))
    res = preference_agreement([("q1", "good", "mid", "a")], AGREE_QRELS, [str(runs / "good.run"),
                                                                           str(runs / "mid.run")], ["RR"])
    assert res.tally("RR").agree == 1


def test_preference_file_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 good mid maybe\n")
    with pytest.raises(ParseError, match="bad.txt:1: preferred must be a, b or none"):
        read_preferences(str(bad))
    with pytest.raises(JudgedError, match="unknown run 'nobody'"):
        preference_agreement([("q1", "good", "nobody", "a")], AGREE_QRELS, _agree_runs(), ["RR"])
    # a file names itself and the line, as every other reader's error: "prefs.txt:2: ..."
    # (it said "preferences line 2: ...", no file)
    prefs = tmp_path / "prefs.txt"
    prefs.write_text("q1 good mid a\nq1 good nobody a\n")
    with pytest.raises(ParseError, match=r"prefs.txt:2: unknown run 'nobody' \(runs: "):
        preference_agreement(str(prefs), AGREE_QRELS, _agree_runs(), ["RR"])

# ---------------------------------------------------------------------------
# Wang et al.: the discount simulation


def test_discount_simulation_reproduces_wang_et_al():
    sim = simulate_discount(sizes=[100, 3000], discounts=["log2", "power:2"], trials=120, seed=0)
    log2, fast = 0, 1
    # the log discount: both rankers' nDCG rise toward 1 as n grows, and the better one wins more often
    assert sim.mean_better[log2, 1] > sim.mean_better[log2, 0]
    assert sim.mean_worse[log2, 1] > sim.mean_worse[log2, 0]
    assert sim.separation[log2, 1] > 0.95 and sim.separation[log2, 1] > sim.separation[log2, 0]
    # a discount summable over ranks (1/r^2, faster than the critical 1/r) stays near a coin toss
    assert sim.separation[fast, 1] < 0.8
    again = simulate_discount(sizes=[100, 3000], discounts=["log2", "power:2"], trials=120, seed=0)
    assert np.array_equal(again.separation, sim.separation)


def test_discount_parse_errors():
    with pytest.raises(JudgedError):
        simulate_discount(sizes=[10], discounts=["cosine"], trials=2)
    with pytest.raises(JudgedError):
        simulate_discount(sizes=[1], trials=2)

# ---------------------------------------------------------------------------
# the CLI on the synthetic collection


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    out = tmp_path_factory.mktemp("meta")
    return write_collection(synthetic_collection(systems=5, queries=20, preferences=60, seed=4), str(out))


def test_synthetic_writes_over_no_file_of_the_users(tmp_path, capsys):
    """``judged meta synthetic .`` in a project replaced its qrels.txt with the synthetic one:
    a file there that is not this collection's is refused (nothing written); running it again
    into its own folder, as docs/meta-evaluation.md does, still works."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "qrels.txt").write_text("q1 0 d1 2\n")
    assert main(["meta", "synthetic", str(tmp_path / "mine"), "--systems", "2", "--queries", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("judged: error: ") and "qrels.txt" in err and err.count("\n") == 1
    assert (tmp_path / "mine" / "qrels.txt").read_text() == "q1 0 d1 2\n"
    assert sorted(os.listdir(tmp_path / "mine")) == ["qrels.txt"]
    for _ in range(2):
        assert main(["meta", "synthetic", str(tmp_path / "new"), "--systems", "2", "--queries", "3"]) == 0
    assert main(["meta", "synthetic", str(tmp_path / "new"), "--systems", "2", "--queries", "3", "--seed", "5"]) == 2


def test_synthetic_collection_is_deterministic():
    a, b = synthetic_collection(systems=4, queries=5, seed=9), synthetic_collection(systems=4, queries=5, seed=9)
    assert a.runs == b.runs and a.qrels == b.qrels and a.preferences == b.preferences


def test_cli_synthetic_writes_the_collection_it_names(tmp_path, capsys):
    """``judged meta synthetic OUT``: complete qrels, the lexical top-20 pool, one TREC run
    per system and the preferences, the paths named in its one line; the same seed writes
    the same bytes, another seed other ones."""
    from judged.core.io import read_qrels, read_run

    assert main(["meta", "synthetic", str(tmp_path / "a"), "--systems", "4", "--queries", "6", "--seed", "3"]) == 0
    a = tmp_path / "a"
    runs = [str(a / "runs" / f"{n}.run") for n in ("lex-1", "lex-2", "dense-1", "dense-2")]
    assert capsys.readouterr().out == (f"wrote {a / 'qrels.txt'} (complete), {a / 'qrels-pooled.txt'} (lexical "
                                       f"top-20 pool), 4 runs under {a}/runs, {a / 'preferences.txt'}\n")
    qrels, pooled = read_qrels(str(a / "qrels.txt")), read_qrels(str(a / "qrels-pooled.txt"))
    assert qrels.query_ids.tolist() == [f"q00{i}" for i in range(1, 7)] and len(qrels) == 6 * 300  # every candidate
    grade = dict(zip(zip(qrels.qid.to_pylist(), qrels.docid.to_pylist()), qrels.grade.tolist()))
    pool = dict(zip(zip(pooled.qid.to_pylist(), pooled.docid.to_pylist()), pooled.grade.tolist()))
    assert all(grade[pair] == g for pair, g in pool.items())  # the pool: the same grades, fewer pairs
    for path in runs:
        run = read_run(path)
        assert len(run) == 6 * 100  # each system's top 100 per query
        qids, docids = run.qid.to_pylist(), run.docid.to_pylist()
        top = [(q, d) for i, (q, d) in enumerate(zip(qids, docids)) if i % 100 < 20]  # written in rank order
        # the pool holds the lexical systems' top 20; a dense system meets holes there
        assert all(pair in pool for pair in top) == ("lex" in path)
    prefs = read_preferences(str(a / "preferences.txt"))
    assert len(prefs) == 300 and {p.run_a for p in prefs} | {p.run_b for p in prefs} == {"lex-1", "lex-2", "dense-1",
                                                                                          "dense-2"}
    assert {p.preferred for p in prefs} == {"a", "b", "none"} and all(p.run_a != p.run_b for p in prefs)
    # the preferences name the runs by file name: judged meta agreement reads the set as written
    assert main(["meta", "agreement", str(a / "preferences.txt"), str(a / "qrels.txt"), *runs, "-m", "RR",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["preferences"] == 300
    files = ["qrels.txt", "qrels-pooled.txt", "preferences.txt", *(f"runs/{n}" for n in sorted(os.listdir(a / "runs")))]
    for seed, out, same in ((3, "b", True), (4, "c", False)):
        assert main(["meta", "synthetic", str(tmp_path / out), "--systems", "4", "--queries", "6", "--seed",
                     str(seed)]) == 0
        assert sorted(os.listdir(tmp_path / out / "runs")) == sorted(os.listdir(a / "runs"))
        assert all((a / f).read_bytes() == (tmp_path / out / f).read_bytes() for f in files) == same


@pytest.mark.parametrize("argv,why", [(["--systems", "1"], "systems must be at least 2 (a preference compares "
                                                            "two), got 1"),
                                      (["--queries", "0"], "queries must be at least 1, got 0")])
def test_cli_synthetic_refuses_too_small_a_collection(tmp_path, capsys, argv, why):
    """Too few systems or queries: one line, exit 2 (numpy's traceback before)."""
    assert main(["meta", "synthetic", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"judged: error: {why}") and err.count("\n") == 1


def test_cli_power_json_and_plot(collection, tmp_path, capsys):
    plot = tmp_path / "asl.svg"
    assert main(["meta", "power", collection["qrels"], *collection["runs"], "-m", "nDCG@10", "-m", "RR",
                 "--samples", "200", "--format", "json", "--pairs", "--plot", str(plot)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["test"] == {"name": "randomization", "samples": 200, "seed": 0, "alpha": 0.05,
                           "sided": "two-sided", "p": "(b+1)/(samples+1)"}
    assert len(out["pairs"]) == 10 and set(out["measures"]) == {"nDCG@10", "RR"}
    curve = out["measures"]["RR"]["asl_curve"]
    assert curve == sorted(p["measures"]["RR"]["asl"] for p in out["pairs"])
    assert plot.read_text().lstrip().startswith("<?xml")


def test_cli_agreement_table(collection, capsys):
    assert main(["meta", "agreement", collection["preferences"], collection["qrels"], *collection["runs"]]) == 0
    out = capsys.readouterr().out
    assert "nDCG@10" in out and "binomial" in out and "conventions:" in out


def test_cli_stability_json(collection, capsys):
    assert main(["meta", "stability", collection["qrels_pooled"], *collection["runs"], "-m", "nDCG@10",
                 "--versus-qrels", collection["qrels"], "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"] == 5 and out["pairs"] == 10 and out["swaps"] == len(out["swapped_pairs"])
    assert math.isclose(out["swap_rate"], out["swaps"] / 10)


def test_cli_stability_needs_two_conditions(collection, capsys):
    assert main(["meta", "stability", collection["qrels"], *collection["runs"], "-m", "nDCG@10"]) == 2
    assert "two conditions" in capsys.readouterr().err


def test_cli_simulate_discount(capsys):
    assert main(["meta", "simulate-discount", "--sizes", "10,100", "--trials", "20", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len(rows) == 8 and {r["discount"] for r in rows} == {"log2(rank+1)", "1/rank^0.5", "1/rank", "1/rank^2"}


def test_bootstrap_rows_equal_single_calls_and_detect_a_shift():
    from judged.analyses.meta import bootstrap_pvalues

    rng = np.random.default_rng(2)
    diffs = np.vstack([rng.normal(0.0, 0.3, size=40), rng.normal(0.3, 0.3, size=40)])
    p = bootstrap_pvalues(diffs, 500, 8)
    assert p[0] == bootstrap_test(diffs[0], 500, 8) and p[1] == bootstrap_test(diffs[1], 500, 8)
    assert p[0] > 0.05 and p[1] < 0.01  # no shift vs a shift of one standard deviation


def test_cli_discount_plot_png_and_bad_plot_path(tmp_path, capsys):
    png = tmp_path / "d.png"
    assert main(["meta", "simulate-discount", "--sizes", "10,50", "--trials", "5", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["meta", "simulate-discount", "--sizes", "10", "--trials", "2", "--plot",
                 str(tmp_path / "none" / "d.png")]) == 2
    assert "cannot write plot" in capsys.readouterr().err


def test_cli_meta_without_command_prints_help(capsys):
    assert main(["meta"]) == 2
    assert "simulate-discount" in capsys.readouterr().out


def test_bootstrap_matches_a_plain_loop_over_the_same_draws():
    # Sakai's test written out: resample the mean-shifted differences, studentize, count |t*| >= |t|
    from judged.analyses.meta import bootstrap_pvalues

    rng = np.random.default_rng(5)
    diffs = rng.normal(0.1, 0.4, size=(3, 20))
    samples, seed = 300, 12
    draws = np.random.default_rng(seed).integers(0, 20, size=(samples, 20))
    expected = []
    for d in diffs:
        t = d.mean() / (d.std(ddof=1) / np.sqrt(20))
        w = d - d.mean()
        t_star = [w[k].mean() / (w[k].std(ddof=1) / np.sqrt(20)) for k in draws]
        expected.append((np.sum(np.abs(t_star) >= abs(t)) + 1) / (samples + 1))
    assert np.allclose(bootstrap_pvalues(diffs, samples, seed), expected)


def test_score_matrix_means_are_each_measures_aggregate():
    # the runs' numbers as judged eval prints them: GMAP a geometric mean, NumRet a sum
    m = ScoreMatrix(["a", "b"], ["q1", "q2"], {"GMAP": np.array([[0.5, 0.5], [1 / 6, 1.0]]),
                                               "NumRet": np.array([[2.0, 3.0], [1.0, 1.0]])}, {})
    assert m.means("GMAP") == pytest.approx([0.5, math.sqrt(1 / 6)])
    assert list(m.means("NumRet")) == [5.0, 2.0]
