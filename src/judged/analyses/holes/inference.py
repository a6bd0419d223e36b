"""Estimates by inference from a judged sample of the holes: what judging every pair of the
sampling design would show, with design-based intervals (docs/holes.md, "Judging a sample,
inferring the rest", states the method in full and checks it).

A sample drawn by ``judged pool --strategy sample`` (:mod:`judged.analyses.holes.sampling`) gives each hole
its stratum h, N_h and n_h. A ranked document is then judged outside the design (known),
drawn and judged (known, inclusion pi_h = n_h/N_h), not drawn (unknown, in stratum h) or
outside the pool (not relevant, as a depth pool's full judgment counts it).

The estimators and their replicates live in :mod:`judged.analyses.holes.sampled_estimators`, their
intervals in :mod:`judged.analyses.holes.sampled_intervals`; this module is the API.

* Estimators (:class:`Estimator`), per query, then averaged: ``statAP`` and ``statNDCG@k``,
  Horvitz-Thompson ratios (Aslam, Pavlu & Yilmaz, SIGIR 2006); ``xinfAP`` and ``infNDCG@k``
  (Yilmaz, Kanoulas & Aslam, SIGIR 2008; ``xinfAP`` is trec_eval's infAP for one uniform
  stratum per query).
* Intervals: the stratified jackknife with the finite-population correction and
  Satterthwaite's degrees of freedom (Wolter, *Introduction to Variance Estimation*, 2007,
  ch. 4), a stratum's variance floored where its sample drew nothing relevant
  (:meth:`Estimates.floor`); simultaneous over the runs of one estimator by the simulated
  max-|Z| critical value (Hothorn, Bretz & Westfall, Biometrical Journal 2008), Bonferroni
  where no correlation can be formed (:meth:`Estimates.simultaneous`).
* When to stop (:func:`judgments_to_decide`): the variance projected to a larger sample,
  v_h(n') = (1 - n'_h/N_h) S_h^2 / n'_h, and the fewest more judgments deciding the order
  with probability ``power`` (Cochran, *Sampling Techniques*, 1977, ch. 4-5).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from statistics import NormalDist

import numpy as np

from ...core.conventions import Settings
from ...core.errors import ConventionError
from ...core.measures import Measure
from ...core.data import Qrels
from .sampled_estimators import Estimator, default_estimators, estimate_states, population_from_sample, run_items
from .estimates import Estimate, EstimateRow, bias_aware_critical
from .sampled_intervals import INTERVAL_METHOD, SIMULTANEOUS_METHOD, Estimates, Simultaneous
from ...core.evaluation import ALIGNMENT, Scorer, evaluate
from ...core.querysets import of_scored
from ...core.io import read_qrels

INTERVALS = ("simultaneous", "marginal")
DEFAULT_INTERVALS = "simultaneous"  # a table of runs is read as a whole: the intervals hold for all at once


# ---------------------------------------------------------------------------
# When to stop judging


def projected_variance(v_h: np.ndarray, n: np.ndarray, N: np.ndarray, scale: float) -> tuple[float, float]:
    """(variance, extra judgments) when every stratum's sample grows by the factor
    1 + ``scale`` (capped at N_h): v_h(n') = (1 - n'/N) S_h^2 / n', S_h^2 = v_h n/(1 - n/N)."""
    n = n.astype(np.float64)
    N = N.astype(np.float64)
    ok = (n >= 2) & (n < N)
    n1 = np.where(ok, np.minimum(N, n * (1.0 + scale)), n)
    with np.errstate(invalid="ignore", divide="ignore"):
        S2 = np.where(ok, v_h * n / (1.0 - n / N), 0.0)
        v = np.where(ok, (1.0 - n1 / N) * S2 / n1, v_h)
    return float(v.sum()), float((n1 - n).sum())


def judgments_to_decide(difference: float, v_h: np.ndarray, n: np.ndarray, N: np.ndarray,
                        level: float = 0.95, power: float = 0.8, df: float = np.inf, bias: float = 0.0,
                        v_projected: np.ndarray | None = None) -> dict:
    """Whether the sign of ``difference`` is decided at ``level`` (its interval, widened
    for a bias up to ``bias``, :func:`bias_aware_critical`, excludes 0) and, if not, the
    extra sampled judgments m for which |difference| - bias(m) >= (z_level + z_power)
    sqrt(v(m)), bias(m) = bias n/(n + m) (a ratio's bias falls as 1/n) (docs/holes.md,
    *When to stop judging*); v(m) projected from ``v_projected`` (default ``v_h``: the
    corrected estimates' own jackknife and the floor overstate the variance of a larger
    sample, the plain estimate's jackknife projects it). ``more`` is None when judging
    every remaining pair of the design is needed (``remaining`` of them)."""
    n = np.asarray(n)
    N = np.asarray(N)
    za = NormalDist().inv_cdf(1 - (1 - level) / 2)
    zb = NormalDist().inv_cdf(power)
    var, _ = projected_variance(v_h, n, N, 0.0)
    remaining = int(np.maximum(N - n, 0).sum())
    se = float(np.sqrt(var))
    # the interval now (t, bias-aware); the projections are large-sample
    half = float(bias_aware_critical(bias / se, level, df) * se) if se > 0 else abs(bias)
    out = {"difference": float(difference), "se": se, "low": float(difference - half),
           "high": float(difference + half), "level": level, "power": power, "remaining": remaining}
    if abs(difference) > half:
        return {**out, "decided": True, "more": 0}
    drawn = float(n.sum())

    grow = v_h if v_projected is None else v_projected

    def enough(scale: float) -> bool:
        v, extra = projected_variance(grow, n, N, scale)
        return abs(difference) - abs(bias) * drawn / max(drawn + extra, 1.0) >= (za + zb) * np.sqrt(v)

    if difference == 0:
        return {**out, "decided": False, "more": None}
    ok = (n >= 2) & (n < N)
    top = float(np.max(np.where(ok, N / np.maximum(n, 1), 1.0))) - 1.0
    if top <= 0 or not enough(top):
        return {**out, "decided": False, "more": None}
    lo, hi = 0.0, top
    for _ in range(60):
        mid = (lo + hi) / 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    more = int(np.ceil(projected_variance(grow, n, N, hi)[1] - 1e-9))
    if more >= remaining:  # only judging everything left settles it
        return {**out, "decided": False, "more": None}
    return {**out, "decided": False, "more": max(more, 1)}


def decision_sentence(a: str, b: str, est: str, d: dict) -> str:
    pct = f"{d['level']:.0%}"
    head = f"{a} vs {b} ({est}): difference {d['difference']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]"
    if d["decided"]:
        return f"{head}: order decided at {pct}"
    if d["more"] is None:
        return (f"{head}: not decided at {pct}; the sample cannot settle it: judge the {d['remaining']} remaining "
                "pairs of the design")
    return (f"{head}: not decided at {pct}; about {d['more']} more sampled judgments (of {d['remaining']} left) "
            f"to decide it with {d['power']:.0%} probability if the difference is as estimated")


# ---------------------------------------------------------------------------
# The API: judged infer


@dataclass
class Inference:
    """Estimates from a judged sample, labelled as such: per run and estimator the
    estimate, its standard error and interval; per pair of runs the difference and
    whether the sample decides their order."""

    estimates: Estimates
    level: float
    power: float
    sample: dict
    notes: list
    conventions: dict
    qrels: object = None
    query_set: object = None  # judged.core.querysets.QuerySet when the runs were read here (judged infer)
    intervals: str = DEFAULT_INTERVALS  # "simultaneous" or "marginal": the intervals shown
    _joint: dict = field(default_factory=dict, repr=False)

    @property
    def warnings(self) -> list:
        return self.query_set.warnings() if self.query_set is not None else []

    def simultaneous(self, estimator) -> Simultaneous:
        """The runs' simultaneous intervals for ``estimator`` (:meth:`Estimates.simultaneous`)."""
        key = str(estimator)
        if key not in self._joint:
            self._joint[key] = self.estimates.simultaneous(key, self.level)
        return self._joint[key]

    def rows(self) -> list:
        """Per run an :class:`~judged.analyses.holes.estimates.EstimateRow`: each estimator's
        :class:`~judged.analyses.holes.estimates.Estimate` with the interval the output shows
        (``intervals``: simultaneous, every run at once, or marginal, each run alone) and in
        ``details`` the degrees of freedom, the queries and the ``marginal`` interval."""
        E, rows = self.estimates, {}
        for e in E.estimators:
            joint = self.simultaneous(e) if self.intervals == "simultaneous" else None
            for j, r in enumerate(E.runs):
                est, se, lo, hi, df = (float(x[0]) for x in E.interval(e, r, self.level))
                low, high = (float(joint.low[0, j]), float(joint.high[0, j])) if joint is not None else (lo, hi)
                rows.setdefault(r, EstimateRow(r, str(e.measure), {})).estimates[str(e)] = Estimate(
                    est, low, high, se, str(e), e.method, "t, simultaneous" if joint is not None else "t",
                    self.level, str(e.measure),
                    details={"df": df if np.isfinite(df) else None, "queries": len(E.qids[r]), "marginal": (lo, hi)})
        return list(rows.values())

    def table(self) -> dict:
        """{estimator: {run: {estimate, se, low, high, df, queries}}}: ``low``/``high`` the
        marginal interval (each run alone at ``level``); with ``intervals="simultaneous"``
        also ``simultaneous_low``/``simultaneous_high`` (every run at once at ``level``)."""
        out = {}
        for row in self.rows():
            for name, e in row.estimates.items():
                lo, hi = e.details["marginal"]
                joint = ({"simultaneous_low": e.low, "simultaneous_high": e.high}
                         if self.intervals == "simultaneous" else {})
                out.setdefault(name, {})[row.run] = {"estimate": e.value, "se": e.se, "low": lo, "high": hi,
                                                     "df": e.details["df"], "queries": e.details["queries"], **joint}
        return out

    def interval_summary(self) -> dict:
        """For the header: which intervals are shown and, when simultaneous, per estimator
        the method (max-t, or bonferroni as the fallback), the normal critical value c,
        the marginal one it replaces and how many runs form the family."""
        out = {"intervals": self.intervals}
        if self.intervals != "simultaneous":
            return out
        z = NormalDist().inv_cdf(1 - (1 - self.level) / 2)
        out["simultaneous_method"] = SIMULTANEOUS_METHOD
        out["simultaneous"] = {str(e): {"method": j.method[0], "critical_value": float(j.critical[0]),
                                        "marginal_critical_value": z, "family": int(j.family[0]),
                                        "runs": len(j.runs)}
                               for e in self.estimates.estimators for j in [self.simultaneous(e)]}
        return out

    def interval_sentence(self) -> str:
        """One line naming the intervals shown."""
        pct = f"{self.level:.0%}"
        if self.intervals != "simultaneous":
            return f"{pct} intervals, each run's alone (marginal)"
        parts = []
        for e in self.estimates.estimators:
            j = self.simultaneous(e)
            how = {"max-t": f"max-|t| critical value {j.critical[0]:.2f} for {j.family[0]} correlated runs",
                   "bonferroni": f"Bonferroni's {j.critical[0]:.2f} for {j.family[0]} runs (fallback: the "
                                 "correlation could not be estimated)",
                   "exact": "nothing random"}[j.method[0]]
            parts.append(f"{e}: {how}")
        return f"{pct} simultaneous intervals: every run inside at once with {pct} confidence ({'; '.join(parts)})"

    def decide(self, estimator, a: str, b: str) -> dict:
        """Is the order of ``a`` and ``b`` decided (:func:`judgments_to_decide`)?"""
        E = self.estimates
        d, vh = E.difference(estimator, a, b)
        df = E.df(vh)[0]
        dec = judgments_to_decide(float(d[0]), vh[0], E.n[0], E.N, self.level, self.power, df,
                                  float(E.difference_bias(estimator, a, b)[0]),
                                  E.difference(estimator, a, b, plain=True, floor=False)[1][0])
        return {"a": a, "b": b, "estimator": str(estimator), **dec,
                "sentence": decision_sentence(a, b, str(estimator), dec)}

    def pairs(self) -> list:
        E = self.estimates
        return [self.decide(e, a, b) for e in E.estimators for i, a in enumerate(E.runs) for b in E.runs[i + 1:]]

    def per_query(self):
        """DataFrame run, qid, estimator, estimate (per query, before the bias correction)."""
        import pandas as pd

        E = self.estimates
        frames = [pd.DataFrame({"run": r, "qid": E.qids[r], "estimator": str(e), "estimate": E.per_query[str(e)][r][0]})
                  for e in E.estimators for r in E.runs]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def header(self) -> dict:
        return {"kind": "estimate", "qrels": {"path": getattr(self.qrels, "source", None),
                                              "sha256": getattr(self.qrels, "sha256", None)},
                "sample": self.sample, "level": self.level, "power": self.power,
                "methods": {str(e): e.method for e in self.estimates.estimators},
                "interval": INTERVAL_METHOD, **self.interval_summary(), "stop_rule": STOP_RULE,
                "conventions": self.conventions, "notes": self.notes}

    def to_dict(self) -> dict:
        return {**self.header(), "estimates": self.table(),
                "pairs": [{k: v for k, v in p.items() if k != "sentence"} for p in self.pairs()],
                **({"query_set": self.query_set.to_dict()} if self.query_set is not None else {}),
                "warnings": self.warnings}


STOP_RULE = ("decided: the level's interval of the difference (widened for its bias bound) excludes 0; else the "
             "fewest more sampled judgments (every stratum's sample grown in proportion, the plain estimate's "
             "variance projected per stratum as (1 - n/N) S^2/n, Cochran 1977 ch. 5, the bias bound as 1/n) after "
             "which |difference| - bias >= (z_level + z_power) se: the order is then decided with probability "
             "power if the difference is as estimated")


def infer(qrels, runs, sample, estimators=None, *, k: int = 10, level: float = 0.95, power: float = 0.8,
          intervals: str = DEFAULT_INTERVALS, settings: Settings | None = None) -> Inference:
    """Estimate what judging every pair of ``sample``'s design would give, from ``qrels``
    holding the judged sample (merged as usual). ``sample``: a pool file written by
    ``judged pool --strategy sample`` (or a :class:`~judged.analyses.pooling.poolfile.PoolFile`).
    ``estimators``: strings like ``statNDCG@10``, ``statAP``, ``infNDCG@10``, ``xinfAP``
    (default statNDCG@k and statAP). Never changes what :func:`judged.evaluate` reports.
    Runs are scored over every qrels query (``complete=True``, the query-set rule of every
    command comparing runs, :mod:`judged.core.querysets`); a run sharing no query id with the
    qrels is refused."""
    settings = Settings(complete=True) if settings is None else settings
    scored = Scorer(qrels, {}, settings).runs(runs, ALIGNMENT)
    qrels, aligned = scored.qrels, scored.alignments()
    ests = estimators or default_estimators(k)
    query_set = of_scored(scored, measures=[Estimator.parse(e).measure for e in ests])
    out = infer_aligned(qrels, aligned, sample, ests, level=level, power=power, settings=settings,
                        intervals=intervals)
    out.query_set = query_set
    return out


def infer_aligned(qrels, aligned: dict, sample, estimators, *, level: float = 0.95, power: float = 0.8,
                  settings=None, intervals: str = DEFAULT_INTERVALS) -> Inference:
    """:func:`infer` for runs already aligned with ``qrels`` (name -> Aligned)."""
    from ..pooling.poolfile import PoolFile, read_pool_file

    if not 0 < level < 1:
        raise ConventionError(f"--level must be between 0 and 1, got {level}")
    if not 0 < power < 1:
        raise ConventionError(f"--power must be between 0 and 1, got {power}")
    if intervals not in INTERVALS:
        raise ConventionError(f"--intervals must be one of {', '.join(INTERVALS)}, got {intervals!r}")
    pf = sample if isinstance(sample, PoolFile) else read_pool_file(sample)
    if pf.design is None:
        raise ConventionError(f"{pf.path}: not a sample (no '# stratum' lines): draw one with "
                              "judged pool --strategy sample --budget N")
    if str(pf.meta.get("strategy", "")).startswith("sample-queries"):
        raise ConventionError(f"{pf.path}: a sample of whole queries; these estimators take pairs drawn one by "
                              "one (judged pool --strategy sample). Estimate from it with a machine judge's labels "
                              "(--machine LABELS: prediction-powered, queries as units)")
    ests = [Estimator.parse(e) for e in estimators]
    settings = settings or Settings()
    pop = population_from_sample(qrels, pf.design)
    lists = {name: run_items(pop, a) for name, a in aligned.items()}
    E = estimate_states(pop, lists, ests)
    n = E.n[0]
    sample_info = {"path": pf.path, "sha256": pf.sha256, "seed": pf.meta.get("seed"), "depth": pf.meta.get("depth"),
                   "runs": pf.runs, "strata": len(pop.N), "population": int(pop.N.sum()),
                   "drawn": int(sum(s.sampled for s in pf.design.strata.values())), "judged": int(n.sum())}
    notes = list(pop.notes)
    pooled = set(pf.runs)
    outside = [r for r in lists if pooled and r not in pooled]
    if outside:
        notes.append(f"runs not in the sample's pool ({', '.join(outside)}): their unjudged documents outside the "
                     "design count as not relevant")
    conventions = {str(e): f"{e} estimates {e.measure.convention(settings)} with every pair of the design judged"
                   for e in ests}
    return Inference(E, level, power, sample_info, notes, conventions, qrels, intervals=intervals)


def estimator_for(measure) -> "Estimator | None":
    """The sampled estimator of a measure: statNDCG for nDCG@k (ideal=judged), statAP for
    AP (its rel= and cutoff kept); None for the others."""
    m = replace(Measure.parse(measure), unjudged="zero", maxgrade=None)
    if m.family.sampled is None or m.family.normaliser == "ideal-gains" and (m.cutoff is None or m.ideal != "judged"):
        return None  # the estimate of the ideal's gains needs its length and the judgments' grades
    return Estimator(m.family.sampled, m)


@dataclass
class SampleDecisions:
    """For ``judged holes`` and ``judged compare``: the sampled estimates of their
    measures and, per pair of runs, whether the sample decides the order."""

    inference: Inference
    measures: dict  # measure as given -> estimator string, or None (no estimator)
    decisions: list  # dicts: measure, a, b, estimator, decided, more, difference, low, high, ...

    def decision(self, measure: str, a: str, b: str) -> "dict | None":
        for d in self.decisions:
            if d["measure"] == measure and d["a"] == a and d["b"] == b:
                return d
        return None

    def to_dict(self) -> dict:
        return {**self.inference.header(), "measures": dict(self.measures), "estimates": self.inference.table(),
                "decisions": [{k: v for k, v in d.items() if k != "sentence"} for d in self.decisions]}


def sample_decisions(qrels, aligned: dict, sample, measures, pairs, *, level: float = 0.95,
                     power: float = 0.8, settings=None, intervals: str = DEFAULT_INTERVALS) -> SampleDecisions:
    """``measures`` (as given) mapped to their estimators (:func:`estimator_for`) and for
    each (a, b) of ``pairs`` and each estimated measure, the decision on their order."""
    mapping = {str(m): estimator_for(m) for m in measures}
    ests = list(dict.fromkeys(str(e) for e in mapping.values() if e is not None))
    if not ests:
        raise ConventionError(f"no sampled estimator for {', '.join(map(str, measures))}: --sample estimates nDCG@k "
                              "and AP")
    inf = infer_aligned(qrels, aligned, sample, ests, level=level, power=power, settings=settings,
                        intervals=intervals)
    decisions = []
    for given, e in mapping.items():
        if e is None:
            continue
        for a, b in pairs:
            decisions.append({"measure": given, **inf.decide(e, a, b)})
    return SampleDecisions(inf, {g: (str(e) if e else None) for g, e in mapping.items()}, decisions)


# ---------------------------------------------------------------------------
# Repeated samples: the estimators' sampling distribution on a collection with known truth


def repeated_samples(base_qrels, full_qrels, runs, depth: int, budget: int, seeds, estimators=None, *,
                     k: int = 10, strata=None, estimate=None, grow: float = 0.0,
                     settings: Settings | None = None):
    """Draw ``judged pool --strategy sample`` samples of the holes of ``base_qrels`` (one
    per seed), "judge" them with ``full_qrels`` (a hole it does not judge is not
    relevant), and estimate with every sample at once. Returns (:class:`Estimates` with
    one state per seed, truth: {estimator: {run: mean with every pair of the design
    judged}}, the design). The truth equals the score on ``full_qrels`` when every
    judgment missing from ``base_qrels`` is a hole in the runs' top ``depth``. The pool
    is drawn from every run; ``estimate`` (run names) limits the runs estimated. ``grow``:
    every stratum's sample is ``1 + grow`` times the design's (rounded, capped at N_h), the
    same strata: the larger sample :func:`judgments_to_decide` projects to."""
    from ..pooling.strategies import candidates
    from .sampling import DesignUnit, SampleDesign, allocate, draw_many

    ests = [Estimator.parse(e) for e in (estimators or default_estimators(k))]
    base, full = read_qrels(base_qrels), read_qrels(full_qrels)
    settings = Settings() if settings is None else settings
    aligned = Scorer(base, {}, settings).runs(runs, ALIGNMENT).alignments()
    seeds = list(seeds)
    cands, strata, members = allocate(candidates(aligned, depth), budget, seeds[0], depth, strata)
    units = [DesignUnit(cands[i].qid, cands[i].docid, cands[i].best_rank, list(cands[i].runs), sid, True)
             for sid, idx in zip(strata, members) for i in idx.tolist()]
    units.sort(key=lambda u: (u.stratum, u.qid, u.docid))
    d0 = SampleDesign(strata, units, seeds[0])
    truth_grade = dict(zip(zip(full.qid.to_pylist(), full.docid.to_pylist()), full.grade.tolist()))
    labelled = {(u.qid, u.docid): max(int(truth_grade.get((u.qid, u.docid), 0)), 0) for u in units}
    bq, bd, bg = base.qid.to_pylist(), base.docid.to_pylist(), base.grade.tolist()
    keys = list(labelled)
    merged = Qrels(bq + [q for q, _ in keys], bd + [d for _, d in keys],
                   np.array(bg + [labelled[x] for x in keys], np.int64), source="design-complete")
    pop = population_from_sample(merged, d0)  # every unit labelled with its truth, known per state below
    pop.notes = []
    position = {}
    for u, (q, item) in enumerate(zip(pop.unit_query, pop.unit_item.tolist())):
        position[(q, item)] = u
    unit_of_cand = np.array([position[(p.qid, pop.queries[p.qid].index[p.docid])] for p in cands], np.int64)
    known = np.zeros((len(seeds), len(pop.unit_query)), bool)
    sizes = [min(st.population, int(round(st.sampled * (1.0 + grow)))) for st in strata.values()]
    for s, chosen in enumerate(draw_many(members, sizes, seeds)):
        known[s, unit_of_cand[chosen]] = True
    pop.known = known
    wanted = [name for name in aligned if estimate is None or name in estimate]
    lists = {name: run_items(pop, aligned[name]) for name in wanted}
    E = estimate_states(pop, lists, ests)
    means = evaluate(merged, {name: aligned[name].run for name in wanted}, [str(e.measure) for e in ests],
                     settings=settings).mean()
    truth = {str(e): {name: float(means.loc[name, str(e.measure)]) for name in lists} for e in ests}
    return E, truth, d0
