"""What judging would show, as every holes analysis states it: one :class:`Estimate` (a
value, its interval, how both were made, what they estimate) for the hole estimate
(:mod:`judged.analyses.holes.estimate`), the estimates from a judged sample
(:mod:`judged.analyses.holes.inference`) and the prediction-powered ones
(:mod:`judged.analyses.holes.ppi`); and the statistics the sampled and the
prediction-powered intervals share: critical values, Satterthwaite's degrees of freedom,
the variance floor of an event a sample never showed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from ..stats import t_quantile


@dataclass
class Estimate:
    """An estimate of a measure's mean over queries (or of a difference of two runs'),
    labelled: ``estimand`` what it estimates (the measure with the holes judged), ``method``
    how (``loro-logit``, ``run-prior``, ``holes-as-zero``; ``statAP``, ``statNDCG@10``, ...;
    ``human``, ``ppi``, ``ppi++``; ``source`` says it in words), ``interval`` how its interval [low, high] at ``level``
    was made (``conformal``, ``bounds`` (the exact or conservative bounds: no estimate
    interval), ``exact``, ``t``, ``normal``). Values are floats, or arrays under a leading
    batch axis (a simulation estimating many samples at once). ``details``: the method's
    own numbers (PPI's ``lambda``, ``sampled`` units, ``variance`` design and ``jackknife``;
    a sampled estimate's ``df`` and ``queries``; the holes a draw filled, ``holes``)."""

    value: object
    low: object
    high: object
    se: object = 0.0  # standard error (the hole estimate: the model's standard deviation of the mean)
    method: str = ""
    source: str = ""  # the method in words, with its sources
    interval: str = ""
    level: float = 0.95
    estimand: str = ""
    per_query: np.ndarray | None = field(default=None, repr=False)
    details: dict = field(default_factory=dict)

    @property
    def width(self):
        return self.high - self.low

    def clipped(self, value_range) -> "Estimate":
        """The value and the interval's ends clipped to ``value_range`` (the measure's range,
        its registry record's ``value_range``: [0, 1] for P, nDCG, AP), in place."""
        low, high = value_range
        self.value, self.low, self.high = (np.clip(x, low, high) for x in (self.value, self.low, self.high))
        return self

    def shown(self) -> str:
        """The unbatched estimate as every table of estimates shows it: 'value ± half its interval's
        width' when the interval is symmetric about it (to the 4 decimals shown), else 'value
        (low-high)' (a log interval, or one clipped to the measure's range, is lopsided).

        >>> Estimate(0.5, 0.4, 0.6).shown(), Estimate(0.5, 0.45, 0.7).shown()
        ('0.5000 ± 0.1000', '0.5000 (0.4500-0.7000)')
        """
        x = self.scalar()
        below, above = x["estimate"] - x["low"], x["high"] - x["estimate"]
        if abs(below - above) < 5e-5:
            return f"{x['estimate']:.4f} ± {(x['high'] - x['low']) / 2:.4f}"
        return f"{x['estimate']:.4f} ({x['low']:.4f}-{x['high']:.4f})"

    def scalar(self, **keys) -> dict:
        """The unbatched estimate as plain floats (for JSON): ``estimate``, ``se``, ``low``,
        ``high`` and ``keys`` (name -> value; a value None is left out)."""
        f = (lambda x: float(np.asarray(x).reshape(-1)[0]))
        out = {"estimate": f(self.value), "se": f(self.se), "low": f(self.low), "high": f(self.high)}
        return {**out, **{k: v for k, v in keys.items() if v is not None}}


@dataclass
class EstimateRow:
    """One run's line of a report of estimates (or a difference of two runs'), as every
    command prints it (judged.cli.estimate_tables): its ``estimates`` of ``measure`` by method side
    by side (name -> :class:`Estimate`), the scores known beside them (``known``: label ->
    value, e.g. the judged score and the machine-filled one) and what the estimates read
    (``counts``: label -> number)."""

    run: str
    measure: str
    estimates: dict
    known: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)

    def to_dict(self, estimate_json) -> dict:
        """run, measure, the known scores, ``estimates`` (each as ``estimate_json`` writes it), the counts."""
        return {"run": self.run, "measure": self.measure, **self.known,
                "estimates": {k: estimate_json(e) for k, e in self.estimates.items()}, **self.counts}


# ---------------------------------------------------------------------------
# Statistics shared by the sampled and the prediction-powered intervals

FLOOR_PRIOR = 0.5  # Jeffreys' prior for the rate of an event a sample never showed


def critical_value(level: float, df=None):
    """The two-sided critical value at ``level``: the normal one (``df`` None), else
    Student's t with ``df`` degrees of freedom (at least 1; :func:`judged.analyses.stats.t_quantile`)."""
    p = 0.5 + level / 2
    return NormalDist().inv_cdf(p) if df is None else t_quantile(p, df)


def bias_aware_critical(bias, level: float, df=np.inf) -> np.ndarray:
    """The critical value c of an interval estimate -+ c se that holds with probability
    ``level`` whenever the estimate's bias is at most ``bias`` standard errors: c with
    P(|Z + bias| <= c) = level, Z standard normal (Armstrong & Kolesar, "Simple and honest
    confidence intervals in nonparametric regression", Quantitative Economics 2020), times
    t_(df)/z for Student's t with ``df`` degrees of freedom; t_(df, (1 + level)/2) at bias 0.

    >>> [round(float(c), 3) for c in bias_aware_critical([0.0, 1.0, 3.0], 0.95)]
    [1.96, 2.646, 4.645]
    """
    b = np.abs(np.asarray(bias, np.float64))
    z = NormalDist().inv_cdf((1 + level) / 2)
    cdf = np.vectorize(NormalDist().cdf, otypes=[np.float64])
    lo, hi = np.full(b.shape, z), b + z
    for _ in range(50):  # P(|Z + b| <= c) rises with c from lo (<= level) to hi (>= level)
        mid = (lo + hi) / 2
        inside = cdf(mid - b) - cdf(-mid - b) >= level
        hi, lo = np.where(inside, mid, hi), np.where(inside, lo, mid)
    return hi * t_quantile((1 + level) / 2, df) / z


def satterthwaite_df(v_h, n) -> np.ndarray:
    """Satterthwaite's (Welch's) degrees of freedom of a sum of stratum variances v_h with
    n_h drawn: (sum v_h)^2 / sum v_h^2/(n_h - 1) over the last axis; inf when it is 0
    (Satterthwaite, Biometrics Bulletin 1946; Cochran 1977, 5.4).

    >>> float(satterthwaite_df([1.0, 1.0], [11, 11]))
    20.0
    """
    v_h = np.asarray(v_h, np.float64)
    n = np.broadcast_to(np.asarray(n, np.float64), v_h.shape)
    den = np.where(n >= 2, v_h ** 2 / np.maximum(n - 1, 1), 0.0).sum(-1)
    num = v_h.sum(-1) ** 2
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)


def jeffreys_rate(r, m) -> np.ndarray:
    """The rate of an event seen ``r`` times in ``m`` draws, with Jeffreys' prior: (r + 1/2)/(m + 1).

    >>> float(jeffreys_rate(0, 9))
    0.05
    """
    return (np.asarray(r, np.float64) + FLOOR_PRIOR) / (np.asarray(m, np.float64) + 2 * FLOOR_PRIOR)


def unseen_share_variance(n, N, rate, effect2) -> np.ndarray:
    """The variance floor of a stratum whose sample never showed an event (so its sample
    variance is 0) though its N - n undrawn units may hold some: the variance of the
    stratum's Horvitz-Thompson total for a 0/1 variable of share P = (1 - n/N) rate (the
    drawn units are known to be without it, the others have it at ``rate``), each event
    moving a unit's value by sqrt(``effect2``) (its mean square):
    (1 - n/N) N^2/n P effect2 (Cochran, *Sampling Techniques*, 1977, 3.2 and 5.3). 0 where
    n < 1 or n >= N. Used by the prediction-powered strata with no human-machine
    disagreement drawn (judged.analyses.holes.ppi); statAP's and statNDCG's strata take the
    general share's variance (judged.analyses.holes.sampled_intervals.Estimates.floor).

    >>> float(unseen_share_variance(4, 40, 0.1, 1.0))
    32.4
    """
    n = np.asarray(n, np.float64)
    N = np.asarray(N, np.float64)
    ok = (n >= 1) & (n < N)
    kept = np.where(ok, 1 - n / np.where(ok, N, 1.0), 0.0)
    return np.where(ok, kept * N * N / np.maximum(n, 1.0) * kept * rate * effect2, 0.0)
