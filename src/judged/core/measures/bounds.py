"""Bounds (``unjudged=min|max``): the exact minimum and maximum of a query's score over
every assignment of integer grades 0..maxgrade to the holes of the measure's ranked
list (the top k), the ideal ranking recomputed for each assignment.

* P, RR, Success, DCG and R are monotone in each hole's label: the extremes put every
  hole at the lowest or the highest gain.
* AP is not monotone (a newly relevant document also raises R): for s newly relevant
  holes the numerator is largest when they are the s shallowest holes and smallest when
  they are the s deepest (an exchange argument, see docs/holes.md), so the extremes are
  a minimum / maximum over s = 0..n.
* nDCG is not monotone either (a newly relevant document also raises IDCG), and its
  maximum can need intermediate grades. For a fixed multiset of hole gains IDCG is
  fixed and DCG is extreme when the largest gains sit on the largest (max) or smallest
  (min) discounts, so only the multiset matters. The ratio is maximised by Dinkelbach's
  parametric method: for a trial value lambda, maximise DCG - lambda * IDCG over
  multisets by a dynamic programme over the gain levels (largest first) whose state is
  how many holes got a larger gain; the transition separates, so each level is a
  prefix maximum, O(levels * holes). lambda <- DCG/IDCG of the optimum until
  max(DCG - lambda * IDCG) = 0 (Dinkelbach, Management Science 1967).
* nERR's bounds are conservative, not exact (the registry says so, and ``judged holes``):
  ERR and the ideal ranking's ERR both rise with every hole's grade (the ideal now holds
  the labelled holes too), so nERR = ERR / IERR lies in [ERR_min / IERR_max,
  min(1, ERR_max / IERR_min)], _min with every hole at grade 0 and _max at maxgrade
  (other runs' holes, ``extras``, raise IERR_max only). nERR <= 1 since sorting by grade
  maximises ERR; an ideal of 0 gives 0, and a bound over an ideal of 0 is 0 for the
  minimum and 1 for the maximum when a hole can be relevant.
* INSQ: its weights W do not depend on the gains, so it is linear in them with W >= 0:
  exact, as the monotone ones.
* INST (T >= 1/2) rises with every gain, so the monotone rule is exact. Proof: write
  INST = sum_i P_i g_i / sum_i P_i with P_1 = 1, P_{i+1} = P_i C(x_i), C(x) = (1 - 1/x)^2,
  x_i = i + 2T - G_i (G_i the gain up to rank i, gains in [0, 1]), so x_i >= 2T >= 1 and C
  rises with x, C' = 2(x - 1)/x^3. From a rank j with x = x_j, the expected gain still to
  come is Phi(x) = C(x) (h + Phi+(x + 1 - h)) (h the next gain, Phi+ the same one rank on). By
  induction from the end: (a) 0 <= Phi <= psi(x) = C/(1 - C), as C(x)(1 + psi(x)) = psi(x)
  and h + psi(x + 1 - h) <= 1 + psi(x) (psi' < 1/2 < 1); (b) 0 <= dPhi/dx <= 1/2, as
  C'(1 + psi) + C/2 <= 1/2 is C' <= (1 - C)^2 / 2, i.e. 2x(x - 1) <= (2x - 1)^2 / 2. With
  A_j = g_j + Phi(c - g_j) the gain from j on and B_j the expected ranks read from j on
  (falling in g_j: C falls, by the same induction), INST = (a + P_j A_j) / (b + P_j B_j)
  with a, b, P_j free of g_j, so dINST/dg_j has the sign of dA_j - INST dB_j >= 1 - 1/2 > 0
  (per unit of g_j). Below T = 1/2 (x < 1 possible) it is not monotone
  (tests/analyses/holes/test_holes_bounds.py): refused.
* Compat is conservative. For s holes (and other runs' holes) labelled relevant, R + s fixes
  the depth max(n, R + s) and the normaliser exactly. A relevant ranked document's ideal
  rank only moves down when documents join the ideal, by at most s (at the top grade a hole
  can take, only by the holes ranked above it: ties go in run order, unranked documents
  last; above that grade, not at all), so counting it in the overlap from depth max(its
  rank, its ideal rank + that shift) is a lower bound; the overlap at
  depth d is at most min(d, R + s, those counted at s = 0 + min(s, holes above d)). The
  interval: the least lower and the greatest upper bound over s = 0..holes.
* AP-IA is exact though not monotone: each subtopic's AP reads only its labels, and a hole
  may cover any subset of S, so the extremes of the mean are the means of each subtopic's
  AP extremes (the AP kernel, a block per query and subtopic).
* alpha-nDCG, nERR-IA and nNRBP are conservative: ndeval's greedy ideal moves with the
  labels, and not monotonely (a label can mislead the greedy, lower its value and let a
  run score above 1: tests/core/measures/test_diversity.py). Their raw value (alpha-DCG,
  ERR-IA, NRBP with discounts w_r non-increasing) rises with every label. With f(X) =
  sum_s sum_{j < n_s(X)} (1 - alpha)^j, monotone submodular, a ranking's raw value is
  sum_m (w_{m-1} - w_m) F_m, F_m the f of its top m, at most OPT_m (the best m documents).
  Any ranking, the greedy ideal too, is at most U = sum_s sum_{j < min(k, n_s)} (1 -
  alpha)^j w_j (the j-th document covering s sits at rank >= j), n_s the judged documents
  covering s plus every hole and extra; and the greedy's
  F_m >= (1 - (1 - 1/m)^m) OPT_m (Nemhauser, Wolsey & Fisher, Math. Programming 1978),
  with OPT_m >= the F_m of the ideal and of the run with no hole covering anything. So the
  value lies in [raw(no hole covers) / U, raw(every hole covers all S) / L] with L that
  weighted sum, and at most 1 / (1 - (1 - 1/k)^k) (1 / (1 - 1/e) without a cutoff).

Here the measures' side: what the holes are (the measure's top k), filling them with
grades, and the extremes; the loops are kernels (:mod:`judged.core.kernels.bound_kernels`). And
which holes one run has that another lacks (:func:`holes_only_in`, the extras of a pair's
conservative interval): per query, the distinct docids among run A's holes that are not
among run B's and the other way round. Its numpy reference sorts (query, docid hash) keys
of both runs' holes together, a range of queries (about :data:`HOLE_CHUNK` holes) at a
time, and confirms every key's docids on the strings (two docids of one query sharing a
hash: that range is counted on sets of docids); the C function keeps a small hash set per
query and run, a match confirmed on the bytes.
:mod:`judged.analyses.holes.unjudged` reads them for runs and pairs of runs.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import pyarrow as pa

from ..align import Aligned, Judgments, Ranked, block_offsets
from ..data import pair_keys, string_buffers, strings_equal, take_strings
from ..errors import ConventionError, MeasureError
from ..kernels import kernel
from ..kernels.bound_kernels import ap_extremes, dinkelbach
from .beyond import compat_bounds, ideal_err
from .diversity import GREEDY_NORMALISED, hole_bounds
from .registry import BOUNDED

MIN_INST_TARGET = 0.5  # INST is monotone in every gain for T >= 1/2 (module doc); below, refused


def ranked_list(measure, aligned: Aligned) -> Ranked:
    """The rows a measure reads: the top ``cutoff`` (all rows without a cutoff)."""
    return aligned.ranked.top(measure.cutoff)


def list_depth(measure) -> int | None:
    """The ranks a measure reads: its cutoff (every rank for no cutoff, ideal=retrieved or condensed)."""
    if measure.name == "nDCG" and measure.ideal == "retrieved" or measure.unjudged == "condensed":
        return None  # the ideal reads the whole ranking / the condensed list reaches past the cutoff
    return measure.cutoff


def fill(aligned: Aligned, ranked: Ranked, grade: np.ndarray, extra_q=None, extra_grade=None) -> Aligned:
    """The aligned run as if the holes of ``ranked`` had the grades ``grade`` (NaN: still
    unjudged) and extra documents outside the ranking were judged (``extra_q``, ``extra_grade``)."""
    newly = np.isnan(ranked.grade) & ~np.isnan(grade)
    g = np.where(newly, grade, ranked.grade)
    j = aligned.judgments
    parts_q = [j.q, ranked.q[newly]]
    parts_g = [j.grade, grade[newly].astype(np.int64)]
    if extra_q is not None and len(extra_q):
        parts_q.append(np.asarray(extra_q, np.int64))
        parts_g.append(np.asarray(extra_grade, np.int64))
    jq, jg = np.concatenate(parts_q), np.concatenate(parts_g)
    order = np.argsort(jq, kind="stable")
    jq, jg = jq[order], jg[order]
    return replace(aligned, ranked=Ranked(ranked.n_queries, ranked.q, ranked.pos, g, ranked.row, ranked.offsets),
                   judgments=Judgments(j.n_queries, jq, jg, block_offsets(jq, j.n_queries)))


def zero_filled(measure):
    return replace(measure, unjudged="zero", maxgrade=None)


MAX_BOUND_GRADE = 1000  # bounds try every grade 0..maxgrade for the holes: more is a typo, not a scale


def check_maxgrade(maxgrade) -> None:
    """``--maxgrade``: None (the qrels' largest grade) or an integer 0..MAX_BOUND_GRADE."""
    if maxgrade is not None and (isinstance(maxgrade, bool) or int(maxgrade) != maxgrade or maxgrade < 0):
        raise ConventionError(f"--maxgrade must be a non-negative integer grade, got {maxgrade}")
    if maxgrade is not None and maxgrade > MAX_BOUND_GRADE:
        raise ConventionError(f"--maxgrade must be at most {MAX_BOUND_GRADE} (bounds try every grade up to it), "
                              f"got {maxgrade}")


def max_grade(measure, aligned: Aligned) -> int:
    """``maxgrade=`` or the largest grade in the whole qrels (at least 0)."""
    if measure.maxgrade is not None:
        return int(measure.maxgrade)
    g = aligned.qrels.grade
    return int(max(g.max(), 0)) if len(g) else 0


def _extra_arrays(extras, grade: int):
    if extras is None:
        return None, None
    extras = np.asarray(extras, np.int64)
    q = np.repeat(np.arange(len(extras)), extras)
    return q, np.full(len(q), grade, np.int64)


def bound(measure, aligned: Aligned) -> np.ndarray:
    """Per-query values of ``measure`` with ``unjudged=min`` or ``unjudged=max``."""
    lo, hi = bounds(measure, aligned)
    return lo if measure.unjudged == "min" else hi


def bounds(measure, aligned: Aligned, extras=None) -> tuple[np.ndarray, np.ndarray]:
    """(min, max) per query of ``measure`` over every grade 0..maxgrade of the holes in its
    ranked list. ``extras[q]``: further unjudged documents of query q outside that list
    that may be labelled too (another run's holes: they move only the ideal / R)."""
    if measure.name not in BOUNDED:
        raise MeasureError(f"bounds are defined for {', '.join(BOUNDED)}, not {measure.name}")
    base = zero_filled(measure)
    M = max_grade(measure, aligned)
    if M > MAX_BOUND_GRADE:
        raise ConventionError(f"bounds try every grade 0..{M} for the holes, at most {MAX_BOUND_GRADE}: give a "
                              "smaller --maxgrade (maxgrade=), or skip the holes (compare/report: --no-holes)")
    if measure.name in ("ERR", "nERR") and M > measure.option("max_rel"):
        raise ConventionError(f"{measure.name} bounds need holes' grades up to max_rel={measure.option('max_rel')} "
                              f"(a grade above it makes the stopping chance exceed 1 and ERR no longer monotone), "
                              f"got maxgrade {M}: give a smaller --maxgrade (maxgrade=) or a larger max_rel")
    if measure.name == "INST" and measure.option("T") < MIN_INST_TARGET:
        raise ConventionError(f"INST bounds need T >= {MIN_INST_TARGET:g} (below it a larger gain can make INST "
                              f"smaller, so every hole at 0 or at maxgrade is no longer an extreme), got T="
                              f"{measure.option('T'):g}")
    grades = np.arange(M + 1, dtype=np.float64)
    if measure.name in ("nDCG", "DCG"):
        gains = base.gain(grades)
    elif measure.family.bound_gain == "grade":  # ERR: monotone in the grade itself
        gains = grades.copy()
    else:
        gains = (grades >= measure.rel).astype(float)
    if (gains < 0).any():
        raise ConventionError(f"bounds need non-negative gains; gain={measure.gain} gives {gains.min()}")
    g_hi, g_lo = float(np.argmax(gains)), float(np.argmin(gains))
    top = ranked_list(measure, aligned)
    holes = ~top.judged
    n_extra = np.zeros(aligned.n_queries, np.int64) if extras is None else np.asarray(extras, np.int64)
    if measure.name in ("nDCG", "AP"):
        lo, hi = (_ndcg_bounds if measure.name == "nDCG" else _ap_bounds)(base, aligned, top, n_extra, M, gains)
    elif measure.name == "nERR":
        lo, hi = _nerr_bounds(base, aligned, top, n_extra, g_lo, g_hi)
    elif measure.name == "Compat":
        lo, hi = compat_bounds(base, aligned, n_extra, M)
    elif measure.name in GREEDY_NORMALISED and M < measure.rel:  # no hole can cover a subtopic
        lo = hi = base.compute(aligned)
    elif measure.name == "AP-IA" or measure.name in GREEDY_NORMALISED:
        lo, hi = hole_bounds(base, aligned, n_extra, M >= measure.rel)
    else:  # monotone: every hole at the lowest / highest gain (extras only move R's denominator)
        eq_lo, eg_lo = _extra_arrays(n_extra, int(g_hi))
        eq_hi, eg_hi = _extra_arrays(n_extra, int(g_lo))
        lo = base.compute(fill(aligned, top, np.where(holes, g_lo, np.nan), eq_lo, eg_lo))
        hi = base.compute(fill(aligned, top, np.where(holes, g_hi, np.nan), eq_hi, eg_hi))
    # queries without holes: exactly the kernel's zero-filled value; with some, every hole at
    # grade 0 is one of the labellings, so the bounds hold that value (not an ulp beside it)
    z = base.compute(aligned)
    none = (np.bincount(top.q[holes], minlength=aligned.n_queries) + n_extra) == 0
    return np.where(none, z, np.minimum(lo, z)), np.where(none, z, np.maximum(hi, z))


def _ap_bounds(measure, aligned, top, n_extra, M, rel_gain):
    """AP: the extremes over s newly relevant holes (:func:`judged.core.kernels.bound_kernels.ap_extremes`)."""
    R = aligned.judgments.count_at_least(measure.rel).astype(np.float64)
    return ap_extremes(top.offsets, top.grade, float(measure.rel), R, n_extra, bool(rel_gain.max() > 0),
                       bool(rel_gain.min() == 0))


def _nerr_bounds(measure, aligned, top, n_extra, g_lo, g_hi):
    """nERR: [ERR_min / IERR_max, min(1, ERR_max / IERR_min)], conservative (module doc)."""
    holes = ~top.judged
    err = replace(measure, name="ERR")
    low = fill(aligned, top, np.where(holes, g_lo, np.nan))
    high = fill(aligned, top, np.where(holes, g_hi, np.nan), *_extra_arrays(n_extra, int(g_hi)))
    err_lo, err_hi = err.compute(low), err.compute(high)
    ideal_lo, ideal_hi = ideal_err(measure, low), ideal_err(measure, high)
    lo, hi = np.zeros(len(err_lo)), (err_hi > 0).astype(np.float64)
    np.divide(err_lo, ideal_hi, out=lo, where=ideal_hi > 0)
    np.divide(err_hi, ideal_lo, out=hi, where=ideal_lo > 0)
    return lo, np.minimum(hi, 1.0)


def _ndcg_bounds(measure, aligned, top, n_extra, M, gains):
    """nDCG@k: exact min and max over the holes' grades (Dinkelbach + DP, see module doc)."""
    n = aligned.n_queries
    k = measure.cutoff
    values = sorted_distinct(gains)
    j = aligned.judgments
    if measure.ideal == "judged":
        pool_q, pool_g = j.q, measure.gain(j.grade.astype(np.float64))
    else:  # ideal over the run's judged retrieved documents (holes beyond k stay 0)
        r = aligned.ranked
        keep = r.judged
        pool_q, pool_g = r.q[keep], measure.gain(r.grade[keep])
    if (pool_g < 0).any():
        raise ConventionError(f"bounds need non-negative gains; gain={measure.gain} gives negative gains")
    lo, hi = np.zeros(n), np.zeros(n)
    open_queries = np.bincount(top.q[~top.judged], minlength=n) + n_extra > 0
    positive = pool_g > 0
    gain_levels = sorted_distinct(pool_g[positive])
    # element by element for every ranked row at once (the same bits as query by query):
    # each rank's discount weight, each judged row's discounted gain; per query, how many
    # judged gains sit at each gain level
    hole_all = np.isnan(top.grade)
    w_all = measure.discount.divide(np.ones(len(top.grade)), top.pos + 1.0)
    fixed_all = measure.gain(top.grade) * w_all  # holes: gain 0, never summed
    level_counts = np.bincount(pool_q[positive] * len(gain_levels) + np.searchsorted(gain_levels, pool_g[positive]),
                               minlength=n * len(gain_levels)).reshape(n, len(gain_levels))
    at = np.flatnonzero(open_queries)  # no hole: bounds() gives the kernel's zero-filled value
    dfix = block_sums(fixed_all, top.offsets, ~hole_all)
    # per open query its problem: the weights of its holes, then a 0 per extra hole
    hole_rows = np.flatnonzero(hole_all)
    in_top = np.bincount(np.repeat(np.arange(n), np.diff(top.offsets))[hole_rows], minlength=n)
    first = np.concatenate(([0], np.cumsum(in_top)[:-1]))
    width = in_top + n_extra
    longest = int((level_counts[at].sum(axis=1) + width[at]).max()) if len(at) else 0
    disc = measure.discount.divide(np.ones(longest), np.arange(1, longest + 1, dtype=np.float64))
    disc[k:] = 0.0
    for h in sorted_distinct(width[at]).tolist():  # problems with as many holes solved together
        idx = at[width[at] == h]
        hw = np.zeros((len(idx), h))
        col = np.arange(h)[None, :]
        filled = col < in_top[idx][:, None]
        hw[filled] = w_all[hole_rows[(first[idx][:, None] + col)[filled]]]
        lo[idx] = ndcg_extremes(hw, dfix[idx], level_counts[idx], gain_levels, disc, values, "min")
        hi[idx] = ndcg_extremes(hw, dfix[idx], level_counts[idx], gain_levels, disc, values, "max")
    return lo, hi


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a numeric array without NaN, as np.unique gives them
    (which imports numpy.ma on its first call: 0.01-0.04 CPU-s of compare's and holes' start)."""
    s = np.sort(values)
    return s[np.concatenate(([True], s[1:] != s[:-1]))] if len(s) else s


def block_sums(values: np.ndarray, offsets: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Per block b (rows ``offsets[b]`` to ``offsets[b + 1] - 1``) the sum of ``values`` where
    ``keep``, as ``values[s:e][keep[s:e]].sum()`` gives it, bit for bit, without a Python
    step per block: the blocks keeping as many rows are summed as the rows of one matrix,
    and numpy sums each row of a matrix as it sums that row alone (pairwise, the same
    order); 0.0 for a block keeping none."""
    n = len(offsets) - 1
    out = np.zeros(n)
    kept = np.flatnonzero(keep)
    counts = np.bincount(np.repeat(np.arange(n), np.diff(offsets))[kept], minlength=n)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    for c in sorted_distinct(counts[counts > 0]).tolist():
        blocks = np.flatnonzero(counts == c)
        out[blocks] = values[kept[first[blocks][:, None] + np.arange(c)]].sum(axis=1)
    return out


def ndcg_extreme(hw, dfix: float, jg, disc, values, want: str) -> float:
    """max (``want='max'``) or min of (dfix + sum_h hw_h * x_h) / IDCG over hole gains
    x_h in ``values``, IDCG the discounted sum (weights ``disc``, 0 past the cutoff) of
    the judged gains ``jg`` and the x_h sorted descending; 0 when IDCG = 0. The weights
    ``hw`` may be negative (a difference of two runs' discounts)."""
    jg = np.asarray(jg, np.float64)
    levels, counts = np.unique(jg, return_counts=True)
    return float(ndcg_extremes(np.asarray(hw, np.float64)[None, :], np.array([float(dfix)]), counts[None, :],
                               levels, np.asarray(disc, np.float64), values, want)[0])


def ndcg_extremes(hw: np.ndarray, dfix: np.ndarray, jcounts: np.ndarray, jlevels: np.ndarray, disc: np.ndarray,
                  values, want: str) -> np.ndarray:
    """:func:`ndcg_extreme` for a batch of problems with as many holes each: ``hw``
    (problems, holes) hole weights, ``dfix`` (problems,), ``jcounts`` (problems, levels)
    how many judged gains equal each of the distinct ``jlevels``; ``disc`` the discount
    by ideal position (0 past the cutoff) for at least judged + holes positions. Every
    problem goes through the same operations as alone (so the same bits), all at once."""
    values = np.asarray(values, np.float64)
    hw = np.asarray(hw, np.float64)
    nb, nh = hw.shape
    if nb == 0:
        return np.zeros(0)
    w = np.sort(hw, axis=1)[:, ::-1] if want == "max" else np.sort(hw, axis=1)  # largest gains take w[0], ...
    W = np.concatenate((np.zeros((nb, 1)), np.cumsum(w, axis=1)), axis=1)
    D = np.concatenate(([0.0], np.cumsum(disc)))
    jlevels = np.asarray(jlevels, np.float64)
    jcounts = np.asarray(jcounts, np.int64).reshape(nb, len(jlevels))
    zero_possible = (jcounts.sum(axis=1) == 0) & (values.min() == 0)  # all holes 0: IDCG = 0, value 0
    allowed = set(values.tolist())
    levels = sorted(allowed | set(jlevels.tolist()), reverse=True)
    above = np.stack([jcounts[:, jlevels > u].sum(axis=1) for u in levels], axis=1)
    count = np.stack([jcounts[:, np.flatnonzero(jlevels == u)[0]] if (jlevels == u).any() else np.zeros(nb, np.int64)
                      for u in levels], axis=1)
    sign = 1.0 if want == "max" else -1.0
    out = sign * dinkelbach(W, D, dfix.astype(np.float64), np.array(levels, np.float64),
                            np.array([u in allowed for u in levels]), above.astype(np.int64), count.astype(np.int64),
                            sign)
    if zero_possible.any():
        out[zero_possible] = np.maximum(out[zero_possible], 0.0) if want == "max" \
            else np.minimum(out[zero_possible], 0.0)
    return out



# ---------------------------------------------------------------------------
# The pool's holes: judging is done for a shared pool, so a run's bounds range over the
# holes of every run given (the others' holes enter its ideal and R), not its own alone


def pool_extras(measure, aligned: list, depth: int | None = None) -> list:
    """Per run (each an :class:`Aligned` of one qrels), per query of the run: how many
    distinct holes of the pool -- every run's holes in its ranked list (the measure's top
    ``cutoff``, as :func:`ranked_list`) or its top ``depth`` when deeper -- are not among
    the run's own holes in its ranked list. Given as ``extras`` to :func:`bounds`, the min
    and max range over every grade of every hole of the pool, one label per (query,
    document) shared by all runs (judging the pool: the others enter the ideal and R).

    Pairs are found by 64-bit keys of (query code, docid hash) and confirmed on the query
    code and the docid string; a collision (two docids of one query sharing a hash) falls
    back to sets of (qid, docid) strings, as does a set of runs aligned with different qrels."""
    lists = [ranked_list(measure, a) for a in aligned]
    deeper = depth is not None and measure.cutoff is not None and depth > measure.cutoff
    tops = [a.ranked.top(depth) for a in aligned] if deeper else lists
    own = [np.bincount(top.q[np.isnan(top.grade)], minlength=a.n_queries) for a, top in zip(aligned, lists)]
    same = all(a.qrels is aligned[0].qrels and a.qid_codes is not None for a in aligned)
    if not aligned or not same:
        return _pool_extras_by_sets(aligned, tops, own)
    codes, keys, docids = [], [], []
    for a, top in zip(aligned, tops):
        hole = np.flatnonzero(np.isnan(top.grade))
        rows = top.row[hole]
        codes.append(np.asarray(a.qid_codes, np.int64)[top.q[hole]])
        keys.append(pair_keys(codes[-1], a.run.docid_hash[rows]))
        docids.append(take_strings(a.run.docid, rows))
    code, key = np.concatenate(codes), np.concatenate(keys)
    n_codes = len(aligned[0].qrels.index.query_ids)
    if not len(key):
        return [np.zeros(a.n_queries, np.int64) for a in aligned]
    if len({d.type for d in docids}) > 1:
        docids = [d.cast(pa.large_string()) for d in docids]
    docid = pa.concat_arrays(docids)
    order = np.argsort(key, kind="stable")
    sk = key[order]
    first = np.concatenate(([True], sk[1:] != sk[:-1]))
    group = np.cumsum(first) - 1
    head = order[np.flatnonzero(first)[group]]  # each row's group's first row
    later = np.flatnonzero(~first)
    if len(later) and not ((code[order[later]] == code[head[later]]).all()
                           and strings_equal(docid, order[later], docid, head[later]).all()):
        return _pool_extras_by_sets(aligned, tops, own)
    union = np.bincount(code[order[first]], minlength=n_codes)
    return [union[np.asarray(a.qid_codes, np.int64)] - mine for a, mine in zip(aligned, own)]


def _pool_extras_by_sets(aligned: list, tops: list, own: list) -> list:
    """:func:`pool_extras` over Python sets of (qid, docid) strings."""
    union = {}
    for a, top in zip(aligned, tops):
        hole = np.flatnonzero(np.isnan(top.grade))
        for q, d in zip(a.qids.astype(str)[top.q[hole]].tolist(), a.docids(top.row[hole])):
            union.setdefault(q, set()).add(d)
    return [np.array([len(union.get(q, ())) for q in a.qids.astype(str).tolist()], np.int64) - mine
            for a, mine in zip(aligned, own)]

# ---------------------------------------------------------------------------
# The other run's holes: a pair's conservative interval bounds each run over the union of
# both runs' holes (judged.analyses.holes.unjudged), the other run's holes a run lacks counted as its extras


HOLE_CHUNK = 1 << 16  # ranked rows of both runs whose holes' keys are sorted together (under a MB per array)


@kernel
def holes_only_in(a_start: np.ndarray, a_grade: np.ndarray, a_row: np.ndarray, a_hash: np.ndarray,
                  a_docid: pa.Array, b_start: np.ndarray, b_grade: np.ndarray, b_row: np.ndarray,
                  b_hash: np.ndarray, b_docid: pa.Array) -> tuple:
    """(only_a, only_b): per query code c, how many distinct docids among A's holes of c are
    not among B's holes of c, and the other way round. A run's ranked rows of c are
    ``start[c]:start[c + 1]`` of its ``grade`` (NaN: a hole) and ``row`` (the row of its
    ``docid`` column) arrays; ``hash`` its docid hash per row (:func:`judged.core.data.string_hash`)."""
    nq = len(a_start) - 1
    only = (np.zeros(nq, np.int64), np.zeros(nq, np.int64))
    per_code = np.cumsum(np.diff(a_start) + np.diff(b_start))
    total = int(per_code[-1]) if nq else 0
    edges = sorted_distinct(np.concatenate(([0, nq], np.searchsorted(per_code, np.arange(HOLE_CHUNK, total, HOLE_CHUNK),
                                                                "right"))))
    runs = ((a_start, a_grade, a_row, a_hash, a_docid), (b_start, b_grade, b_row, b_hash, b_docid))
    for c0, c1 in zip(edges[:-1].tolist(), edges[1:].tolist()):
        _only_in_range(c0, c1, runs, only)
    return only


def _only_in_range(c0: int, c1: int, runs: tuple, only: tuple) -> None:
    """:func:`holes_only_in` for the query codes c0 <= c < c1, added to ``only``."""
    codes, docids, keys = [], [], []
    for start, grade, row, h, docid in runs:
        s, e = start[c0], start[c1]
        hole = np.isnan(grade[s:e])
        rows = row[s:e][hole]
        codes.append(np.repeat(np.arange(c0, c1, dtype=np.int64), np.diff(start[c0:c1 + 1]))[hole])
        docids.append(take_strings(docid, rows))
        keys.append(pair_keys(codes[-1], h[rows]))
    keys = np.concatenate(keys)
    if not len(keys):
        return
    if docids[0].type != docids[1].type:
        docids = [d.cast(pa.large_string()) for d in docids]
    na, code, docs = len(codes[0]), np.concatenate(codes), pa.concat_arrays(docids)
    order = np.argsort(keys, kind="stable")
    sorted_keys, in_b = keys[order], order >= na
    first = np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1]))
    start = np.flatnonzero(first)  # each distinct key
    group = np.cumsum(first) - 1
    repeated = np.flatnonzero(~first)  # a key's later rows: the same docid as its first row?
    if len(repeated) and not strings_equal(docs, order[repeated], docs, order[start[group[repeated]]]).all():
        _only_in_sets(code, docs.to_pylist(), na, only)  # two docids of one query share a hash
        return
    last = np.append(start[1:], len(order)) - 1  # each distinct key's last row
    # per key, whether each run holds it: B's rows counted by a running sum (one pass, where
    # a reduction per key costs a call per key)
    from_b = np.concatenate(([0], np.cumsum(in_b)))
    n_b = from_b[last + 1] - from_b[start]
    has_a, has_b = n_b < last + 1 - start, n_b > 0
    key_code = code[order[start]]
    for out, mine, other in ((only[0], has_a, has_b), (only[1], has_b, has_a)):
        out += np.bincount(key_code[mine & ~other], minlength=len(out))


def _only_in_sets(code: np.ndarray, docs: list, na: int, only: tuple) -> None:
    """The same counts over sets of docids, per query code."""
    sets = ({}, {})
    for i, (c, d) in enumerate(zip(code.tolist(), docs)):
        sets[i >= na].setdefault(c, set()).add(d)
    for c in set(sets[0]) | set(sets[1]):
        a, b = sets[0].get(c, set()), sets[1].get(c, set())
        only[0][c] += len(a - b)
        only[1][c] += len(b - a)


@holes_only_in.binding
def _(native, a_start, a_grade, a_row, a_hash, a_docid, b_start, b_grade, b_row, b_hash, b_docid):
    nq = len(a_start) - 1
    only = (np.zeros(nq, np.int64), np.zeros(nq, np.int64))
    as_int, as_float = (lambda x: np.ascontiguousarray(x, np.int64)), (lambda x: np.ascontiguousarray(x, np.float64))
    native.holes_only_in(as_int(a_start), as_float(a_grade), as_int(a_row), np.ascontiguousarray(a_hash, np.uint64),
                         *string_buffers(a_docid), as_int(b_start), as_float(b_grade), as_int(b_row),
                         np.ascontiguousarray(b_hash, np.uint64), *string_buffers(b_docid), *only)
    return only
