"""Paired significance tests over per-query differences d = run - baseline.

Every test here takes the same vector of per-query differences (one query = one
pair) and returns a two-sided p-value. A difference with |d| <= ``TIE`` (1e-12) is a
tie: it counts as 0 in every test (dropped by the sign and Wilcoxon tests).

* paired t-test: t = mean(d) / (sd(d)/sqrt(n)), n-1 degrees of freedom (scipy).
* Wilcoxon signed-rank: zeros dropped (Wilcoxon's convention), exact or normal
  approximation as scipy chooses.
* sign test: wins vs losses, ties dropped, exact two-sided binomial with p = 1/2 (scipy).
* randomization (permutation) test: under the null each query's difference is as
  likely to have either sign; m random sign flips, statistic |sum of d|,
  p = (b + 1) / (m + 1) where b counts draws at least as extreme (Phipson & Smyth 2010).
  Smucker, Allan & Carterette (CIKM 2007) recommend it for IR.
* bootstrap test (Sakai, SIGIR 2006): the differences shifted to mean 0 are resampled
  with replacement m times; statistic |t| = |mean / (sd/sqrt(n))|; p = (b + 1) / (m + 1).

The randomization and bootstrap tests are vectorised over many pairs of runs at once
(``*_pvalues``, used by :mod:`judged.meta` for discriminative power) and over blocks of
draws, so memory stays bounded.
* 95% confidence interval of the mean difference: Student t interval,
  mean ± t(0.975, n-1) · sd/sqrt(n).
* effect size: Cohen's d_z = mean(d) / sd(d) (paired; sd with n-1).

Corrections across the comparisons of one measure: Holm (1979, default), Bonferroni,
Benjamini-Hochberg (1995).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from .errors import JudgedError

TIE = 1e-12
TESTS = ("t-test", "wilcoxon", "sign", "randomization", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "bh")
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_SEED = 0
CI_METHOD = "student-t 95% interval of the mean difference"
EFFECT_SIZE = "Cohen's d_z = mean(d) / sd(d), sd with n-1"
_CHUNK = 2_000_000  # floats of a block of draws x queries
_PAIRS = 256  # pairs of runs per block
_GATHER = 4  # up to this many pairs, the bootstrap indexes resampled values instead of counting


def _scipy_stats():
    try:
        from scipy import stats
    except ImportError as exc:  # pragma: no cover - scipy is in the 'compare' extra
        raise JudgedError("paired tests need scipy: pip install 'judged[compare]'") from exc
    return stats


def differences(baseline: np.ndarray, run: np.ndarray) -> np.ndarray:
    """Per-query differences run - baseline, with ties (|d| <= 1e-12) set to exactly 0."""
    d = np.asarray(run, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    d[np.abs(d) <= TIE] = 0.0
    return d


def wins_losses_ties(d: np.ndarray) -> tuple[int, int, int]:
    return int((d > TIE).sum()), int((d < -TIE).sum()), int((np.abs(d) <= TIE).sum())


def paired_t(d: np.ndarray) -> float:
    """Two-sided paired t-test p-value (1 when every difference is 0)."""
    if len(d) < 2 or not np.any(d):
        return 1.0
    if np.all(d == d[0]):
        return 0.0  # constant nonzero difference: sd = 0, t is infinite
    return float(_scipy_stats().ttest_1samp(d, 0.0).pvalue)


def wilcoxon(d: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value, zero differences dropped (1 when all are 0)."""
    if not np.any(d):
        return 1.0
    return float(_scipy_stats().wilcoxon(d[d != 0], zero_method="wilcox").pvalue)


def sign_test(d: np.ndarray) -> float:
    """Exact two-sided binomial test of wins vs losses, ties dropped."""
    wins, losses, _ = wins_losses_ties(d)
    if wins + losses == 0:
        return 1.0
    return float(_scipy_stats().binomtest(wins, wins + losses, 0.5).pvalue)


def randomization_test(diffs: np.ndarray, permutations: int, seed) -> float:
    """Two-sided paired randomization test of one pair of runs.

    ``diffs`` are the per-query score differences; each of ``permutations`` draws flips
    the sign of every difference at random (seeded); p = (b + 1) / (m + 1) where b draws
    have |sum| >= the observed |sum|. Identical runs give p = 1.
    """
    return float(randomization_pvalues(np.asarray(diffs, dtype=np.float64)[None, :], permutations, seed)[0])


def randomization_pvalues(diffs: np.ndarray, permutations: int, seed) -> np.ndarray:
    """:func:`randomization_test` for every row of ``diffs`` (pairs x queries) at once,
    all rows sharing the same sign-flip draws (one byte per draw and query; the float
    signs are made a block of draws at a time)."""
    diffs = _check(diffs, permutations)
    rng = np.random.default_rng(seed)
    coins = rng.integers(0, 2, size=(permutations, diffs.shape[1]), dtype=np.int8)
    observed = np.abs(diffs.sum(axis=1))
    slack = 1e-9 * np.maximum(np.abs(diffs).sum(axis=1), 1e-300)  # rounding of equal sums
    b = np.zeros(len(diffs), dtype=np.int64)
    for d0, d1 in _blocks(permutations, diffs.shape[1]):
        signs = coins[d0:d1].astype(np.float64) * 2 - 1
        for lo in range(0, len(diffs), _PAIRS):
            flipped = np.abs(signs @ diffs[lo:lo + _PAIRS].T)  # draws x pairs
            b[lo:lo + _PAIRS] += (flipped >= observed[lo:lo + _PAIRS] - slack[lo:lo + _PAIRS]).sum(axis=0)
    return (b + 1) / (permutations + 1)


def bootstrap_test(diffs: np.ndarray, samples: int, seed) -> float:
    """Two-sided paired bootstrap test of one pair of runs (Sakai 2006): see
    :func:`bootstrap_pvalues`."""
    return float(bootstrap_pvalues(np.asarray(diffs, dtype=np.float64)[None, :], samples, seed)[0])


def bootstrap_pvalues(diffs: np.ndarray, samples: int, seed) -> np.ndarray:
    """Sakai's paired bootstrap test for every row of ``diffs`` (pairs x queries).

    t = mean / (sd / sqrt(n)); the differences shifted to mean 0 are resampled with
    replacement ``samples`` times (the same query draws for every row), and
    p = (b + 1) / (B + 1) where b resamples have |t*| >= |t|. A zero standard deviation
    gives t = 0 when the mean is 0 and t = inf otherwise.
    """
    diffs = _check(diffs, samples)
    n = diffs.shape[1]
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(samples, n))
    scale = np.maximum(np.abs(diffs).max(axis=1), 1e-300)  # what counts as zero: relative to the data
    observed = np.abs(_t_stat(diffs.mean(axis=1), diffs.std(axis=1, ddof=1) if n > 1 else 0 * scale, n, scale))
    centred = diffs - diffs.mean(axis=1, keepdims=True)
    b = np.zeros(len(diffs), dtype=np.int64)
    for d0, d1 in _blocks(samples, n):
        k = d1 - d0
        if len(diffs) <= _GATHER:  # few pairs: index the resampled values directly
            counts = None
        else:  # many pairs: how often each query appears in each resample, shared by all pairs
            flat = (np.arange(k)[:, None] * n + draws[d0:d1]).ravel()
            counts = np.bincount(flat, minlength=k * n).reshape(k, n).astype(np.float64)
        for lo in range(0, len(diffs), _PAIRS):
            block = centred[lo:lo + _PAIRS]
            if counts is None:  # resamples x pairs
                picked = block.T[draws[d0:d1]]  # resamples x n x pairs
                mean, square = picked.mean(axis=1), (picked ** 2).mean(axis=1)
            else:
                mean = (counts @ block.T) / n  # resamples x pairs: resampled means, via query counts
                square = (counts @ (block ** 2).T) / n
            sd = np.sqrt(np.maximum(square - mean ** 2, 0.0) * n / (n - 1)) if n > 1 else np.zeros_like(mean)
            t_star = np.abs(_t_stat(mean, sd, n, scale[lo:lo + _PAIRS]))
            b[lo:lo + _PAIRS] += (t_star >= observed[lo:lo + _PAIRS] * (1 - 1e-9)).sum(axis=0)
    return (b + 1) / (samples + 1)


def _blocks(draws: int, n: int):
    """Blocks of draws [d0, d1) of about _CHUNK floats each."""
    size = max(1, _CHUNK // max(n, 1))
    for d0 in range(0, draws, size):
        yield d0, min(draws, d0 + size)


def _t_stat(mean, sd, n: int, scale) -> np.ndarray:
    """mean / (sd / sqrt(n)); 0 when mean and sd are both ~0, inf when only sd is."""
    tiny = 1e-12 * scale
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
    """The exact randomization p-value over all 2^n sign assignments (small n only):
    the fraction of assignments with |sum| >= the observed |sum|."""
    n = len(d)
    if n > 20:
        raise ValueError("exact enumeration is for n <= 20")
    signs = (np.arange(2 ** n)[:, None] >> np.arange(n)[None, :] & 1) * 2.0 - 1
    flipped = np.abs(signs @ d)
    return int((flipped >= abs(float(d.sum())) - 1e-9 * float(np.abs(d).sum())).sum()) / 2 ** n


def ci95(d: np.ndarray) -> tuple[float, float]:
    """Student t 95% interval of the mean difference (a point when n < 2 or sd = 0)."""
    n = len(d)
    mean = float(d.mean()) if n else 0.0
    if n < 2:
        return (mean, mean)
    sd = float(d.std(ddof=1))
    half = float(_scipy_stats().t.ppf(0.975, n - 1)) * sd / np.sqrt(n)
    return (float(mean - half), float(mean + half))


def effect_size(d: np.ndarray) -> float:
    """Cohen's d_z = mean(d) / sd(d); 0 when every difference is 0, ±inf when sd = 0."""
    if len(d) < 2 or not np.any(d):
        return 0.0
    sd = float(d.std(ddof=1))
    if sd == 0:
        return float(np.sign(d.mean()) * np.inf)
    return float(d.mean() / sd)


def adjust(p: np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p-values of a family of tests: ``holm`` (step-down), ``bonferroni``
    (p·m) or ``bh`` (Benjamini-Hochberg step-up), each capped at 1."""
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adj = np.maximum.accumulate((m - np.arange(m)) * ranked)
    elif method == "bh":
        adj = np.minimum.accumulate((m / np.arange(m, 0, -1) * ranked[::-1]))[::-1]
    else:
        from .errors import ConventionError

        raise ConventionError(f"unknown correction {method!r} (choose {', '.join(CORRECTIONS)})")
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


def paired_test(baseline: np.ndarray, run: np.ndarray, permutations: int = DEFAULT_PERMUTATIONS,
                seed=DEFAULT_SEED) -> PairedTest:
    """All paired statistics of run vs baseline (same queries, same order).

    The randomization and bootstrap draws are seeded by ``seed`` and the differences
    themselves, so the same data gives the same numbers whatever the runs are called,
    in whichever order they are compared."""
    if permutations < 1:
        raise ValueError("permutations must be positive")
    d = differences(baseline, run)
    digest = hashlib.sha256(np.ascontiguousarray(d).tobytes()).digest()
    ss = np.random.SeedSequence([int(seed), *np.frombuffer(digest[:16], dtype=np.uint32).tolist()])
    r_seed, b_seed = ss.spawn(2)
    wins, losses, ties = wins_losses_ties(d)
    p = {"t-test": paired_t(d), "wilcoxon": wilcoxon(d), "sign": sign_test(d), "randomization": 1.0, "bootstrap": 1.0}
    if len(d) and np.any(d):
        p["randomization"] = randomization_test(d, permutations, r_seed)
        p["bootstrap"] = bootstrap_test(d, permutations, b_seed)
    return PairedTest(len(d), float(d.mean()) if len(d) else 0.0, ci95(d), wins, losses, ties, effect_size(d), p)
