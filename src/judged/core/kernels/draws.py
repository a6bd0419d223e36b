"""Kernels of draws: the paired tests' resampling (the bootstrap of :mod:`judged.analyses.stats`),
indices drawn from a generator's 32-bit draws as numpy draws them, one C pass instead of
numpy's call per draw; the hole estimate's drawn grades (:mod:`judged.analyses.holes.estimate`),
summed per draw and query in one C pass.

* :func:`bounded_indices` -- indices 0..n-1 as numpy's ``Generator.integers(0, n)`` makes
  them from its 32-bit draws (Lemire's method, numpy's ``buffered_bounded_lemire_uint32``):
  per draw u, m = u x n (64 bits); the draw is skipped when m's low 32 bits are under
  (2^32 - n) mod n, else the index is m's high 32 bits. The numpy reference computes every
  draw's m at once; the C function walks the draws once.
* :func:`drawn_sums` -- per draw and query, sums over the query's holes of a weight per
  (hole, drawn level), the level drawn by inversion from a uniform and the hole's
  cumulative probabilities. The numpy reference compares every level at once and sums
  with one ``np.bincount`` per sum; the C function walks the draws once, adding in the same
  order (hole by hole from 0.0), so the same bits.
"""

from __future__ import annotations

import numpy as np

from . import FALLBACK, kernel


@kernel
def bounded_indices(draws: np.ndarray, n: int, out: np.ndarray) -> tuple[int, int]:
    """Fills ``out`` (int64) with indices 0..n-1 made from ``draws`` (uint32, in stream order),
    up to its length or until the draws run out: (how many indices, how many draws they
    used). 1 < n < 2^32."""
    m = np.multiply(np.asarray(draws, np.uint32), np.uint64(n), dtype=np.uint64)
    threshold = ((1 << 32) - n) % n
    count = len(out)
    taken = np.flatnonzero((m & np.uint64(0xFFFFFFFF)) >= np.uint64(threshold))[:count]
    out[:len(taken)] = m[taken] >> np.uint64(32)
    used = int(taken[-1]) + 1 if len(taken) == count and count else (0 if not count else len(m))
    return len(taken), used


@bounded_indices.binding
def _(native, draws, n, out):
    return native.bounded_indices(np.ascontiguousarray(draws, np.uint32), int(n), out)


@kernel
def drawn_sums(u: np.ndarray, cum: np.ndarray, q: np.ndarray, weights: np.ndarray, nq: int) -> np.ndarray:
    """(draws, sums, nq) float: per draw s and query, sum t of ``weights[t, h, level]`` over
    the holes h of that query (``q[h]``, 0 <= q < nq), hole by hole from 0.0, where level is
    how many of hole h's cumulative probabilities ``cum[h, :-1]`` its uniform ``u[s, h]``
    exceeds (the grade level drawn by inversion). ``u``: (draws, holes); ``cum``: (holes,
    levels); ``weights``: (sums, holes, levels)."""
    c, nh = u.shape
    level = np.zeros((c, nh), np.intp)
    for lv in range(cum.shape[1] - 1):
        level += u > cum[:, lv]
    at = (np.arange(c, dtype=np.int64)[:, None] * nq + np.asarray(q, np.int64)[None, :]).ravel()
    out = np.empty((c, len(weights), nq))
    holes = np.arange(nh)
    for t, w in enumerate(weights):
        out[:, t] = np.bincount(at, weights=w[holes, level].ravel(), minlength=c * nq).reshape(c, nq)
    return out


@drawn_sums.binding
def _(native, u, cum, q, weights, nq):
    u, cum, weights = (np.ascontiguousarray(x, np.float64) for x in (u, cum, weights))
    q = np.ascontiguousarray(q, np.int64)
    c, nh = u.shape
    if cum.shape[0] != nh or len(q) != nh or weights.shape[1:] != cum.shape or \
            nh and (int(q.min()) < 0 or int(q.max()) >= nq):
        return FALLBACK  # the reference decides (or raises)
    out = np.empty((c, len(weights), nq))
    native.drawn_sums(u, cum, cum.shape[1], q, len(weights), weights, out)
    return out
