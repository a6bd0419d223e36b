"""Intervals from a judged sample: the stratified jackknife's variance with its floor,
Satterthwaite's degrees of freedom, and intervals for one run or every run at once
(:class:`Estimates`; docs/holes.md, "Judging a sample, inferring the rest").

* Variance: the stratified jackknife with the finite-population correction (Wolter,
  *Introduction to Variance Estimation*, 2007, ch. 4), plus the variance of the relevant
  share a stratum's sample fell short of its rank's rate by (:meth:`Estimates.floor`), t intervals with
  Satterthwaite's degrees of freedom.
* Simultaneous over the runs of one estimator: the simulated max-|Z| critical value
  (Hothorn, Bretz & Westfall, Biometrical Journal 2008), Bonferroni where no correlation
  can be formed (:meth:`Estimates.simultaneous`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from .estimates import bias_aware_critical, jeffreys_rate, satterthwaite_df

INTERVAL_METHOD = ("stratified jackknife over the drawn units with finite-population correction (Wolter 2007, "
                   "ch. 4), for statAP and statNDCG of the (first-order) jackknife-corrected estimate itself (the "
                   "correction redone with each unit left out); t interval with Satterthwaite degrees of freedom, its critical value "
                   "widened for a bias up to the one the correction removed (Armstrong & Kolesar 2020); a stratum "
                   "whose sample drew fewer relevant documents than its rank's rate over every stratum (Jeffreys' "
                   "prior) adds the variance of the share it fell short by (all of that rate where it drew none); "
                   "the interval formed on the log scale, as a ratio's (Katz et al. 1978), estimate and ends "
                   "within the measure's range")
SIMULTANEOUS_METHOD = ("simultaneous intervals (Hothorn, Bretz & Westfall, Biometrical Journal 2008): the runs' "
                       "joint covariance from the same jackknife replicates over the shared sample (cross terms "
                       "included), the level quantile c of max |Z| for Z normal with its correlation (50,000 "
                       "simulated draws, seed 0), each run's interval estimate +- c_r se on the log scale, c_r "
                       "the run's critical value (t, widened for its bias bound) at the tail probability "
                       "p = 2 (1 - Phi(c)); Bonferroni's c where the correlation cannot be estimated")

SIMULTANEOUS_DRAWS = 50_000  # normal draws for the max-|t| critical value (Monte Carlo SE about 0.007)


@dataclass
class Estimates:
    """For each state s, run r, estimator e: the mean over the run's queries
    (``mean[e][r][s]``, jackknife bias-corrected for statAP and statNDCG; ``plain[e][r][s]``
    without), the per-query values (``per_query[e][r]``: states x queries, plain), the
    jackknife contributions of the estimate shown (``contrib[e][r]``: states x units; for
    the corrected ones, the replicates of the corrected estimate), the plain estimate's
    (``delete_one[e][r]``) and, for strata with documents left to draw, the changes a
    relevant one would have made (``pseudo_delta[e][r]``, rows of ``pseudo[e]``)."""

    estimators: list
    runs: list
    qids: dict  # run -> evaluated qids
    mean: dict
    plain: dict
    per_query: dict
    contrib: dict
    N: np.ndarray
    n: np.ndarray  # states x strata
    unit_stratum: np.ndarray
    usable: np.ndarray  # states x units: known and in a stratum with 2 <= n_h < N_h
    none_relevant: dict = field(default_factory=dict)  # e -> states x strata: sample of h holds no relevant
    relevant: dict = field(default_factory=dict)  # e -> states x strata: relevant documents drawn
    rank_group: np.ndarray | None = None  # per stratum: its first best rank
    pseudo: dict = field(default_factory=dict)  # e -> (state, stratum, weight) arrays of the pseudo rows
    pseudo_delta: dict = field(default_factory=dict)  # e -> run -> change of the mean per pseudo row
    delete_one: dict = field(default_factory=dict)  # e -> run -> states x units: e_i/Q, the plain estimate's
    pseudo_scale: dict = field(default_factory=dict)  # e -> states: squared effect of a relevant of any grade

    def stratum_ss(self, c: np.ndarray) -> np.ndarray:
        """states x strata: sum over the stratum's usable units of (c - mean_h c)^2."""
        S, H = self.n.shape
        U = len(self.unit_stratum)
        if not U:
            return np.zeros((S, H))
        code = (np.arange(S)[:, None] * H + self.unit_stratum[None, :]).ravel()
        w = self.usable.ravel().astype(np.float64)
        cv = c.ravel() * w
        cnt = np.bincount(code, weights=w, minlength=S * H).reshape(S, H)
        tot = np.bincount(code, weights=cv, minlength=S * H).reshape(S, H)
        sq = np.bincount(code, weights=cv * c.ravel(), minlength=S * H).reshape(S, H)
        out = np.where(cnt > 0, sq - tot ** 2 / np.maximum(cnt, 1), 0.0)
        return np.maximum(out, 0.0)

    def floor_rate(self, e) -> np.ndarray:
        """states x strata: q_h, the relevant rate of a not-drawn document of a stratum
        whose sample holds none: (r + 1/2)/(m + 1) over the drawn documents of every
        stratum starting at the same best rank (m drawn, r relevant; Jeffreys' prior,
        the data borrowed from the other queries' strata of that rank bin)."""
        key = str(e)
        S, H = self.n.shape
        groups, g = np.unique(self.rank_group if self.rank_group is not None else np.zeros(H, np.int64),
                              return_inverse=True)
        rate = np.zeros((S, H))
        for s in range(S):
            m = np.bincount(g, weights=self.n[s], minlength=len(groups))
            r = np.bincount(g, weights=self.relevant[key][s], minlength=len(groups))
            rate[s] = jeffreys_rate(r, m)[g]
        return rate

    def floor_weight(self, e) -> np.ndarray:
        """states x strata: (1 - f) n P / (N - n), what multiplies the sum over a stratum's
        not-drawn units of Delta^2 in :meth:`floor` (0 where n < 1 or n >= N): P = (1 - f)
        max(q - r/n, 0), the share of relevant documents the sample fell short of, had the
        not-drawn documents been relevant at the rate q of :meth:`floor_rate` (f = n/N, r
        of the n drawn relevant: (1 - f) q where none was); for nDCG times the mean squared
        gain of the relevant documents drawn over the pseudo row's (grade rel)."""
        key = str(e)
        n, N = self.n.astype(np.float64), self.N.astype(np.float64)[None, :]
        ok = (n >= 1) & (n < N)
        f = np.where(ok, n / np.maximum(N, 1), 1.0)
        P = (1 - f) * np.maximum(self.floor_rate(e) - self.relevant[key] / np.maximum(n, 1), 0.0)
        scale = self.pseudo_scale.get(key, np.ones(len(n)))[:, None]  # a pseudo row's grade is rel: nDCG's others
        return np.where(ok, (1 - f) * n * P / np.maximum(N - n, 1.0), 0.0) * scale

    def floor(self, e, delta: np.ndarray) -> np.ndarray:
        """states x strata: the variance the jackknife cannot see. It follows the relevant
        documents the sample happened to draw: 0 where a stratum drew none, small where it
        drew fewer than its rank's rate, and those are the samples whose estimates are low
        (so their intervals missed, often every run at once). Had the not-drawn documents
        been relevant at the rate q_h of the stratum's rank (:meth:`floor_rate`), the
        share the sample fell short of is P = (1 - f) max(q_h - r/n, 0) (f = n_h/N_h, r
        of the n drawn relevant); for a 0/1 variable of share P the Horvitz-Thompson
        term's variance is (1 - f) N^2 P/n times the effect of one relevant document,
        written with Delta (the change of the estimate had one not-drawn unit been drawn
        and relevant, Delta = effect N/n; mean of Delta^2 over up to PSEUDO_UNITS not-drawn
        units per query): (1 - f) n P mean(Delta^2) (Cochran 1977, 5.3 and 3.2), added to
        the jackknife's. A variance smoothed toward the rank's rate, as recommended for
        shares near 0 in complex samples (Franco, Little, Louis & Slud, Journal of Survey
        Statistics and Methodology 2019); where the sample drew none it is the floor of
        before, (1 - f) q_h."""
        key = str(e)
        S, H = self.n.shape
        out = np.zeros((S, H))
        if key not in self.pseudo or not len(delta):
            return out
        state, stratum, weight = self.pseudo[key]
        sums = np.bincount(state * H + stratum, weights=weight * delta ** 2, minlength=S * H).reshape(S, H)
        return self.floor_weight(e) * sums

    def stratum_variance(self, e, c: np.ndarray, delta=None) -> np.ndarray:
        """states x strata: the jackknife's v_h = (1 - n_h/N_h) (n_h - 1)/n_h SS_h plus, with
        ``delta`` (the changes of the pseudo rows), the :meth:`floor`."""
        n, N = self.n.astype(np.float64), self.N.astype(np.float64)
        f = np.where(N > 0, n / np.maximum(N, 1), 1.0)
        factor = np.where(n >= 2, (1 - f) * (n - 1) / np.maximum(n, 1), 0.0)
        v = factor * self.stratum_ss(c)
        return v if delta is None else v + self.floor(e, delta)

    def replicates(self, e, plain: bool = False) -> dict:
        """run -> states x units: the jackknife contributions of the estimate shown, or with
        ``plain`` of the plain estimate (the corrected one varies more at small samples)."""
        return (self.delete_one or self.contrib)[str(e)] if plain else self.contrib[str(e)]

    def run_variance(self, e, run, plain: bool = False) -> np.ndarray:
        """states x strata: the variance components of a run's mean (``plain``: :meth:`replicates`)."""
        key = str(e)
        return self.stratum_variance(e, self.replicates(e, plain)[run], self.pseudo_delta.get(key, {}).get(run))

    def variance(self, e, run) -> np.ndarray:
        return self.run_variance(e, run).sum(1)

    def difference(self, e, a, b, plain: bool = False, floor: bool = True):
        """(difference of means per state, stratum variances states x strata; ``plain``:
        :meth:`replicates`; ``floor`` False: the jackknife's alone, what grows with the
        sample as S^2/n)."""
        key = str(e)
        d = self.mean[key][a] - self.mean[key][b]
        pd = self.pseudo_delta.get(key, {})
        delta = pd[a] - pd[b] if a in pd and b in pd and floor else None
        c = self.replicates(e, plain)
        return d, self.stratum_variance(e, c[a] - c[b], delta)

    def difference_bias(self, e, a, b) -> np.ndarray:
        """Per state: the bias the correction took off the difference a - b (:meth:`bias`)."""
        key = str(e)
        return np.abs((self.mean[key][a] - self.plain[key][a]) - (self.mean[key][b] - self.plain[key][b]))

    def df(self, v_h: np.ndarray) -> np.ndarray:
        return satterthwaite_df(v_h, self.n)

    def clip(self, e, *values):
        """``values`` clipped to the range of the measure ``e`` estimates (its registry
        record's ``value_range``: [0, 1] for AP and nDCG)."""
        low, high = self.estimator(e).measure.family.value_range
        return tuple(np.clip(v, low, high) for v in values)

    def ends(self, e, est, half):
        """(estimate, low, high): the interval estimate -+ ``half`` formed on the log scale
        (:func:`log_interval`) within the measure's range, the estimate clipped to it."""
        low, high = self.estimator(e).measure.family.value_range
        est = np.clip(est, low, high)
        lo, hi = log_interval(est, half, low, high)
        return est, lo, hi

    def estimator(self, e):
        """The estimator (judged.analyses.holes.sampled_estimators.Estimator) named ``e``."""
        return next(x for x in self.estimators if str(x) == str(e))

    def bias(self, e, run) -> np.ndarray:
        """Per state: the bias the jackknife correction took off the estimate, |corrected -
        plain| (0 for an estimator without the correction): the bound on the bias left
        that the intervals allow for (:func:`bias_aware_critical`)."""
        return np.abs(self.mean[str(e)][run] - self.plain[str(e)][run])

    def half_width(self, se, df, bias, level: float) -> np.ndarray:
        """c se, c the bias-aware critical value at ``bias``/se (:func:`bias_aware_critical`);
        the bias itself where se is 0."""
        b = np.where(se > 0, bias / np.where(se > 0, se, 1.0), 0.0)
        return np.where(se > 0, bias_aware_critical(b, level, df) * se, bias)

    def interval(self, e, run, level: float = 0.95):
        """(estimate, se, low, high, df) per state: estimate -+ c se, c the t critical value
        widened for the bias the correction may have left (:meth:`bias`,
        :func:`bias_aware_critical`), formed on the log scale (:meth:`ends`: a ratio errs
        by a factor; longer above, the more the larger the relative error)."""
        v_h = self.run_variance(e, run)
        est = self.mean[str(e)][run]
        se = np.sqrt(v_h.sum(1))
        df = self.df(v_h)
        half = self.half_width(se, df, self.bias(e, run), level)
        est, low, high = self.ends(e, est, half)
        return est, se, low, high, df

    def covariance(self, e, runs=None) -> np.ndarray:
        """states x runs x runs: the joint covariance of the runs' means, from the same
        replicates as their variances (cross terms included): per stratum
        (1 - n_h/N_h) (n_h - 1)/n_h sum_i (c_(a,hi) - mean c_(a,h.)) (c_(b,hi) - mean c_(b,h.)),
        plus, in a stratum whose sample fell short of its rank's relevant rate, the floor's
        (1 - f) n P mean(Delta_a Delta_b) (:meth:`floor`). Its diagonal is
        :meth:`run_variance`."""
        key = str(e)
        runs = list(self.runs if runs is None else runs)
        S, H = self.n.shape
        R = len(runs)
        cov = np.zeros((S, R, R))
        if not R:
            return cov
        U = len(self.unit_stratum)
        if U:
            n, N = self.n.astype(np.float64), self.N.astype(np.float64)
            f = np.where(N > 0, n / np.maximum(N, 1), 1.0)
            factor = np.where(n >= 2, (1 - f) * (n - 1) / np.maximum(n, 1), 0.0)  # S x H
            code = (np.arange(S)[:, None] * H + self.unit_stratum[None, :]).ravel()
            w = self.usable.astype(np.float64)
            cnt = np.bincount(code, weights=w.ravel(), minlength=S * H).reshape(S, H)
            scale = np.sqrt(factor)[:, self.unit_stratum] * w  # S x U
            centred = np.empty((R, S, U))
            for j, r in enumerate(runs):
                c = self.contrib[key][r]
                tot = np.bincount(code, weights=(c * w).ravel(), minlength=S * H).reshape(S, H)
                mean_h = np.where(cnt > 0, tot / np.maximum(cnt, 1), 0.0)
                centred[j] = (c - mean_h[:, self.unit_stratum]) * scale
            cov += np.einsum("asu,bsu->sab", centred, centred)
        if key in self.pseudo and len(self.pseudo[key][0]):
            state, stratum, weight = self.pseudo[key]
            root = np.sqrt(self.floor_weight(e)[state, stratum] * weight)
            delta = np.stack([self.pseudo_delta[key][r] * root for r in runs])  # R x P
            for s in np.unique(state).tolist():
                d = delta[:, state == s]
                cov[s] += d @ d.T
        return cov

    def simultaneous(self, e, level: float = 0.95, runs=None, draws: int = SIMULTANEOUS_DRAWS,
                     seed: int = 0) -> "Simultaneous":
        """Intervals holding for every run of ``runs`` at once with probability ``level``
        (docs/holes.md, *Simultaneous intervals*): estimate -+ t_(df_r, 1 - p/2) se_r,
        p = 2 (1 - Phi(c)), c the ``level`` quantile of max_r |Z_r| for Z normal with the
        correlation of :meth:`covariance` (simulated, ``draws`` draws of ``seed``); where
        that correlation cannot be formed, Bonferroni's c = z_(1 - (1 - level)/(2m))."""
        runs = list(self.runs if runs is None else runs)
        key = str(e)
        S = self.n.shape[0]
        cols = [self.interval(e, r, level) for r in runs]
        est = np.stack([self.mean[key][r] for r in runs], 1) if runs else np.zeros((S, 0))
        se = np.stack([c[1] for c in cols], 1) if runs else np.zeros((S, 0))
        df = np.stack([c[4] for c in cols], 1) if runs else np.zeros((S, 0))
        cov = self.covariance(key, runs)
        z = np.zeros(S)
        method, family = [], np.zeros(S, np.int64)
        base = None
        for s in range(S):
            vary = np.flatnonzero(se[s] > 0)
            m = len(vary)
            family[s] = m
            if m <= 1:
                z[s] = NormalDist().inv_cdf(1 - (1 - level) / 2)
                method.append("max-t" if m else "exact")
                continue
            C = cov[s][np.ix_(vary, vary)]
            d = np.sqrt(np.diag(C))
            if not (np.isfinite(C).all() and (d > 0).all()):
                z[s] = NormalDist().inv_cdf(1 - (1 - level) / (2 * m))
                method.append("bonferroni")
                continue
            if base is None or base.shape[1] != m:
                base = np.random.default_rng(seed).standard_normal((draws, m))
            z[s] = max_abs_normal_quantile(C / np.outer(d, d), level, base)
            method.append("max-t")
        p = 2 * (1 - np.vectorize(NormalDist().cdf)(z)) if S else z
        bias = np.stack([self.bias(e, r) for r in runs], 1) if runs else np.zeros((S, 0))
        half = (np.stack([self.half_width(se[s], df[s], bias[s], 1 - p[s]) for s in range(S)]) if S and runs
                else np.zeros((S, len(runs))))
        est, low, high = self.ends(e, est, half)
        return Simultaneous(runs, est, se, low, high, df, z, family, method, level)


def log_interval(est, half, low: float = 0.0, high: float = 1.0):
    """(low end, high end) of the interval ``est`` -+ ``half`` formed on the log scale of the
    distance from the range's lower end: with d = est - ``low``, the ends are
    low + d exp(-+ half/d) (the delta method's half-width carried to log d), the upper one
    clipped to ``high``. A ratio estimate errs by a factor, not by an amount: where a
    sample drew few of a query's rare relevant documents the ratio reads low with a small
    standard error, and rarely far too high, so the symmetric interval misses above the
    truth (every miss of statAP's at a tenth of the holes on robust03, TAR 2017 and DL
    2019); the log scale reaches further up (Katz, Baptista, Azen & Pike, "Obtaining
    confidence intervals for the risk ratio in cohort studies", Biometrics 1978, the
    log interval of a ratio estimate). Where d <= 0 or ``low`` is not finite: est -+ half
    clipped to the range.

    >>> [round(float(x), 4) for x in log_interval(0.2, 0.08)]
    [0.1341, 0.2984]
    >>> [round(float(x), 4) for x in log_interval(0.8, 0.08)]  # a small relative error: near est -+ half
    [0.7239, 0.8841]
    >>> [float(x) for x in log_interval(0.0, 0.05)]
    [0.0, 0.05]
    """
    est = np.asarray(est, np.float64)
    half = np.asarray(half, np.float64)
    lin_lo, lin_hi = np.clip(est - half, low, high), np.clip(est + half, low, high)
    if not np.isfinite(low):  # no lower end to measure the distance from
        return lin_lo, lin_hi
    d = est - low
    inside = d > 0
    dd = np.where(inside, d, 1.0)
    spread = np.where(inside, half, 0.0) / dd
    with np.errstate(over="ignore"):
        lo = low + dd * np.exp(-spread)
        hi = np.minimum(low + dd * np.exp(spread), high)
    return np.where(inside, lo, lin_lo), np.where(inside, hi, lin_hi)


def max_abs_normal_quantile(corr: np.ndarray, level: float, base: np.ndarray) -> float:
    """The ``level`` quantile of max_j |Z_j|, Z ~ N(0, ``corr``), from standard normal
    draws ``base`` (draws x m) mapped through a square root of ``corr`` (its eigen
    decomposition, so a singular correlation is fine): the critical value of simultaneous
    intervals (Hothorn, Bretz & Westfall, "Simultaneous inference in general parametric
    models", Biometrical Journal 2008, who integrate instead of simulating).

    >>> I = np.eye(3); b = np.random.default_rng(0).standard_normal((200_000, 3))
    >>> round(max_abs_normal_quantile(I, 0.95, b), 2)  # independent: (0.95^(1/3)) two-sided quantile
    2.39
    >>> round(max_abs_normal_quantile(np.ones((3, 3)), 0.95, b), 2)  # identical: one interval
    1.96
    """
    w, V = np.linalg.eigh((corr + corr.T) / 2)
    root = V * np.sqrt(np.clip(w, 0.0, None))
    m = np.abs(np.einsum("dk,jk->dj", base, root)).max(1)  # einsum: BLAS threads do not pay at this size
    k = int(np.ceil(level * len(m))) - 1
    return float(np.partition(m, k)[k])


@dataclass
class Simultaneous:
    """Simultaneous intervals of one estimator's runs, per state: ``low``/``high``
    states x runs; ``critical`` the normal critical value c per state (1.96 at 95% for a
    single run); ``family`` how many runs' intervals are random (se > 0); ``method``
    per state: ``max-t``, ``bonferroni`` (the fallback) or ``exact`` (nothing random)."""

    runs: list
    estimate: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    df: np.ndarray
    critical: np.ndarray
    family: np.ndarray
    method: list
    level: float

    def covers(self, truth: dict) -> np.ndarray:
        """states: every run's interval holds its ``truth[run]``."""
        t = np.array([truth[r] for r in self.runs])[None, :]
        return ((self.low <= t) & (t <= self.high)).all(1)
