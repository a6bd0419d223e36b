"""What the estimate predicts: judging the pool of the runs (their holes together, one label
per document) or each run's own holes. An oracle grade source that knows every hole's true
grade must give exactly the score that judging gives, for every measure the estimate draws."""

import numpy as np
import pytest

from judged.analyses.holes.estimate import estimate_runs
from judged.analyses.holes.collection import build_pool, make_world
from judged.analyses.holes.unjudged import holes_report
from judged.analyses.meta.synthetic import pooled_collection
from judged.core.align import align
from judged.core.conventions import Settings
from judged.core.errors import ConventionError
from judged.core.evaluation import evaluate
from judged.core.io import read_qrels, read_run


class Oracle:
    """Every hole's true grade, with probability 1."""

    method = "oracle"

    def __init__(self, truth: dict):
        self.truth = truth

    def describe(self) -> dict:
        return {"method": self.method, "source": "the true grades"}

    def fit_without(self, unit):
        return self

    def grade_probabilities(self, pool, world, rows, minus):
        out = np.zeros((len(rows), len(pool.levels)))
        for j, row in enumerate(np.asarray(rows).tolist()):
            a = pool.aligned[pool.run[row]]
            r = pool.rrow[row]
            qid = a.qids.astype(str)[a.ranked.q[r]]
            grade = max(self.truth.get(qid, {}).get(a.docids(a.ranked.row[[r]])[0], 0), 0)
            out[j, np.searchsorted(pool.levels, grade)] = 1.0
        return out


def cut_and_truths(seed: int, k: int = 5):
    coll = pooled_collection(6, 8, 15, pool_depth=k, seed=seed)
    full, runs = coll.qrels(), coll.runs()
    names = sorted(runs)
    pooled, scored = names[:3], names[3:]
    top = lambda name: {q: sorted(d, key=lambda x: (-d[x], x))[:k] for q, d in runs[name].items()}
    cut = {}
    for name in pooled:
        for q, docs in top(name).items():
            cut.setdefault(q, {}).update({d: full[q][d] for d in docs if d in full.get(q, {})})
    return full, runs, cut, scored, top


@pytest.mark.parametrize("measure", ["nDCG@5", "AP@5", "P@5", "R@5", "nDCG(gain=exp)@5"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_oracle_predicts_judging_exactly(measure, seed):
    full, runs, cut, scored, top = cut_and_truths(seed)
    q = read_qrels(cut)
    named = [(n, align(q, read_run(runs[n], name=n), Settings(complete=True))) for n in scored]
    pool = build_pool(named, 5)
    oracle = Oracle(full)
    for over in ("pool", "run"):
        est = estimate_runs(measure, pool, make_world(pool), samples=2, source=oracle, over=over, check=False,
                            bounds={i: (0.0, 1.0) for i in range(len(scored))})
        for i, name in enumerate(scored):
            judged = {qid: dict(v) for qid, v in cut.items()}
            for other in (scored if over == "pool" else [name]):  # judging the pool, or the run's own holes
                for qid, docs in top(other).items():
                    if qid in judged:
                        judged[qid].update({d: full[qid][d] for d in docs if d in full.get(qid, {})})
            truth = evaluate(judged, {name: runs[name]}, [measure], complete=True).mean().loc[name, measure]
            assert est.runs[i].value == pytest.approx(truth, abs=1e-12), (over, name)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_holes_read_as_relevant_are_those_an_oracle_knows(seed):
    """Each run's ``relevant_holes`` is the expected count of its holes read as relevant: with
    the true grades as the source, the count of its top-k holes the full qrels judge relevant;
    the sentence gives their share over every run."""
    full, runs, cut, scored, top = cut_and_truths(seed)
    q = read_qrels(cut)
    named = [(n, align(q, read_run(runs[n], name=n), Settings(complete=True))) for n in scored]
    pool = build_pool(named, 5)
    est = estimate_runs("nDCG@5", pool, make_world(pool), samples=2, source=Oracle(full), over="run", check=False,
                        bounds={i: (0.0, 1.0) for i in range(len(scored))})
    holes = relevant = 0
    for i, name in enumerate(scored):
        mine = [(qid, d) for qid, docs in top(name).items() if qid in cut for d in docs if d not in cut[qid]]
        truly = sum(full.get(qid, {}).get(d, 0) > 0 for qid, d in mine)
        assert est.runs[i].details["holes"] == len(mine)
        assert est.runs[i].details["relevant_holes"] == pytest.approx(truly, abs=1e-9)
        holes, relevant = holes + len(mine), relevant + truly
    assert holes and 0 < relevant < holes
    assert f"it reads {relevant / holes:.1%} of the {holes} holes it fills, in the top 5, as relevant" in est.sentence()


def test_estimate_over_is_the_runs_own_holes_unless_given():
    full, runs, cut, scored, _ = cut_and_truths(4)
    given = {n: runs[n] for n in scored}
    kw = dict(k=5, samples=30, estimate="run-prior")  # three new runs: the grade model has no pseudo-holes
    default = holes_report(cut, given, **kw)
    pool = holes_report(cut, given, estimate_over="pool", **kw)
    own = holes_report(cut, given, bounds_over="run", **kw)
    # three runs: no halves to hold out (over_choice needs 4 units), so the default ('auto') predicts
    # judging the run's own holes, whatever the bounds range over
    assert default.estimates.info["fit"]["over_choice"]["chosen"] == "run"
    for n in scored:
        assert own.runs[n].summary()["estimate"]["mean"] == default.runs[n].summary()["estimate"]["mean"]
    assert default.bounds_over == "pool" and own.bounds_over == "run"
    assert any(pool.runs[n].summary()["estimate"]["mean"] < own.runs[n].summary()["estimate"]["mean"]
               for n in scored)  # the others' holes raise the ideal


@pytest.mark.parametrize("seed", [1, 2])
def test_the_midpoint_is_the_mean_of_pool_and_run_and_its_interval_holds_both(seed):
    full, runs, cut, scored, _ = cut_and_truths(seed)
    q = read_qrels(cut)
    named = [(n, align(q, read_run(runs[n], name=n), Settings(complete=True))) for n in scored]
    pool = build_pool(named, 5)
    oracle = Oracle(full)
    kw = dict(samples=2, source=oracle, check=False, bounds={i: (0.0, 1.0) for i in range(len(scored))})
    got = {over: estimate_runs("nDCG@5", pool, make_world(pool), over=over, **kw) for over in ("pool", "run", "midpoint")}
    differ = 0
    for i in range(len(scored)):
        p, r, m = (got[over].runs[i] for over in ("pool", "run", "midpoint"))
        assert m.value == pytest.approx((p.value + r.value) / 2, abs=1e-12)
        assert m.per_query == pytest.approx((p.per_query + r.per_query) / 2, abs=1e-12)
        assert m.low <= min(p.value, r.value) + 1e-12 and m.high >= max(p.value, r.value) - 1e-12
        differ += p.value != r.value
    assert differ  # the others' holes changed some run's ideal: the test compares two different scores


@pytest.mark.parametrize("seed", [1, 2])
def test_the_own_holes_interval_holds_what_judging_the_pool_gives(seed):
    """Over each run's own holes (the default), with several runs to estimate, the interval also
    holds the estimate over their pool: the user may judge the other runs' holes too. Ten pooled
    runs calibrate a conformal interval; six never pooled are estimated; the point stays the
    own-holes one."""
    coll = pooled_collection(16, 20, 20, pool_depth=10, pooled_runs=10, seed=seed)
    q = read_qrels(coll.qrels())
    named = [(n, align(q, read_run(r, name=n), Settings(complete=True))) for n, r in coll.runs().items()]
    pool = build_pool(named, 10)
    targets = list(range(10, 16))
    kw = dict(targets=targets, samples=20, check=False)
    own = estimate_runs("nDCG@10", pool, over="run", **kw)
    judged_pool = estimate_runs("nDCG@10", pool, over="pool", **kw)
    stretched, conformal = 0, 0
    for i in targets:
        o, p = own.runs[i], judged_pool.runs[i]
        assert o.low - 1e-12 <= p.value <= o.high + 1e-12 and o.low - 1e-12 <= o.value <= o.high + 1e-12
        conformal += o.interval == "conformal"
        stretched += o.interval == "conformal" and (p.value < o.low + 1e-9 or p.value > o.high - 1e-9)
    assert conformal >= 3 and stretched  # an interval's end is the pool's point: without it, it would not hold it


def test_estimate_over_refuses_an_unknown_value():
    full, runs, cut, scored, _ = cut_and_truths(4)
    with pytest.raises(ConventionError, match="midpoint"):
        holes_report(cut, {n: runs[n] for n in scored}, k=5, samples=5, estimate="run-prior", estimate_over="middle")


@pytest.mark.parametrize("protocol, kw", [("shift", dict(measure="nDCG@5", seeds=1)), ("loro", dict(measure="nDCG@20")),
                                          ("loro", dict(measure="AP", depth=20)), ("shift", dict(seeds=1))])
def test_meta_holdout_counts_the_holes_the_estimate_fills(monkeypatch, protocol, kw):
    """`judged meta holdout` sets the holes each estimate reads as relevant beside those its truth
    judges relevant: with the true grades as the source both count the same holes (those above
    the fill depth, min(cutoff, max(k, pool depth))), so every run's two counts and the
    summary's two shares are equal, whatever the measure's cutoff against k."""
    import judged.analyses.holes.unjudged as unjudged
    import judged.analyses.meta.holdout as holdout_module

    coll = pooled_collection(8, 15, 30, pool_depth=10 if protocol == "shift" else 30, seed=4)
    qrels = coll.qrels()
    for module in (unjudged, holdout_module):
        monkeypatch.setattr(module, "estimate_source", lambda name: Oracle(qrels))
    res = holdout_module.holdout(qrels, coll.runs(), k=10, protocol=protocol, samples=2, **kw)
    rows = res.runs if protocol == "loro" else [r for c in res.cells for r in c.runs]
    read = [r for r in rows if r.estimate_relevant_holes is not None]
    assert read and all(r.estimate_relevant_holes == pytest.approx(r.truth_relevant_holes) for r in read)
    h = (res.summary()["all"] if protocol == "shift" else res.summary())["holes_relevant"]
    assert h["holes"] == sum(r.read_holes for r in read) and h["truth"] > 0
    assert h["estimate"] == pytest.approx(h["truth"])
