"""Kernel of the paired tests' resampling (the bootstrap of :mod:`judged.stats`): indices
drawn from a generator's 32-bit draws as numpy draws them, one C pass instead of numpy's
call per draw.

* :func:`bounded_indices` -- indices 0..n-1 as numpy's ``Generator.integers(0, n)`` makes
  them from its 32-bit draws (Lemire's method, numpy's ``buffered_bounded_lemire_uint32``):
  per draw u, m = u x n (64 bits); the draw is skipped when m's low 32 bits are under
  (2^32 - n) mod n, else the index is m's high 32 bits. The numpy reference computes every
  draw's m at once; the C function walks the draws once.
"""

from __future__ import annotations

import numpy as np

from . import kernel


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
