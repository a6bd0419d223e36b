"""Kernels of the exact hole bounds (:mod:`judged.core.measures.bounds`): each a numpy reference and the
C function of ``judged.core._native`` that gives the same bits.

* :func:`ap_extremes` -- AP's minimum and maximum per query over the labels of its holes:
  s newly relevant holes give the largest numerator as the s shallowest holes and the
  smallest as the s deepest (extras, holes outside the ranking, count as rank infinity);
  the extremes are a minimum / maximum over s = 0..holes + extras.
* :func:`dinkelbach` -- max over assignments of hole gains of a ratio (sign * DCG) / IDCG
  by Dinkelbach's parametric method (Management Science 1967): for a trial lambda,
  maximise sign * DCG - lambda * IDCG by a dynamic programme over the gain levels, largest
  first, whose state is how many holes took a larger gain (each level a prefix maximum);
  lambda <- the optimum's ratio until the maximum is 0.

Sums run in rank order (``np.cumsum``, never a pairwise ``sum``) so the C loops repeat
them operation for operation; ``tests/core/test_kernels.py`` checks both back ends bit for bit.
"""

from __future__ import annotations

import numpy as np

from . import FALLBACK, kernel

MAX_ITERATIONS = 200  # Dinkelbach's steps per problem (it converges in a handful)


@kernel
def ap_extremes(offsets: np.ndarray, grade: np.ndarray, rel: float, R: np.ndarray, extras: np.ndarray,
                can_rel: bool, can_non: bool) -> tuple[np.ndarray, np.ndarray]:
    """(min, max) of AP per query. ``offsets`` (queries + 1) delimit each query's ranked
    list (the measure's top k) in ``grade`` (NaN: a hole); ``R`` the judged relevant count
    (grade >= ``rel``), ``extras`` further holes outside the list. ``can_rel`` / ``can_non``:
    a hole can be labelled relevant / not relevant (else every hole takes the other label)."""
    n = len(offsets) - 1
    lo, hi = np.zeros(n), np.zeros(n)
    for q in range(n):
        g = grade[offsets[q]:offsets[q + 1]]
        fixed = g >= rel
        ranks = np.arange(1, len(g) + 1, dtype=np.float64)
        above = np.cumsum(fixed) - fixed  # fixed relevant strictly above each rank
        inv = np.cumsum(np.where(fixed, 1.0 / ranks, 0.0))
        below = (inv[-1] if len(g) else 0.0) - inv  # sum of 1/rank over fixed relevant strictly below
        base = np.cumsum(np.where(fixed, (above + 1) / ranks, 0.0))
        base = float(base[-1]) if len(g) else 0.0
        holes = np.flatnonzero(np.isnan(g))
        E = int(extras[q])
        # shallowest first: the c-th hole has c - 1 new relevant holes above it
        c = np.arange(1, len(holes) + 1)
        gain_max = np.concatenate(([0.0], (above[holes] + c) / ranks[holes] + below[holes], np.zeros(E)))
        # extras first, then deepest first: every earlier new hole lies below
        deep = holes[::-1]
        earlier = np.concatenate(([0.0], np.cumsum(1.0 / ranks[deep])[:-1])) if len(deep) else np.zeros(0)
        gain_min = np.concatenate(([0.0], np.zeros(E), (above[deep] + 1) / ranks[deep] + below[deep] + earlier))
        denom = R[q] + np.arange(len(holes) + E + 1)
        vals = []
        for gains in (gain_min, gain_max):
            vals.append(np.divide(base + np.cumsum(gains), denom, out=np.zeros(len(denom)), where=denom > 0))
        pick = [0] if not can_rel else [len(denom) - 1] if not can_non else slice(None)
        lo[q], hi[q] = vals[0][pick].min(), vals[1][pick].max()
    return lo, hi


@ap_extremes.binding
def _(native, offsets, grade, rel, R, extras, can_rel, can_non):
    n = len(offsets) - 1
    lo, hi = np.zeros(n), np.zeros(n)
    native.ap_extremes(np.ascontiguousarray(offsets, np.int64), np.ascontiguousarray(grade, np.float64), float(rel),
                       np.ascontiguousarray(R, np.float64), np.ascontiguousarray(extras, np.int64), bool(can_rel),
                       bool(can_non), lo, hi)
    return lo, hi


@kernel
def dinkelbach(W: np.ndarray, D: np.ndarray, dfix: np.ndarray, levels: np.ndarray, allowed: np.ndarray,
               above: np.ndarray, count: np.ndarray, sign: float) -> np.ndarray:
    """lambda* = max of (sign * DCG) / IDCG for each of a batch of problems with as many
    holes each. ``W`` (problems, holes + 1): prefix sums of the hole weights, sorted so the
    largest gains take the first ones; ``D``: prefix sums of the ideal discount (0 past the
    cutoff); ``dfix``: the DCG of the judged documents; ``levels``: every gain level, largest
    first, ``allowed[i]`` whether a hole may take it; ``above`` / ``count`` (problems,
    levels): judged gains larger than / equal to each level. Every problem goes through the
    same operations as alone (so the same bits), all at once."""
    nb, width = W.shape
    nh = width - 1
    t = np.arange(nh + 1)

    def solve(lam, sel):
        """max over assignments of sign*DCG - lam*IDCG for the problems ``sel``, and the
        DCG (f) and IDCG (g) of the maximiser."""
        n = len(sel)
        Ws, lm = W[sel], lam[:, None]
        best = np.full((n, nh + 1), -np.inf)
        best[:, 0] = sign * dfix[sel]
        args = []
        for i, u in enumerate(levels.tolist()):
            a, c = above[sel, i][:, None], count[sel, i][:, None]
            idcg_to = lm * u * D[a + t + c]  # IDCG of the block ending after t2 holes
            idcg_from = lm * u * D[a + t]
            if not allowed[i]:
                best = best - (idcg_to - idcg_from)
                args.append(np.broadcast_to(t, (n, nh + 1)))
                continue
            B = best - sign * u * Ws + idcg_from
            pref = np.maximum.accumulate(B, axis=1)
            args.append(np.maximum.accumulate(np.where(B >= pref, t, 0), axis=1))
            best = pref + sign * u * Ws - idcg_to
        # backtrack the counts, then DCG and IDCG of the optimum
        f, g, t2 = dfix[sel].copy(), np.zeros(n), np.full(n, nh)
        r = np.arange(n)
        for i in reversed(range(len(levels))):
            u = float(levels[i])
            t1 = args[i][r, t2]
            f += u * (Ws[r, t2] - Ws[r, t1])
            a, c = above[sel, i], count[sel, i]
            g += u * (D[a + t2 + c] - D[a + t1])
            t2 = t1
        return best[:, nh], f, g

    rows = np.arange(nb)
    _, f, g = solve(np.zeros(nb), rows)
    lam = np.zeros(nb)
    np.divide(sign * f, g, out=lam, where=g > 0)
    active = rows
    for _ in range(MAX_ITERATIONS):
        F, f, g = solve(lam[active], active)
        done = (F <= 1e-12 * np.maximum(1.0, np.abs(lam[active]) * g + np.abs(f))) | (g <= 0)
        go = ~done
        lam[active[go]] = sign * f[go] / g[go]
        active = active[go]
        if not len(active):
            break
    return lam


@dinkelbach.binding
def _(native, W, D, dfix, levels, allowed, above, count, sign):
    nb = W.shape[0]
    lam = np.zeros(nb)
    if nb == 0:
        return lam
    if not len(D) or (nb and int((above + count).max(initial=0)) + W.shape[1] - 1 >= len(D)):
        return FALLBACK  # an ideal position past D (the reference raises the IndexError)
    native.dinkelbach(np.ascontiguousarray(W, np.float64), np.ascontiguousarray(D, np.float64),
                      np.ascontiguousarray(dfix, np.float64), np.ascontiguousarray(levels, np.float64),
                      np.ascontiguousarray(allowed, np.int8), np.ascontiguousarray(above, np.int64),
                      np.ascontiguousarray(count, np.int64), float(sign), MAX_ITERATIONS, lam)
    return lam
