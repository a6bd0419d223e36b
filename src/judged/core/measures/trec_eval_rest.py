"""The rest of trec_eval 10's measures, computed as its C code computes them (usnistgov/
trec_eval, the m_*.c file named in each function); their records, with formulas, are in
:mod:`judged.core.measures.registry`.

* set measures over the whole retrieved set (no cutoff): ``SetP``, ``SetR``, ``SetF``,
  ``SetAP`` (set_map), ``SetRelP`` (set_relative_P);
* ``RelP@k`` (relative_P), ``IPrec(recall=x)`` (iprec_at_recall), ``AP11`` (11pt_avg),
  ``BinG``, ``G``, ``RnDCG`` (Rndcg), ``nDCGRel`` (ndcg_rel), ``Utility``, ``NumQ``,
  ``NumNonRelJudgedRet``; ``GMAP`` and ``GMBpref`` are AP and Bpref per query (their
  geometric mean is the aggregate's business, :meth:`judged.core.measures.Measure.aggregate_of`).

Every function reads the aligned ranking (the condensed one under ``unjudged=condensed``,
as trec_eval -J) and the qrels' counts; trec_eval's "not in the pool" (-1, or absent) and
"pooled, not judged" (-2) grades are told apart where a measure does (num_nonrel_judged_ret).
The set measures, IPrec and AP11 have a compiled binding (``set_measure``, ``iprec``); the
others are computed by the numpy reference on both back ends.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels import FALLBACK, kernel
from .binary import binary_measure, within_query_cumsum
from .dcg import ranking_for

IPREC_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # trec_eval's 11 recall levels
RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)  # trec_eval's Rprec_mult levels
# a recall level x reads the floor(x * R + add)-th relevant document: trec_eval 10's lround
# of a non-negative number (add 0.5), trec_eval 9's and pytrec_eval's (long) (x * R + 0.9)
ROUNDING = {"lround": 0.5, "trec9": 0.9}
NONPOOL, UNJUDGED = -1, -2  # trec_eval.h RELVALUE_NONPOOL, RELVALUE_UNJUDGED


def compute(measure, aligned) -> np.ndarray:
    if measure.name in ("GMAP", "GMBpref"):  # AP / Bpref per query; the aggregate is the geometric mean
        base = "AP" if measure.name == "GMAP" else "Bpref"
        R = aligned.judgments.count_at_least(measure.rel).astype(np.float64)
        return binary_measure(_as(measure, base), aligned, R)
    return trec_measure(measure, aligned)


def _as(measure, name):
    from dataclasses import replace

    return replace(measure, name=name)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(len(num))
    np.divide(num, den, out=out, where=den > 0)
    return out


@kernel
def trec_measure(measure, aligned) -> np.ndarray:
    """Per-query values of one of the measures of this module (see there)."""
    n, name, rel = aligned.n_queries, measure.name, measure.rel
    ranked = ranking_for(measure, aligned)
    R = aligned.judgments.count_at_least(rel).astype(np.float64)
    ret = ranked.count.astype(np.float64)
    relret = ranked.relevant_count(rel)
    if name == "NumQ":  # m_num_q.c
        return np.ones(n)
    if name == "SetP":  # m_set_P.c
        return _ratio(relret, ret)
    if name == "SetR":  # m_set_recall.c
        return _ratio(relret, R)
    if name == "SetAP":  # m_set_map.c
        return _ratio(relret * relret, ret * R)
    if name == "SetRelP":  # m_set_rel_P.c
        return _ratio(relret, np.where(R > 0, np.minimum(ret, R), 0))
    if name == "SetF":  # m_set_F.c
        x, out = measure.option("beta"), np.zeros(n)
        has = relret > 0
        P, Rc = relret[has] / ret[has], relret[has] / R[has]
        out[has] = (x + 1.0) * P * Rc / (x * P + Rc)
        return out
    if name == "RelP":  # m_rel_P.c: relevant in the top k / min(k, R)
        k = measure.cutoff
        return _ratio(ranked.top(k).relevant_count(rel), np.where(R > 0, np.minimum(float(k), R), 0))
    if name == "Utility":  # m_utility.c, with no collection size (its fourth coefficient times 0)
        a, b, c = measure.option("tp"), measure.option("fp"), measure.option("fn")
        return a * relret + b * (ret - relret) + c * (R - relret) + 0.0 * (0.0 + relret - ret - R)
    if name == "NumNonRelJudgedRet":  # m_num_nonrel_judged_ret.c: ret - nonpool - unjudged - relret
        g = ranked.grade
        judged_nonrel = ~np.isnan(g) & (g != NONPOOL) & (g != UNJUDGED) & ~(g >= rel)
        return np.bincount(ranked.q[judged_nonrel], minlength=n).astype(np.float64)
    if name == "BinG":  # m_binG.c: sum over relevant of 1 / log2(3 + i - rel_so_far), / R
        isrel = ranked.relevant(rel)
        so_far = within_query_cumsum(isrel, ranked.q, ranked.offsets)[isrel]
        terms = 1.0 / np.log2((3 + ranked.pos[isrel] - so_far).astype(np.float64))
        return _ratio(np.bincount(ranked.q[isrel], weights=terms, minlength=n), np.where(relret > 0, R, 0))
    if name == "IPrec":
        return _iprec(ranked, rel, R, relret, ret, (measure.option("recall"),), measure.option("rounding"))[0]
    if name == "AP11":
        return _level_mean(_iprec(ranked, rel, R, relret, ret, IPREC_LEVELS, measure.option("rounding")))
    if name in ("G", "RnDCG", "nDCGRel"):
        return _sequential(name, ranked, aligned, R)
    raise KeyError(name)


@trec_measure.binding
def _(native, measure, aligned):
    """The set measures (``set_measure``), IPrec and AP11 (``iprec``) compiled: one pass over
    each query's rows, the condensed ranking read in place."""
    name, rel = measure.name, measure.rel
    if name not in native.SET_KINDS and name not in ("IPrec", "AP11"):
        return FALLBACK
    n, condensed = aligned.n_queries, measure.unjudged == "condensed"
    offsets, pos, grade = aligned.ranked.columns
    R = aligned.judgments.count_at_least(rel).astype(np.float64)
    if name in native.SET_KINDS:
        out = np.empty(n)
        beta = measure.option("beta") if name == "SetF" else 1.0
        native.set_measure(native.SET_KINDS.index(name), float(rel), condensed, beta, offsets, pos, grade, R, out)
        return out
    levels = np.array((measure.option("recall"),) if name == "IPrec" else IPREC_LEVELS, np.float64)
    values = np.empty((n, len(levels)))
    native.iprec(float(rel), condensed, ROUNDING[measure.option("rounding")], levels, offsets, pos, grade, R, values)
    return values[:, 0].copy() if name == "IPrec" else _level_mean(list(values.T))


def _level_mean(values: list) -> np.ndarray:
    """m_11pt_avg.c: the per-level values summed from the last level down, / their number."""
    total = np.zeros(len(values[0]))
    for v in values[::-1]:
        total += v
    return total / len(values)


def _iprec(ranked, rel, R, relret, ret, levels, rounding: str) -> list[np.ndarray]:
    """m_iprec_at_recall.c: at each level x, the interpolated precision (the best precision
    at or after the rank) at the lround(x * R)-th relevant document (the first for 0), 0 past
    the relevant documents retrieved."""
    n = ranked.n_queries
    isrel = ranked.relevant(rel)
    q = ranked.q[isrel]
    t = within_query_cumsum(isrel, ranked.q, ranked.offsets)[isrel]  # 1-based index among the relevant
    precision = t / (ranked.pos[isrel] + 1.0)
    width = int(relret.max()) if n and len(q) else 0
    table = np.full((n, width + 1), -1.0)
    table[q, t - 1] = precision
    table[:, width] = 0.0  # past the last relevant document, precision falls: max with 0 changes nothing
    best_after = np.maximum.accumulate(table[:, ::-1], axis=1)[:, ::-1]  # best precision at or after each
    rows = np.arange(n)
    out = []
    for x in levels:
        cut = np.floor(x * R + ROUNDING[rounding]).astype(np.int64)
        idx = np.maximum(cut, 1) - 1
        v = np.where((cut <= relret) & (relret > 0), best_after[rows, np.minimum(idx, width)], 0.0)
        out.append(v)
    return out


def _sequential(name, ranked, aligned, R) -> np.ndarray:
    """G (m_G.c), Rndcg (m_Rndcg.c) and ndcg_rel (m_ndcg_rel.c) walk each query's ranking
    beside its ideal one, level by level, as their C loops do (gain = grade)."""
    n = ranked.n_queries
    out = np.zeros(n)
    judgments = aligned.judgments
    step = {"G": _g, "RnDCG": _rndcg, "nDCGRel": _ndcg_rel}[name]
    for i in range(n):
        grades = ranked.grade[ranked.offsets[i]:ranked.offsets[i + 1]]
        levels = judgments.grade[judgments.offsets[i]:judgments.offsets[i + 1]]
        levels = levels[levels >= 0]
        counts = np.bincount(levels.astype(np.int64)) if len(levels) else np.zeros(0, np.int64)
        gains = [(float(level), int(c)) for level, c in enumerate(counts)]  # (gain, judged at it), ascending
        known = (grades >= 0) & (grades < len(counts))  # NaN compares False: gain 0, as get_gain
        results = np.where(known, grades, 0.0)
        if name != "RnDCG" or R[i] > 0:  # m_Rndcg.c: 0 when nothing is relevant at the level
            out[i] = step(results, gains)
    return out


class _Ideal:
    """The ideal ranking's gains, from the highest level down (the C's cur_level walk)."""

    def __init__(self, gains):
        self.gains, self.level = gains, len(gains) - 1
        self.gain = gains[self.level][0] if self.level >= 0 else 0.0
        self.at_level = 0

    def step(self) -> float:
        self.at_level += 1
        while self.level >= 0 and self.at_level > self.gains[self.level][1]:
            self.at_level = 1
            self.level -= 1
            self.gain = self.gains[self.level][0] if self.level >= 0 else 0.0
        return self.gain


def _g(results: np.ndarray, gains) -> float:
    """m_G.c. Its walk reduces to running sums: at rank i the cost so far adds the ideal
    ranking's gain at i, at least 1 (min_cost; the ideal's grades are integers), and the
    run's gain so far; G = sum over gain != 0 of gain / log2(2 + cost - run), over the
    ideal's total gain. Running sums in rank order: the C's bits."""
    ideal = np.repeat([g for g, _ in gains[::-1]], [c for _, c in gains[::-1]]).astype(np.float64)
    sum_ideal = float(np.cumsum(ideal[ideal > 0])[-1]) if (ideal > 0).any() else 0.0
    if sum_ideal <= 0.0 or not len(results):
        return 0.0
    step_cost = np.ones(len(results))
    upto = min(len(results), len(ideal))
    step_cost[:upto] = np.maximum(ideal[:upto], 1.0)
    cost, found = np.cumsum(step_cost), np.cumsum(results)
    hit = results != 0
    terms = results[hit] / np.log2(2.0 + cost[hit] - found[hit])
    return float(np.cumsum(terms)[-1]) / sum_ideal if len(terms) else 0.0


def _rndcg(results, gains) -> float:
    ideal = _Ideal(gains)
    results_dcg = ideal_dcg = total = 0.0
    old, changes, i = ideal.gain, 0, 0
    while ideal.gain > 0.0:                # the ranks of the ideal ranking, the results' beside them
        ig = ideal.step()
        if old != ig:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old = ig
        if i < len(results) and results[i] != 0:
            results_dcg += results[i] / math.log2(i + 2)
        if ig > 0.0:
            ideal_dcg += ig / math.log2(i + 2)
        i += 1
    if i < len(results):                   # results past the ideal's end: their DCG at once
        results_dcg = _running(results_dcg, results[i:], i)[-1]
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changes += 1
    return total / changes if changes else 0.0


def _running(start: float, gains: np.ndarray, first: int) -> np.ndarray:
    """start, then the running DCG after each of ``gains`` at 0-based ranks first, first+1,
    ...: the C's ``if (gain != 0) dcg += gain / log2(i + 2)``, summed in the same order."""
    ranks = np.arange(first, first + len(gains), dtype=np.float64)
    terms = np.where(gains != 0, gains / np.log2(ranks + 2.0), 0.0)
    return np.cumsum(np.concatenate(([start], terms)))


def _ndcg_rel(results, gains) -> float:
    ideal = _Ideal(gains)
    results_dcg = ideal_dcg = total = 0.0
    num_rel = num_rel_ret = i = 0
    while i < len(results) and ideal.gain > 0.0:
        gain = results[i]
        if gain != 0:
            results_dcg += gain / math.log2(i + 2)
        ig = ideal.step()
        if ig > 0.0:
            num_rel += 1
            ideal_dcg += ig / math.log2(i + 2)
        if gain > 0:
            total += results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    if i < len(results):
        tail = results[i:]
        running = _running(results_dcg, tail, i)
        for value in running[1:][tail > 0]:  # in rank order, as the C adds them
            total += value / ideal_dcg
        num_rel_ret += int((tail > 0).sum())
        results_dcg = running[-1]
        i = len(results)
    while ideal.gain > 0.0:
        ig = ideal.step()
        if ig > 0.0:
            num_rel += 1
            ideal_dcg += ig / math.log2(i + 2)
        i += 1
    if ideal_dcg > 0.0:
        total += (num_rel - num_rel_ret) * results_dcg / ideal_dcg
    return total / num_rel if total > 0.0 else 0.0
