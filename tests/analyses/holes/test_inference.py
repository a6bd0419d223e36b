"""Estimates from a judged sample (judged.analyses.holes.inference): unbiased to within their standard
error on collections with known truth, intervals that cover, trec_eval's infAP where it
applies, exact when the whole design is judged, and the rule for when to stop judging."""

import json
import os
from statistics import NormalDist

import numpy as np
import pytest

from judged import evaluate
from judged.cli import main
from judged.core.errors import ConventionError, MeasureError
from judged.analyses.holes.inference import (Estimator, infer, infer_aligned, judgments_to_decide, projected_variance,
                              repeated_samples)
from judged.analyses.stats import t_quantile
from judged.analyses.pooling.strategies import pool
from judged.analyses.pooling.poolfile import PoolFile, read_pool_file
from judged.analyses.holes.sampling import DesignUnit, SampleDesign, Stratum


def synth(seed=0, queries=12, docs=80, runs=4, judged_top=3, depth=20, shared=0.0, step=0.5, relevant=(0.08, 0.35)):
    """Runs of rising quality (``step`` apart) over ``docs`` documents per query (a tenth
    to a third of them relevant, grades 1-2; ``relevant``: the range of that share); ``full`` judges the runs' top ``depth`` (the
    truth), ``base`` only their top ``judged_top``: the rest of the pool are holes, deeper
    and rarer in the better runs. ``shared``: the share of the scores' noise common to
    every run (alike runs, whose estimates from one sample are strongly correlated)."""
    rng = np.random.default_rng(seed)
    full, base, rr = {}, {}, {f"r{i}": {} for i in range(runs)}
    for q in range(queries):
        qid = f"q{q:02d}"
        p = rng.uniform(*relevant)
        grades = np.where(rng.random(docs) < p, rng.integers(1, 3, docs), 0)
        common = rng.normal(0, 1.0, docs) if shared else 0.0
        for i, name in enumerate(rr):
            own = rng.normal(0, 1.0, docs)
            s = (0.6 + step * i) * grades + np.sqrt(shared) * common + np.sqrt(1 - shared) * own
            rr[name][qid] = {f"d{d}": float(s[d]) for d in range(docs)}
        pool_docs, top = set(), set()
        for name in rr:
            order = sorted(rr[name][qid], key=lambda d: -rr[name][qid][d])
            pool_docs |= set(order[:depth])
            top |= set(order[:judged_top])
        full[qid] = {d: int(grades[int(d[1:])]) for d in pool_docs}
        base[qid] = {d: int(grades[int(d[1:])]) for d in top}
    return base, full, rr


def holes_of(base, full):
    return sum(len(full[q]) - len(base[q]) for q in full)


# ---------------------------------------------------------------------------
# the acceptance: 500 seeded samples of a collection with known truth


@pytest.fixture(scope="module")
def five_hundred():
    base, full, rr = synth(1)
    budget = holes_of(base, full) // 2  # 203 of 407 holes, about 17 judgments per query
    return repeated_samples(base, full, rr, 20, budget, range(500), ["statNDCG@10", "statAP", "infNDCG@10", "xinfAP"])


@pytest.mark.parametrize("estimator", ["statNDCG@10", "statAP"])
def test_estimates_are_unbiased_and_their_intervals_cover(five_hundred, estimator):
    """The acceptance of issue #15: over 500 seeded samples, each run's mean estimate is
    within one standard error of the truth, and the 95% intervals cover 93-97.5% of the
    time over the 4 x 500 intervals (binomial SE 0.5%). Per run, 500 intervals have a
    binomial SE of 1%: 92-99% there (statAP's r3, near the top, covers 0.99). The standard
    error is that of the estimate shown, the corrected one's own jackknife (delete-two)
    with the floor: within 10% of the estimates' spread for statNDCG@10, up to 20% above it
    for statAP (seen: 6-17%; the jackknife of a jackknife-corrected ratio errs on the wide
    side with 4-5 draws per stratum)."""
    E, truth, design = five_hundred
    assert len(design.strata) > 20
    covered, narrow, wide = [], [], []
    for run in E.runs:
        est, se, low, high, df = E.interval(estimator, run)
        t = truth[estimator][run]
        standard_error = est.std(ddof=1) / np.sqrt(len(est))
        assert abs(est.mean() - t) <= standard_error, (run, est.mean(), t, standard_error)  # within 1 SE
        inside = (low <= t) & (t <= high)
        assert 0.92 <= inside.mean() <= 0.99, (run, inside.mean())
        covered.append(inside)
        half = t_quantile(0.975, df) * se  # before clipping to [0, 1] (r3's nDCG@10 is near 1)
        narrow.append(np.abs(est - t) <= 0.8 * half)
        wide.append(np.abs(est - t) <= 1.2 * half)
        # the jackknife's standard error is the spread of the estimates: within 10%, or 20% above
        assert 0.9 * est.std() <= se.mean() <= (1.1 if estimator == "statNDCG@10" else 1.2) * est.std()
    assert 0.93 <= np.mean(covered) <= 0.975, np.mean(covered)
    # the check has teeth: intervals 20% too narrow or too wide fall outside 93-97%
    assert np.mean(narrow) < 0.93 and np.mean(wide) > 0.97


def test_simultaneous_intervals_hold_for_every_run_at_once(five_hundred):
    """Every run is estimated from the same sample: with marginal 95% intervals all four
    runs are inside far less often than 95%. The simultaneous intervals (the joint
    covariance from the same replicates, the max-|t| critical value) hold all four at
    once in 92.5-98% of 500 samples per estimator (binomial SE 1%; statNDCG@10 0.962,
    statAP 0.976: formed on the log scale, they reach a little further up than the
    symmetric ones) and 93-97% over both (0.969); intervals 15% narrower fall below 93%:
    the test can fail."""
    E, truth, _ = five_hundred
    z = NormalDist().inv_cdf(0.975)
    together, narrow = [], []
    for estimator in ("statNDCG@10", "statAP"):
        joint = E.simultaneous(estimator)
        t = np.array([truth[estimator][r] for r in joint.runs])
        every = joint.covers(truth[estimator])
        assert 0.925 <= every.mean() <= 0.98, (estimator, every.mean())
        marginal = np.stack([(E.interval(estimator, r)[2] <= truth[estimator][r])
                             & (truth[estimator][r] <= E.interval(estimator, r)[3]) for r in E.runs], 1)
        assert marginal.all(1).mean() < 0.925  # what the marginal intervals give four runs: less (statAP 0.90)
        assert set(joint.method) == {"max-t"} and (joint.family == 4).all()
        # between one run's critical value and Bonferroni's for four (nearly Sidak's here: the runs'
        # correlations are 0-0.25; Monte Carlo SE of c about 0.007)
        assert (joint.critical > z + 0.3).all() and (joint.critical < NormalDist().inv_cdf(1 - 0.025 / 4) + 0.02).all()
        together.append(every)
        half = (joint.high - joint.low) / 2
        narrow.append((np.abs(joint.estimate - t) <= 0.85 * half).all(1))
    assert 0.93 <= np.mean(together) <= 0.97, np.mean(together)
    assert np.mean(narrow) < 0.93, np.mean(narrow)


def test_simultaneous_intervals_use_the_correlation_of_alike_runs():
    """Eight alike runs (70% of their scores' noise shared) estimated from one sample are
    strongly correlated: the max-|t| critical value is well below Bonferroni's for eight,
    and every run is still inside at once about 95% of the time (200 samples, 93-99.5%).
    The joint covariance agrees with the difference's variance: var(a) + var(b) - 2 cov(a, b)
    is the variance judged.inference gives a - b, at a 10% sample where the floor is used."""
    base, full, rr = synth(1, runs=8, shared=0.7, step=0.2)
    E, truth, _ = repeated_samples(base, full, rr, 20, holes_of(base, full) // 2, range(200), ["statAP"])
    joint = E.simultaneous("statAP")
    bonferroni = NormalDist().inv_cdf(1 - 0.025 / 8)
    assert (joint.critical < bonferroni - 0.05).all() and 0.93 <= joint.covers(truth["statAP"]).mean() <= 0.995
    C = E.covariance("statAP")
    d = np.sqrt(np.diagonal(C, axis1=1, axis2=2))
    assert (C / d[:, :, None] / d[:, None, :]).mean() > 0.4
    E10, _, _ = repeated_samples(base, full, rr, 20, holes_of(base, full) // 10, range(5), ["statAP"])
    C10 = E10.covariance("statAP")
    assert E10.none_relevant["statAP"].any()
    for a, b in ((0, 1), (2, 7)):
        _, vh = E10.difference("statAP", E10.runs[a], E10.runs[b])
        assert C10[:, a, a] + C10[:, b, b] - 2 * C10[:, a, b] == pytest.approx(vh.sum(1), rel=1e-9, abs=1e-15)
        assert np.diagonal(C10, axis1=1, axis2=2)[:, a] == pytest.approx(E10.variance("statAP", E10.runs[a]))


def test_simultaneous_falls_back_to_bonferroni_and_one_run_is_marginal(five_hundred, monkeypatch):
    E, truth, _ = five_hundred
    one = E.simultaneous("statAP", runs=["r2"])
    est, se, low, high, df = E.interval("statAP", "r2")
    assert one.low[:, 0] == pytest.approx(low, abs=2e-4) and one.high[:, 0] == pytest.approx(high, abs=2e-4)
    monkeypatch.setattr(type(E), "covariance", lambda self, e, runs=None: np.full((len(self.n), 4, 4), np.nan))
    fallback = E.simultaneous("statAP")
    assert set(fallback.method) == {"bonferroni"}
    assert fallback.critical == pytest.approx(NormalDist().inv_cdf(1 - 0.025 / 4))


def test_the_variance_floor_where_a_stratum_drew_no_relevant_document():
    """At a 10% sample most strata draw 2-3 documents, often none relevant: their jackknife
    variance is 0 and the intervals cover too rarely. The floor (Estimates.floor) adds the
    variance of the relevant share the sample fell short of, borrowed from the rank (all of
    it where none was drawn): coverage rises, the standard error nears the estimates'
    spread; strata whose draws met their rank's rate keep the jackknife's variance."""
    base, full, rr = synth(1)
    E, truth, _ = repeated_samples(base, full, rr, 20, holes_of(base, full) // 10, range(300), ["statAP"])
    with_floor, jackknife, ratio_floor, ratio_jack = [], [], [], []
    for run in E.runs:
        est, t = E.mean["statAP"][run], truth["statAP"][run]
        v_floor = E.run_variance("statAP", run, plain=True)  # the plain estimate's jackknife with the floor
        v_jack = E.stratum_variance("statAP", E.delete_one["statAP"][run])  # no pseudo rows: the jackknife alone
        met = E.relevant["statAP"] / np.maximum(E.n, 1) >= E.floor_rate("statAP")
        assert np.array_equal(v_floor[met], v_jack[met]) and (v_floor >= v_jack).all()
        assert (v_floor > v_jack)[E.none_relevant["statAP"] & (E.n < E.N)].all()
        short = ~met & (E.relevant["statAP"] > 0) & (E.n < E.N)  # drew some, fewer than the rank's rate
        assert short.sum() > 100 and (v_floor > v_jack)[short].all()  # not only the strata that drew none
        for v, cov, ratio in ((v_floor, with_floor, ratio_floor), (v_jack, jackknife, ratio_jack)):
            tq = t_quantile(0.975, E.df(v))
            cov.append(np.abs(est - t) <= tq * np.sqrt(v.sum(1)))
            ratio.append(np.sqrt(v.sum(1)).mean() / est.std())
    assert np.mean(with_floor) >= np.mean(jackknife) + 0.02, (np.mean(with_floor), np.mean(jackknife))
    assert abs(np.mean(ratio_floor) - 1) < abs(np.mean(ratio_jack) - 1)


def test_a_tenth_of_the_holes_of_queries_with_few_relevant_documents():
    """The failure measured on real collections (statAP at a 10% sample covered 0.76 on
    robust03 at depth 10, 0.85 on DL 2019): 40 queries with a few relevant documents each,
    nothing of their depth-10 pool judged but each run's first document, 81 of 817 holes
    judged (two per query, in 3 strata shared by rank). After the jackknife correction the
    estimate is still 0.6 of a sample's spread below the truth (the ratio's bias where a
    query's sample draws none of its few relevant documents), and the plain estimate's
    jackknife gives 0.73 of the corrected one's spread: that interval covered 0.78. The
    corrected estimate's own jackknife (delete-two within strata) with the allowance for
    the bias the correction may have left (Armstrong & Kolesar's critical value) covered
    0.93 as estimate -+ c se; formed on the log scale (every miss was below the truth, the
    best run's too, at AP 0.9) it covers 0.96, and the simultaneous intervals hold every
    run at once in 0.97 of 300 samples (0.91 before)."""
    base, full, rr = synth(1, queries=40, docs=80, judged_top=1, depth=10)
    E, truth, design = repeated_samples(base, full, rr, 10, holes_of(base, full) // 10, range(300), ["statAP"])
    assert len(design.strata) == 3 and holes_of(base, full) == 817
    old, variance_only, shown = [], [], []
    for r in E.runs:
        t, est = truth["statAP"][r], np.clip(E.mean["statAP"][r], 0, 1)
        for v, out in ((E.run_variance("statAP", r, plain=True), old), (E.run_variance("statAP", r), variance_only)):
            out.append(np.abs(est - t) <= t_quantile(0.975, E.df(v)) * np.sqrt(v.sum(1)))
        _, _, low, high, _ = E.interval("statAP", r)
        shown.append((low <= t) & (t <= high))
    assert np.mean(old) < 0.85, np.mean(old)  # measured 0.78
    assert np.mean(shown) >= 0.94 and np.mean(shown) >= np.mean(variance_only), np.mean(shown)  # 0.962
    assert E.simultaneous("statAP").covers(truth["statAP"]).mean() >= 0.94  # 0.97


def test_the_literatures_fill_in_estimators_are_biased_here(five_hundred):
    """The check above can fail: xinfAP and infNDCG fill not-drawn documents from the drawn
    ones of their stratum, drawn alike for every run; the better runs' holes are more
    often relevant than their stratum's, so those runs are underestimated by many SEs."""
    E, truth, _ = five_hundred
    for estimator in ("xinfAP", "infNDCG@10"):
        est = E.mean[estimator]["r3"]
        assert (est.mean() - truth[estimator]["r3"]) / (est.std(ddof=1) / np.sqrt(len(est))) < -10


def test_without_the_bias_correction_the_ratio_is_biased(five_hundred):
    E, truth, _ = five_hundred
    est = E.plain["statAP"]["r3"]  # a ratio of two Horvitz-Thompson estimates: bias O(1/n)
    assert (est.mean() - truth["statAP"]["r3"]) / (est.std(ddof=1) / np.sqrt(len(est))) < -3


def test_estimates_and_interval_ends_stay_in_the_measures_range(monkeypatch):
    """Near the top of the scale a ratio of Horvitz-Thompson estimates can pass 1 (statAP and
    statNDCG@10 of the best run: 5-7 of 30 samples above 1 at 30 of 206 holes judged, the upper
    end in most). The estimate and the ends are clipped to the range the measure's registry
    record declares (``value_range``, [0, 1] for AP and nDCG), marginal and simultaneous; with
    the record saying otherwise nothing is clipped (no name is tested in the code)."""
    from dataclasses import replace

    from judged.core.measures.registry import FAMILIES

    base, full, rr = synth(6, queries=6, docs=50)
    E, truth, _ = repeated_samples(base, full, rr, 20, 30, range(30), ["statAP", "statNDCG@10"])
    for e in ("statAP", "statNDCG@10"):
        raw = E.mean[e]["r3"]
        assert (raw > 1).sum() >= 3  # the clipping has something to do
        joint = E.simultaneous(e)
        assert (0 <= joint.low).all() and (joint.high <= 1).all() and (joint.estimate <= 1).all()
        for r in E.runs:
            est, se, low, high, df = E.interval(e, r)
            assert (0 <= low).all() and (low <= est).all() and (est <= high).all() and (high <= 1).all()
            assert np.array_equal(est, np.clip(E.mean[e][r], 0, 1))
    monkeypatch.setitem(FAMILIES, "AP", replace(FAMILIES["AP"], value_range=(-np.inf, np.inf)))
    est, se, low, high, df = E.interval("statAP", "r3")
    assert np.array_equal(est, E.mean["statAP"]["r3"]) and (high > 1).any()


# ---------------------------------------------------------------------------
# exact where nothing is left to infer


def test_judging_the_whole_design_gives_the_exact_values():
    base, full, rr = synth(2, queries=5, docs=40)
    E, truth, _ = repeated_samples(base, full, rr, 20, 10_000, [0],
                                   ["statNDCG@10", "statAP", "infNDCG@10", "xinfAP", "statAP(rel=2)"])
    exact = evaluate(full, rr, ["nDCG@10", "AP", "AP(rel=2)"]).mean()
    for e in E.estimators:
        for r in E.runs:
            est, se, low, high, _ = E.interval(e, r)
            # xinfAP's eps-smoothing, (rel + eps)/(drawn + 2 eps), is off by about eps
            assert est[0] == pytest.approx(exact.loc[r, str(e.measure)], abs=1e-5 if e.name == "xinfAP" else 1e-12)
            assert se[0] == 0 and low[0] == high[0]


def test_infer_end_to_end_and_labels_that_are_missing(tmp_path, capsys):
    from synth import write_qrels, write_run

    base, full, rr = synth(3, queries=6, docs=50)
    q = write_qrels(tmp_path / "base.txt", base)
    runs = [write_run(tmp_path / f"{n}.run", d, n) for n, d in rr.items()]
    sample = tmp_path / "sample.pool"
    assert main(["pool", q, *runs, "--depth", "20", "--strategy", "sample", "--budget", "60", "--seed", "7",
                 "-o", str(sample)]) == 0
    drawn = read_pool_file(str(sample)).pairs
    labels = {}
    for p in drawn[:50]:  # ten labels not back yet
        labels.setdefault(p.qid, {})[p.docid] = full[p.qid].get(p.docid, 0)
    write_qrels(tmp_path / "labels.txt", labels)
    merged = tmp_path / "merged.txt"
    assert main(["qrels", "merge", q, str(tmp_path / "labels.txt"), "-o", str(merged)]) == 0
    capsys.readouterr()
    assert main(["infer", str(merged), *runs, "--sample", str(sample), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "estimate" and out["sample"]["drawn"] == 60 and out["sample"]["judged"] == 50
    assert set(out["estimates"]) == {"statNDCG@10", "statAP"}
    r = out["estimates"]["statAP"][runs[0]]
    assert r["low"] <= r["estimate"] <= r["high"] and r["se"] > 0
    assert any("10 drawn pairs have no label yet" in n for n in out["notes"])
    assert "Wolter" in out["interval"] and "Aslam" in out["methods"]["statAP"]
    pair = out["pairs"][0]
    assert {"a", "b", "estimator", "difference", "low", "high", "decided", "more", "remaining"} <= set(pair)
    # the text names what the numbers are
    assert main(["infer", str(merged), *runs, "--sample", str(sample), "-m", "xinfAP"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("estimates, not measurements") and "xinfAP (Yilmaz, Kanoulas & Aslam" in text
    # judged eval's numbers do not change
    assert main(["eval", str(merged), runs[0], "-m", "AP", "--format", "json"]) == 0
    assert "estimate" not in capsys.readouterr().out
    # a pool that is not a sample: one clear line
    plain = tmp_path / "plain.pool"
    assert main(["pool", q, *runs, "--depth", "5", "-o", str(plain)]) == 0
    capsys.readouterr()
    assert main(["infer", str(merged), *runs, "--sample", str(plain)]) == 2
    assert "not a sample" in capsys.readouterr().err


def test_intervals_simultaneous_by_default_marginal_on_request(tmp_path, capsys):
    """judged infer, holes --sample and compare --sample: simultaneous intervals by default,
    named in the text and the JSON; the JSON's low/high keep their meaning (the marginal
    interval) and simultaneous_low/simultaneous_high are added; --intervals marginal gives
    the shipped output."""
    from synth import write_qrels, write_run

    base, full, rr = synth(6, queries=6, docs=50)
    q = write_qrels(tmp_path / "base.txt", base)
    runs = [write_run(tmp_path / f"{n}.run", d, n) for n, d in rr.items()]
    sample = str(tmp_path / "sample.pool")
    assert main(["pool", q, *runs, "--depth", "20", "--strategy", "sample", "--budget", "80", "--seed", "3",
                 "-o", sample]) == 0
    labels = {}
    for p in read_pool_file(sample).pairs:
        labels.setdefault(p.qid, {})[p.docid] = full[p.qid].get(p.docid, 0)
    write_qrels(tmp_path / "labels.txt", labels)
    merged = str(tmp_path / "merged.txt")
    assert main(["qrels", "merge", q, str(tmp_path / "labels.txt"), "-o", merged]) == 0
    capsys.readouterr()
    assert main(["infer", merged, *runs, "--sample", sample, "--format", "json"]) == 0
    joint = json.loads(capsys.readouterr().out)
    assert main(["infer", merged, *runs, "--sample", sample, "--format", "json", "--intervals", "marginal"]) == 0
    marginal = json.loads(capsys.readouterr().out)
    assert joint["intervals"] == "simultaneous" and marginal["intervals"] == "marginal"
    assert "Hothorn, Bretz & Westfall" in joint["simultaneous_method"] and "simultaneous" not in marginal
    for e, table in joint["estimates"].items():
        s = joint["simultaneous"][e]
        assert s["method"] == "max-t" and s["family"] == s["runs"] == 4
        assert s["marginal_critical_value"] + 0.3 < s["critical_value"] < NormalDist().inv_cdf(1 - 0.025 / 4) + 0.02
        for run, x in table.items():
            y = marginal["estimates"][e][run]
            assert {k: x[k] for k in y} == y and set(x) - set(y) == {"simultaneous_low", "simultaneous_high"}
            assert x["simultaneous_low"] <= x["low"] <= x["estimate"] <= x["high"] <= x["simultaneous_high"]
            assert x["simultaneous_high"] - x["simultaneous_low"] > x["high"] - x["low"]
            assert 0 <= x["simultaneous_low"] and x["simultaneous_high"] <= 1  # clipped to AP's and nDCG's range
    assert {k: v for k, v in joint.items() if k not in ("estimates", "intervals", "simultaneous",
                                                         "simultaneous_method")} == \
        {k: v for k, v in marginal.items() if k not in ("estimates", "intervals")}
    # the text shows the simultaneous half-widths and says what they are
    assert main(["infer", merged, *runs, "--sample", sample]) == 0
    text = " ".join(capsys.readouterr().out.split())
    x = joint["estimates"]["statAP"][runs[1]]
    assert "95% simultaneous intervals" in text and "statAP ± 95% joint" in text
    lo, hi, est = x["simultaneous_low"], x["simultaneous_high"], x["estimate"]
    assert hi - est - (est - lo) > 1e-4  # a log interval: lopsided, so shown by its ends, not as ± half
    assert f"{est:.4f} ({lo:.4f}-{hi:.4f})" in text and f"{est:.4f} ± {(hi - lo) / 2:.4f}" not in text
    assert f"statAP: max-|t| critical value {joint['simultaneous']['statAP']['critical_value']:.2f} for 4" in text
    assert main(["infer", merged, *runs, "--sample", sample, "--intervals", "marginal"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    lo, hi = x["low"], x["high"]
    shown = f"{est:.4f} ± {(hi - lo) / 2:.4f}" if abs((hi - est) - (est - lo)) < 5e-5 else f"{est:.4f} ({lo:.4f}-{hi:.4f})"
    assert shown in text and "95% joint" not in text
    assert "each run's alone (marginal)" in text
    # holes and compare --sample: the same default, the same flag
    assert main(["holes", merged, *runs, "--format", "json", "--sample", sample]) == 0
    s = json.loads(capsys.readouterr().out)["sample"]
    assert s["intervals"] == "simultaneous" and "simultaneous_low" in s["estimates"]["statNDCG@10"][runs[0]]
    assert main(["holes", merged, *runs, "--sample", sample]) == 0
    assert "95% simultaneous intervals: every run inside at once" in " ".join(capsys.readouterr().out.split())
    assert main(["compare", merged, *runs, "-m", "AP", "--format", "json", "--sample", sample,
                 "--intervals", "marginal", "--regressions", "0"]) == 0
    s = json.loads(capsys.readouterr().out)["sample"]
    assert s["intervals"] == "marginal" and "simultaneous_low" not in s["estimates"]["statAP"][runs[0]]
    from judged.analyses.holes.inference import DEFAULT_INTERVALS, INTERVALS
    from judged.cli.infer_command import INTERVALS as CLI_INTERVALS

    assert CLI_INTERVALS == INTERVALS and INTERVALS[0] == DEFAULT_INTERVALS  # the CLI's copy, kept numpy-free
    with pytest.raises(SystemExit):
        main(["infer", merged, *runs, "--sample", sample, "--intervals", "joint"])
    with pytest.raises(ConventionError):
        infer(merged, runs, sample, intervals="joint")


def test_holes_and_compare_say_when_to_stop(tmp_path, capsys):
    from synth import write_qrels, write_run

    base, full, rr = synth(6, queries=6, docs=50)
    q = write_qrels(tmp_path / "base.txt", base)
    runs = [write_run(tmp_path / f"{n}.run", d, n) for n, d in rr.items()]
    sample = tmp_path / "sample.pool"
    assert main(["pool", q, *runs, "--depth", "20", "--strategy", "sample", "--budget", "80", "--seed", "3",
                 "-o", str(sample)]) == 0
    labels = {}
    for p in read_pool_file(str(sample)).pairs:
        labels.setdefault(p.qid, {})[p.docid] = full[p.qid].get(p.docid, 0)
    write_qrels(tmp_path / "labels.txt", labels)
    merged = str(tmp_path / "merged.txt")
    assert main(["qrels", "merge", q, str(tmp_path / "labels.txt"), "-o", merged]) == 0
    capsys.readouterr()
    # holes: the shipped keys unchanged, the sample's estimates and decisions beside them
    assert main(["holes", merged, *runs, "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["holes", merged, *runs, "--format", "json", "--sample", str(sample)]) == 0
    with_sample = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in with_sample.items() if k != "sample"} == plain
    s = with_sample["sample"]
    assert s["measures"] == {"nDCG@10": "statNDCG@10"} and len(s["decisions"]) == len(plain["pairs"]) == 6
    for d in s["decisions"]:
        assert d["decided"] == (d["more"] == 0) and (d["decided"] == (d["low"] > 0 or d["high"] < 0))
    # both answers occur here: decided pairs, and one that needs m more judgments (of those left)
    assert any(d["decided"] for d in s["decisions"])
    undecided = [d for d in s["decisions"] if not d["decided"]]
    assert undecided and all(0 < d["more"] < d["remaining"] for d in undecided)
    assert "Cochran 1977" in s["stop_rule"] and "jackknife" in s["interval"]  # the method and its source
    assert main(["holes", merged, *runs, "--sample", str(sample)]) == 0
    text = capsys.readouterr().out
    assert "sampled estimates (statNDCG@10 for nDCG@10" in text and "estimates, not bounds" in text
    assert "order decided at 95%" in text
    d, flat = undecided[0], " ".join(text.split())  # unwrapped
    shown = {r: os.path.basename(r) for r in runs}  # the tables show runs by file name (judged.core.runnames)
    assert (f"{shown[d['a']]} vs {shown[d['b']]} (statNDCG@10): difference {d['difference']:+.4f} "
            f"[{d['low']:+.4f}, {d['high']:+.4f}]: not decided at 95%; about {d['more']} more sampled judgments "
            f"(of {d['remaining']} left)") in flat
    assert ("when to stop: decided: the level's interval of the difference (widened for its bias bound) "
            "excludes 0") in flat
    assert "Cochran 1977" in flat
    # compare: one decision per run against the baseline and measure; P@5 has no estimator
    assert main(["compare", merged, *runs, "-m", "nDCG@10", "-m", "AP", "-m", "P@5", "--format", "json",
                 "--sample", str(sample), "--regressions", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sample"]["measures"] == {"nDCG@10": "statNDCG@10", "AP": "statAP", "P@5": None}
    assert {(d["measure"], d["a"], d["b"]) for d in out["sample"]["decisions"]} == \
        {(m, r, runs[0]) for m in ("nDCG@10", "AP") for r in runs[1:]}
    assert main(["compare", merged, *runs, "-m", "AP", "--sample", str(sample), "--regressions", "0"]) == 0
    text = capsys.readouterr().out
    assert "  sampled: " in text and "no sampled estimator" not in text
    assert "when to stop: decided" in " ".join(text.split()) and "Cochran 1977" in text
    assert main(["compare", merged, *runs, "-m", "P@5", "--sample", str(sample)]) == 2
    assert "no sampled estimator for P@5" in capsys.readouterr().err


def test_labels_on_pairs_the_sample_did_not_draw_are_not_used():
    base, full, rr = synth(4, queries=4, docs=40)
    p = pool(base, rr, 20, strategy="sample", budget=30, seed=1)
    labels = {q: dict(d) for q, d in base.items()}
    for x in p.pairs:
        labels[x.qid][x.docid] = full[x.qid].get(x.docid, 0)
    pf = PoolFile("s.pool", "", {"seed": 1, "runs": list(rr)}, (), p.pairs, p.design)
    before = infer(labels, rr, pf).table()
    extra = next(u for u in p.design.units if not u.sampled)
    labels[extra.qid][extra.docid] = 2
    after = infer(labels, rr, pf)
    assert after.table() == before
    assert any("1 label on pairs the sample did not draw was not used" in n for n in after.notes)


# ---------------------------------------------------------------------------
# trec_eval's infAP where it applies


def test_xinfap_is_trec_eval_infap_for_a_uniform_sample_of_each_pool():
    """One stratum per query holding its whole pool, a uniform sample judged, nothing
    judged outside it: xinfAP is trec_eval's infAP (qrels: -1 for pooled, not drawn)."""
    import pytrec_eval

    base, full, rr = synth(5, queries=8, docs=60)
    rng = np.random.default_rng(0)
    strata, units, labels, marked = {}, [], {}, {}
    for i, (qid, docs) in enumerate(sorted(full.items()), 1):
        names = sorted(docs)
        take = set(rng.choice(names, size=max(3, len(names) // 3), replace=False).tolist())
        strata[i] = Stratum(i, (1, 20), qid, len(names), len(take))
        for d in names:
            units.append(DesignUnit(qid, d, 1, ["r"], i, d in take))
        labels[qid] = {d: docs[d] for d in take}
        marked[qid] = {d: (docs[d] if d in take else -1) for d in names}
    design = SampleDesign(strata, units, 0)
    pf = PoolFile("s.pool", "", {}, (), [], design)
    from judged.core.align import align
    from judged.core.io import read_qrels, read_run

    qrels = read_qrels(labels)
    aligned = {n: align(qrels, read_run(r)) for n, r in rr.items()}
    inf = infer_aligned(qrels, aligned, pf, ["xinfAP"])
    theirs = pytrec_eval.RelevanceEvaluator(marked, {"infAP"}).evaluate(rr["r0"])
    ours = evaluate(marked, {"r0": rr["r0"]}, ["infAP"]).per_query()
    assert dict(zip(ours.qid, ours.value)) == {q: v["infAP"] for q, v in theirs.items()}  # the measure, to the bit
    pq = inf.per_query()
    for name in rr:
        theirs = pytrec_eval.RelevanceEvaluator(marked, {"infAP"}).evaluate(rr[name])
        mine = pq[(pq.run == name) & (pq.estimator == "xinfAP")]
        for qid, v in zip(mine.qid, mine.estimate):
            assert v == pytest.approx(theirs[qid]["infAP"], abs=1e-12), (name, qid)


# ---------------------------------------------------------------------------
# when to stop judging


def test_decided_or_how_many_more():
    v_h = np.array([0.0004, 0.0002])
    n, N = np.array([10, 10]), np.array([100, 50])
    se = np.sqrt(v_h.sum())
    assert judgments_to_decide(0.1, v_h, n, N)["decided"]  # 0.1 > 1.96 * 0.0245
    d = judgments_to_decide(0.02, v_h, n, N, power=0.8)
    assert not d["decided"] and d["more"] > 0 and d["remaining"] == 130
    # after the judgments said, |difference| >= (z_.975 + z_.8) se; one fewer is not enough
    scale = lambda m: m / n.sum()  # noqa: E731 - every stratum grows in proportion
    var_after, added = projected_variance(v_h, n, N, scale(d["more"]))
    assert added == pytest.approx(d["more"], abs=1) and 0.02 >= (1.959964 + 0.841621) * np.sqrt(var_after) - 1e-9
    var_before, _ = projected_variance(v_h, n, N, scale(d["more"] - 2))
    assert 0.02 < (1.959964 + 0.841621) * np.sqrt(var_before)
    assert se > 0.02 / 1.96
    # too small to settle by sampling: judge what is left
    assert judgments_to_decide(1e-6, v_h, n, N)["more"] is None
    assert judgments_to_decide(0.0, v_h, n, N)["more"] is None


def test_projected_variance_matches_a_larger_sample():
    """The rule's premise: the variance projected from samples of a quarter of the holes to
    twice as many judgments per stratum (the same strata) is the variance of the estimates
    of such samples, to within 10% (seen: 1-7%)."""
    base, full, rr = synth(1)
    holes = holes_of(base, full)
    small, _, _ = repeated_samples(base, full, rr, 20, holes // 4, range(100), ["statAP"])
    large, _, _ = repeated_samples(base, full, rr, 20, holes // 4, range(1000, 1300), ["statAP"], grow=1.0)
    assert (large.n == np.minimum(2 * small.n[:1], small.N)).all()
    for run in small.runs:
        v_h = small.stratum_variance("statAP", small.delete_one["statAP"][run])  # what judgments_to_decide projects
        projected = np.mean([projected_variance(v_h[s], small.n[s], small.N, 1.0)[0] for s in range(len(v_h))])
        assert np.sqrt(projected) == pytest.approx(large.mean["statAP"][run].std(), rel=0.1)


def test_estimator_names_and_t_quantile():
    assert str(Estimator.parse("statNDCG(gain=exp)@5")) == "statNDCG(gain=exp)@5"
    assert str(Estimator.parse("xinfap")) == "xinfAP" and Estimator.parse("statAP(rel=2)").measure.rel == 2
    with pytest.raises(MeasureError, match="needs a cutoff"):
        Estimator.parse("statNDCG")
    with pytest.raises(MeasureError, match="unknown estimator"):
        Estimator.parse("P@10")
    with pytest.raises(ConventionError, match="--level"):
        infer({"q": {"d": 1}}, {"r": {"q": {"d": 1.0}}}, PoolFile("x", "", {}, (), [], SampleDesign({}, [])), level=2)
    assert float(t_quantile(0.975, 30)) == pytest.approx(2.0423, abs=1e-4)


def test_the_documented_demo_figures(tmp_path, capsys, monkeypatch):
    """docs/holes.md, 'Inferring the rest': the demo's sample of 12 of its 42 holes, labelled
    from the answer key, and the figures quoted (estimates, and the values with all 42 judged)."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "holes.md").read_text(encoding="utf-8")
    assert main(["demo", "--write", str(tmp_path)]) == 0
    monkeypatch.chdir(tmp_path)
    assert main(["pool", "qrels.txt", "lexical.run", "dense.run", "--depth", "10", "--strategy", "sample",
                 "--budget", "12", "--seed", "1", "-o", "sample.pool"]) == 0
    key = {}
    for line in open("answer-key.txt"):
        q, _, d, g = line.split()
        key[(q, d)] = g
    design = read_pool_file("sample.pool").design
    for name, units in (("labels.txt", [u for u in design.units if u.sampled]), ("all.txt", design.units)):
        with open(name, "w") as fh:
            fh.writelines(f"{u.qid} 0 {u.docid} {key.get((u.qid, u.docid), 0)}\n" for u in units)
    assert main(["qrels", "merge", "qrels.txt", "labels.txt", "-o", "merged.txt"]) == 0
    assert main(["qrels", "merge", "qrels.txt", "all.txt", "-o", "complete.txt"]) == 0
    capsys.readouterr()
    assert main(["infer", "merged.txt", "lexical.run", "dense.run", "--sample", "sample.pool", "--format", "json"]) == 0
    est = json.loads(capsys.readouterr().out)["estimates"]
    complete = evaluate("complete.txt", {"lexical.run": "lexical.run", "dense.run": "dense.run"},
                        ["nDCG@10", "AP"]).mean()
    for run in ("lexical.run", "dense.run"):
        for e, m in (("statNDCG@10", "nDCG@10"), ("statAP", "AP")):
            x = est[e][run]
            # lopsided log intervals, shown by their ends: the simultaneous in the table, the marginal quoted
            assert f"{x['estimate']:.4f} ({x['simultaneous_low']:.4f}-{x['simultaneous_high']:.4f})" in doc
            assert f"{x['low']:.4f}-{x['high']:.4f}" in doc
            assert f"{complete.loc[run, m]:.4f}" in doc
            assert x["low"] <= complete.loc[run, m] <= x["high"]  # as the text says: all four inside, both ways
