"""Discriminative power (Sakai, SIGIR 2006): how many pairs of runs a measure tells apart.

For every pair of runs, a paired significance test over the per-query differences gives
an achieved significance level (ASL, a p-value). A measure's discriminative power is the
share of pairs with ASL < alpha; its ASL curve is the pairs' ASLs sorted ascending (the
lower and the longer it stays under alpha, the more pairs the measure separates).

Tests (both two-sided, seeded, vectorised over all pairs with the same random draws, so
measures are compared on common random numbers):

* ``randomization`` (default): Fisher's paired randomization test with random sign flips
  of the per-query differences; statistic |sum of differences|; p = (b + 1) / (m + 1),
  where b of m sign-flip draws reach the observed statistic (Smucker, Allan & Carterette,
  CIKM 2007).
* ``bootstrap``: Sakai's paired bootstrap test: the differences are shifted to mean 0,
  resampled with replacement, and the studentized t statistic compared; p = (b + 1) / (B + 1).

Both follow :mod:`judged.analyses.stats`: one tolerance rule for ties and constant differences; the
randomization test enumerates all 2^n sign assignments (exact p) when 2^n <= the draws;
the bootstrap is not defined for a pair with constant differences (no null distribution):
its ASL is NaN, counted as not significant and reported as ``undefined``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core.words import counted
from ...core.errors import JudgedError
from ..stats import bootstrap_pvalues, bootstrap_test, median, randomization_pvalues, randomization_test  # noqa: F401
from .scores import ScoreMatrix, matrix_from_result, run_pairs, score_matrix
from .plot import pyplot, save

TESTS = ("randomization", "bootstrap")
DEFAULT_ALPHA = 0.05
DEFAULT_SAMPLES = 1000
DEFAULT_SEED = 0
# nDCG@10 under three discounts and two gains, then the binary measures.
DEFAULT_MEASURES = ("nDCG@10", "nDCG(gain=exp)@10", "nDCG(discount=reciprocal)@10",
                    "nDCG(discount=power,p=0.5)@10", "P@10", "RR", "AP")


PAIRED_TESTS = {"randomization": randomization_pvalues, "bootstrap": bootstrap_pvalues}


@dataclass
class PowerResult:
    """ASL of every pair of runs under every measure, and the discriminative power."""

    scores: ScoreMatrix
    pairs: list  # (run a, run b)
    pvalues: dict  # measure -> ASL per pair
    differences: dict  # measure -> mean(a) - mean(b) per pair
    test: str
    samples: int
    seed: int
    alpha: float
    extra: dict = field(default_factory=dict)

    @property
    def measures(self) -> list:
        return list(self.pvalues)

    def significant(self, measure: str) -> int:
        """Pairs with ASL < alpha (an undefined ASL, NaN, is not)."""
        return int((self.pvalues[measure] < self.alpha).sum())

    def undefined(self, measure: str) -> int:
        """Pairs the test is not defined on (constant differences, bootstrap): ASL NaN."""
        return int(np.isnan(self.pvalues[measure]).sum())

    def power(self, measure: str) -> float:
        """Discriminative power: share of run pairs with ASL < alpha."""
        return self.significant(measure) / len(self.pairs) if self.pairs else 0.0

    def asl_curve(self, measure: str) -> np.ndarray:
        """The pairs' ASLs sorted ascending (Sakai's ASL curve); undefined ones (NaN) last."""
        return np.sort(self.pvalues[measure])

    def summary(self) -> list[dict]:
        return [{"measure": m, "convention": self.scores.conventions[m], "significant": self.significant(m),
                 "pairs": len(self.pairs), "power": self.power(m), "undefined": self.undefined(m),
                 "median_asl": _median(self.pvalues[m]) if self.pairs else 1.0}
                for m in self.measures]

    def to_dict(self) -> dict:
        return {
            "test": {"name": self.test, "samples": self.samples, "seed": self.seed, "alpha": self.alpha,
                     "sided": "two-sided", "p": _p_method(self.test, len(self.scores.qids), self.samples)},
            "runs": self.scores.runs, "queries": len(self.scores.qids),
            "dropped_queries": self.scores.dropped_queries,
            **({"query_set": self.scores.query_set.to_dict(), "warnings": self.scores.query_set.warnings()}
               if self.scores.query_set is not None else {}),
            "measures": {row["measure"]: {**row, "asl_curve": self.asl_curve(row["measure"]).tolist()}
                         for row in self.summary()},
            "pairs": [{"a": a, "b": b,
                       "measures": {m: {"difference": float(self.differences[m][k]), "asl": float(self.pvalues[m][k])}
                                    for m in self.measures}}
                      for k, (a, b) in enumerate(self.pairs)],
        }


def _p_method(test: str, n: int, samples: int) -> str:
    if test == "randomization" and n < 63 and 2 ** n <= samples:
        return f"exact: all 2^{n} sign assignments"
    return "(b+1)/(samples+1)" + ("; not defined (null) for constant differences" if test == "bootstrap" else "")


def _median(p: np.ndarray) -> float:
    """The median ASL, an undefined ASL counted as 1 (never significant)."""
    return median(np.where(np.isnan(p), 1.0, p))


def discriminative_power(qrels, runs, measures=DEFAULT_MEASURES, *, test: str = "randomization",
                         samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED, alpha: float = DEFAULT_ALPHA,
                         settings=None) -> PowerResult:
    """Sakai's discriminative power of each measure over every pair of ``runs``.

    Runs are scored once by :func:`judged.evaluate` under ``settings`` (default: over every
    qrels query, ``Settings(complete=True)``).
    """
    return power_from_scores(score_matrix(qrels, runs, measures, settings), test=test, samples=samples,
                             seed=seed, alpha=alpha)


def power_from_scores(scores: ScoreMatrix, *, test: str = "randomization", samples: int = DEFAULT_SAMPLES,
                      seed: int = DEFAULT_SEED, alpha: float = DEFAULT_ALPHA) -> PowerResult:
    if test not in PAIRED_TESTS:
        raise JudgedError(f"unknown test {test!r} (choose {', '.join(TESTS)})")
    if not 0 < alpha < 1:
        raise JudgedError(f"alpha must lie between 0 and 1, got {alpha}")
    if len(scores.runs) < 2:
        raise JudgedError("discriminative power needs at least two runs")
    i, j = run_pairs(len(scores.runs))
    pvalues, differences = {}, {}
    for m, matrix in scores.values.items():
        diffs = matrix[i] - matrix[j]
        pvalues[m] = PAIRED_TESTS[test](diffs, samples, seed)
        differences[m] = diffs.mean(axis=1)
    pairs = [(scores.runs[a], scores.runs[b]) for a, b in zip(i.tolist(), j.tolist())]
    return PowerResult(scores, pairs, pvalues, differences, test, int(samples), int(seed), float(alpha))


def power_of_comparison(comparison, measures=DEFAULT_MEASURES, *, test: str = "randomization",
                        samples: int = DEFAULT_SAMPLES, seed: int | None = None,
                        alpha: float = DEFAULT_ALPHA) -> PowerResult:
    """Discriminative power over every pair of a :class:`~judged.analyses.comparison.Comparison`'s
    runs (baseline included), the measures computed on its already aligned runs (seed:
    the comparison's)."""
    if comparison.result is None:
        raise JudgedError("discriminative power needs the evaluated runs (not available from records)")
    return power_from_scores(matrix_from_result(comparison.result, measures), test=test, samples=samples,
                             seed=comparison.seed if seed is None else seed, alpha=alpha)


def plot_asl_curves(result: PowerResult, path) -> None:
    """Sakai's ASL curves, one line per measure, to PNG/SVG/PDF (by the file's suffix)."""
    fig, ax = pyplot().subplots(figsize=(7, 4.5))
    draw_asl_curves(result, ax)
    fig.tight_layout()
    save(fig, path)


def draw_asl_curves(result: PowerResult, ax) -> None:
    """The ASL curves on a matplotlib Axes: one line per measure, alpha dashed."""
    x = np.arange(1, len(result.pairs) + 1)
    for m in result.measures:
        ax.plot(x, result.asl_curve(m), marker=".", label=f"{m}  ({result.power(m):.0%})")
    ax.axhline(result.alpha, color="grey", linestyle="--", linewidth=1, label=f"alpha = {result.alpha:g}")
    ax.set_xlabel("run pairs, sorted by ASL")
    ax.set_ylabel(f"achieved significance level ({result.test}, {counted(result.samples, 'sample')})")
    ax.set_title(f"Discriminative power: {len(result.scores.runs)} runs, {counted(len(result.scores.qids), 'query')}")
    ax.set_ylim(0, min(1.0, max(0.25, 2 * result.alpha)))
    ax.legend(fontsize="small")
