"""The hole estimate (judged.analyses.holes.estimate) and leave-one-run-out (judged meta holdout).

Collections come from ``pooled_collection``: runs of known quality over candidates with
known grades, the qrels a depth-k pool of the runs, so leave-one-run-out has a truth
(the score on the full pool) and the estimate a target.
"""

import json
import math
import os

import numpy as np
import pytest

from judged.core.align import align
from judged.cli import main
from judged.core.conventions import Settings
from judged.analyses.holes.estimate import FALLBACK, METHOD, conformal_quantile, units_needed
from judged.analyses.holes.collection import build_pool, make_world, unit_removal, world_aligned
from judged.analyses.holes.drawn_scores import Case, score_cases
from judged.analyses.holes.grade_model import fit_model
from judged.core.evaluation import evaluate
from judged.analyses.holes.unjudged import holes_report
from judged.core.io import read_qrels, read_run
from judged.core.measures import Measure
from judged.core.measures.registry import BOUNDED, family
from judged.analyses.meta.holdout import holdout, run_groups
from judged.analyses.meta.stability import kendall_tau
from judged.analyses.meta.synthetic import pooled_collection
from synth import write_qrels


def small(seed=1, systems=10, queries=20, depth=20, pool_depth=5, families=None):
    return pooled_collection(systems, queries, depth, pool_depth=pool_depth, families=families, seed=seed)


def aligned_runs(coll, qrels=None):
    q = read_qrels(qrels if qrels is not None else coll.qrels())
    return q, [(name, align(q, read_run(run, name=name), Settings())) for name, run in coll.runs().items()]


def unique_contributions(runs: dict, depth: int, units: dict) -> dict:
    """Brute force: unit -> {(qid, docid)} it alone has in some run's top ``depth``."""
    holders = {}
    for name, run in runs.items():
        for qid, docs in run.items():
            for d, _ in sorted(docs.items(), key=lambda x: (-x[1], x[0]))[:depth]:
                holders.setdefault((qid, d), set()).add(units[name])
    out = {}
    for pair, us in holders.items():
        if len(us) == 1:
            out.setdefault(next(iter(us)), set()).add(pair)
    return out


# ---------------------------------------------------------------------------
# the reduced qrels are exact


@pytest.mark.parametrize("by", ["run", "group"])
def test_holdout_scores_are_those_of_the_reduced_qrels_file(by):
    """Removing what a run (group) alone contributed, then scoring, gives exactly what
    `judged eval` gives on a reduced qrels built by brute force."""
    c = small(seed=3, families=4)
    qrels, runs = c.qrels(), c.runs()
    groups = {n: n.split("-")[0] for n in runs} if by == "group" else {n: n for n in runs}
    res = holdout(qrels, runs, k=5, by=by, samples=20)
    assert {r.group for r in res.runs} == set(groups.values())
    unique = unique_contributions(runs, 5, groups)
    for row in res.runs:
        gone = unique.get(groups[row.run], set())
        reduced = {q: {d: g for d, g in docs.items() if (q, d) not in gone} for q, docs in qrels.items()}
        assert row.removed == sum(1 for q, d in gone if d in qrels.get(q, {}))
        ev = evaluate(reduced, {row.run: runs[row.run]}, ["nDCG@5", "nDCG(unjudged=condensed)@5",
                                                          "nDCG(unjudged=min)@5", "nDCG(unjudged=max)@5", "Judged@5"])
        mean = ev.mean().loc[row.run]
        assert row.zero == mean["nDCG@5"]
        assert row.condensed == mean["nDCG(unjudged=condensed)@5"]
        # the bounds range over the held-out unit's pool: a group's runs' holes together (the
        # judgments removed are those), a run's own alone
        members = {n: runs[n] for n in runs if groups[n] == groups[row.run]}
        pooled = holes_report(reduced, members, k=5, samples=1).runs[row.run].summary()
        assert row.min == pytest.approx(pooled["min"], abs=1e-12)
        assert row.max == pytest.approx(pooled["max"], abs=1e-12)
        if by == "run":
            assert row.min == pytest.approx(mean["nDCG(unjudged=min)@5"], abs=1e-12)
            assert row.max == pytest.approx(mean["nDCG(unjudged=max)@5"], abs=1e-12)
        assert row.min - 1e-12 <= row.full <= row.max + 1e-12 and row.cell_violations == 0
        assert row.judged == mean["Judged@5"]
        assert row.full == evaluate(qrels, {row.run: runs[row.run]}, ["nDCG@5"]).mean().loc[row.run, "nDCG@5"]
        # its holes the full qrels judge relevant: of what its unit alone contributed, in its top 5
        top5 = [(q, d) for q, docs in runs[row.run].items() for d in sorted(docs, key=lambda x: (-docs[x], x))[:5]]
        assert row.truth_relevant_holes == sum(1 for p in top5 if p in gone and qrels[p[0]].get(p[1], 0) > 0)
    assert any(row.truth_relevant_holes for row in res.runs)


@pytest.mark.parametrize("measure", ["nDCG@5", "AP@5", "P@5", "nDCG(gain=exp)@5", "R@5", "RR@5", "DCG@5", "ERR@5", "nERR@5"])
def test_stacked_scoring_equals_the_kernel_bit_for_bit(measure):
    """score_cases (cases stacked as pseudo-queries; nDCG's ideal from counts per grade)
    gives the kernel's per-query values on the reduced alignment, to the last bit."""
    c = small(seed=4)
    _, named = aligned_runs(c)
    pool = build_pool(named, k=5)
    for u in (0, 3):
        world = make_world(pool, unit_removal(pool, [u]))
        cases = [Case(i) for i in range(pool.n_runs)] + [Case(i, minus=(u + 1) % pool.n_units) for i in range(3)]
        got = score_cases(measure, pool, world, cases)
        for case, score in zip(cases, got):
            removal = unit_removal(pool, [u] + ([case.minus] if case.minus >= 0 else []))
            want = Measure.parse(measure).compute(world_aligned(pool, make_world(pool, removal), case.run))
            assert np.array_equal(score.per_query, want), (measure, case)


def test_pool_finds_both_docids_of_a_query_sharing_a_hash():
    """Two docids of one query with one 64-bit hash (forced here) are two pairs: the other
    run's rows of each, deep in its ranking, are found by the docid (votes, best rank)."""
    qrels = read_qrels({"q1": {"a": 1, "b": 0, "c": 2}})
    a = read_run({"q1": {"x": 9.0, "y": 8.0, "a": 7.0, "b": 6.0}}, name="A")
    b = read_run({"q1": {"a": 9.0, "c": 8.0, "b": 7.0, "y": 6.0, "x": 5.0}}, name="B")
    for run in (a, b):
        h = run.docid_hash.copy()
        h[np.isin(run.docid.to_numpy(zero_copy_only=False), ["x", "y"])] = 12345
        run.known(docid_hash=h)
    pool = build_pool([("A", align(qrels, a, Settings())), ("B", align(qrels, b, Settings()))], k=2)
    at = {pool.aligned[0].run.docid[int(pool.aligned[0].ranked.row[r])].as_py(): j
          for j, r in enumerate(pool.rrow) if pool.run[j] == 0}
    assert pool.pid[at["x"]] != pool.pid[at["y"]]
    assert [pool.votes[at[d]] for d in "xy"] == [1, 1]
    assert [pool.best_other[at[d]] for d in "xy"] == [5.0, 4.0]  # B's ranks of x and y


def test_ideal_of_counts_equals_the_kernels_ideal():
    from judged.core.measures.dcg import ideal_dcg_of_counts

    rng = np.random.default_rng(0)
    grades = np.array([0, 1, 2, 3])
    counts = rng.integers(0, 6, size=(40, 4))
    qrels = {f"q{i:03d}": {f"d{j}": int(g) for j, g in enumerate(np.repeat(grades, row))}
             for i, row in enumerate(counts)}
    qrels = {q: d for q, d in qrels.items() if d}
    run = {q: {"x": 1.0} for q in qrels}
    for m in ("nDCG@5", "nDCG@20", "nDCG(gain=exp)@3", "nDCG(discount=reciprocal)@10"):
        a = align(read_qrels(qrels), read_run(run))
        from judged.core.measures.dcg import idcg

        measure = Measure.parse(m)
        want = idcg(measure, a, a.ranked)
        keep = counts.sum(axis=1) > 0
        assert np.array_equal(ideal_dcg_of_counts(measure, counts[keep], grades), want), m


# ---------------------------------------------------------------------------
# the estimate


def test_estimate_lies_in_the_bounds_and_is_exact_without_holes():
    c = small(seed=5)
    qrels = read_qrels(c.qrels())
    r = holes_report(c.qrels(), c.runs(), k=5, samples=40)
    assert r.estimates.method == METHOD
    for rh in r.runs.values():
        s = rh.summary()
        assert s["min"] - 1e-12 <= s["estimate"]["low"] <= s["estimate"]["mean"] <= s["estimate"]["high"] \
            <= s["max"] + 1e-12
        assert s["holes"] == 0 and s["estimate"]["interval"] == "exact" and s["estimate"]["mean"] == s["score"]
    # a reduced qrels makes holes: the estimate moves off the zero-filled score, inside the bounds
    gone = unique_contributions(c.runs(), 5, {n: n for n in c.runs()})[c.names[0]]
    reduced = {q: {d: g for d, g in docs.items() if (q, d) not in gone} for q, docs in c.qrels().items()}
    r2 = holes_report(reduced, c.runs(), k=5, samples=40)
    s = r2.runs[c.names[0]].summary()
    assert s["holes"] > 0 and s["min"] <= s["estimate"]["low"] < s["estimate"]["mean"] < s["estimate"]["high"] <= s["max"]
    assert s["estimate"]["mean"] > s["score"]  # some holes are relevant, the estimate says so
    assert qrels.query_ids.tolist() == c.qids


def test_one_sample_fills_the_holes_too():
    """With --samples 1 the holes are drawn once, not scored as not relevant (they were, and the
    'estimate' was holes as zero)."""
    coll = pooled_collection(8, 15, 30, pool_depth=10, seed=4)
    qrels, runs = coll.qrels(), coll.runs()
    old, new = sorted(runs)[:4], sorted(runs)[4:]  # new runs scored on the old runs' pool: many holes
    cut = {}
    for n in old:
        for q, d in runs[n].items():
            cut.setdefault(q, {}).update({x: qrels[q][x] for x in sorted(d, key=lambda x: (-d[x], x))[:10]
                                          if x in qrels.get(q, {})})
    report = holes_report(cut, {n: runs[n] for n in new}, k=10, samples=1)
    assert report.estimates.method == METHOD
    for r in report.runs.values():
        assert r.estimate_detail.details["holes"] == r.holes.sum() > 30
        assert r.estimate.mean() > r.score.mean()  # tens of holes, some drawn relevant


def test_estimate_is_deterministic_for_a_seed():
    c = small(seed=6)
    gone = unique_contributions(c.runs(), 5, {n: n for n in c.runs()})[c.names[2]]
    reduced = {q: {d: g for d, g in docs.items() if (q, d) not in gone} for q, docs in c.qrels().items()}
    a = holes_report(reduced, c.runs(), k=5, samples=30, seed=7).to_dict()
    b = holes_report(reduced, c.runs(), k=5, samples=30, seed=7).to_dict()
    assert a["runs"] == b["runs"] and a["estimate"] == b["estimate"]


def test_one_run_falls_back_and_says_so():
    c = small(seed=7)
    name = c.names[0]
    gone = unique_contributions(c.runs(), 5, {n: n for n in c.runs()})[name]
    reduced = {q: {d: g for d, g in docs.items() if (q, d) not in gone} for q, docs in c.qrels().items()}
    r = holes_report(reduced, {name: c.runs()[name]}, k=5)
    s = r.runs[name].summary()
    assert r.estimates.method == FALLBACK
    assert s["estimate"]["mean"] == s["score"] and (s["estimate"]["low"], s["estimate"]["high"]) == (s["min"], s["max"])
    assert "fallback" in r.estimates.sentence() and "at least 2" in r.estimates.sentence()
    assert r.to_dict()["estimate"]["method"] == FALLBACK and r.to_dict()["estimate"]["fallback"]


def test_an_estimate_that_fails_its_own_leave_one_out_check_is_not_given(tmp_path, capsys):
    """Where the collection's own held-out runs say the estimate errs more than holes as not
    relevant (leave-one-run-out MAE above zero's), judged states the fallback with both figures;
    where they say the opposite, it estimates. The same model without the check estimates both."""
    from judged.analyses.holes.estimate import estimate_runs
    fails, passes = small(seed=1), small(seed=3, pool_depth=8)
    for coll, fired in ((fails, True), (passes, False)):
        q, named = aligned_runs(coll)
        pool = build_pool(named, 10)  # as `judged holes` builds it: pool depth = k
        est = estimate_runs("nDCG@10", pool, samples=20)
        lo = est.info["loro"]
        assert (lo["mae_estimate"] > lo["mae_zero"]) == fired
        assert (est.method == FALLBACK) == fired
        unchecked = estimate_runs("nDCG@10", pool, samples=20, check=False)
        assert unchecked.method == METHOD and unchecked.info["loro"] == lo  # the same residuals, judged the same
        if not fired:
            assert [e.value for e in est.runs.values()] == [e.value for e in unchecked.runs.values()]
            continue
        zero = {i: float(np.mean(Measure.parse("nDCG@10").compute(a))) for i, (_, a) in enumerate(named)}
        assert all(e.value == pytest.approx(zero[i], abs=1e-12) and e.interval == "bounds" for i, e in est.runs.items())
        assert any(abs(e.value - zero[i]) > 1e-6 for i, e in unchecked.runs.items())  # it would have estimated
        assert f"MAE {lo['mae_estimate']:.4f} against {lo['mae_zero']:.4f}" in est.info["fallback"]
    qp, runs = write_collection(tmp_path, fails)
    assert main(["holes", qp, *runs, "-k", "10", "--samples", "20"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert "estimate: fallback (holes-as-zero" in flat and "erred more than holes counted as not relevant" in flat
    assert main(["meta", "holdout", qp, *runs, "-k", "10", "--samples", "10"]) == 0  # each held-out step: the same check
    flat = " ".join(capsys.readouterr().out.split())
    assert (f"{len(runs)} runs got the fallback estimate (holes as zero, interval = the bounds): the estimate's "
            f"leave-one-out errors on the other runs exceeded those of holes as zero") in flat


@pytest.mark.parametrize("seed, pool_depth, chosen", [(1, 10, "loro-logit"), (3, 8, "run-prior"), (1, 5, None)])
def test_auto_gives_the_method_with_the_lowest_leave_one_out_error(seed, pool_depth, chosen):
    """--estimate auto: each method estimates with its check; the one with the lower
    leave-one-run-out MAE among those that passed is given, exactly as that method alone
    gives it; with none passing, the fallback says why."""
    c = small(seed=seed, pool_depth=pool_depth)
    auto = holes_report(c.qrels(), c.runs(), k=10, samples=10, estimate="auto")
    alone = {m: holes_report(c.qrels(), c.runs(), k=10, samples=10, estimate=m) for m in ("loro-logit", "run-prior")}
    figures = auto.estimates.info["chosen_by"]["methods"]
    passed = {m: r.estimates.info["loro"]["mae_estimate"] for m, r in alone.items() if r.estimates.method != FALLBACK}
    assert {m: f["mae"] for m, f in figures.items()} == {m: r.estimates.info["loro"]["mae_estimate"]
                                                       for m, r in alone.items()}
    assert auto.estimates.info["chosen_by"]["chosen"] == chosen == (min(passed, key=passed.get) if passed else None)
    if chosen is None:
        assert auto.estimates.method == FALLBACK and "no method passed its leave-one-out check" in \
            auto.estimates.info["fallback"]
        return
    assert auto.estimates.method == chosen
    for n in c.runs():
        assert auto.runs[n].summary()["estimate"] == alone[chosen].runs[n].summary()["estimate"]
    other = "run-prior" if chosen == "loro-logit" else "loro-logit"
    assert f"chosen (--estimate auto) by the lowest leave-one-out MAE: " in auto.estimates.sentence()
    assert (f"{other} {figures[other]['mae']:.4f}" in auto.estimates.sentence()) == ("not chosen" not in figures[other])


def test_too_few_pseudo_holes_fall_back():
    # two runs that agree on their top 3 except one document each: 2 pseudo-holes
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "x": 1, "y": 0}}
    runs = {"A": {"q": {"a": 3.0, "b": 2.0, "c": 1.5, "x": 1.0}}, "B": {"q": {"a": 3.0, "b": 2.0, "c": 1.5, "y": 1.0}}}
    r = holes_report(qrels, runs, k=4)
    assert r.estimates.method == FALLBACK and "needs at least 20" in r.estimates.info["fallback"]


def test_interval_is_the_bounds_when_too_few_runs_to_calibrate():
    c = small(seed=8, systems=5)
    gone = unique_contributions(c.runs(), 5, {n: n for n in c.runs()})[c.names[0]]
    reduced = {q: {d: g for d, g in docs.items() if (q, d) not in gone} for q, docs in c.qrels().items()}
    r = holes_report(reduced, c.runs(), k=5, samples=20)
    s = r.runs[c.names[0]].summary()
    assert r.estimates.method == METHOD and s["estimate"]["interval"] == "bounds"
    assert (s["estimate"]["low"], s["estimate"]["high"]) == (s["min"], s["max"])
    assert "needs 9" in r.estimates.sentence()


def test_conformal_quantile_and_units_needed():
    assert units_needed(0.9) == 9 and units_needed(0.8) == 4 and units_needed(0.95) == 19
    scores = np.arange(1, 10)  # 9 scores: ceil(10 * 0.9) = 9th smallest
    assert conformal_quantile(scores, 0.9) == 9
    assert conformal_quantile(scores[:8], 0.9) == math.inf
    assert conformal_quantile(np.arange(1, 20), 0.5) == 10
    # groups: one score per group is the plain quantile; a group of many scores weighs as one
    assert conformal_quantile(scores, 0.9, groups=np.arange(9)) == 9
    grouped = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 100, 100])
    labels = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9])  # the three 100s: one group
    assert conformal_quantile(grouped, 0.8, groups=labels) == 9  # weight 8.8 of 10 reached at the 9th group
    assert conformal_quantile(grouped, 0.8) == 100  # as runs, the three 100s would push it up


def test_grade_model_recovers_a_known_model():
    """Three levels drawn from a continuation-ratio logistic model with known coefficients."""
    rng = np.random.default_rng(0)
    n = 20000
    X = rng.normal(size=(n, 2))
    b1, b2 = np.array([-1.0, 1.5, -0.5]), np.array([0.5, 0.0, 1.0])
    z = np.column_stack([np.ones(n), X])
    p1, p2 = 1 / (1 + np.exp(-z @ b1)), 1 / (1 + np.exp(-z @ b2))
    y = (rng.random(n) < p1).astype(int)
    y[y == 1] += rng.random(int(y.sum())) < p2[y == 1]
    model = fit_model(X, y, np.array([0, 1, 2]), ridge=0.0)
    # coefficients on the raw scale: slope / scale, intercept - sum(slope * center / scale)
    for fitted, true in zip(model.coef, (b1, b2)):
        slope = fitted[1:] / model.scale
        intercept = fitted[0] - (fitted[1:] * model.center / model.scale).sum()
        assert np.allclose(np.r_[intercept, slope], true, atol=0.08)
    probs = model.probabilities(X[:100])
    assert np.allclose(probs.sum(axis=1), 1.0) and (probs >= 0).all()


def test_auto_with_no_validated_method_states_the_fallback_as_its_source():
    """One run: the run prior estimates but nothing can validate it, so auto gives the fallback;
    its stated source is holes counted as not relevant, not the prior's (and a measure given by
    name is parsed on this path too)."""
    from judged.analyses.holes.estimate import Auto, estimate_runs
    from judged.analyses.holes.priors import RunPrior

    c = small(seed=2, systems=3)
    q, named = aligned_runs(c)
    pool = build_pool(named[:1], k=5)
    e = estimate_runs("nDCG@5", pool, source=Auto((("run-prior", RunPrior()),)), samples=5)
    assert e.method == FALLBACK and e.info["chosen_by"]["chosen"] is None
    assert "prior" not in e.info and e.describe()["source"].startswith("holes counted as not relevant")
    assert "no method had leave-one-out residuals" in e.info["fallback"]


def test_holes_are_read_inside_the_pseudo_holes_range():
    """A hole whose features lie beyond every pseudo-hole's is read at the edge of their range:
    the logistic model is not extrapolated (a new run's holes ranked higher by another run than
    any pseudo-hole was). A leave-out fit reads inside the other groups' range."""
    from judged.analyses.holes.grade_model import GradeDesign

    rng = np.random.default_rng(1)
    X = rng.uniform(0.0, 1.0, size=(400, 2))
    X[:50, 0] += 1.0  # group 1 alone reaches 2.0 on the first feature
    y = (rng.random(400) < 1 / (1 + np.exp(-(3 * X[:, 0] - 2)))).astype(int)
    groups = np.r_[np.ones(50, np.int64), np.zeros(350, np.int64)]
    design = GradeDesign(X, y, np.array([0, 1]), groups)
    model = design.fit()
    assert model.coef[0][1] > 0  # relevance rises with the first feature
    far, edge = np.array([[9.0, 0.5]]), np.array([[X[:, 0].max(), 0.5]])
    assert np.array_equal(model.probabilities(far), model.probabilities(edge))
    assert model.probabilities(edge)[0, 1] > model.probabilities(np.array([[1.0, 0.5]]))[0, 1]
    inside = np.array([[0.7, 0.5]])
    assert model.probabilities(inside)[0, 1] < model.probabilities(edge)[0, 1]
    without = design.fit_without(1)  # the others' range ends near 1.0
    assert without.high[0] == X[50:, 0].max() < 1.0 < model.high[0]
    assert np.array_equal(without.probabilities(far), without.probabilities(np.array([[X[50:, 0].max(), 0.5]])))
    assert model.to_dict()["range"]["high"][0] == X[:, 0].max()
    below, bottom = np.array([[0.5, -7.0]]), np.array([[0.5, X[:, 1].min()]])
    assert np.array_equal(model.probabilities(below), model.probabilities(bottom))
    absent = design.fit_without(7)  # no pseudo-hole of group 7: the whole range
    assert np.array_equal(absent.low, model.low) and np.array_equal(absent.high, model.high)


def test_maxgrade_caps_the_drawn_grades():
    c = small(seed=9)
    gone = unique_contributions(c.runs(), 5, {n: n for n in c.runs()})[c.names[1]]
    reduced = {q: {d: g for d, g in docs.items() if (q, d) not in gone} for q, docs in c.qrels().items()}
    r = holes_report(reduced, c.runs(), k=5, maxgrade=1, samples=20)
    for rh in r.runs.values():
        s = rh.summary()
        assert s["estimate"]["mean"] <= s["max"] + 1e-12 and s["estimate"]["high"] <= s["max"] + 1e-12


# ---------------------------------------------------------------------------
# calibration by simulation: truth known, leave-one-run-out


@pytest.mark.parametrize("level,lowest,highest", [(0.9, 0.80, 0.98), (0.6, 0.45, 0.75)])
def test_holdout_coverage_and_error_by_simulation(level, lowest, highest):
    """On generated pooled collections (seeds 10-15, 10 runs each) the 90% interval
    holds the full-qrels score for 80-98% of the runs held out (60 intervals: an exact
    90% interval covers fewer than 48 with probability 0.6%), no bound is violated,
    and the estimate's mean absolute error is below holes-as-zero's and condensed's.
    The 60% interval covers 45-75%: the coverage follows the nominal level, so an
    interval too narrow (or too wide, always covering) fails one of the two."""
    covered = intervals = violations = 0
    err = {"zero": [], "condensed": [], "estimate": []}
    for seed in range(10, 16):
        res = holdout(small(seed=seed).qrels(), small(seed=seed).runs(), k=5, samples=40, seed=seed, level=level)
        s = res.summary()
        covered += s["covered"]
        intervals += s["intervals"]
        violations += s["violations"]
        for r in res.runs:
            for key in err:
                err[key].append(abs(getattr(r, key) - r.full))
    assert violations == 0
    assert intervals >= 50 and lowest <= covered / intervals <= highest, covered / intervals
    assert np.mean(err["estimate"]) < np.mean(err["zero"]) and np.mean(err["estimate"]) < np.mean(err["condensed"])


def test_holdout_coverage_over_the_runs_it_tests(tmp_path, capsys):
    """A run that contributed nothing of its own to the pool (here: one the pool never
    reached) is scored on the full qrels either way; its holes are holes there too,
    counted as 0 in 'full', and an estimate filling them misses that number by design
    (the synthetic 59-run benchmark: 0/19 such runs covered, 37/40 pooled). The summary
    adds coverage and MAE over the runs whose held-out step removed judgments, and the
    text says them."""
    c = pooled_collection(12, 20, 20, pool_depth=5, pooled_runs=8, seed=4)
    res = holdout(c.qrels(), c.runs(), k=5, samples=20, seed=0)
    s = res.summary()
    tested = [r for r in res.runs if r.removed > 0]
    unpooled = [r for r in res.runs if r.removed == 0]
    assert len(tested) == 8 and len(unpooled) == 4 and all(r.full_holes > 0 for r in unpooled)
    assert s["intervals_tested"] == sum(r.interval != "exact" for r in tested)
    assert s["covered_tested"] == sum(r.covered for r in tested if r.interval != "exact")
    assert s["coverage_tested"] == pytest.approx(s["covered_tested"] / s["intervals_tested"])
    for key in ("zero", "condensed", "estimate"):
        assert s["mae_tested"][key] == pytest.approx(np.mean([abs(getattr(r, key) - r.full) for r in tested]))
    # the unpooled runs: the estimate fills holes 'full' counts as 0, so it lies above it; their
    # 'full' is no truth (judging their holes could move it far): left out of the errors, listed
    assert all(r.estimate > r.full for r in unpooled)
    assert {d["run"] for d in s["left_out"]} == {r.run for r in unpooled} and s["counted"] == 8
    assert s["mae"]["zero"] == pytest.approx(np.mean([abs(r.zero - r.full) for r in tested]))
    q, runs = write_collection(tmp_path, c)
    assert main(["meta", "holdout", q, *runs, "-k", "5", "--samples", "20"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (f"{len(unpooled)} runs left out of the errors and the coverage: judging the holes the full qrels leave "
            f"in their top 5 could move their full score by more than 0.02") in text
    h = s["holes_relevant"]  # what the estimate read of the counted runs' holes, against the full qrels
    assert h["truth"] == pytest.approx(sum(r.truth_relevant_holes for r in tested) / sum(r.holes for r in tested))
    assert (f"holes of the estimated runs read as relevant: {h['estimate']:.1%} by the estimate, {h['truth']:.1%} "
            f"judged relevant in the full qrels ({h['holes']} holes)") in text


# ---------------------------------------------------------------------------
# groups, JSON, command line


def test_run_groups_by_regex_and_file(tmp_path):
    names = ["runs/input.TEAMa1.gz", "runs/input.TEAMa2.gz", "runs/input.other_x.gz"]
    assert run_groups(names) == {names[0]: "TEAMa", names[1]: "TEAMa", names[2]: "other"}
    assert run_groups(names, regex=r"(TEAM|oth)") == {names[0]: "TEAM", names[1]: "TEAM", names[2]: "oth"}
    f = tmp_path / "groups.txt"
    f.write_text("# run group\ninput.TEAMa1 t1\ninput.TEAMa2.gz t1\nruns/input.other_x.gz t2\n")
    assert run_groups(names, mapping=str(f)) == {names[0]: "t1", names[1]: "t1", names[2]: "t2"}


def write_collection(tmp_path, coll):
    paths = coll.write(str(tmp_path))
    return paths["qrels"], paths["runs"]


def test_holdout_cli_json_keys(tmp_path, capsys):
    q, runs = write_collection(tmp_path, small(seed=2))
    assert main(["meta", "holdout", q, *runs, "-k", "5", "--samples", "20", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d) >= {"qrels", "measure", "convention", "k", "depth", "by", "level", "estimate", "runs", "summary"}
    assert set(d["runs"][0]) >= {"run", "group", "removed", "holes", "judged", "full", "zero", "condensed", "min",
                                 "max", "estimate", "low", "high", "interval", "covered", "violation"}
    assert set(d["summary"]) >= {"mae", "bias", "max_error", "coverage", "covered", "violations", "kendall_tau",
                                 "tau_ap", "mean_width"}
    assert set(d["summary"]["mae"]) == set(d["summary"]["kendall_tau"]) == {"zero", "condensed", "estimate"}
    assert d["estimate"]["method"] == METHOD and "Zobel" in d["estimate"]["source"] and d["level"] == 0.9
    # the summary is the runs' own: errors against full, coverage over the runs with an open interval
    runs, s = d["runs"], d["summary"]
    for key in ("zero", "condensed", "estimate"):
        assert s["mae"][key] == pytest.approx(np.mean([abs(r[key] - r["full"]) for r in runs]), abs=1e-15)
    open_ = [r for r in runs if r["interval"] == "conformal"]  # bounds: unlike the calibration runs
    assert s["intervals"] == len(open_) and s["covered"] == sum(r["covered"] for r in open_)
    assert all(r["covered"] == (r["low"] <= r["full"] <= r["high"]) for r in runs)
    assert s["violations"] == sum(not (r["min"] - 1e-12 <= r["full"] <= r["max"] + 1e-12) for r in runs) == 0
    full = [r["full"] for r in runs]
    assert s["kendall_tau"]["estimate"] == pytest.approx(kendall_tau(full, [r["estimate"] for r in runs]))


def test_holdout_cli_json_by_group(tmp_path, capsys):
    """--by group: each team held out together, one fit per team, its runs share a removal."""
    q, runs = write_collection(tmp_path, small(seed=2, families=3))
    assert main(["meta", "holdout", q, *runs, "-k", "5", "--by", "group", "--samples", "10", "--format",
                 "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    teams = {os.path.basename(r).split("-")[0] for r in runs}
    assert d["by"] == "group" and set(d["groups"]) == teams and len(d["estimate"]["fits"]) == len(teams)
    assert sorted(n for members in d["groups"].values() for n in members) == sorted(runs)
    for team, members in d["groups"].items():
        rows = [r for r in d["runs"] if r["run"] in members]
        assert {r["group"] for r in rows} == {team} and len({r["removed"] for r in rows}) == 1
    assert d["summary"]["held_out"] == len(teams) and d["summary"]["violations"] == 0


def test_holes_table_names_the_method_interval_and_coverage(tmp_path, capsys):
    """With enough runs to calibrate, the table and the JSON state the method, the
    conformal interval and its measured coverage, the same figures in both; the
    estimate stays apart from the exact bounds (its own column, its own line)."""
    q, runs = write_collection(tmp_path, small(seed=3, pool_depth=8))  # seed 2, pool depth 5: it fails its check
    assert main(["holes", q, *runs, "-k", "10", "--samples", "20", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    cal = d["estimate"]["calibration"]
    assert d["estimate"]["method"] == METHOD and cal["coverage"] is not None and d["estimate"]["level"] == 0.9
    unlike = set(cal["unlike"])  # judged top k relevant beyond the calibration runs' range: bounds, said so
    assert {r["estimate"]["interval"] for n, r in d["runs"].items() if n not in unlike} <= {"conformal", "exact"}
    assert all(d["runs"][n]["estimate"]["interval"] == "bounds" for n in unlike) and len(unlike) < len(d["runs"]) / 4
    for r in d["runs"].values():
        assert r["min"] - 1e-12 <= r["estimate"]["low"] <= r["estimate"]["high"] <= r["max"] + 1e-12
    assert main(["holes", q, *runs, "-k", "10", "--samples", "20"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert "and an estimate (not a bound)" in flat and "90% interval" in flat
    run = next(r for r in d["runs"].values() if r["estimate"]["interval"] == "conformal")
    assert f"{run['estimate']['low']:.4f}-{run['estimate']['high']:.4f}" in flat  # a conformal interval, in its column
    assert (f"estimate: {METHOD}, a grade model of holes fitted on {d['estimate']['fit']['pseudo_holes']} "
            f"leave-one-run-out pseudo-holes") in flat
    assert (f"90% conformal interval, measured coverage {cal['coverage']:.1%} ({cal['covered']}/{cal['runs']} runs, "
            f"leave-one-run-out on this collection)") in flat


def test_runs_with_the_same_top_k_are_held_out_together(tmp_path, capsys):
    """A copy of a run under another name has everything the run has: held out alone, neither
    would lose a judgment. Held out by run they go together, as `judged holes` counts them
    (one unit), losing what the pair alone contributed; every other run is held out alone."""
    c = small(seed=3, pool_depth=8)
    runs = dict(c.runs())
    first = sorted(runs)[0]
    runs["copy-of-first"] = runs[first]
    res = holdout(c.qrels(), runs, k=10, samples=10)
    rows = {r.run: r for r in res.runs}
    qrels = c.qrels()
    alone = {n: {(q, d) for q, d in pairs if d in qrels.get(q, {})}  # the judged pairs only n has in its top 10
             for n, pairs in unique_contributions(c.runs(), 10, {n: n for n in c.runs()}).items()}
    assert rows[first].group == rows["copy-of-first"].group == f"{first}+copy-of-first"
    assert rows[first].removed == rows["copy-of-first"].removed == len(alone[first]) > 0
    assert all(rows[n].group == n and rows[n].removed == len(alone[n]) for n in c.runs() if n != first)
    assert res.estimate["same_top_k"] == [[first, "copy-of-first"]] and res.summary()["held_out"] == len(c.runs())
    q, files = write_collection(tmp_path, c)
    twin = os.path.join(os.path.dirname(files[0]), "copy.run")
    with open(files[0]) as f, open(twin, "w") as g:
        g.write(f.read())
    assert main(["meta", "holdout", q, *files, twin, "-k", "10", "--samples", "10"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert f"runs with the same top 10 held out together as one run: {os.path.basename(files[0])} = copy.run" in flat


def test_holdout_cli_table_by_group(tmp_path, capsys):
    q, runs = write_collection(tmp_path, small(seed=2, families=3))
    assert main(["meta", "holdout", q, *runs, "-k", "5", "--by", "group", "--samples", "10"]) == 0
    out = capsys.readouterr().out
    assert "leave-one-group-out" in out and "holes as zero" in out and "condensed" in out and "bound violations" in out


def test_holes_json_keeps_its_keys_and_adds_the_method(tmp_path, capsys):
    q, runs = write_collection(tmp_path, small(seed=2))
    assert main(["holes", q, *runs[:4], "-k", "5", "--samples", "10", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for r in d["runs"].values():
        assert set(r["estimate"]) >= {"mean", "low", "high", "sd", "interval"}
    assert set(d["estimate"]) >= {"method", "source", "level", "fit", "calibration", "fallback", "model"}
    assert d["estimate"]["fit"]["pseudo_holes"] > 0 and "not a bound" in d["conventions"]["estimate"]


# holdout's measures: bounded exactly, by grade (nERR's bounds are conservative, the diversity ones by subtopic)
HOLDOUT = [n for n in BOUNDED if not family(n).subtopics and family(n).bounds == "exact"]


@pytest.mark.parametrize("argv,message", [
    (["--by", "group", "--group-regex", "zzz"], "judged: error: --group-regex 'zzz' does not match run 'run1'"),
    (["--by", "group", "--group-regex", "("], "judged: error: --group-regex '(' is not a regular expression"),
    (["--groups", "g.txt"], "judged: error: --groups and --group-regex go with --by group"),
    (["-k", "0"], "judged: error: -k must be a positive integer, got 0"),
    (["--level", "1.5"], "judged: error: --level must be between 0 and 1, got 1.5"),
    (["-m", "Bpref"], "judged: error: holdout bounds and estimates are defined for "
                      + ", ".join(HOLDOUT) + ", not Bpref"),
    (["-m", "P-IA@10"], "judged: error: holdout bounds and estimates are defined for "
                        + ", ".join(HOLDOUT) + ", not P-IA"),
    (["-m", "nERR@10"], "judged: error: holdout bounds and estimates are defined for "
                        + ", ".join(HOLDOUT) + ", not nERR"),
    (["--by", "group", "--group-regex", "r"], "judged: error: leave-one-group-out needs at least two groups; every "
                                              "run is in 'r'"),
])
def test_holdout_cli_errors_are_one_line(tmp_path, monkeypatch, capsys, argv, message):
    c = small(seed=2, systems=3)
    paths = c.write(str(tmp_path))
    for k, p in enumerate(paths["runs"]):
        (tmp_path / "runs" / f"run{k + 1}.run").write_text(open(p).read())
    monkeypatch.chdir(tmp_path)
    runs = [f"runs/run{k + 1}.run" for k in range(3)]
    assert main(["meta", "holdout", "qrels.txt", *runs, *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and "\n" not in err


def test_holdout_needs_two_runs(tmp_path, capsys):
    q, runs = write_collection(tmp_path, small(seed=2, systems=2))
    assert main(["meta", "holdout", q, runs[0]]) == 2
    assert capsys.readouterr().err.strip() == "judged: error: leave-one-run-out needs at least two runs"


def test_reference_runs_are_evidence_not_reported(tmp_path, capsys):
    c = small(seed=3)
    runs = c.runs()
    gone = unique_contributions(runs, 5, {n: n for n in runs})[c.names[0]]
    reduced = {q: {d: g for d, g in docs.items() if (q, d) not in gone} for q, docs in c.qrels().items()}
    new, pooled = c.names[0], [n for n in c.names[1:]]
    alone = holes_report(reduced, {new: runs[new]}, k=5, samples=20)
    assert alone.estimates.method == FALLBACK  # one run: nothing to learn from
    with_refs = holes_report(reduced, {new: runs[new]}, k=5, samples=20, reference={n: runs[n] for n in pooled})
    assert list(with_refs.runs) == [new] and with_refs.pairs == []
    assert with_refs.estimates.method == METHOD
    fit = with_refs.to_dict()["estimate"]["fit"]
    assert fit["reference_runs"] == len(pooled) and fit["units"] == len(c.names)
    # the same as reporting every run, for the new one
    every = holes_report(reduced, runs, k=5, samples=20)
    assert with_refs.runs[new].summary()["estimate"] == every.runs[new].summary()["estimate"]
    # the CLI: a reference also given as a run is read once
    paths = c.write(str(tmp_path))
    q = write_qrels(tmp_path / "reduced.txt", reduced)
    assert main(["holes", q, paths["runs"][0], "-k", "5", "--samples", "10", "--reference", *paths["runs"],
                 "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert list(d["runs"]) == [paths["runs"][0]] and d["estimate"]["fit"]["reference_runs"] == len(c.names) - 1


@pytest.mark.parametrize("measure", ["nDCG@5", "nDCG(gain=exp)@5", "AP@5", "nERR@5"])
def test_capped_draws_count_as_the_capped_grade_in_the_ideal(measure):
    """A model sure of the top grade, with maxgrade=1: every hole is a 1 in the ranking
    and in the ideal, so the drawn score is the kernel's on the qrels with the holes
    judged 1 (not 1 in the ranking and 3 in the ideal)."""
    from judged.analyses.holes.grade_model import HoleModel
    from judged.core.measures.bounds import fill

    c = small(seed=4)
    _, named = aligned_runs(c)
    pool = build_pool(named, k=5)
    world = make_world(pool, unit_removal(pool, [0]))
    L = len(pool.levels)
    sure = HoleModel(pool.levels, np.zeros(6), np.ones(6), np.tile(np.r_[60.0, np.zeros(6)], (L - 1, 1)))
    (got,) = score_cases(measure, pool, world, [Case(0, -1, sure, 3)], maxgrade=1)
    a = world_aligned(pool, world, 0)
    r = a.ranked
    grade = np.where(np.isnan(r.grade) & (r.pos < 5), 1.0, np.nan)
    want = Measure.parse(measure).compute(fill(a, r, grade))
    assert got.holes > 0 and L == 4
    np.testing.assert_allclose(got.per_query, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("chunk", [1 << 18, 7 * 50, 1], ids=["all draws at once", "7 draws at a time", "one"])
def test_drawn_levels_are_the_count_of_levels_each_draw_passes(chunk, monkeypatch):
    # a hole's level is how many of its cumulative probabilities the uniform draw exceeds;
    # counted in bytes up to 256 levels, in int64 beyond: the same integers either way, and
    # the same draws whether the uniforms are drawn all at once or a few draws at a time
    from judged.analyses.holes import drawn_scores as hole_draws

    monkeypatch.setattr(hole_draws, "DRAW_CHUNK", chunk)
    for levels in (2, 4, 300):
        rng = np.random.default_rng(levels)
        probs = rng.dirichlet(np.ones(levels), size=50)
        got = hole_draws._draw(probs, 30, np.random.default_rng(1))
        cum = np.cumsum(probs, axis=1)
        cum[:, -1] = 1.0
        u = np.random.default_rng(1).random((30, 50))
        assert got.dtype == (np.uint8 if levels <= 256 else np.int64)
        assert np.array_equal(got, (u[:, :, None] > cum[None, :, :-1]).sum(axis=2))


def test_per_draw_sums_are_the_same_bits_a_few_draws_at_a_time(monkeypatch):
    """np.bincount adds each bin's terms in order: summing a few draws at a time changes no bit."""
    from judged.analyses.holes import drawn_scores as hole_draws

    rng = np.random.default_rng(3)
    d, nq, q = 40, 7, rng.integers(0, 7, 300)
    w = rng.random((d, 300)) / np.log2(rng.integers(2, 12, 300) + 1.0)
    at = (np.arange(d)[:, None] * nq + q[None, :]).ravel()
    whole = np.bincount(at, weights=w.ravel(), minlength=d * nq).reshape(d, nq)
    for chunk in (1 << 18, 3 * 300, 1):
        monkeypatch.setattr(hole_draws, "DRAW_CHUNK", chunk)
        assert hole_draws._per_draw_sums(d, nq, q, lambda s, e: w[s:e]).tobytes() == whole.tobytes()


def test_compat_estimate_reads_its_ideal(example):
    """The estimate scores Compat with every relevant judgment in its ideal: a query with no
    hole to fill keeps its zero-filled value, and no estimate passes 1 (the stacked
    judgments once left Compat's ideal out: bm25.run of the example scored 1.59)."""
    r = holes_report(str(example / "qrels.txt"), [str(example / "bm25.run"), str(example / "dense.run")], k=10,
                     measure="Compat", samples=20, bounds_over="run")  # each run's holes alone: its own ideal
    for rh in r.runs.values():
        unfilled = rh.holes == 0
        assert unfilled.any() or rh.name.endswith("dense.run")
        np.testing.assert_allclose(rh.estimate[unfilled], rh.score[unfilled], rtol=1e-12, atol=0)
        assert (rh.estimate <= 1 + 1e-12).all() and rh.estimate.mean() >= rh.low.mean() - 1e-12


def with_an_unlike_run():
    """A small collection's qrels and runs, and a new run whose judged documents are all
    relevant, the other half of its top 6 holes (seed 3 fails the check by 0.0001)."""
    c = small(seed=1)
    qrels, runs = c.qrels(), c.runs()
    new = {}
    for q, docs in qrels.items():
        rel = sorted((d for d, g in docs.items() if g > 0), key=lambda d: -docs[d])[:3]
        ranked = [x for d in rel for x in (d, f"never-judged-{q}-{d}")]
        new[q] = {d: 100.0 - i for i, d in enumerate(ranked)}
    return qrels, runs, new


def test_a_run_unlike_the_calibration_runs_gets_the_bounds_and_the_reason():
    """The conformal interval assumes the run is exchangeable with the runs whose leave-one-out
    residuals calibrate it. A new run whose judged top k is relevant far more often than any of
    theirs (here: every judged document it ranks is relevant, its other half holes) is not: its
    interval is the bounds, the JSON lists it under calibration.unlike and the sentence says why."""
    from judged.analyses.holes.unjudged import holes_report

    qrels, runs, new = with_an_unlike_run()
    report = holes_report(qrels, {**runs, "new": new}, k=6, samples=20)
    cal = report.estimates.info["calibration"]
    assert "new" in cal["unlike"] and cal["relevant_share"][1] < 1.0
    assert report.runs["new"].estimate_detail.interval == "bounds"
    assert len(cal["unlike"]) < len(runs) / 4  # the collection's own runs stay calibrated
    assert "unlike the calibration runs" in report.estimates.sentence()


def test_a_calibration_run_is_read_as_it_was_calibrated_and_stays_like_them():
    """Every run is compared with the calibration runs as they were read when they gave their
    residuals: without the judgments it alone contributed. A pooled run whose own
    contributions are all relevant (its judged top k 86% relevant with them, against the
    others' 27-68% without theirs) is one of the calibration runs, not unlike them (robust03's
    17 runs given together: 2 were set apart from themselves, and over the pool every run's
    interval went to the bounds)."""
    from judged.analyses.holes.unjudged import holes_report

    c = small(seed=1)
    qrels, runs, full = c.qrels(), c.runs(), c.qrels(complete=True)
    top = lambda run, q, n: sorted(run.get(q, {}), key=lambda d: (-run[q][d], d))[:n]
    mine = {}
    for q in qrels:  # three relevant documents no other run has in its top 5, judged as its own
        pooled = {d for r in runs.values() for d in top(r, q, 5)}
        own = [d for d, g in sorted(full[q].items(), key=lambda x: (-x[1], x[0])) if g > 0 and d not in pooled][:3]
        ranked = own + top(runs[next(iter(runs))], q, 1) + [f"never-judged-{q}"]
        mine[q] = {d: 100.0 - i for i, d in enumerate(ranked)}
        qrels[q].update({d: full[q][d] for d in own})
    report = holes_report(qrels, {**runs, "mine": mine}, k=5, samples=10, estimate_over="run")
    cal, est = report.estimates.info["calibration"], report.runs["mine"].estimate_detail
    assert est.details["relevant_share"] > cal["relevant_share"][1]  # with its own judgments: beyond the range
    assert cal["unlike"] == [] and est.interval == "conformal"


def test_over_the_pool_one_unlike_run_leaves_no_interval_calibrated():
    """Over the pool (and at the midpoint) every run's ideal holds the other runs' holes: with
    one run unlike the calibration runs, the ideal is an extrapolation for every run and no
    interval is calibrated (DL 2019, traditional runs pooled: the 4 neural runs the per-run
    rule left conformal covered 0 of 4). Over each run's own holes only the unlike run's is
    the bounds."""
    from judged.analyses.holes.unjudged import holes_report

    qrels, runs, new = with_an_unlike_run()
    kinds = {}
    for over in ("run", "pool", "midpoint"):
        report = holes_report(qrels, {**runs, "new": new}, k=6, samples=20, estimate_over=over)
        cal = report.estimates.info["calibration"]
        assert cal["unlike"] == ["new"]
        kinds[over] = {n: r.estimate_detail.interval for n, r in report.runs.items()}
        said = "interval = the bounds for every run" in report.estimates.sentence()
        assert said == (over != "run") == bool(cal.get("unlike_in_ideal"))
    assert kinds["run"]["new"] == "bounds" and "conformal" in set(kinds["run"].values())
    assert set(kinds["pool"].values()) <= {"bounds", "exact"} and set(kinds["midpoint"].values()) <= {"bounds", "exact"}


def test_an_unlike_run_without_holes_of_its_own_leaves_the_others_calibrated():
    """A run unlike the calibration runs but with no holes of its own (every document of its
    top k judged) puts nothing in the other runs' ideals: only its own interval is the bounds.
    Its top 6 are judged documents the pooled runs also retrieved, the relevant first (share
    outside the calibration runs'). DL 2019's 37 runs over the pool: two of its three unlike
    runs (UNH_bm25, bm25tuned_p) have no hole, and gave all 34 conformal intervals the bounds."""
    from judged.analyses.holes.unjudged import holes_report

    c = small(seed=5)
    qrels, runs = c.qrels(), c.runs()
    pooled = {}
    for run in runs.values():
        for q, docs in run.items():
            pooled.setdefault(q, set()).update(sorted(docs, key=lambda d: -docs[d])[:5])
    new = {}
    for q, docs in qrels.items():
        judged = [d for d, g in sorted(docs.items(), key=lambda x: -x[1]) if d in pooled.get(q, ())]
        new[q] = {d: 100.0 - i for i, d in enumerate(judged[:6])}
    report = holes_report(qrels, {**runs, "new": new}, k=6, samples=20, estimate_over="pool")
    cal = report.estimates.info["calibration"]
    assert cal["unlike"] == ["new"] and int(report.runs["new"].holes.sum()) == 0
    assert not cal.get("unlike_in_ideal")
    assert report.runs["new"].estimate_detail.interval == "bounds"
    assert "conformal" in {r.estimate_detail.interval for n, r in report.runs.items() if n != "new"}
    assert "for every run" not in report.estimates.sentence()


def test_runs_with_the_same_top_k_are_one_unit_and_no_vote_for_each_other():
    """A run given twice (or two runs with one top k) is one system to the pool: one unit,
    its twin's rows are no second vote, and its holes are not read as ranked high by another
    system; a run differing below the top k alone is the same list there."""
    c = small(seed=2, systems=4)
    q = read_qrels(c.qrels())
    runs = c.runs()
    first = c.names[0]
    deeper = {qid: {d: (s if s >= sorted(docs.values())[-5] else s - 1000.0) for d, s in docs.items()}
              for qid, docs in runs[first].items()}  # same top 5, everything below moved down
    named = [(n, align(q, read_run(r, name=n), Settings())) for n, r in runs.items()]
    named.append(("twin", align(q, read_run(runs[first], name="twin"), Settings())))
    named.append(("deeper", align(q, read_run(deeper, name="deeper"), Settings())))
    pool = build_pool(named, k=5)
    assert pool.unit[0] == pool.unit[-2] == pool.unit[-1] and len(set(pool.unit.tolist())) == len(runs)
    assert pool.same_lists == [[first, "twin", "deeper"]]
    alone = build_pool(named[:len(runs)], k=5)  # without the copies: the same votes and best ranks
    rows, rows_alone = pool.rows_of(0), alone.rows_of(0)
    assert (pool.votes[rows] == alone.votes[rows_alone]).all()
    assert (pool.best_other[rows] == alone.best_other[rows_alone]).all()
    est = holes_report(q, {n: r for n, r in runs.items()} | {"twin": runs[first]}, k=5, samples=10).estimates
    assert est.info["fit"]["same_top_k"] == [[first, "twin"]] and est.info["fit"]["unit"] == "run"
    assert f"counted as one run: {first} = twin" in est.sentence()


def test_the_sentence_gives_the_checks_figures_without_an_interval_too():
    """With too few runs to calibrate an interval the check still ran: its leave-one-out
    MAE and holes-as-zero's are said beside the bounds (new runs alone on old qrels, where
    they are the only evidence the user gets)."""
    from judged.analyses.holes.unjudged import holes_report

    c = small(seed=1, systems=4, pool_depth=20)  # 4 runs: the check passes, no interval
    report = holes_report(c.qrels(), c.runs(), k=10, samples=10)
    lo, text = report.estimates.info["loro"], report.estimates.sentence()
    assert report.estimates.info["calibration"]["coverage"] is None and "not an estimate interval" in text
    assert f"leave-one-run-out MAE {lo['mae_estimate']:.4f} (holes as zero {lo['mae_zero']:.4f})" in text
