"""The DCG family: DCG@k and nDCG@k under declared gain, discount, ideal and unjudged.

    DCG@k  = sum_{r=1..k} gain(grade_r) * discount(r)
    nDCG@k = DCG@k / IDCG@k,  0 when IDCG@k = 0

IDCG@k is the DCG@k of the ideal ranking: ``ideal=judged`` sorts every judged document
of the query by gain (trec_eval's ndcg_cut; Jarvelin & Kekalainen, TOIS 2002);
``ideal=retrieved`` sorts only the run's own documents (scikit-learn's ndcg_score).
With the defaults (gain = grade, discount 1/log2(r+1), ideal over the judgments,
unjudged = not relevant) the values equal trec_eval's ``ndcg_cut.k`` (``ndcg`` without
a cutoff) to the last bit: same summation order, gain / log2(r+1) as a division.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import ConventionError
from ..kernels import FALLBACK, kernel

MAX_GAIN_TABLE = 1 << 16  # grades above this take the numpy path
FEW_GRADES = 15  # the gain table tried first


def _refuse_overflow(measure, aligned, sums: np.ndarray, what: str) -> None:
    """Finite gains whose sum is past the largest float64 (exp gains of grades near 1023):
    a ConventionError naming the query, not an inf DCG and a NaN nDCG."""
    if sums.size and not np.isfinite(sums).all():
        qid = aligned.qids[int(np.flatnonzero(~np.isfinite(sums))[0])]
        raise ConventionError(f"{measure}: the {what} of query {qid} is past the largest float64 (gain={measure.gain} "
                              f"of its grades adds up beyond 1.8e308); use gain=linear or a gain mapping")


def ranking_for(measure, aligned):
    return aligned.ranked.condensed if measure.unjudged == "condensed" else aligned.ranked


@kernel
def dcg(measure, ranked, n: int, condensed: bool = False) -> np.ndarray:
    """DCG@k per query of ``ranked`` (of its condensed ranking when ``condensed``)."""
    top = (ranked.condensed if condensed else ranked).top(measure.cutoff)
    gains = measure.gain(top.grade)
    # float even for no row at all (bincount gives integer zeros then, the compiled kernel floats)
    out = np.bincount(top.q, weights=measure.discount.divide(gains, top.pos + 1), minlength=n)
    return out.astype(np.float64, copy=False)


@dcg.binding
def _(native, measure, ranked, n: int, condensed: bool = False):
    """The same sums by the compiled kernel (``dcg_measure``), reading the ranking in place
    (the condensed ranking skipped through); the reference decides when a grade is outside
    the integer gain table."""
    offsets, pos, grade = ranked.columns
    if len(offsets) != n + 1:
        return FALLBACK
    longest = int(ranked.count.max()) if n else 0
    depth = longest if measure.cutoff is None else min(longest, measure.cutoff)
    out = np.empty(n)
    k = -1 if measure.cutoff is None else measure.cutoff
    denominators = _denominators(measure.discount, depth)
    # the grades 0..15 of most qrels first; when a grade is past them, all there are
    if native.dcg_measure(k, condensed, offsets, pos, grade, _gains(measure.gain, FEW_GRADES), denominators, out):
        return out
    top = ranked.top_grade
    if top <= FEW_GRADES or top > MAX_GAIN_TABLE:
        return FALLBACK
    done = native.dcg_measure(k, condensed, offsets, pos, grade, _gains(measure.gain, top), denominators, out)
    return out if done else FALLBACK


@kernel
def index_idcg(measure, index) -> np.ndarray | None:
    """IDCG@k of every query of the qrels index (in query code order); None when a grade of
    a query that may not be evaluated has no gain (the evaluated queries then decide)."""
    n = len(index.query_ids)
    try:
        return _ideal_dcg(measure, *_sorted_gains(measure, index.row_query, index.grade, n), n)
    except ConventionError:
        return None


@index_idcg.binding
def _(native, measure, index):
    """The compiled ``ideal_dcg``; the reference decides when a grade is past the gain table
    or has no gain (there, or at all)."""
    n = len(index.query_ids)
    grade = np.ascontiguousarray(index.grade, np.int64)
    top = int(grade.max()) if len(grade) else 0
    if top > MAX_GAIN_TABLE:
        return FALLBACK
    longest = int(np.diff(index.offsets).max()) if n else 0
    depth = longest if measure.cutoff is None else min(longest, measure.cutoff)
    try:
        gains = _gains(measure.gain, max(top, 0))
    except ConventionError:  # a grade with no gain (exp of 1024, a mapping's gap): the reference's rule
        return FALLBACK
    out = np.empty(n)
    k = -1 if measure.cutoff is None else measure.cutoff
    done = native.ideal_dcg(k, np.ascontiguousarray(index.offsets, np.int64), grade, gains,
                            _denominators(measure.discount, depth), out)
    return out if done else FALLBACK


@lru_cache(maxsize=64)
def _gains(gain, top: int) -> np.ndarray:
    return gain.table(top)


@lru_cache(maxsize=64)
def _denominators(discount, depth: int) -> np.ndarray:
    return discount.denominator(np.arange(1, depth + 1))


def ideal_gains(measure, aligned, ranked):
    """(query index, gain) of the ideal ranking, sorted by query then gain descending,
    positive gains only, with each row's 0-based ideal rank."""
    if measure.ideal == "judged":
        q, g = aligned.judgments.q, aligned.judgments.grade
    else:
        q, g = ranked.q, ranked.grade
    return _sorted_gains(measure, q, g, aligned.n_queries)


def _sorted_gains(measure, q: np.ndarray, grade: np.ndarray, n: int):
    g = measure.gain(grade.astype(np.float64))
    keep = g > 0
    q, g = q[keep], g[keep]
    order = np.lexsort((-g, q))
    q, g = q[order], g[order]
    starts = np.searchsorted(q, np.arange(n))
    pos = np.arange(len(q)) - starts[q]
    return q, g, pos


def _ideal_dcg(measure, q, g, pos, n: int) -> np.ndarray:
    if measure.cutoff is not None:
        m = pos < measure.cutoff
        q, g, pos = q[m], g[m], pos[m]
    return np.bincount(q, weights=measure.discount.divide(g, pos + 1), minlength=n)


def ideal_dcg_of_counts(measure, counts: np.ndarray, grades: np.ndarray) -> np.ndarray:
    """IDCG@k of each row of ``counts`` (judgments per grade, columns in ``grades``
    order): the gains sorted descending, summed rank by rank in the order :func:`idcg`
    sums them (the same bits). Used where judgments are known only as counts per grade
    (the hole estimate's draws)."""
    counts = np.asarray(counts, np.int64)
    gains = measure.gain(np.asarray(grades, np.float64))
    order = np.argsort(-gains, kind="stable")
    keep = order[gains[order] > 0]
    g, c = gains[keep], counts[:, keep]
    if measure.cutoff is not None:
        c = np.minimum(c, measure.cutoff)  # beyond the cutoff a count changes nothing
    base = int(c.max()) + 1 if c.size else 1
    if len(c) > 64 and c.shape[1] and base ** c.shape[1] < 2 ** 62:  # rows often share their counts
        key = c @ (base ** np.arange(c.shape[1], dtype=np.int64))
        distinct, first, back = np.unique(key, return_index=True, return_inverse=True)
        if len(distinct) * 2 < len(c):  # each distinct row once
            return _ideal_of_sorted_counts(measure, c[first], g)[back.ravel()]
    return _ideal_of_sorted_counts(measure, c, g)


def _ideal_of_sorted_counts(measure, c: np.ndarray, g: np.ndarray) -> np.ndarray:
    """IDCG@k per row of counts ``c`` of the positive gains ``g`` (sorted descending)."""
    total = c.sum(axis=1)
    depth = int(total.max()) if len(total) else 0
    if measure.cutoff is not None:
        depth = min(depth, measure.cutoff)
    ends = np.cumsum(c, axis=1)  # rank r (0-based) holds the first level whose cumulative count exceeds r
    out = np.zeros(len(c))
    denominators = measure.discount.denominator(np.arange(1, depth + 1))
    for r in range(depth):
        level = (ends <= r).sum(axis=1)
        has = level < len(g)
        out[has] += g[level[has]] / denominators[r]
    return out


def idcg(measure, aligned, ranked) -> np.ndarray:
    """IDCG@k per query. The ideal over the judgments depends on the qrels alone: it is
    computed once for every query of the qrels index per gain, discount and k (shared by
    every run and every block of a streamed run), else kept with the judgments."""
    key = ("idcg", str(measure.gain), str(measure.discount), measure.cutoff)
    judgments = aligned.judgments
    if measure.ideal == "judged" and judgments.index is not None:
        every = judgments.index.remember(key, lambda: index_idcg(measure, judgments.index))
        if every is not None:
            return every[judgments.codes]
    memo = judgments._memo if measure.ideal == "judged" else {}
    if key not in memo:
        memo[key] = _ideal_dcg(measure, *ideal_gains(measure, aligned, ranked), aligned.n_queries)
    return memo[key]


def compute(measure, aligned) -> np.ndarray:
    d = dcg(measure, aligned.ranked, aligned.n_queries, condensed=measure.unjudged == "condensed")
    _refuse_overflow(measure, aligned, d, "DCG")
    if measure.name == "DCG":
        return d
    i = idcg(measure, aligned, ranking_for(measure, aligned) if measure.ideal == "retrieved" else aligned.ranked)
    _refuse_overflow(measure, aligned, i, "ideal DCG")
    out = np.zeros(aligned.n_queries)
    np.divide(d, i, out=out, where=i > 0)
    return out
