"""Prediction-powered inference (PPI): a small human sample of known design corrects a
machine judge's labels, with intervals that stay valid however biased the machine is
(docs/machine-labels.md states the method in full and measures it).

A finite population of units (the pairs a sample of holes was drawn from, or the queries)
has coefficients ``c_i``, machine values ``f_i``, inclusion probabilities ``pi_i`` and human
values ``y_i`` where sampled. The estimand is ``T = sum_i c_i y_i``; for a tuning ``lam``::

    T(lam) = lam * sum_all c_i f_i + sum_sampled c_i (y_i - lam * f_i) / pi_i

``lam = 0`` is Horvitz-Thompson (**human-only**); ``lam = 1`` **PPI** (Angelopoulos, Bates,
Fannjiang, Jordan & Zrnic, Science 2023; the difference estimator of Särndal, Swensson &
Wretman 1992, §6.3, with inverse inclusion probabilities as Zrnic & Candès, ICML 2024);
``lam`` tuned to the least estimated variance, clipped to [0, 1], **PPI++** (Angelopoulos,
Duchi & Zrnic 2023). Each is design-unbiased for a fixed ``lam``; the machine's errors only
widen the interval. Applied to IR with queries as units by Oosterhuis et al., KDD 2024.

Variance of the realised sample: ``poisson`` (independent inclusions), ``V = sum_sampled
(1 - pi_i) / pi_i^2 z_i^2`` with ``z_i = c_i (y_i - lam f_i)``, normal interval; ``srs``
(``n_h`` of ``N_h`` per stratum), ``V = sum_h N_h^2 (1 - n_h/N_h) s_h^2 / n_h``, Student t
with Satterthwaite's degrees of freedom (Satterthwaite 1946; Cochran 1977, 5.4). With fewer
than ``MIN_SURPRISES`` units where people and machine differ, ``V`` is floored at the whole
sample's rate of them (Jeffreys' prior; :func:`judged.analyses.holes.estimates.unseen_share_variance`).
Every function takes a leading batch axis, so a simulation of many samples is one call.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ...core.words import counted
from ...core.conventions import Settings
from .estimates import Estimate, EstimateRow, critical_value, jeffreys_rate, satterthwaite_df, unseen_share_variance
from ...core.align import align
from ...core.data import Qrels, as_numpy
from ...core.errors import ConventionError, JudgedError
from ...core.evaluation import ALIGNMENT, Scorer
from ...core.measures import FAMILIES, Measure
from .machine import pair_key, read_machine
from ..pooling.poolfile import PoolFile, read_pool_file

VARIANCES = ("poisson", "srs")
ESTIMATORS = ("human", "ppi", "ppi++")
SOURCES = ("PPI: Angelopoulos et al., Science 2023; PPI++ power tuning: Angelopoulos, Duchi & Zrnic 2023; "
           "difference estimator: Sarndal, Swensson & Wretman 1992; inclusion probabilities: Zrnic & Candes, "
           "ICML 2024; IR evaluation: Oosterhuis et al., KDD 2024")


def method_source(estimator: str, variance: str, level: float, jackknife: bool) -> str:
    """What an estimator of :func:`estimate` does and how its interval is made (an
    :class:`~judged.analyses.holes.estimates.Estimate`'s ``source``)."""
    what = {"human": "Horvitz-Thompson on the human sample alone (lambda = 0)",
            "ppi": "prediction-powered: machine total + inverse-probability-weighted human-machine "
                   "differences (lambda = 1)",
            "ppi++": "prediction-powered with power tuning (lambda minimising the estimated variance, in [0, 1])"}
    how = ("normal interval, Poisson-design variance" if variance == "poisson"
           else "Student t interval, stratified delete-one jackknife variance with lambda re-tuned per "
                "replicate" if estimator == "ppi++" and jackknife
           else "Student t interval, stratified simple-random-sampling variance")
    if variance == "srs":
        how += (", Satterthwaite degrees of freedom, floored at a whole-sample surprise rate when fewer than "
                f"{MIN_SURPRISES} drawn units differ from the machine")
    return f"{what[estimator]}; {level:.0%} {how}"


def estimate_json(e: Estimate) -> dict:
    """An unbatched estimate of :func:`estimate` as plain floats (the JSON ``estimates`` entries)."""
    return e.scalar(**{"lambda": float(np.asarray(e.details["lambda"]).reshape(-1)[0]),
                       "sampled": int(np.asarray(e.details["sampled"]).reshape(-1)[0]), "method": e.source})


def estimate(coef, machine, human, sampled, pi=None, *, estimator: str = "ppi++", lam=None,
             variance: str = "poisson", strata=None, level: float = 0.95, constant=0.0,
             value_range=(-np.inf, np.inf), unit_range=None) -> Estimate:
    """``constant + T(lam)`` with its standard error and interval (see the module doc).

    Parameters
    ----------
    coef, machine : (..., n) coefficient and machine value of every unit of the population
    human : (..., n) human value; read only where ``sampled``
    sampled : (..., n) bool, the units in the sample
    pi : (..., n) inclusion probabilities (``poisson``); ``srs`` takes n_h / N_h from the
        sample and ``strata``
    estimator : ``human`` (lam = 0), ``ppi`` (lam = 1) or ``ppi++`` (tuned); ``lam`` overrides
    variance : ``poisson`` or ``srs``; strata : (n,) stratum of each unit (``srs``)
    value_range : (low, high) the estimate and the interval's ends are clipped to (the
        measure's range; none by default)
    unit_range : (low, high) a unit's human values lie in (a query's score: the measure's
        range): ``srs`` then floors the variance of a sample whose units nearly all score
        alike (the ceiling, :func:`_rare_floor`)

    >>> e = estimate([1, 1, 1, 1], [1, 0, 1, 0], [1, 0, 0, 0], [True, True, True, False], variance="srs")
    >>> float(e.value), float(e.details["lambda"])   # the machine says 2; it was wrong on one of the 3 sampled
    (1.0, 0.5)
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}")
    if variance not in VARIANCES:
        raise ValueError(f"variance must be one of {VARIANCES}")
    c = np.asarray(coef, dtype=float)
    f = np.asarray(machine, dtype=float)
    s = np.asarray(sampled, dtype=bool)
    c, f, s = np.broadcast_arrays(c, f, s)
    y = np.where(s, np.asarray(human, dtype=float), 0.0)
    cy, cf = c * y, c * f
    machine_total = cf.sum(axis=-1)
    if variance == "poisson":
        if pi is None:
            raise ValueError("a poisson design needs the inclusion probabilities")
        p = np.broadcast_to(np.asarray(pi, dtype=float), c.shape)
        if (p[s] <= 0).any() or (p > 1).any():
            raise ValueError("inclusion probabilities of sampled units must lie in (0, 1]")
        w = np.where(s, 1.0 / np.where(s, p, 1.0), 0.0)  # 1/pi on the sample
        a = np.where(s, (1.0 - p) * w * w, 0.0)  # variance weight of z^2
        lam_ = _fixed_lambda(lam, estimator, machine_total.shape)
        if lam_ is None:
            num = (a * cy * cf).sum(axis=-1)
            den = ((1.0 - p) / np.where(p > 0, p, 1.0) * cf * cf).sum(axis=-1)  # population total, known exactly
            lam_ = np.clip(np.divide(num, den, out=np.ones_like(num), where=den > 0), 0.0, 1.0)
        z = cy - lam_[..., None] * cf
        value = lam_ * machine_total + (w * z).sum(axis=-1)
        var = (a * z * z).sum(axis=-1)
        q = critical_value(level)
        n = s.sum(axis=-1)
    else:
        h = np.zeros(c.shape[-1], dtype=np.int64) if strata is None else np.asarray(strata)
        _, h = np.unique(h, return_inverse=True)
        groups = _Strata(h)
        N_h = groups.N
        sf = s.astype(float)
        n_h = groups.sum(sf)  # (..., H)
        if (n_h < 1).any():
            raise ValueError("simple random sampling needs at least one sampled unit in every stratum")
        if ((n_h < 2) & (N_h > n_h)).any():
            raise ValueError("a stratum with one sampled unit of several has no variance estimate: "
                             "sample at least two per stratum")
        expand = groups.expand  # per stratum -> per unit
        w_h = N_h * np.maximum(N_h - n_h, 0) / (n_h * np.maximum(n_h - 1, 1))  # N_h^2 (1 - n_h/N_h) / (n_h (n_h - 1))

        def centred(v):
            mean = np.divide(groups.sum((v * sf)), n_h)
            return np.where(s, v - expand(mean), 0.0)

        ccy, ccf = centred(cy), centred(cf)
        num = den = pop_var = None
        lam_ = _fixed_lambda(lam, estimator, machine_total.shape)
        if lam_ is None:  # the sample's covariance over the population's variance of the machine values (known exactly)
            wu = expand(w_h)
            num = (wu * ccy * ccf).sum(axis=-1)
            mean_f = (groups.sum(cf)) / N_h
            pop_var = groups.sum((cf - expand(mean_f)) ** 2) / np.maximum(N_h - 1, 1)
            den = (N_h * np.maximum(N_h - n_h, 0) / n_h * pop_var).sum(axis=-1)
            lam_ = np.clip(np.divide(num, den, out=np.ones_like(num), where=den > 0), 0.0, 1.0)
        z = cy - lam_[..., None] * cf
        zc = ccy - lam_[..., None] * ccf
        value = lam_ * machine_total + (groups.sum(np.where(s, z, 0.0)) * N_h / n_h).sum(axis=-1)
        v_h = groups.sum((zc * zc)) * w_h
        if estimator == "ppi++" and lam is None:  # lambda re-estimated without each unit: its noise counted
            v_h = _jackknife_tuned(cy, cf, s, groups, N_h, n_h, machine_total, num, den, pop_var)
        floor, applies = _rare_floor(c, y, f, s, groups, N_h, n_h, lam_, unit_range)
        floored = applies & (floor.sum(axis=-1) > v_h.sum(axis=-1))
        v_h = np.where(floored[..., None], floor, v_h)
        var = v_h.sum(axis=-1)
        n = s.sum(axis=-1)
        q = critical_value(level, satterthwaite_df(v_h, n_h))
    se = np.sqrt(np.maximum(var, 0.0))
    value = value + constant
    jackknife = variance == "srs" and estimator == "ppi++" and lam is None
    return Estimate(value, value - q * se, value + q * se, se, estimator, method_source(estimator, variance, level,
                                                                                        jackknife),
                    "normal" if variance == "poisson" else "t", level,
                    details={"lambda": lam_, "sampled": n, "variance": variance, "jackknife": jackknife}
                    ).clipped(value_range)


MIN_SURPRISES = 2  # fewer drawn units where the people and the machine differ: the variance is floored


def _rare_floor(c, y, f, s, groups, N_h, n_h, lam, unit_range=None) -> tuple[np.ndarray, np.ndarray]:
    """((..., H) the variance floor per stratum, (...) whether it applies: too few
    surprises drawn) for a stratified sample. A *surprise* is a drawn unit whose human value differs from the
    machine's (PPI, PPI++) or is not 0 (human-only, lambda 0), among the units the measure
    reads (coefficient not 0). With a good machine they are rare: a run's P@10 reads about
    20 of 125 drawn pairs, 1-2 of them surprises, and a sample with none has variance 0
    whatever the population holds. The floor is the variance had every stratum's units
    been surprises at the rate of the whole sample (all drawn units, Jeffreys' prior),
    each of the mean square size of those drawn (the largest machine value squared when
    none was), weighted by the stratum's mean squared coefficient:
    :func:`judged.analyses.holes.estimates.unseen_share_variance`, the floor statAP's
    strata with no relevant drawn get.

    With ``unit_range`` (a query's score, which lies in the measure's range) a sample whose
    queries all score alike is guarded too: at the ceiling every drawn query has P@10 = 1,
    the human-only variance is 0 and PPI++'s lambda falls to 0 with it; and where every drawn
    query differs from the machine by the same amount, PPI's variance is 0 and PPI++'s lambda
    tunes near 1 with a variance near 0, whatever the undrawn queries hold. Where fewer than
    MIN_SURPRISES drawn units the measure reads have a human value off the typical one (their
    median), or (lambda > 0) a human-minus-machine value off the typical one, the floor is
    at least the variance had the units been off it at their
    rate in the sample with Jeffreys' prior ((r + 1/2)/(n + 1): 1/2 in n + 1 when none was
    seen, the prior of Jeffreys' interval for a proportion; Brown, Cai & DasGupta,
    Statistical Science 2001), each by the width of the range (one or two seen tell little
    of how far the unseen lie)."""
    c2 = groups.sum(c * c) / N_h
    ref = np.where(np.asarray(lam)[..., None] > 1e-9, f, 0.0)  # lambda tuned to 0 comes out as 1e-30 or so
    gap = np.where(s, y - ref, 0.0)
    surprise = s & (np.abs(gap) > 1e-12)
    r = surprise.sum(axis=-1)
    rate = jeffreys_rate(r, s.sum(axis=-1))
    top = np.max(np.abs(f), axis=-1, initial=0.0)
    effect = np.where(r > 0, (gap * gap).sum(axis=-1) / np.maximum(r, 1), np.where(top > 0, top * top, 1.0))
    applies = (surprise & (c != 0)).sum(axis=-1) < MIN_SURPRISES
    floor = np.where(applies[..., None], unseen_share_variance(n_h, N_h, rate[..., None], effect[..., None] * c2), 0.0)
    if unit_range is not None and np.isfinite(unit_range[1] - unit_range[0]):
        read = s & (c != 0)

        def off(v):  # drawn units whose v is off the typical (median) v of those the measure reads
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a sample reading no unit: no median
                typical = np.nan_to_num(np.nanmedian(np.where(read, v, np.nan), axis=-1)) if v.shape[-1] \
                    else np.zeros(v.shape[:-1])
            return s & (np.abs(v - typical[..., None]) > 1e-12)

        counts = [np.where(used & ((o & (c != 0)).sum(axis=-1) < MIN_SURPRISES), o.sum(axis=-1), np.inf)
                  for o, used in ((off(y), True), (off(y - f), np.asarray(lam) > 1e-9))]  # y; y - f (lambda > 0)
        least = np.minimum(*counts)
        alike, width2 = np.isfinite(least), float(unit_range[1] - unit_range[0]) ** 2 or 1.0
        ceiling = unseen_share_variance(n_h, N_h, jeffreys_rate(np.where(alike, least, 0.0), s.sum(axis=-1))[..., None],
                                        width2 * c2)
        floor = np.where(alike[..., None], np.maximum(floor, ceiling), floor)
        applies = applies | alike
    return floor, applies


def _fixed_lambda(lam, estimator: str, shape):
    """The machine's weight when it is not tuned: ``lam`` if given, 0 for human-only, 1 for
    PPI; None for PPI++ (tuned from the sample by the caller's design)."""
    if lam is not None:
        return np.broadcast_to(np.asarray(lam, dtype=float), shape)
    if estimator == "human":
        return np.zeros(shape)
    if estimator == "ppi":
        return np.ones(shape)
    return None


class _Strata:
    """Sums per stratum and back to the units, for arrays with any leading batch axes."""

    def __init__(self, h: np.ndarray):
        self.h = h
        self.order = np.argsort(h, kind="stable")
        self.N = np.bincount(h).astype(float)
        self.H = len(self.N)
        self.starts = np.concatenate(([0], np.cumsum(self.N)[:-1])).astype(np.int64)

    def sum(self, v) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        if v.shape[-1] == 0:
            return np.zeros(v.shape[:-1] + (self.H,))
        return np.add.reduceat(v[..., self.order], self.starts, axis=-1)

    def expand(self, w) -> np.ndarray:
        return np.asarray(w)[..., self.h]


def _jackknife_tuned(cy, cf, s, groups, N_h, n_h, machine_total, num, den, pop_var):
    """The stratified delete-one jackknife variance of the PPI++ estimate (Wolter,
    *Introduction to Variance Estimation*, 2007, ch. 4): each sampled unit left out in turn,
    lambda re-estimated and the estimate recomputed, in closed form (sums less the unit's);
    ``sum_h (1 - n_h/N_h) (n_h - 1)/n_h sum_(i in h) (T_(-i) - mean_h)^2``. For a fixed lambda
    it equals the usual stratified variance; with a tuned one it adds lambda's noise, which
    the plug-in variance leaves out (too narrow on small samples)."""
    expand = groups.expand
    sf = s.astype(float)
    Sy, Sf, Syf = groups.sum((cy * sf)), groups.sum((cf * sf)), groups.sum((cy * cf * sf))
    n1 = expand(n_h) - 1.0  # the unit's stratum without it
    Sy1, Sf1, Syf1 = expand(Sy) - cy, expand(Sf) - cf, expand(Syf) - cy * cf
    Nu, pv = expand(N_h), expand(pop_var)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov_all = (Syf - Sy * Sf / n_h) / np.maximum(n_h - 1, 1)
        cov1 = np.where(n1 >= 2, (Syf1 - Sy1 * Sf1 / n1) / np.maximum(n1 - 1, 1), 0.0)
        n1_safe = np.maximum(n1, 1.0)
        num1 = (num[..., None] - expand(N_h * (N_h - n_h) / n_h * cov_all)
                + Nu * np.maximum(Nu - n1, 0) / n1_safe * cov1)
        den1 = den[..., None] - expand(N_h * (N_h - n_h) / n_h) * pv + Nu * np.maximum(Nu - n1, 0) / n1_safe * pv
        lam1 = np.clip(np.divide(num1, den1, out=np.ones_like(num1), where=den1 > 0), 0.0, 1.0)
        A = ((N_h / n_h) * Sy).sum(axis=-1)[..., None]
        B = ((N_h / n_h) * Sf).sum(axis=-1)[..., None]
        own = expand(N_h / n_h) * (expand(Sy) - lam1 * expand(Sf))
        t1 = lam1 * machine_total[..., None] + A - lam1 * B - own + np.where(n1 > 0, Nu / n1_safe, 0.0) * (
            Sy1 - lam1 * Sf1)
    t1 = np.where(s, t1, 0.0)
    mean_h = np.divide(groups.sum(t1), n_h)
    dev = np.where(s, t1 - expand(mean_h), 0.0)
    factor = (1.0 - n_h / N_h) * (n_h - 1) / n_h
    return groups.sum((dev * dev)) * factor


def estimates(coef, machine, human, sampled, pi=None, **kw) -> dict:
    """:func:`estimate` for each of ``human``, ``ppi`` and ``ppi++``."""
    return {e: estimate(coef, machine, human, sampled, pi, estimator=e, **kw) for e in ESTIMATORS}


# ---------------------------------------------------------------------------
# Prediction-powered estimates of IR measures
#
# The population P is the set of (qid, docid) pairs that were unjudged when the sample was
# drawn (a pool file's design lists them). The estimand is the measure with every pair of P
# labelled by a person and everything else as the people judged it before (a pair outside
# P that nobody judged counts as not relevant, as always). Units:
#
# * pairs (judged pool --strategy sample: stratified SRS of pairs): the measure must be
#   linear in the labels, DCG@k or P@k: mean over queries = constant + sum_p c_p g(label_p),
#   c_p the run's discount at p's rank / |Q| (DCG) or 1 / (k |Q|) (P), g the gain or the
#   relevant-or-not indicator;
# * queries (judged pool --strategy sample-queries: an SRS of queries, every pair of P of a
#   sampled query judged): any measure; unit value = the query's score, y with the people's
#   labels on P, f with the machine's; queries without a pair in P are known exactly.

LINEAR = tuple(f.name for f in FAMILIES.values() if f.linear_in_labels)  # DCG, P
UNITS = ("pair", "query")


@dataclass
class Design:
    """A human sample of known design over a population of (qid, docid) pairs: per pair,
    whether its unit was drawn, its unit's inclusion probability (``poisson``) or stratum
    (``srs``). Unit ``query``: a drawn query has every population pair judged."""

    qid: np.ndarray
    docid: np.ndarray
    unit: str  # pair | query
    sampled: np.ndarray
    variance: str = "srs"  # poisson | srs
    pi: np.ndarray | None = None
    strata: np.ndarray | None = None
    source: str = "<memory>"
    description: str = ""

    def __post_init__(self):
        self.qid = np.asarray(self.qid, dtype=object)
        self.docid = np.asarray(self.docid, dtype=object)
        self.sampled = np.asarray(self.sampled, dtype=bool)
        if self.unit not in UNITS:
            raise ValueError(f"the sampling unit must be one of {UNITS}")
        if self.variance not in VARIANCES:
            raise ValueError(f"variance must be one of {VARIANCES}")
        if self.variance == "poisson" and self.pi is None:
            raise ValueError("a poisson design needs inclusion probabilities")
        if not (len(self.qid) == len(self.docid) == len(self.sampled)):
            raise ValueError("qid, docid and sampled need one entry per population pair")
        if self.unit == "query" and self.variance != "srs":
            raise ValueError("queries are drawn by simple random sampling")

    @staticmethod
    def pairs(qid, docid, sampled, *, pi=None, strata=None, source: str = "<memory>") -> "Design":
        """Pairs drawn one by one: with inclusion probabilities ``pi`` (independent draws,
        Poisson sampling), else simple random sampling without replacement within ``strata``
        (one stratum when None)."""
        variance = "poisson" if pi is not None else "srs"
        return Design(qid, docid, "pair", sampled, variance, None if pi is None else np.asarray(pi, float),
                      None if strata is None else np.asarray(strata), source)

    @staticmethod
    def queries(qid, docid, sampled_queries, *, source: str = "<memory>") -> "Design":
        """A simple random sample of the population's queries, all their pairs judged."""
        chosen = {str(q) for q in sampled_queries}
        qid = np.asarray(qid, dtype=object)
        return Design(qid, docid, "query", np.array([q in chosen for q in qid.tolist()], bool), source=source)

    @staticmethod
    def from_pool(pool) -> "Design":
        """The design a pool file recorded (``judged pool --strategy sample`` or
        ``sample-queries``): its population (drawn pairs and ``#~`` lines), strata, draws."""
        pf = pool if isinstance(pool, PoolFile) else read_pool_file(pool)
        d = pf.design
        strategy = str(pf.meta.get("strategy", ""))
        if d is None:
            raise JudgedError(f"{pf.path}: no sampling design (strategy {strategy or 'unknown'} chose its pairs, "
                              "it did not draw them at random); draw a sample with judged pool --strategy sample "
                              "(pairs) or --strategy sample-queries (queries)")
        qid = [u.qid for u in d.units]
        docid = [u.docid for u in d.units]
        sampled = [u.sampled for u in d.units]
        if strategy.startswith("sample-queries"):
            return Design(qid, docid, "query", sampled, source=pf.path, description=strategy)
        return Design(qid, docid, "pair", sampled, "srs", strata=np.array([u.stratum for u in d.units]),
                      source=pf.path, description=f"{strategy}: {d.method}")

    def describe(self) -> dict:
        out = {"source": self.source, "unit": self.unit, "variance": self.variance,
               "population_pairs": int(len(self.qid)), "sampled_pairs": int(self.sampled.sum())}
        if self.unit == "query":
            out["population_queries"] = len(set(self.qid.tolist()))
            out["sampled_queries"] = len(set(self.qid[self.sampled].tolist()))
        if self.strata is not None:
            out["strata"] = len(set(self.strata.tolist()))
        return out


@dataclass
class Units:
    """The sampling units of one run and measure: what :func:`estimate` reads, the part
    known without sampling (``constant``), and what neither the people nor the design
    cover."""

    key: np.ndarray  # unit keys: population pair index (pairs) or qid (queries)
    coef: np.ndarray
    machine: np.ndarray
    human: np.ndarray  # NaN where not drawn
    sampled: np.ndarray
    pi: np.ndarray | None
    strata: np.ndarray | None
    variance: str
    constant: float = 0.0
    uncovered: int = 0  # unjudged pairs in the measure's ranked list outside the population (count 0)
    uncovered_max: float = 0.0  # what they could add at most (pair units; NaN: not bounded here)
    missing_machine: int = 0  # population pairs in the ranked lists without a machine label (machine value 0)
    uncovered_min: float = 0.0  # what they could take away at most (a difference: the other run's holes)
    value_range: tuple = (-np.inf, np.inf)  # the measure's (a difference: low_a - high_b .. high_a - low_b)
    unit_range: tuple | None = None  # a query unit's values: the measure's range (the variance floor)

    def estimate(self, estimator: str = "ppi++", level: float = 0.95) -> Estimate:
        return estimate(self.coef, self.machine, self.human, self.sampled, self.pi, estimator=estimator,
                        variance=self.variance, strata=self.strata, level=level, constant=self.constant,
                        value_range=self.value_range, unit_range=self.unit_range)

    @property
    def machine_only(self) -> float:
        """The plug-in: every unit at its machine value (biased as the machine is)."""
        return float(self.constant + (self.coef * self.machine).sum())

    @property
    def machine_filled(self) -> float:
        """The machine-filled score as ``--machine`` gives it everywhere (judged.analyses.holes.machine):
        the people's value where they labelled (the drawn units), the machine's elsewhere."""
        people = self.sampled & ~np.isnan(self.human)
        return float(self.constant + (self.coef * np.where(people, self.human, self.machine)).sum())

    def minus(self, other: "Units") -> "Units":
        """The units of the difference self - other (same design): z = c_a v_a - c_b v_b."""
        keys = np.array(sorted(set(self.key.tolist()) | set(other.key.tolist())), dtype=self.key.dtype)
        out = {}
        for name, u, sign in (("a", self, 1.0), ("b", other, -1.0)):
            at = {k: i for i, k in enumerate(u.key.tolist())}
            idx = np.array([at.get(k, -1) for k in keys.tolist()], dtype=np.int64)
            has = idx >= 0
            i = np.maximum(idx, 0)
            out[name] = (np.where(has, sign * u.coef[i] * u.machine[i], 0.0),
                         np.where(has, sign * u.coef[i] * np.nan_to_num(u.human[i]), 0.0),
                         np.where(has, u.sampled[i], False), has, i)
        fa, ya, sa, ha, ia = out["a"]
        fb, yb, sb, hb, ib = out["b"]
        pick = (lambda arr_a, arr_b: np.where(ha, arr_a[ia], arr_b[ib]) if arr_a is not None else None)
        return Units(keys, np.ones(len(keys)), fa + fb, ya + yb, sa | sb, pick(self.pi, other.pi),
                     pick(self.strata, other.strata), self.variance, self.constant - other.constant,
                     self.uncovered + other.uncovered, self.uncovered_max + other.uncovered_min,
                     self.missing_machine + other.missing_machine, self.uncovered_min + other.uncovered_max,
                     (self.value_range[0] - other.value_range[1], self.value_range[1] - other.value_range[0]))


def _key_array(qid, docid):
    import pyarrow as pa

    return pair_key(pa.array(list(qid), type=pa.string()), pa.array(list(docid), type=pa.string()))


class Labels:
    """The population's labels: the people's (from the current qrels: the sample, judged
    and merged) and the machine's, per population pair; the judgments made before the
    sample (the qrels without the population pairs)."""

    def __init__(self, qrels, machine, design: Design):
        import pyarrow as pa
        import pyarrow.compute as pc

        self.design = design
        self.pop = _key_array(design.qid, design.docid)
        if len(pc.unique(self.pop)) != len(self.pop):
            raise JudgedError(f"{design.source}: a pair is listed twice in the sample's population")
        qkey = pair_key(qrels.qid, qrels.docid)
        keep = pa.array(~as_numpy(pc.is_in(qkey, value_set=self.pop)))
        self.before = Qrels(qrels.qid.filter(keep), qrels.docid.filter(keep), qrels.grade[as_numpy(keep)],
                            source=f"{qrels.source} without the sample's population")
        at = as_numpy(pc.index_in(self.pop, value_set=qkey), null=-1)
        self.human = np.where(at >= 0, qrels.grade[np.maximum(at, 0)], np.nan).astype(float)
        m = machine.qrels
        at = as_numpy(pc.index_in(self.pop, value_set=pair_key(m.qid, m.docid)), null=-1)
        self.machine = np.where(at >= 0, m.grade[np.maximum(at, 0)], np.nan).astype(float)
        self.machine_source = machine.source
        missing = design.sampled & np.isnan(self.human)
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            raise JudgedError(f"{counted(int(missing.sum()), 'drawn pair')} of {design.source} {'has' if missing.sum() == 1 else 'have'} no label in "
                              f"{qrels.source} (first: query {design.qid[i]!r} docid {design.docid[i]!r}): judge "
                              "and merge the whole sample first (leaving drawn pairs out would break the design)")
        self.top_grade = float(max(np.nanmax(self.human, initial=0.0), np.nanmax(self.machine, initial=0.0),
                                   self.before.grade.max(initial=0)))

    def qrels_with(self, grades: np.ndarray, source: str):
        """The judgments made before the sample plus the population pairs at ``grades``
        (NaN: left unjudged)."""
        import pyarrow as pa

        ok = ~np.isnan(grades)
        d = self.design
        return Qrels(pa.concat_arrays([self.before.qid, pa.array(d.qid[ok].tolist(), type=pa.string())]),
                     pa.concat_arrays([self.before.docid, pa.array(d.docid[ok].tolist(), type=pa.string())]),
                     np.concatenate([self.before.grade, grades[ok].astype(np.int64)]), source=source)

    def frame(self, settings):
        """The qrels every run is aligned with to find its queries and its rows in the
        population: the judgments before the sample, population pairs at grade 0."""
        if not hasattr(self, "_frame"):
            self._frame = self.qrels_with(np.zeros(len(self.design.qid)), "the sample's frame")
        return self._frame


def units(labels: Labels, run, measure, settings) -> Units:
    """The sampling units of ``measure`` for one ``run`` (a :class:`~judged.core.data.Run`)."""
    if measure.unjudged != "zero":
        raise ConventionError(f"prediction-powered estimates label the holes: give {measure.name} with "
                              f"unjudged=zero, not unjudged={measure.unjudged}")
    if labels.design.unit == "pair":
        if not measure.family.linear_in_labels:
            raise ConventionError(f"{measure} is not linear in the labels: with pairs as the sampling units only "
                                  f"{', '.join(LINEAR)} have unbiased prediction-powered estimates; draw queries "
                                  "(judged pool --strategy sample-queries) to estimate it")
        return _pair_units(labels, run, measure, settings)
    return _query_units(labels, run, measure, settings)


def _value(measure, grades: np.ndarray) -> np.ndarray:
    """What a label is worth per unit coefficient: its gain (DCG) or relevant-or-not (P); NaN: 0."""
    g = np.nan_to_num(np.asarray(grades, dtype=float), nan=0.0)
    if measure.family.label_worth == "gain":
        return measure.gain(g)
    return (g >= measure.rel).astype(float)


def _rows_in_population(labels: Labels, a, top) -> np.ndarray:
    """Per ranked row of ``top``: its population pair's index, -1 when not in the population."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(top.q):
        return np.zeros(0, np.int64)
    qid = pa.array(a.qids[top.q].astype(str).tolist(), type=pa.string())
    docid = a.run.docid.take(pa.array(top.row, type=pa.int64()))
    return as_numpy(pc.index_in(pair_key(qid, docid), value_set=labels.pop), null=-1).astype(np.int64)


def _pair_units(labels: Labels, run, m, settings) -> Units:
    d = labels.design
    a = align(labels.frame(settings), run, settings)
    top = a.ranked.top(m.cutoff)
    n_q = max(a.n_queries, 1)
    unit = _rows_in_population(labels, a, top)
    if m.family.label_worth == "gain":
        coef = m.discount.divide(np.ones(len(top.q)), top.pos + 1.0) / n_q
    else:
        coef = np.full(len(top.q), 1.0 / (m.cutoff * n_q))
    pop = unit >= 0
    judged = ~np.isnan(top.grade) & ~pop  # judged before the sample
    constant = float((coef[judged] * _value(m, top.grade[judged])).sum())
    holes = ~judged & ~pop
    top_value = float(_value(m, np.array([labels.top_grade]))[0])
    c = np.bincount(unit[pop], weights=coef[pop], minlength=len(d.qid))
    used = c != 0
    human = np.where(d.sampled, _value(m, labels.human), np.nan)
    return Units(np.arange(len(d.qid)), c, _value(m, labels.machine), human, d.sampled, d.pi, d.strata, d.variance,
                 constant, int(holes.sum()), float(coef[holes].sum() * top_value),
                 int((used & np.isnan(labels.machine)).sum()), value_range=m.family.value_range)


def _query_units(labels: Labels, run, m, settings) -> Units:
    d = labels.design
    frame = align(labels.frame(settings), run, settings)
    qids = frame.qids.astype(str)
    n_q = max(len(qids), 1)
    top = frame.ranked.top(m.cutoff) if m.cutoff else frame.ranked
    unit = _rows_in_population(labels, frame, top)
    uncovered = int((np.isnan(top.grade) & (unit < 0)).sum())
    missing = int(np.isnan(labels.machine[unit[unit >= 0]]).sum())

    def per_query(qrels):
        (rr,) = Scorer(qrels, {"m": m}, settings).runs([run]).runs.values()
        at = dict(zip(rr.qids.tolist(), rr.values["m"].tolist()))
        return np.array([at.get(q, 0.0) for q in qids.tolist()])

    human = per_query(labels.qrels_with(np.where(d.sampled, labels.human, np.nan), "people on the sample"))
    machine = per_query(labels.qrels_with(labels.machine, f"machine labels ({labels.machine_source})"))
    frame_q, drawn_q = set(d.qid.tolist()), set(d.qid[d.sampled].tolist())
    in_frame = np.fromiter((q in frame_q for q in qids.tolist()), bool, len(qids))
    drawn = np.fromiter((q in drawn_q for q in qids.tolist()), bool, len(qids))
    constant = float(human[~in_frame].sum() / n_q)  # queries without a population pair: known exactly
    return Units(qids[in_frame], np.full(int(in_frame.sum()), 1.0 / n_q), machine[in_frame],
                 np.where(drawn, human, np.nan)[in_frame], drawn[in_frame], None, None, "srs", constant,
                 uncovered, float("nan"), missing, value_range=m.family.value_range, unit_range=m.family.value_range)


# ---------------------------------------------------------------------------
# The report: every run and measure, three estimators side by side


@dataclass
class PPIReport:
    design: Design
    machine: object  # MachineLabels
    level: float
    rows: list  # EstimateRow per run and measure: human, ppi, ppi++ side by side
    conventions: dict
    differences: list = None  # EstimateRow of run - baseline (compare)

    def to_dict(self) -> dict:
        out = {"design": self.design.describe(), "machine": self.machine.describe(), "level": self.level,
               "method": method_text(self.design), "sources": SOURCES, "conventions": self.conventions,
               "estimates": [r.to_dict(estimate_json) for r in self.rows]}
        if self.differences:
            out["differences"] = [r.to_dict(estimate_json) for r in self.differences]
        return out


def method_text(design: Design) -> str:
    unit = ("pairs drawn by stratified simple random sampling (the pool file's strata), measure linear in "
            "the labels" if design.unit == "pair" and design.variance == "srs" else
            "pairs drawn independently with the given inclusion probabilities" if design.unit == "pair" else
            "queries drawn by simple random sampling, every population pair of a drawn query judged")
    return (f"design-based prediction-powered inference over the sample's population ({unit}): the machine's "
            "labels for every population pair, corrected by the people's labels on the sample weighted by "
            "1/inclusion probability; human = the sample alone (Horvitz-Thompson); ppi = lambda 1; "
            "ppi++ = lambda tuned; valid whatever the machine's bias; unjudged pairs outside the population "
            "count as not relevant (pair units: the upper end is widened by the most they could add); t intervals "
            "with Satterthwaite degrees of freedom, the variance floored at the whole sample's rate of human-machine "
            f"differences when fewer than {MIN_SURPRISES} were drawn"
            + ("; and, when fewer than {0} drawn queries score off the typical (median) value (the ceiling: every "
               "drawn query at P@10 = 1), at queries off it at Jeffreys' rate (r + 1/2)/(n + 1), each by the "
               "measure's range (Brown, Cai & DasGupta 2001); estimates and ends clipped to the measure's range"
               .format(MIN_SURPRISES) if design.unit == "query" else
               "; estimates and ends clipped to the measure's range"))


def ppi_report(qrels, runs, machine, design, measures=("P@10", "DCG@10"), *, level: float = 0.95,
               baseline: str | None = None, settings: Settings | None = None) -> PPIReport:
    """Prediction-powered estimates of every run's ``measures`` with the sample's
    population labelled by people: human-only, PPI and PPI++ side by side, with the
    judged score (holes as not relevant) and the machine-filled plug-in; with ``baseline``
    also every run's difference from it."""
    settings = Settings() if settings is None else settings
    parsed = {str(m): Measure.parse(m) for m in measures}
    scored = Scorer(qrels, parsed, settings).runs(runs, ALIGNMENT)
    machine = read_machine(machine, on_duplicate=settings.on_duplicate)
    design = design if isinstance(design, Design) else Design.from_pool(design)
    labels = Labels(scored.qrels, machine, design)
    judged = {(name, g): float(v.mean()) if len(v) else 0.0 for name, rr in scored.runs.items()
              for g, v in rr.values.items()}
    rows, per = [], {}
    for name, rr in scored.runs.items():
        for given, m in parsed.items():
            u = units(labels, rr.aligned.run, m, settings)
            per[(name, given)] = u
            rows.append(_row(name, given, judged[(name, given)], u, level))
    diffs = None
    if baseline is not None:
        diffs = [_row(f"{name} - {baseline}", given, judged[(name, given)] - judged[(baseline, given)],
                      per[(name, given)].minus(per[(baseline, given)]), level)
                 for name in scored.runs if name != baseline for given in parsed]
    conventions = {g: m.convention(settings) for g, m in parsed.items()}
    return PPIReport(design, machine, level, rows, conventions, diffs)


def _row(name, given, judged, u: Units, level) -> EstimateRow:
    ests = {e: u.estimate(e, level) for e in ESTIMATORS}
    for e in ests.values():  # exact room left by the holes outside the population (pair units)
        if u.uncovered_max > 0:
            e.high = e.high + u.uncovered_max
        if u.uncovered_min > 0:
            e.low = e.low - u.uncovered_min
        e.clipped(u.value_range).estimand = given
    used = u.coef != 0
    return EstimateRow(name, given, ests, {"judged": judged, "machine_filled": u.machine_filled},
                       {"units": int(used.sum()), "sampled": int(u.sampled[used].sum()), "uncovered_holes": u.uncovered,
                        "uncovered_max": u.uncovered_max if np.isfinite(u.uncovered_max) else None,
                        "missing_machine_labels": u.missing_machine})


def heavy_tail_note(measure: str, design: Design) -> str:
    """The warning every query-sample estimate of an AP-like measure carries: its PPI and
    PPI++ intervals can cover far less than their level, and no sample can show it."""
    d = design.describe()
    return (f"warning: {measure} from {d.get('sampled_queries')} of {counted(d.get('population_queries'), 'query')}: "
            "the PPI and PPI++ intervals may cover well below their level. A query with few relevant documents "
            "whose count the machine gets wrong moves its value by up to 1 (the measure divides by that count), "
            "and when the sample misses such a query nothing in it shows one exists: on TREC DL 2019 (43 "
            "queries, one such query holding 70% of the spread) they covered 81-93% from 10-30 queries, the "
            "human-only interval 92-94%; read the human-only interval (docs/machine-labels.md)")


def supported_measures(design: Design, measures, k: int = 10) -> tuple[list, list]:
    """(the measures the design can estimate, notes): a pair design estimates only the
    linear ones (DCG, P); when none of ``measures`` is, it falls back to P@k and DCG@k."""
    parsed = [Measure.parse(m) for m in measures]
    if design.unit == "query":
        chosen = [m for m in parsed if m.unjudged == "zero"]
        notes = [heavy_tail_note(str(m), design) for m in chosen if m.family.heavy_tail]
        return [str(m) for m in chosen], notes
    linear = [str(m) for m in parsed if m.family.linear_in_labels and m.unjudged == "zero"]
    other = [str(m) for m in parsed if not m.family.linear_in_labels]
    notes = []
    if other:
        cut = next((m.cutoff for m in parsed if m.cutoff), k)
        if not linear:
            linear = [f"P@{cut}", f"DCG@{cut}"]
        notes.append(f"{', '.join(other)}: not linear in the labels, so a sample of pairs gives no unbiased "
                     f"prediction-powered estimate; shown: {', '.join(linear)} (for nDCG, AP and the others draw "
                     "queries: judged pool --strategy sample-queries)")
    return linear, notes
