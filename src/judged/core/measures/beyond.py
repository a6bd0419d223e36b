"""Measures beyond trec_eval: user models over graded gains. Their records (formula,
convention, source) are in :mod:`judged.core.measures.registry`; the reference each equals is
named there and tested in tests/core/measures/test_beyond.py.

* ``ERR@k``, ``nERR@k``  expected reciprocal rank (Chapelle et al., CIKM 2009), as gdeval;
* ``RBP(p)``, ``RBPResidual(p)``  rank-biased precision and its residual (Moffat & Zobel,
  TOIS 2008);
* ``SDCG@k``, ``INST(T)``, ``INSQ(T)``  scaled DCG, INST and INSQ in the C/W/L framework (Moffat et al.;
  Azzopardi, Thomas & Moffat, SIGIR 2019), as cwl_eval;
* ``Compat(p)``  compatibility with the ideal ranking (Clarke, Vtyurina & Smucker, 2020).

Unjudged documents have gain 0 (unjudged=condensed removes them first); negative grades
are 0. Numpy (per-query loops for INST and Compat); ERR, nERR, RBP and RBPResidual have a
compiled binding (``err_measure``, ``rbp_measure``) reading the numpy reference's own tables
of chances and powers.
"""

from __future__ import annotations

import numpy as np

from ..conventions import exp_gain
from ..kernels import FALLBACK, kernel
from .dcg import FEW_GRADES, MAX_GAIN_TABLE, ranking_for
from ..align import Ranked, block_offsets

CWL_DEPTH = 1000  # cwl_eval's max_n: rankings are cut or padded (gain 0) to 1000 ranks


def _scaled(measure, grade: np.ndarray) -> np.ndarray:
    """cwl_eval's gain: (clip(grade, min_rel, max_rel) - min_rel) / (max_rel - min_rel); unjudged
    and negative grades 0."""
    lo, hi = measure.option("min_rel"), measure.option("max_rel")
    g = np.where(np.isnan(grade), 0.0, np.maximum(grade, 0.0))
    return (np.clip(g, lo, hi) - lo) / (hi - lo)


def compute(measure, aligned) -> np.ndarray:
    return beyond_measure(measure, aligned)


@kernel
def beyond_measure(measure, aligned) -> np.ndarray:
    """Per-query values of one of the measures of this module (see there)."""
    n, name = aligned.n_queries, measure.name
    ranked = ranking_for(measure, aligned)
    if name in ("ERR", "nERR"):
        value = _err(measure, ranked.top(measure.cutoff), n)
        if name == "ERR":
            return value
        ideal = ideal_err(measure, aligned)
        out = np.zeros(n)
        np.divide(value, ideal, out=out, where=ideal > 0)
        return out
    if name in ("RBP", "RBPResidual"):
        weights, powers = _rbp_tables(measure, ranked)
        if name == "RBP":
            ranked = ranked.top(measure.cutoff)
            hit = ranked.relevant(measure.rel)
            # float64 even with no hit (numpy's bincount of nothing is int64)
            return np.bincount(ranked.q[hit], weights=weights[ranked.pos[hit]], minlength=n).astype(np.float64)
        # what the holes and the ranks past the ranking could still add: every unjudged
        # document ranked, then p^depth for everything below the last rank (Moffat & Zobel 2008)
        hole = ~ranked.judged | (ranked.grade < 0)
        return np.bincount(ranked.q[hole], weights=weights[ranked.pos[hole]], minlength=n) + powers[ranked.count]
    if name == "SDCG":  # cwl_eval's NDCG-k: W_i = (1/log2(i+1)) / sum_{j<=k} 1/log2(j+1)
        top = ranked.top(measure.cutoff)
        k = measure.cutoff
        norm = float(np.sum(1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))))
        terms = _scaled(measure, top.grade) / np.log2(top.pos + 2.0)
        return np.bincount(top.q, weights=terms, minlength=n) / norm
    if name in ("INST", "INSQ"):
        return _per_query(ranked, n, lambda g: _inst(_scaled(measure, g), measure.option("T"), name == "INSQ"))
    if name == "Compat":
        return _compat(measure, aligned, ranked)
    raise KeyError(name)


@beyond_measure.binding
def _(native, measure, aligned):
    """ERR and nERR (``err_measure``), RBP and its residual (``rbp_measure``) compiled: one
    pass over each query's rows, the condensed ranking read in place, the chances by grade and
    the powers of p computed by numpy, as the reference computes them."""
    name, n = measure.name, aligned.n_queries
    if name not in ("ERR", "nERR", "RBP", "RBPResidual"):
        return FALLBACK
    ranked, condensed = aligned.ranked, measure.unjudged == "condensed"
    offsets, pos, grade = ranked.columns
    out = np.empty(n)
    if name in ("RBP", "RBPResidual"):
        k = -1 if measure.cutoff is None or name == "RBPResidual" else measure.cutoff
        done = native.rbp_measure(name == "RBPResidual", k, float(measure.rel), condensed, offsets, pos, grade,
                                  *_rbp_tables(measure, ranked), out)
        return out if done else FALLBACK
    k = -1 if measure.cutoff is None else measure.cutoff
    if not _compiled_err(native, measure, k, condensed, (offsets, pos, grade), ranked, out):
        return FALLBACK
    if name == "ERR":
        return out
    j, best = aligned.judgments, np.empty(n)
    grades = np.ascontiguousarray(j.grade, np.int64)
    top = int(grades.max()) if len(grades) else 0
    if top > MAX_GAIN_TABLE:
        return FALLBACK
    table = _chance(measure, np.arange(max(top, FEW_GRADES) + 1, dtype=np.float64))
    native.ideal_err(k, np.ascontiguousarray(j.offsets, np.int64), grades, table, best)
    value = np.zeros(n)
    np.divide(out, best, out=value, where=best > 0)
    return value


def _compiled_err(native, measure, k: int, condensed: bool, columns, ranked, out) -> bool:
    """``err_measure`` with the chance table of the grades 0..15 of most qrels; when a grade
    is past them, of every grade up to the ranking's largest (False past MAX_GAIN_TABLE)."""
    levels = np.arange(FEW_GRADES + 1, dtype=np.float64)
    if native.err_measure(k, condensed, *columns, _chance(measure, levels), out):
        return True
    top = ranked.top_grade
    if top <= FEW_GRADES or top > MAX_GAIN_TABLE:
        return False
    return native.err_measure(k, condensed, *columns, _chance(measure, np.arange(top + 1, dtype=np.float64)), out)


def _rbp_tables(measure, ranked) -> tuple[np.ndarray, np.ndarray]:
    """(1 - p) p^i and p^i for i = 0 .. the longest ranking: RBP's weight of rank i + 1, and
    the weight of everything below a ranking of i documents."""
    p = measure.option("persistence")
    depth = int(ranked.count.max()) if len(ranked.count) else 0
    powers = np.power(p, np.arange(depth + 1, dtype=np.float64))
    return (1.0 - p) * powers, powers


def _chance(measure, grade: np.ndarray) -> np.ndarray:
    """The chance a document satisfies the user, (2^g - 1) / 2^max_rel (g: the grade, 0 for
    unjudged and negative grades)."""
    g = np.where(np.isnan(grade), 0.0, np.maximum(grade, 0.0))
    return exp_gain(g) / np.exp2(float(measure.option("max_rel")))


def _err(measure, top, n: int) -> np.ndarray:
    """ERR = sum_i R_i / i * prod_{j<i} (1 - R_j), R = (2^g - 1) / 2^max_rel (gdeval)."""
    r = _chance(measure, top.grade)
    out = np.zeros(n)
    for i in range(n):  # a running product per query: short loops over the top k
        lo, hi = top.offsets[i], top.offsets[i + 1]
        decay, score = 1.0, 0.0
        for j, rj in enumerate(r[lo:hi]):
            score += rj * decay / (j + 1)
            decay *= 1.0 - rj
        out[i] = score
    return out


def _ideal_ranking(aligned):
    """The ideal ranking: every judged document of the query by grade, highest first."""
    j = aligned.judgments
    order = np.lexsort((-j.grade.astype(np.float64), j.q))
    q = j.q[order]
    offsets = block_offsets(q, aligned.n_queries)
    pos = np.arange(len(q), dtype=np.int64) - offsets[q]
    return Ranked(aligned.n_queries, q, pos, j.grade[order].astype(np.float64), order, offsets)


def ideal_err(measure, aligned) -> np.ndarray:
    """ERR@k of the ideal ranking."""
    return _err(measure, _ideal_ranking(aligned).top(measure.cutoff), aligned.n_queries)


def _per_query(ranked, n: int, score) -> np.ndarray:
    out = np.zeros(n)
    for i in range(n):
        out[i] = score(ranked.grade[ranked.offsets[i]:ranked.offsets[i + 1]])
    return out


def _inst(gains: np.ndarray, T: float, insq: bool = False) -> float:
    """cwl_eval's INST over the ranking cut or padded to 1000 ranks: C_i =
    ((i + T + T_i - 1) / (i + T + T_i))^2 with T_i = T - the gain up to rank i; W from C.
    ``insq``: INSQ's T_i = T (Moffat, Scholer & Thomas 2012)."""
    g = np.zeros(CWL_DEPTH)
    g[:min(len(gains), CWL_DEPTH)] = gains[:CWL_DEPTH]
    i = np.arange(1, CWL_DEPTH + 1, dtype=np.float64)
    Ti = np.full(CWL_DEPTH, float(T)) if insq else T - np.cumsum(g)
    c = ((i + T + Ti - 1.0) / (i + T + Ti)) ** 2.0
    prod = np.pad(np.cumprod(c[:-1]), (1, 0), "constant", constant_values=1.0)
    w1 = 1.0 / np.sum(prod)
    w = np.append(w1, prod[1:] * w1)
    return float(np.sum(np.dot(w, g)))


def _rbo(ranking_rank, ideal_rank, p: float, depth: int) -> float:
    """Rank-biased overlap to ``depth`` of two rankings given the 0-based ranks, in each,
    of the documents both hold: sum_d p^(d-1) |overlap of the two top d| / d, over
    sum_d p^(d-1) (ir_measures' compat provider, the same operations in the same order; a
    document is in both top d from d = 1 + the larger of its two ranks). Depth 0 (nothing
    ranked, nothing relevant: a query the run lacks, scored under queries=qrels) is 0, as
    ir_measures scores a query missing from the run (its provider never meets one: 0/0)."""
    if depth == 0:
        return 0.0
    joins = np.bincount(np.maximum(ranking_rank, ideal_rank), minlength=depth)[:depth]
    overlap = np.cumsum(joins).astype(np.float64)
    weight = np.cumprod(np.concatenate(([1.0], np.full(depth - 1, p))))
    score = np.cumsum(weight * overlap / np.arange(1, depth + 1, dtype=np.float64))[-1]
    return float(score / np.cumsum(weight)[-1])


def _ideal_ranks(g: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """The 0-based rank in the ideal ranking of each retrieved relevant document (grades
    ``g``, in rank order): after every ``relevant`` judgment of a higher grade and every
    retrieved one of its grade ranked above it."""
    above = len(relevant) - np.searchsorted(np.sort(relevant), g, side="right")
    order = np.argsort(g, kind="stable")  # within a grade, in rank order
    first = np.searchsorted(g[order], g[order], side="left")
    same_before = np.empty(len(g), np.int64)
    same_before[order] = np.arange(len(g)) - first
    return above + same_before


def _compat(measure, aligned, ranked) -> np.ndarray:
    """Rank-biased overlap of the ranking with the ideal one (the relevant documents by
    grade; those retrieved in the run's order, ahead of the unretrieved ones of their grade),
    normalised by the ideal's overlap with itself. Only ranks are needed: a retrieved
    relevant document of grade g sits in the ideal after every relevant judgment of a higher
    grade and every retrieved one of grade g ranked above it."""
    p, normalize = measure.option("persistence"), measure.option("normalize")
    n = aligned.n_queries
    out = np.zeros(n)
    j = aligned.judgments
    for i in range(n):
        lo, hi = ranked.offsets[i], ranked.offsets[i + 1]
        grade = ranked.grade[lo:hi]
        judged = j.grade[j.offsets[i]:j.offsets[i + 1]]
        relevant = judged[judged > 0]
        hit = np.flatnonzero(grade > 0)  # NaN (unjudged) compares False
        depth = max(hi - lo, len(relevant))
        score = _rbo(hit, _ideal_ranks(grade[hit], relevant), p, depth)
        if normalize:
            every = np.arange(len(relevant))
            best = _rbo(every, every, p, depth)
            score = score / best if best > 0.0 else score
        out[i] = score
    return out


COMPAT_BOUND_CELLS = 1 << 18  # (labelled count, depth) cells Compat's bounds hold at once


def compat_bounds(measure, aligned, extras: np.ndarray, top_grade: int) -> tuple[np.ndarray, np.ndarray]:
    """Conservative (min, max) per query of Compat over every grade 0..``top_grade`` of the
    holes of the ranking, and of ``extras[q]`` further holes outside it (they only join the
    ideal): for each number s of holes labelled relevant, a lower and an upper bound of the
    overlap at every depth, over the exact normaliser of R + s relevant documents; the least
    and the greatest over s. The proof: :mod:`judged.core.measures.bounds`."""
    p, normalize = measure.option("persistence"), measure.option("normalize")
    ranked = ranking_for(measure, aligned)
    n = aligned.n_queries
    j = aligned.judgments
    lo, hi = np.zeros(n), np.zeros(n)
    for i in range(n):
        a, b = ranked.offsets[i], ranked.offsets[i + 1]
        grade = ranked.grade[a:b]
        judged = j.grade[j.offsets[i]:j.offsets[i + 1]]
        relevant = judged[judged > 0]
        R = len(relevant)
        hit = np.flatnonzero(grade > 0)
        ideal = _ideal_ranks(grade[hit], relevant)
        hole = np.isnan(grade)
        labelled = int(hole.sum()) + int(extras[i]) if top_grade >= 1 else 0
        D_max = max(b - a, R + labelled)  # the depth with R + s relevant documents is max(n, R + s)
        if D_max == 0:
            lo[i] = hi[i] = 0.0  # nothing ranked, nothing relevant: 0, as the kernel (_rbo)
            continue
        d = np.arange(1, D_max + 1, dtype=np.float64)
        weight = np.cumprod(np.concatenate(([1.0], np.full(D_max - 1, p))))
        W = np.concatenate(([0.0], np.cumsum(weight)))
        V = np.concatenate(([0.0], np.cumsum(weight / d)))  # V[m]: sum of p^(d-1) / d for d <= m
        holes_above = np.cumsum(np.concatenate((hole, np.zeros(max(D_max - len(hole), 0), bool))))[:D_max]
        # how far a labelled hole can push each ranked relevant document down the ideal: any s,
        # but at the top grade only the holes ranked above it (ties go in run order, unranked
        # last), and above it none
        cap = np.where(grade[hit] > top_grade, 0, np.where(grade[hit] == top_grade, holes_above[hit],
                                                           labelled))
        fixed = np.cumsum(np.bincount(np.maximum(hit, ideal), minlength=D_max)[:D_max])  # joined, none labelled
        low_v, high_v = [], []
        rows = max(1, COMPAT_BOUND_CELLS // max(D_max, len(hit), 1))
        for s0 in range(0, labelled + 1, rows):
            s = np.arange(s0, min(s0 + rows, labelled + 1))
            c = R + s
            D = np.maximum(b - a, c)
            # lower: each ranked relevant document joins the overlap at max(its rank, its ideal rank + shift)
            joins = np.maximum(hit[None, :], ideal[None, :] + np.minimum(s[:, None], cap[None, :])) + 1
            low = np.where(joins <= D[:, None], V[D][:, None] - V[np.minimum(joins, D_max) - 1], 0.0).sum(axis=1)
            # upper: those joined with none labelled (ideal ranks only move down), plus at most min(s,
            # holes above d) labelled ones, and never more than min(d, R + s)
            overlap = np.minimum(np.minimum(d[None, :], c[:, None]),
                                 fixed[None, :] + np.minimum(s[:, None], holes_above[None, :]))
            high = (np.where(d[None, :] <= D[:, None], (weight / d)[None, :], 0.0) * overlap).sum(axis=1)
            norm = W[c] + c * (V[D] - V[c]) if normalize else W[D]  # sum_{d <= D} p^(d-1) min(d, c) / d
            for part, out in ((low, low_v), (high, high_v)):
                v = np.zeros(len(s))
                np.divide(part, norm, out=v, where=norm > 0)
                out.append(v)
        lo[i], hi[i] = float(np.concatenate(low_v).min()), float(np.concatenate(high_v).max())
    return lo, hi
