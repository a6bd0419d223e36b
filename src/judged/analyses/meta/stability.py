"""Stability of a system ranking: do two qrels versions, two measures or two conventions
put the runs in the same order?

* Kendall's tau (tau-b, which corrects for ties as scipy.stats.kendalltau does):
  (concordant - discordant) / sqrt((pairs - ties in x) * (pairs - ties in y)).
* tau_AP (Yilmaz, Aslam & Robertson, SIGIR 2008): an AP-like rank correlation that
  weighs swaps near the top more. For a ranking of N items judged against a reference
  ranking, tau_AP = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1, where C(i) counts the
  items above rank i that the reference also puts above the item at rank i. It is not
  symmetric: the reference is the first condition. Equal scores are ordered by the run
  names' order as given (a declared tie-break; tau_AP has no tie correction).
* swaps: pairs of runs whose order differs between the conditions (a pair tied under
  either condition is not a swap); the swap rate is swaps / pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.conventions import Settings
from ...core.errors import JudgedError
from ..stats import row_tolerances, tie_sign
from ...core.querysets import common_queries, mean_over, refuse_disjoint_runs
from ...core.evaluation import evaluate


def kendall_tau(x, y) -> float:
    """Kendall's tau-b between two score vectors over the same items (NaN if either is constant)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise JudgedError("kendall_tau needs two score vectors of the same length")
    return float(kendall_taus(x[None, :], y)[0])


def kendall_taus(xs, y) -> np.ndarray:
    """:func:`kendall_tau` of each row of ``xs`` against ``y`` (the same bits: the tie
    tolerance of each row its own, every sum a count)."""
    xs, y = np.asarray(xs, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xs.ndim != 2 or y.ndim != 1 or xs.shape[1] != len(y):
        raise JudgedError("kendall_taus needs a matrix of score vectors as long as the reference")
    i, j = np.triu_indices(len(y), k=1)
    sy = tie_sign(y[i] - y[j], y)  # judged.analyses.stats' tolerance rule, each row of xs its own below
    tol = row_tolerances(xs)[:, None]
    d = xs[:, i] - xs[:, j]
    sx = np.where(d > tol, 1.0, np.where(d < -tol, -1.0, 0.0))
    concordant_minus_discordant = (sx * sy).sum(axis=1)
    denom = np.sqrt((sx != 0).sum(axis=1).astype(np.float64) * float((sy != 0).sum()))
    out = np.full(len(xs), np.nan)
    if len(i):
        np.divide(concordant_minus_discordant, denom, out=out, where=denom > 0)
    return out


def tau_ap(reference, ranking) -> float:
    """tau_AP of ``ranking`` against ``reference``: two orderings (best first) of the same items.

    >>> round(tau_ap("ABCD", "BACD"), 4)  # the top two swapped
    0.3333
    >>> round(tau_ap("ABCD", "ABDC"), 4)  # the bottom two swapped: a smaller penalty
    0.7778
    """
    reference, ranking = list(reference), list(ranking)
    if sorted(map(str, reference)) != sorted(map(str, ranking)) or len(set(reference)) != len(reference):
        raise JudgedError("tau_AP needs two orderings of the same distinct items")
    n = len(ranking)
    if n < 2:
        return float("nan")
    true_rank = {item: r for r, item in enumerate(reference)}
    t = np.array([true_rank[item] for item in ranking])
    above_and_correct = (t[None, :] < t[:, None]) & np.tri(n, k=-1, dtype=bool)  # row i: items j above i
    c = above_and_correct.sum(axis=1)[1:]
    return float(2.0 / (n - 1) * (c / np.arange(1, n)).sum() - 1.0)


def order_by_score(names, scores) -> list:
    """Names best first by descending score; equal scores keep the given order."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return [names[k] for k in order]


@dataclass
class StabilityResult:
    """Two system rankings of the same runs, their correlation and the pairs that swapped."""

    runs: list
    label_a: str
    label_b: str
    scores_a: np.ndarray
    scores_b: np.ndarray
    query_set: object = None  # judged.core.querysets.QuerySet under A (B: the same queries)

    @property
    def order_a(self) -> list:
        return order_by_score(self.runs, self.scores_a)

    @property
    def order_b(self) -> list:
        return order_by_score(self.runs, self.scores_b)

    @property
    def tau(self) -> float:
        return kendall_tau(self.scores_a, self.scores_b)

    @property
    def tau_ap(self) -> float:
        """tau_AP of ranking B against ranking A (A is the reference)."""
        return tau_ap(self.order_a, self.order_b)

    @property
    def tau_ap_reverse(self) -> float:
        """tau_AP of ranking A against ranking B."""
        return tau_ap(self.order_b, self.order_a)

    def swaps(self) -> list[dict]:
        """Pairs ordered one way under A and the other way under B."""
        i, j = np.triu_indices(len(self.runs), k=1)
        da, db = self.scores_a[i] - self.scores_a[j], self.scores_b[i] - self.scores_b[j]
        out = []
        for k in np.flatnonzero(tie_sign(da, self.scores_a) * tie_sign(db, self.scores_b) < 0):
            a, b = int(i[k]), int(j[k])
            if da[k] < 0:
                a, b = b, a  # the pair's winner under A first
            out.append({"above_under_a": self.runs[a], "above_under_b": self.runs[b],
                        "a": [float(self.scores_a[a]), float(self.scores_a[b])],
                        "b": [float(self.scores_b[a]), float(self.scores_b[b])]})
        return out

    @property
    def pairs(self) -> int:
        n = len(self.runs)
        return n * (n - 1) // 2

    @property
    def swap_rate(self) -> float:
        return len(self.swaps()) / self.pairs if self.pairs else 0.0

    def to_dict(self) -> dict:
        return {"a": self.label_a, "b": self.label_b, "runs": len(self.runs), "pairs": self.pairs,
                "kendall_tau": self.tau, "tau_ap": self.tau_ap, "tau_ap_reverse": self.tau_ap_reverse,
                "swaps": len(self.swaps()), "swap_rate": self.swap_rate,
                "ranking_a": [{"run": r, "score": float(s)} for r, s in
                              zip(self.order_a, sorted(self.scores_a.tolist(), reverse=True))],
                "ranking_b": [{"run": r, "score": float(s)} for r, s in
                              zip(self.order_b, sorted(self.scores_b.tolist(), reverse=True))],
                "swapped_pairs": self.swaps(),
                **({"query_set": self.query_set.to_dict(), "warnings": self.query_set.warnings()}
                   if self.query_set is not None else {})}


def ranking_stability(qrels, runs, measure, *, versus_measure=None, versus_qrels=None,
                      settings=None) -> StabilityResult:
    """Compare the ranking of ``runs`` by mean ``measure`` under ``qrels`` (condition A)
    with their ranking under ``versus_qrels`` and/or ``versus_measure`` (condition B).

    Two qrels versions (before and after judging holes): give ``versus_qrels``. Two
    measures or two conventions (``nDCG@10`` vs ``nDCG(gain=exp)@10``): give
    ``versus_measure``. Means are those of :func:`judged.evaluate` (``settings``; default
    every run over every qrels query, ``Settings(complete=True)``); two qrels versions
    are compared over the queries both judge (:mod:`judged.core.querysets`).
    """
    from ..qrels_ops import evaluate_versions

    if versus_measure is None and versus_qrels is None:
        raise JudgedError("stability compares two conditions: give a second measure or a second qrels")
    measure_b = measure if versus_measure is None else versus_measure
    settings = Settings(complete=True) if settings is None else settings
    if versus_qrels is None:
        result_a = result_b = evaluate(qrels, runs, list(dict.fromkeys([str(measure), str(measure_b)])),
                                       settings=settings)
    else:  # each run read once and scored under both versions, one alignment at a time
        result_a, result_b = evaluate_versions([qrels, versus_qrels], runs, [[measure], [measure_b]], settings)
    for r in (result_a, result_b):
        refuse_disjoint_runs(r)
    names = list(result_a.runs)
    if len(names) < 2:
        raise JudgedError("a system ranking needs at least two runs")
    ga, gb = str(measure), str(measure_b)
    query_set = result_a.query_set
    if result_b is result_a:
        a = np.array([result_a.aggregate(n, ga) for n in names])
        b = np.array([result_b.aggregate(n, gb) for n in names])
    else:  # two qrels versions: the queries both judge
        common, query_set.left_out = common_queries([result_a.qrels, result_b.qrels])
        a = np.array([mean_over(result_a, n, ga, common) for n in names])
        b = np.array([mean_over(result_b, n, gb, common) for n in names])
    label_a = f"{result_a.conventions[ga]} qrels={result_a.qrels.source}"
    label_b = f"{result_b.conventions[gb]} qrels={result_b.qrels.source}"
    return StabilityResult(names, label_a, label_b, a, b, query_set)
