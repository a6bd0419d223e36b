"""Bounds over the pool: a run's min and max, and every pair's interval, range over every
labelling of every hole in the top k of *all* runs given (one label per document, shared).

The reference is brute force: every labelling of the pool's holes written into the qrels and
every run scored by pytrec_eval (trec_eval's own code), independent of judged's kernels.
"""

from itertools import product

import numpy as np
import pytest

from judged.analyses.holes.unjudged import holes_report
from judged.core.align import align
from judged.core.io import read_qrels, read_run
from judged.core.measures import Measure
from judged.core.measures.bounds import pool_extras

pytrec_eval = pytest.importorskip("pytrec_eval")

TREC_NAME = {"nDCG": "ndcg_cut_{k}", "P": "P_{k}", "AP": "map_cut_{k}", "R": "recall_{k}"}


def small_collection(seed: int, runs: int = 3, queries: int = 2, k: int = 3, max_pool_holes: int = 5):
    """A collection whose pool (the runs' top k) holds at most ``max_pool_holes`` holes a query."""
    rng = np.random.default_rng(seed)
    while True:
        qrels, run_dicts = {}, {f"r{i}": {} for i in range(runs)}
        for q in range(queries):
            docs = [f"d{j}" for j in range(k + 4)]
            judged = rng.random(len(docs)) < 0.5
            qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d, j in zip(docs, judged) if j}
            qrels[f"q{q}"][f"u{q}"] = int(rng.integers(1, 3))  # judged, no run retrieves it
            for r in run_dicts:
                chosen = rng.choice(len(docs), size=k + 1, replace=False)
                run_dicts[r][f"q{q}"] = {docs[c]: float(k + 1 - i) for i, c in enumerate(chosen)}
        holes = {q: {d for r in run_dicts.values() for d, s in sorted(r[q].items(), key=lambda x: -x[1])[:k]
                     if d not in qrels[q]} for q in qrels}
        if all(len(h) <= max_pool_holes for h in holes.values()) and any(holes.values()):
            return qrels, run_dicts, holes


def brute_force(qrels, runs, holes, family, k, maxgrade=2):
    """Per run and query the min and max over every labelling of the pool's holes, and per
    pair of runs the min and max of the per-query difference, by pytrec_eval."""
    name = TREC_NAME[family].format(k=k)
    measure_set = {"nDCG": "ndcg_cut", "P": "P", "AP": "map_cut", "R": "recall"}[family]
    lows, highs, pair_lo, pair_hi = {}, {}, {}, {}
    for q, docs in holes.items():
        docs = sorted(docs)
        values = {r: [] for r in runs}
        for labels in product(range(maxgrade + 1), repeat=len(docs)):
            ev = pytrec_eval.RelevanceEvaluator({q: {**qrels[q], **dict(zip(docs, labels))}}, {measure_set})
            for r in runs:
                values[r].append(ev.evaluate({q: runs[r][q]})[q][name])
        for r in runs:
            lows[(r, q)], highs[(r, q)] = min(values[r]), max(values[r])
        for a in runs:
            for b in runs:
                if a < b:
                    d = np.array(values[a]) - np.array(values[b])
                    pair_lo[(a, b, q)], pair_hi[(a, b, q)] = d.min(), d.max()
    return lows, highs, pair_lo, pair_hi


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("family", ["nDCG", "P", "AP", "R"])
def test_pool_bounds_equal_brute_force(seed, family):
    k = 5  # one of trec_eval's cutoffs (5, 10, 15, ...)
    qrels, runs, holes = small_collection(seed, k=k)
    report = holes_report(qrels, runs, k=k, measure=f"{family}@{k}", maxgrade=2, samples=1)
    lows, highs, pair_lo, pair_hi = brute_force(qrels, runs, holes, family, k)
    for r, rh in report.runs.items():
        for i, q in enumerate(rh.aligned.qids.astype(str)):
            assert rh.low[i] == pytest.approx(lows[(r, q)], abs=1e-12), (r, q)
            assert rh.high[i] == pytest.approx(highs[(r, q)], abs=1e-12), (r, q)
    nq = len(qrels)
    for p in report.pairs:
        lo = sum(pair_lo[(p.a, p.b, q)] for q in qrels) / nq
        hi = sum(pair_hi[(p.a, p.b, q)] for q in qrels) / nq
        if p.exact:  # nDCG: exact over the joint labelling
            assert (p.low, p.high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
        else:  # conservative: holds every labelling
            assert p.low <= lo + 1e-12 and p.high >= hi - 1e-12


def test_the_other_runs_holes_lower_the_min():
    """Run A ranks a judged grade-1 document first and has no hole: over its own holes its
    nDCG@1 is exactly 1. Run B's hole may be graded 2 when the pool is judged; it then takes
    the ideal's first place, and A's nDCG@1 falls to 1/2."""
    qrels = {"q": {"a": 1}}
    runs = {"A": {"q": {"a": 2.0}}, "B": {"q": {"b": 2.0}}}
    pool = holes_report(qrels, runs, k=1, maxgrade=2, samples=1)
    own = holes_report(qrels, runs, k=1, maxgrade=2, samples=1, bounds_over="run")
    assert (own.runs["A"].low[0], own.runs["A"].high[0]) == (1.0, 1.0)
    assert (pool.runs["A"].low[0], pool.runs["A"].high[0]) == (0.5, 1.0)  # ideal 2 at rank 1: 1/2
    assert "holes=pool" in pool.conventions()["min"] and "holes=run" in own.conventions()["min"]
    assert pool.to_dict()["bounds_over"] == "pool" and "no run retrieved" in pool.to_dict()["beyond_pool"]


def test_pool_extras_count_docids_not_hashes():
    """Two docids of one query sharing a hash must count as two holes of the pool."""
    qrels = read_qrels({"q": {"j": 1}})
    runs = [read_run({"q": {"x": 2.0, "j": 1.0}}), read_run({"q": {"y": 2.0, "j": 1.0}})]
    aligned = [align(qrels, r) for r in runs]
    m = Measure.parse("nDCG@2")
    assert [e.tolist() for e in pool_extras(m, aligned)] == [[1], [1]]
    for a in aligned:  # the same hash for x and y: the keys collide, the strings decide
        a.run.docid_hash[:] = 7
    assert [e.tolist() for e in pool_extras(m, aligned)] == [[1], [1]]


def test_bounds_over_is_checked():
    from judged.core.errors import ConventionError

    with pytest.raises(ConventionError, match="pool"):
        holes_report({"q": {"a": 1}}, {"A": {"q": {"a": 1.0}}}, k=1, bounds_over="runs")
