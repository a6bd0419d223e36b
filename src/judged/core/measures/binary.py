"""Measures of binary relevance: a document is relevant when its grade >= ``rel``
(trec_eval's -l relevance level, default 1). Definitions follow trec_eval 10:

* ``P@k``     relevant in the top k / k (short lists padded with non-relevant).
* ``R@k``     relevant in the top k / R, with R the query's relevant judgments (0 if R = 0).
* ``AP``      sum over relevant retrieved of precision at its rank, / R (trec_eval map;
  ``AP@k`` is map_cut.k: the sum stops at rank k, still divided by R).
* ``RR``      1 / rank of the first relevant document, 0 if none (recip_rank; ``RR@k``
  looks only at the top k).
* ``Rprec``   relevant in the top R / R.
* ``Success@k`` 1 if any relevant document is in the top k.
* ``Bpref``   (Buckley & Voorhees, SIGIR 2004, as trec_eval computes it): for each
  relevant retrieved document, 1 - min(n, R) / min(N, R), where n counts judged
  non-relevant documents ranked above it and N all judged non-relevant (0 <= grade < rel);
  summed and divided by R. Unjudged documents and negative grades are skipped.
* ``NumRel``, ``NumRet``, ``NumRelRet``: counts; their aggregate is the sum (trec_eval).
"""

from __future__ import annotations

import numpy as np

from ..kernels import FALLBACK, kernel
from .dcg import ranking_for



def _per_query_count(q, mask, n):
    return np.bincount(q[mask], minlength=n).astype(np.float64)


def within_query_cumsum(flags: np.ndarray, q: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Inclusive running count of ``flags`` inside each query block."""
    cs = np.cumsum(flags, dtype=np.int64)
    base = np.concatenate(([0], cs))[offsets[:-1]]
    return cs - base[q]


def compute(measure, aligned) -> np.ndarray:
    R = aligned.judgments.count_at_least(measure.rel).astype(np.float64)
    if measure.name == "NumRel":
        return R
    return binary_measure(measure, aligned, R)


@kernel
def binary_measure(measure, aligned, R: np.ndarray) -> np.ndarray:
    """Per-query values of one of the binary-relevance measures (P, R, Success, RR, AP,
    Rprec, NumRet, NumRelRet, Bpref); ``R``: each query's relevant judgments."""
    n = aligned.n_queries
    name, k, rel = measure.name, measure.cutoff, measure.rel
    if name == "Bpref":
        return _bpref(aligned, rel, R)
    ranked = ranking_for(measure, aligned)
    top = ranked.top(k)
    isrel = top.relevant(rel)  # NaN (unjudged) is not
    if name == "NumRet":
        return top.count.astype(np.float64)
    relret = top.relevant_count(rel)
    out = np.zeros(n)
    if name == "NumRelRet":
        return relret.copy()  # the cached count is shared by the measures
    if name == "P":
        return relret / k
    if name == "R":
        np.divide(relret, R, out=out, where=R > 0)
        return out
    if name == "Success":
        return (relret > 0).astype(np.float64)
    if name == "RR":
        qs = top.q[isrel]
        uniq, first = np.unique(qs, return_index=True)
        out[uniq] = 1.0 / (top.pos[isrel][first] + 1.0)
        return out
    if name == "AP":
        so_far = within_query_cumsum(isrel, top.q, top.offsets)
        terms = so_far[isrel] / (top.pos[isrel] + 1.0)
        s = np.bincount(top.q[isrel], weights=terms, minlength=n)
        np.divide(s, R, out=out, where=R > 0)
        return out
    if name == "Rprec":  # the top floor(mult * R + 0.9) (trec_eval's Rprec_mult; R itself for mult = 1)
        c = np.floor(measure.option("mult") * R + 0.9) if measure.options else R
        within = isrel & (top.pos < c[top.q])
        hits = _per_query_count(top.q, within, n)
        np.divide(hits, c, out=out, where=c > 0)
        return out
    raise KeyError(name)


@binary_measure.binding
def _(native, measure, aligned, R: np.ndarray):
    """The same values by the compiled kernel: one pass over each query's top k rows, the
    condensed ranking read in place (no copy)."""
    kinds = native.BINARY_KINDS  # the measures its C kernel computes, in the order of its codes
    if measure.name not in kinds or measure.options:  # Rprec(mult=x): the reference
        return FALLBACK
    ranked, rel = aligned.ranked, measure.rel
    N = aligned.judgments.count_nonrelevant(rel).astype(np.float64) if measure.name == "Bpref" else R
    out = np.empty(aligned.n_queries)
    k = -1 if measure.cutoff is None else measure.cutoff
    native.binary_measure(kinds.index(measure.name), k, float(rel), measure.unjudged == "condensed",
                          *ranked.columns, R, N, out)
    return out


def _bpref(aligned, rel: int, R: np.ndarray) -> np.ndarray:
    n = aligned.n_queries
    ranked = aligned.ranked
    g = ranked.grade
    nonrel = (g >= 0) & (g < rel)
    isrel = g >= rel
    N = aligned.judgments.count_nonrelevant(rel).astype(np.float64)
    seen = within_query_cumsum(nonrel, ranked.q, ranked.offsets)[isrel].astype(np.float64)
    q = ranked.q[isrel]
    denom = np.minimum(N[q], R[q])
    terms = np.ones(len(q))
    has = seen > 0
    terms[has] = 1.0 - np.minimum(seen[has], R[q][has]) / denom[has]
    s = np.bincount(q, weights=terms, minlength=n)
    out = np.zeros(n)
    np.divide(s, R, out=out, where=R > 0)
    return np.where(R > 0, out, s)
