"""Paired significance tests over per-query differences d = run - baseline: each takes the
vector of differences and returns a two-sided p-value, NaN where the test is not defined on
the data; identical runs give p = 1. docs/comparing.md ("The statistics, precisely") states
every method in full; :data:`TESTS_METHOD` is the statement printed with the results.

One tolerance rule (:func:`tolerance`) decides every "equal": at most ``TIE`` (1e-12) times
max(1, the largest magnitude involved): ties, constant differences, tied ranks, sums as
extreme as the observed one.

* paired t-test: Student t, n-1 degrees of freedom;
* Wilcoxon signed-rank (Wilcoxon 1945): exact over the 2^n sign assignments of the
  (average) ranks up to ``WILCOXON_EXACT_MAX`` nonzero differences, else the tie-corrected
  normal approximation;
* sign test: exact binomial, ties dropped;
* randomization: |sum of d| under sign flips, exact when 2^n <= the draws, else
  p = (b + 1) / (m + 1) (Phipson & Smyth 2010; Smucker, Allan & Carterette, CIKM 2007);
* bootstrap: studentized, mean-shifted resampling (Sakai, SIGIR 2006);
* the t interval of the mean difference, Cohen's d_z, and the corrections Holm (1979,
  default), Bonferroni and Benjamini-Hochberg (1995), a NaN left out of its family.

The randomization and bootstrap tests are vectorised over many pairs (``*_pvalues``,
:mod:`judged.analyses.meta`'s discriminative power) and over blocks of draws, in bounded memory.
"""

from __future__ import annotations

import hashlib
import math
import sys
import threading
from dataclasses import dataclass, field

import numpy as np

from ..core.words import counted
from ..core.errors import ConventionError, JudgedError

TIE = 1e-12
TOLERANCE = "equal within 1e-12 x max(1, largest magnitude)"
TESTS = ("t-test", "wilcoxon", "sign", "randomization", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "bh")
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_SEED = 0
WILCOXON_EXACT_MAX = 50
CI_METHOD = "student-t 95% interval of the mean difference"
EFFECT_SIZE = "Cohen's d_z = mean(d) / sd(d), sd with n-1"
TESTS_METHOD = ("two-sided; NaN (null in JSON) where a test is not defined, left out of its correction family; "
                "t-test: Student t, n-1 df, not defined for one query or constant differences (zero variance); "
                "wilcoxon: zero differences dropped, tied |d| get their average rank, exact distribution of W+ "
                f"over all sign assignments when at most {WILCOXON_EXACT_MAX} differences are nonzero (exact with "
                "tied ranks too), else normal approximation with tie-corrected variance, no continuity correction; "
                "sign: exact binomial, ties dropped; "
                "randomization: |sum of d| over sign flips, every one of the 2^n assignments (exact p) when 2^n <= "
                "the draws, else random draws and p=(b+1)/(m+1); "
                "bootstrap: Sakai's studentized, mean-shifted resampling, p=(b+1)/(m+1), not defined for constant "
                "differences; ties, constant differences and equal statistics: " + TOLERANCE)
_CHUNK = 1_000_000  # floats of a block of draws x queries (8 MB)
_PAIRS = 256  # pairs of runs per block
_GATHER = 4  # up to this many pairs, the bootstrap indexes resampled values instead of counting


def special_functions():
    """scipy.special's compiled functions that the tests and :func:`t_quantile` call (``stdtr``,
    ``stdtrit``, ``bdtr``), loaded once (thread-safe: a second caller waits for the first).

    These are the very ufuncs ``scipy.special`` exports (``scipy.special.stdtr is
    scipy.special._ufuncs.stdtr``), so every number is the same. When ``scipy.special`` is
    not imported yet, only its extension module is loaded (:func:`_ufuncs_alone`): the
    package's ``__init__`` also builds scipy's array-API layer, which imports
    ``numpy.f2py``, ``numpy.testing`` and more (0.25-0.4 CPU-s and 28 MB, a third of
    ``judged compare``'s time on two 1M-line runs) for functions these tests never call."""
    if not _SPECIAL:
        with _SPECIAL_LOCK:
            if not _SPECIAL:
                _SPECIAL.append(_load_special())
    return _SPECIAL[0]


_SPECIAL: list = []
_SPECIAL_LOCK = threading.Lock()


def t_quantile(p: float, df) -> np.ndarray:
    """Student's t quantile at probability ``p`` with ``df`` degrees of freedom (an array or
    not; below 1 read as 1), exact: scipy.special.stdtrit (:func:`special_functions`), the
    normal quantile at infinite df. The one t quantile of judged: the paired tests' interval,
    the sampled and the prediction-powered intervals (judged.analyses.holes.estimates).

    >>> [round(float(t), 3) for t in t_quantile(0.975, [1, 2, 10, np.inf])]
    [12.706, 4.303, 2.228, 1.96]
    """
    return special_functions().stdtrit(np.maximum(np.asarray(df, np.float64), 1.0), p)


def _load_special():
    if "scipy.special" not in sys.modules:
        try:
            return _ufuncs_alone()
        except Exception:  # noqa: BLE001  (another scipy or Python: the package as usual, the same functions)
            pass
    try:
        from scipy import special
    except ImportError as exc:  # pragma: no cover - scipy is a dependency of judged
        raise JudgedError("paired tests and t intervals need scipy, a dependency of judged missing here: "
                          "pip install scipy") from exc
    return special


def _ufuncs_alone():
    """``scipy.special._ufuncs`` imported without running ``scipy/special/__init__.py``: a bare
    stand-in for the package is in ``sys.modules`` while the extension loads, marked as being
    initialised and under the import system's lock for ``scipy.special``, so that a thread
    importing ``scipy.special`` meanwhile waits, then imports the real package (which takes
    the loaded extension modules as they are)."""
    import importlib
    import importlib.machinery
    import os
    import types
    from importlib import _bootstrap

    import scipy

    name = "scipy.special"
    stand_in = types.ModuleType(name)
    stand_in.__path__ = [os.path.join(os.path.dirname(scipy.__file__), "special")]
    stand_in.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    stand_in.__spec__._initializing = True
    with _bootstrap._ModuleLockManager(name):
        if name in sys.modules:  # imported by another thread meanwhile
            return sys.modules[name]
        sys.modules[name] = stand_in
        try:
            ufuncs = importlib.import_module(name + "._ufuncs")
        finally:
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
    if not all(hasattr(ufuncs, f) for f in ("stdtr", "stdtrit", "bdtr")):
        raise ImportError("scipy.special._ufuncs lacks stdtr, stdtrit or bdtr")
    return ufuncs


def _binomial_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2): exact (sum of C(n, i) over i <= k, / 2^n, in
    integers) up to n = 5,000, else scipy.special.bdtr (the regularized incomplete beta)."""
    if n > 5000:
        return float(special_functions().bdtr(k, n, 0.5))
    from fractions import Fraction

    total = c = 1
    for i in range(1, k + 1):
        c = c * (n - i + 1) // i
        total += c
    return float(Fraction(total, 1 << n))


def tolerance(*values) -> float:
    """The one tolerance rule: ``TIE`` x max(1, the largest magnitude among ``values``)
    (numbers or arrays). Two numbers closer than this are equal everywhere in judged's
    statistics: ties, constant differences, zero variance, equal test statistics."""
    scale = 1.0
    for v in values:
        a = np.abs(np.asarray(v, dtype=np.float64))
        if a.size:
            scale = max(scale, float(np.nanmax(a)) if np.isfinite(a).any() else 1.0)
    return TIE * scale


def row_tolerances(xs) -> np.ndarray:
    """:func:`tolerance` of each row of the matrix ``xs``, the same rule row by row."""
    a = np.abs(np.asarray(xs, dtype=np.float64))
    largest = np.where(np.isnan(a), -np.inf, a).max(axis=1, initial=-np.inf)
    return TIE * np.where(np.isfinite(a).any(axis=1), np.maximum(1.0, largest), 1.0)


def tie_sign(d, *scale) -> np.ndarray:
    """-1, 0 or 1 per difference ``d``, 0 within :func:`tolerance` of the values it was
    taken from (``scale``; ``d`` itself when none is given): which of two scores is larger."""
    d = np.asarray(d, dtype=np.float64)
    tol = tolerance(*(scale or (d,)))
    return np.where(d > tol, 1.0, np.where(d < -tol, -1.0, 0.0))


def differences(baseline: np.ndarray, run: np.ndarray) -> np.ndarray:
    """Per-query differences run - baseline, a tie (within :func:`tolerance` of the
    scores) set to exactly 0."""
    baseline = np.asarray(baseline, dtype=np.float64)
    run = np.asarray(run, dtype=np.float64)
    d = run - baseline
    d[np.abs(d) <= tolerance(baseline, run)] = 0.0
    return d


def is_constant(d: np.ndarray) -> bool:
    """Every difference equal to the others within :func:`tolerance` (zero variance)."""
    d = np.asarray(d, dtype=np.float64)
    return len(d) == 0 or float(d.max() - d.min()) <= tolerance(d)


def wins_losses_ties(d: np.ndarray) -> tuple[int, int, int]:
    d = np.asarray(d, dtype=np.float64)
    tol = tolerance(d)
    return int((d > tol).sum()), int((d < -tol).sum()), int((np.abs(d) <= tol).sum())


def _all_ties(d: np.ndarray) -> bool:
    return not np.any(np.abs(d) > tolerance(d))


def paired_t(d: np.ndarray) -> float:
    """Two-sided paired t-test p-value: 1 when every difference is 0; NaN (not defined)
    for one query or constant nonzero differences."""
    return paired_t_test(d)[0]


def paired_t_test(d: np.ndarray) -> tuple[float, str]:
    """(p, how it was obtained) of the paired t-test."""
    d = np.asarray(d, dtype=np.float64)
    if _all_ties(d):
        return 1.0, "every difference 0"
    if len(d) < 2:
        return math.nan, "not defined: one query"
    if is_constant(d):
        return math.nan, "not defined: constant differences (zero variance)"
    n = len(d)
    t = float(d.mean() / (d.std(ddof=1) / math.sqrt(n)))
    return float(min(1.0, 2 * special_functions().stdtr(n - 1, -abs(t)))), f"Student t, {n - 1} df"


def wilcoxon(d: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value, zero differences dropped (1 when all are 0);
    see :func:`wilcoxon_test`."""
    return wilcoxon_test(d)[0]


def tied_ranks(a: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) of ``a``, values within ``tol`` of their sorted neighbour
    forming one tie group; and the size of each tie group."""
    order = np.argsort(a, kind="stable")
    s = a[order]
    starts = np.concatenate(([True], np.diff(s) > tol))
    group = np.cumsum(starts) - 1
    sizes = np.bincount(group)
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    average = first + (sizes + 1) / 2.0
    ranks = np.empty(len(a))
    ranks[order] = average[group]
    return ranks, sizes


def wilcoxon_test(d: np.ndarray) -> tuple[float, str]:
    """(p, method) of the two-sided Wilcoxon signed-rank test (see the module doc): zeros
    dropped, tied |d| at their average rank, exact up to ``WILCOXON_EXACT_MAX`` nonzero
    differences (the distribution of W+ over every sign assignment of the ranks), else
    the tie-corrected normal approximation without continuity correction."""
    d = np.asarray(d, dtype=np.float64)
    tol = tolerance(d)
    nz = d[np.abs(d) > tol]
    n = len(nz)
    if n == 0:
        return 1.0, "every difference 0"
    ranks, sizes = tied_ranks(np.abs(nz), tol)
    tied = bool((sizes > 1).any())
    w = float(ranks[nz > 0].sum())
    dropped = len(d) - n
    note = f"{counted(dropped, 'zero difference')} dropped, " if dropped else ""
    if n <= WILCOXON_EXACT_MAX:
        doubled = np.rint(2 * ranks).astype(np.int64)  # average ranks are halves: exact integers
        counts = np.zeros(int(doubled.sum()) + 1)
        counts[0] = 1.0
        for r in doubled.tolist():  # counts of each sum over subsets (< 2^53: exact in float)
            counts[r:] = counts[r:] + counts[:-r]
        total = counts.sum()
        k = int(round(2 * w))
        low, high = counts[:k + 1].sum() / total, counts[k:].sum() / total
        how = "exact, tied |d| at average ranks" if tied else "exact"
        return float(min(1.0, 2 * min(low, high))), f"{how}; {note}{n} nonzero"
    mean = n * (n + 1) / 4.0
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float((sizes ** 3 - sizes).sum()) / 48.0
    z = (w - mean) / math.sqrt(var)
    how = "asymptotic (normal, tie-corrected variance, no continuity correction)"
    return float(min(1.0, math.erfc(abs(z) / math.sqrt(2)))), f"{how}; {note}{n} nonzero"


def sign_test(d: np.ndarray) -> float:
    """Exact two-sided binomial test of wins vs losses, ties dropped."""
    wins, losses, _ = wins_losses_ties(d)
    if wins + losses == 0:
        return 1.0
    n, k = wins + losses, min(wins, losses)
    if 2 * k == n:
        return 1.0
    return min(1.0, 2 * _binomial_half_cdf(k, n))  # symmetric: both tails are P(X <= k)


def randomization_test(diffs: np.ndarray, permutations: int, seed) -> float:
    """Two-sided paired randomization test of one pair of runs.

    ``diffs`` are the per-query score differences; |sum| is compared with its value
    under sign flips: every one of the 2^n assignments when 2^n <= ``permutations``
    (exact p), else ``permutations`` random draws (seeded) and p = (b + 1) / (m + 1)
    where b draws have |sum| >= the observed |sum|. Identical runs give p = 1.
    """
    return float(randomization_pvalues(np.asarray(diffs, dtype=np.float64)[None, :], permutations, seed)[0])


def randomization_method(n: int, permutations: int) -> str:
    """How :func:`randomization_test` computes p for n queries."""
    if n < 63 and 2 ** n <= permutations:
        return f"exact: all 2^{n} = {2 ** n} sign assignments"
    return f"{permutations} random sign flips, p=(b+1)/(m+1)"


def randomization_pvalues(diffs: np.ndarray, permutations: int, seed) -> np.ndarray:
    """:func:`randomization_test` for every row of ``diffs`` (pairs x queries) at once,
    all rows sharing the same sign-flip draws (made a block of draws at a time,
    :func:`_sign_blocks`)."""
    diffs = _check(diffs, permutations)
    n = diffs.shape[1]
    if n < 63 and 2 ** n <= permutations:
        return _randomization_exact_rows(diffs)
    # blocks of a quarter of _CHUNK (2 MB of signs): as fast, and compare runs these draws
    # beside the holes' bounds (a block's size changes no number: the same draws, in order)
    blocks = list(_blocks(permutations, n, _CHUNK // 4))
    observed = np.abs(diffs.sum(axis=1))
    slack = _sum_tolerance(diffs)
    b = np.zeros(len(diffs), dtype=np.int64)
    for (d0, d1), signs in zip(blocks, _sign_blocks(np.random.default_rng(seed), n, blocks, _fresh(seed))):
        for lo in range(0, len(diffs), _PAIRS):
            flipped = np.abs(signs @ diffs[lo:lo + _PAIRS].T)  # draws x pairs
            b[lo:lo + _PAIRS] += (flipped >= observed[lo:lo + _PAIRS] - slack[lo:lo + _PAIRS]).sum(axis=0)
    return np.where(_zero_rows(diffs), 1.0, (b + 1) / (permutations + 1))


def _sum_tolerance(diffs: np.ndarray) -> np.ndarray:
    """Per row, the tolerance rule applied to sums of the row's signed differences
    (the magnitude involved: the sum of |d|)."""
    return TIE * np.maximum(np.abs(diffs).sum(axis=1), 1.0)


def _zero_rows(diffs: np.ndarray) -> np.ndarray:
    """Rows whose every difference is 0 under the tolerance rule."""
    tol = TIE * np.maximum(np.abs(diffs).max(axis=1), 1.0)
    return ~(np.abs(diffs) > tol[:, None]).any(axis=1)


def _randomization_exact_rows(diffs: np.ndarray) -> np.ndarray:
    """Exact randomization p of every row: the share of the 2^n sign assignments whose
    |sum| is at least the observed |sum| (within the tolerance rule)."""
    n = diffs.shape[1]
    out = np.empty(len(diffs))
    per_block = max(1, _CHUNK // 2 ** n)
    for lo in range(0, len(diffs), per_block):
        block = diffs[lo:lo + per_block]
        sums = np.zeros((len(block), 1))
        for j in range(n):  # every sign assignment's sum, doubling per query
            col = block[:, j:j + 1]
            sums = np.concatenate((sums + col, sums - col), axis=1)
        observed = np.abs(block.sum(axis=1))
        hits = (np.abs(sums) >= (observed - _sum_tolerance(block))[:, None]).sum(axis=1)
        out[lo:lo + per_block] = hits / 2 ** n
    return np.where(_zero_rows(diffs), 1.0, out)


def bootstrap_test(diffs: np.ndarray, samples: int, seed) -> float:
    """Two-sided paired bootstrap test of one pair of runs (Sakai 2006): see
    :func:`bootstrap_pvalues`."""
    return float(bootstrap_pvalues(np.asarray(diffs, dtype=np.float64)[None, :], samples, seed)[0])


def bootstrap_pvalues(diffs: np.ndarray, samples: int, seed) -> np.ndarray:
    """Sakai's paired bootstrap test for every row of ``diffs`` (pairs x queries).

    t = mean / (sd / sqrt(n)); the differences shifted to mean 0 are resampled with
    replacement ``samples`` times (the same query draws for every row), and
    p = (b + 1) / (B + 1) where b resamples have |t*| >= |t|. A resample with zero
    standard deviation has t* = 0 when its mean is 0 and inf otherwise. Rows of constant
    nonzero differences give NaN (no null distribution: every shifted difference is 0);
    rows of zeros give 1.
    """
    diffs = _check(diffs, samples)
    n = diffs.shape[1]
    rng = np.random.default_rng(seed)
    scale = np.maximum(np.abs(diffs).max(axis=1), 1.0)  # the tolerance rule's magnitude per row
    observed = np.abs(_t_stat(diffs.mean(axis=1), diffs.std(axis=1, ddof=1) if n > 1 else 0 * scale, n, scale))
    finite = np.isfinite(observed)
    threshold = np.where(finite, observed - TIE * np.maximum(np.where(finite, observed, 1.0), 1.0), np.inf)
    centred = diffs - diffs.mean(axis=1, keepdims=True)
    b = np.zeros(len(diffs), dtype=np.int64)
    blocks = list(_blocks(samples, n, _CHUNK // 4))  # a block's indices, values and squares: 6 floats a draw
    for (d0, d1), draws in zip(blocks, _index_blocks(rng, n, blocks, _fresh(seed))):
        k = d1 - d0
        if len(diffs) <= _GATHER:  # few pairs: index the resampled values directly
            counts = None
        else:  # many pairs: how often each query appears in each resample, shared by all pairs
            flat = (np.arange(k)[:, None] * n + draws).ravel()
            counts = np.bincount(flat, minlength=k * n).reshape(k, n).astype(np.float64)
        for lo in range(0, len(diffs), _PAIRS):
            block = centred[lo:lo + _PAIRS]
            if counts is None and len(block) == 1:  # one pair: resamples x n, the same sums as below
                picked = block[0][draws]
                mean = picked.mean(axis=1)[:, None]
                square = np.square(picked, out=picked).mean(axis=1)[:, None]
            elif counts is None:  # resamples x pairs
                picked = block.T[draws]  # resamples x n x pairs
                mean = picked.mean(axis=1)
                square = np.square(picked, out=picked).mean(axis=1)  # in place, as picked ** 2
            else:
                mean = (counts @ block.T) / n  # resamples x pairs: resampled means, via query counts
                square = (counts @ (block ** 2).T) / n
            sd = np.sqrt(np.maximum(square - mean ** 2, 0.0) * n / (n - 1)) if n > 1 else np.zeros_like(mean)
            t_star = np.abs(_t_stat(mean, sd, n, scale[lo:lo + _PAIRS]))
            b[lo:lo + _PAIRS] += (t_star >= threshold[lo:lo + _PAIRS]).sum(axis=0)
    p = (b + 1) / (samples + 1)
    spread = diffs.max(axis=1) - diffs.min(axis=1)
    constant = spread <= TIE * scale
    return np.where(_zero_rows(diffs), 1.0, np.where(constant, np.nan, p))


def _fresh(seed) -> bool:
    """Whether ``seed`` makes a generator of the test's own (a seed, not a Generator or bit
    generator the caller goes on using): only then are draws taken from raw words, which
    leave the generator's state elsewhere than ``rng.integers`` would (the same values)."""
    return not isinstance(seed, (np.random.Generator, np.random.BitGenerator))


def _sign_blocks(rng, n: int, blocks: list, fresh: bool = True):
    """Per block of draws [d0, d1), the sign flips (d1 - d0) x n as -1.0 / 1.0: the values of
    ``rng.integers(0, 2, size=(d1 - d0, n), dtype=np.int8) * 2 - 1``, block after block, which
    is also all of them drawn at once (one byte per coin, four to a 32-bit draw: blocks of a
    multiple of four draws continue the same stream). The coins are taken from the bit
    generator's raw words (:func:`_coin_stream`, a sixth of the time) when ``fresh``
    (:func:`_fresh`) and :func:`_raw_draws_agree`, else from ``rng.integers``."""
    raw = fresh and _raw_draws_agree()
    coins = _coin_stream(rng) if raw else None
    whole = None if raw or (blocks[0][1] - blocks[0][0]) % 4 == 0 else rng.integers(
        0, 2, size=(blocks[-1][1], n), dtype=np.int8)
    for d0, d1 in blocks:
        if raw:
            block = coins((d1 - d0) * n).reshape(d1 - d0, n)
        else:
            block = rng.integers(0, 2, size=(d1 - d0, n), dtype=np.int8) if whole is None else whole[d0:d1]
        signs = block.astype(np.float64)
        signs *= 2  # in place: one block of floats in memory, the same values as signs * 2 - 1
        signs -= 1
        yield signs


def _index_blocks(rng, n: int, blocks: list, fresh: bool = True):
    """Per block of draws [d0, d1), resampled query indices (d1 - d0) x n (int64): the values
    of ``rng.integers(0, n, size=(d1 - d0, n))`` block after block, the same stream as all at
    once (one 32-bit draw per index, no state kept between calls but the half of a 64-bit
    word a draw left). Made from the bit generator's raw words by
    :func:`judged.core.kernels.draws.bounded_indices` (numpy's own method, one pass, half the
    time) when ``fresh`` (:func:`_fresh`) and :func:`_raw_draws_agree`, else (and for one
    query: numpy draws nothing) by ``rng.integers``."""
    if not (fresh and _raw_draws_agree() and 1 < n < 1 << 32):
        for d0, d1 in blocks:
            yield rng.integers(0, n, size=(d1 - d0, n))
        return
    take = _index_stream(rng, n)
    for d0, d1 in blocks:
        yield take((d1 - d0) * n).reshape(d1 - d0, n)


def _index_stream(rng, n: int):
    """``take(count)``: the next ``count`` indices 0..n-1 of ``rng`` as ``rng.integers(0, n)``
    draws them, from its raw 64-bit words (two 32-bit draws each, the low half first)."""
    from ..core.kernels.draws import bounded_indices

    raw, pending = rng.bit_generator.random_raw, np.empty(0, np.uint32)

    def take(count: int) -> np.ndarray:
        nonlocal pending
        out, have = np.empty(count, np.int64), 0
        while have < count:
            if not len(pending):  # a few spare draws: a draw is skipped now and then
                pending = raw((count - have + 1) // 2 + 8).view(np.uint32)
            filled, used = bounded_indices(pending, n, out[have:])
            have += filled
            pending = pending[used:]
        return out

    return take


def _coin_stream(rng):
    """``take(count)``: the next ``count`` coins (0 or 1, uint8) of ``rng`` as numpy's
    ``integers(0, 2, dtype=np.int8)`` makes them (``buffered_bounded_lemire_uint8``, range 0..1:
    nothing rejected): from one byte b of the 32-bit draws each, low byte first, the coin
    (2 b) >> 8, b's top bit; a 64-bit word of the generator gives its low half first, so the
    bytes are the raw words' bytes in order (little-endian: :func:`_raw_draws_agree` checks)."""
    raw, carry = rng.bit_generator.random_raw, np.empty(0, np.uint8)

    def take(count: int) -> np.ndarray:
        nonlocal carry
        fresh = raw(-(-(count - len(carry)) // 8)).view(np.uint8) if count > len(carry) else carry[:0]
        stream = np.concatenate((carry, fresh)) if len(carry) else fresh
        carry = stream[count:]  # the rest of the last word starts the next take
        return stream[:count] >> 7

    return take


def _raw_draws_agree() -> bool:
    """Whether :func:`_coin_stream` and :func:`_index_stream` give ``rng.integers``' values on
    this numpy and machine, checked once: coins in takes of 28, 56 and 20, indices 0..12 and
    0..2^31 (half of the draws skipped) in takes of 13, 26 and 65."""
    if not _RAW_AGREE:
        try:
            coins, rng = _coin_stream(np.random.default_rng(12345)), np.random.default_rng(12345)
            ok = all(np.array_equal(rng.integers(0, 2, size=size, dtype=np.int8), coins(size)) for size in (28, 56, 20))
            for n in (13, (1 << 31) + 1):
                index, rng = _index_stream(np.random.default_rng(99), n), np.random.default_rng(99)
                ok = ok and all(np.array_equal(rng.integers(0, n, size=size), index(size)) for size in (13, 26, 65))
            _RAW_AGREE.append(bool(ok))
        except Exception:  # noqa: BLE001  (anything unexpected: numpy's own draws)
            _RAW_AGREE.append(False)
    return _RAW_AGREE[0]


_RAW_AGREE: list = []


def _blocks(draws: int, n: int, chunk: int | None = None):
    """Blocks of draws [d0, d1) of about ``chunk`` (default _CHUNK) floats each (a multiple
    of four draws, but for fewer than four)."""
    size = max(1, (_CHUNK if chunk is None else chunk) // max(n, 1))
    size -= size % 4 if size >= 4 else 0
    for d0 in range(0, draws, size):
        yield d0, min(draws, d0 + size)


def _t_stat(mean, sd, n: int, scale) -> np.ndarray:
    """mean / (sd / sqrt(n)); 0 when mean and sd are both 0, inf when only sd is (0 within
    the tolerance rule, ``scale`` the magnitude of the data)."""
    tiny = TIE * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    return np.where(sd <= tiny, np.where(np.abs(mean) <= tiny, 0.0, np.inf), t)


def _check(diffs: np.ndarray, samples: int) -> np.ndarray:
    diffs = np.asarray(diffs, dtype=np.float64)
    if diffs.ndim != 2 or diffs.shape[1] == 0:
        raise JudgedError("a paired test needs at least one query")
    if not np.isfinite(diffs).all():
        raise JudgedError("per-query differences must be finite numbers")
    if int(samples) < 1:
        raise JudgedError(f"the number of samples must be positive, got {samples}")
    return diffs


def randomization_exact(d: np.ndarray) -> float:
    """The exact randomization p-value over all 2^n sign assignments (n <= 24): the share
    of assignments with |sum| >= the observed |sum| (within the tolerance rule)."""
    d = np.asarray(d, dtype=np.float64)
    if len(d) > 24:
        raise ValueError("exact enumeration is for n <= 24")
    return float(_randomization_exact_rows(_check(d[None, :], 1))[0])


def median(values: np.ndarray) -> float:
    """``np.median`` of a non-empty 1-D float array, the same bits (its partition, then the
    mean of the middle one or two; NaN if any), without importing numpy.ma as np.median's
    NaN check does (0.01 CPU-s of a command's start)."""
    n = len(values)
    kth = [n // 2 - 1, n // 2, -1] if n % 2 == 0 else [(n - 1) // 2, -1]
    part = np.partition(values, kth)
    if np.isnan(part[-1]):
        return float("nan")
    mid = n // 2
    return float(np.mean(part[mid:mid + 1] if n % 2 else part[mid - 1:mid + 1]))


def percentiles(values: np.ndarray, q) -> np.ndarray:
    """``np.percentile(values, q)`` (method 'linear') of a non-empty 1-D float array, the
    same bits: numpy's steps (the virtual index (n - 1) q / 100, one partition at the
    neighbouring indexes and both ends, numpy's lerp; NaN if any), without the np.unique of
    those indexes that imports numpy.ma (0.01 CPU-s of a command's start)."""
    arr = np.array(values, dtype=np.float64)
    n = len(arr)
    virtual = (n - 1) * (np.asarray(q, dtype=np.float64) / 100)
    below = np.floor(virtual)
    above = below + 1
    below[virtual >= n - 1] = above[virtual >= n - 1] = -1
    below[virtual < 0] = above[virtual < 0] = 0
    below, above = below.astype(np.intp), above.astype(np.intp)
    arr.partition(np.array(sorted({0, -1, *below.tolist(), *above.tolist()}), dtype=np.intp))
    if np.isnan(arr[-1]):
        return np.full(len(virtual), arr[-1])
    gamma = virtual - below
    a, b = arr[below], arr[above]
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def ci95(d: np.ndarray) -> tuple[float, float]:
    """Student t 95% interval of the mean difference (a point when n < 2 or the
    differences are constant)."""
    d = np.asarray(d, dtype=np.float64)
    mean, half = _t_half_width(d, 0.975)
    return (float(mean - half), float(mean + half))


def _t_half_width(d: np.ndarray, quantile: float) -> tuple[float, float]:
    """(mean(d), t(quantile, n-1) x sd / sqrt(n)); the half-width 0 when n < 2 or the
    differences are constant (zero variance)."""
    n = len(d)
    mean = float(d.mean()) if n else 0.0
    if n < 2 or is_constant(d):
        return mean, 0.0
    sd = float(d.std(ddof=1))
    return mean, float(t_quantile(quantile, n - 1)) * sd / np.sqrt(n)


ONE_SIDED_METHOD = ("one-sided Student t bound of the mean paired difference d = candidate - baseline: "
                    "mean(d) - t(c, n-1) x sd(d) / sqrt(n) at confidence c, sd with n-1 (the mean itself for one "
                    "query or constant differences); non-inferiority by a margin as a one-sided test against "
                    "-margin (Blackwelder, Controlled Clinical Trials 1982), superiority against +margin")


def lower_bound(d: np.ndarray, confidence: float = 0.95) -> float:
    """The one-sided Student t lower bound of the mean difference at ``confidence``
    (:data:`ONE_SIDED_METHOD`): mean(d) - t(confidence, n-1) sd / sqrt(n); the mean when
    n < 2 or the differences are constant, as :func:`ci95` (its lower end is this bound
    at 0.975)."""
    if not 0.5 <= confidence < 1:
        raise ConventionError(f"a one-sided bound's confidence must be in [0.5, 1), got {confidence!r}")
    mean, half = _t_half_width(np.asarray(d, dtype=np.float64), confidence)
    return float(mean - half)


def effect_size(d: np.ndarray) -> float:
    """Cohen's d_z = mean(d) / sd(d); 0 when every difference is 0, ±inf when they are
    constant (zero variance), NaN for one query (no sd)."""
    d = np.asarray(d, dtype=np.float64)
    if _all_ties(d):
        return 0.0
    if len(d) < 2:
        return math.nan
    if is_constant(d):
        return float(np.sign(d.mean()) * np.inf)
    return float(d.mean() / d.std(ddof=1))


def adjust(p: np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p-values of a family of tests: ``holm`` (step-down), ``bonferroni``
    (p·m) or ``bh`` (Benjamini-Hochberg step-up), each capped at 1. A NaN (a test not
    defined on that comparison) stays NaN and is not counted in the family."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full(len(p), np.nan)
    defined = ~np.isnan(p)
    out[defined] = _adjust(p[defined], method)
    if method not in CORRECTIONS:
        _adjust(p, method)
    return out


def _adjust(p: np.ndarray, method: str) -> np.ndarray:
    m = len(p)
    if method not in CORRECTIONS:
        raise ConventionError(f"unknown correction {method!r} (choose {', '.join(CORRECTIONS)})")
    if m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adj = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:
        adj = np.minimum.accumulate((m / np.arange(m, 0, -1) * ranked[::-1]))[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


@dataclass(frozen=True)
class PairedTest:
    """Every statistic of one paired comparison over the same queries."""

    n: int
    mean_delta: float
    ci95: tuple[float, float]
    wins: int
    losses: int
    ties: int
    effect_size: float
    p_values: dict
    methods: dict = field(default_factory=dict)  # test -> how its p was obtained on these data


def described_pair(baseline: np.ndarray, run: np.ndarray, reason: str) -> PairedTest:
    """The descriptive statistics of run vs baseline (mean difference, interval, W/L/T,
    d_z) with no test run: every p-value NaN, ``reason`` saying why."""
    d = differences(baseline, run)
    wins, losses, ties = wins_losses_ties(d)
    return PairedTest(len(d), float(d.mean()) if len(d) else 0.0, ci95(d), wins, losses, ties, effect_size(d),
                      {t: math.nan for t in TESTS}, {t: reason for t in TESTS})


def format_p(p: float) -> str:
    """A p-value as tables print it: ``<0.0001``, four decimals, or ``n/a`` (not defined)."""
    if p != p:
        return "n/a"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def format_effect(d_z: float) -> str:
    """Cohen's d_z as tables print it: two decimals with a sign, ``±inf`` or ``n/a``."""
    return "n/a" if d_z != d_z else f"{d_z:+.2f}"


def paired_test(baseline: np.ndarray, run: np.ndarray, permutations: int = DEFAULT_PERMUTATIONS,
                seed=DEFAULT_SEED) -> PairedTest:
    """All paired statistics of run vs baseline (same queries, same order).

    The randomization and bootstrap draws are seeded by ``seed`` and the differences
    themselves, so the same data gives the same numbers whatever the runs are called,
    in whichever order they are compared."""
    return paired_tests([(baseline, run)], permutations, seed)[0]


def paired_tests(pairs: list, permutations: int = DEFAULT_PERMUTATIONS, seed=DEFAULT_SEED,
                 pool=None, done=None) -> list:
    """:func:`paired_test` of every (baseline, run) of ``pairs``, in order. With ``pool`` (a
    ``concurrent.futures`` executor) the randomization and bootstrap draws of every pair
    run there, each test on its own seeded draws (the same numbers as one by one: numpy
    releases the GIL while it draws and sums). ``done()`` is called as each pair is
    finished (a progress bar's advance)."""
    if permutations < 1:
        raise ValueError("permutations must be positive")
    parts = []
    for baseline, run in pairs:
        d = differences(baseline, run)
        digest = hashlib.sha256(np.ascontiguousarray(d).tobytes()).digest()
        ss = np.random.SeedSequence([int(seed), *np.frombuffer(digest[:16], dtype=np.uint32).tolist()])
        r_seed, b_seed = ss.spawn(2)
        drawn = len(d) and not _all_ties(d)
        random = ((randomization_test, (d, permutations, r_seed)), (bootstrap_test, (d, permutations, b_seed)))
        parts.append((d, [pool.submit(f, *a) for f, a in random] if drawn and pool is not None else
                      [f(*a) for f, a in random] if drawn else None))
    out = []
    for d, random in parts:
        wins, losses, ties = wins_losses_ties(d)
        p, how = {}, {}
        p["t-test"], how["t-test"] = paired_t_test(d)
        p["wilcoxon"], how["wilcoxon"] = wilcoxon_test(d)
        p["sign"], how["sign"] = sign_test(d), "exact binomial, ties dropped"
        p["randomization"], p["bootstrap"] = 1.0, 1.0
        how["randomization"] = how["bootstrap"] = "every difference 0"
        if random is not None:
            p["randomization"], p["bootstrap"] = (x if isinstance(x, float) else x.result() for x in random)
            how["randomization"] = randomization_method(len(d), permutations)
            how["bootstrap"] = ("not defined: constant differences" if math.isnan(p["bootstrap"])
                                else f"{counted(permutations, 'resample')}, p=(b+1)/(m+1)")
        out.append(PairedTest(len(d), float(d.mean()) if len(d) else 0.0, ci95(d), wins, losses, ties,
                              effect_size(d), p, how))
        if done is not None:
            done()
    return out
