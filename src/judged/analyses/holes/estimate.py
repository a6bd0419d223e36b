"""The hole estimate: what judging the holes will probably show, learnt from the
collection's own leave-one-run-out evidence, with a calibrated interval. An estimate,
never a bound: the exact bounds stay in :mod:`judged.analyses.holes.unjudged`. docs/holes.md ("Estimating
what judging will show") states the method in full and measures it.

A run's (or group's: a *unit*'s) **pseudo-holes** are the judged documents it alone
contributed to a depth-D pool of the given runs: remove it and they would be holes
(Zobel, SIGIR 1998; Buttcher et al., SIGIR 2007). Method ``loro-logit``:

1. **Model**: each pseudo-hole's grade from :data:`FEATURES`, read without its own unit's
   judgments, by a continuation-ratio logistic regression (Agresti, *Categorical Data
   Analysis*, 8.3.5): one ridge-penalised logistic regression per grade level, Newton's
   method on standardised features. A hole's features are clipped to the pseudo-holes'
   range (the model is not extrapolated: :mod:`judged.analyses.holes.grade_model`).
2. **Point estimate**: the median over seeded draws of the holes' grades (ideal and R
   recomputed per draw) of the mean over queries; holes below the hole depth count 0.
3. **Interval**: split-conformal with a per-run scale (Vovk et al. 2005; Lei et al., JASA
   2018) over the other units' leave-one-out residuals (one Newton step, Rad & Maleki,
   JRSS-B 2020; units of several runs weigh as one, Dunn, Wasserman & Ramdas, JASA 2022),
   clipped to the exact bounds, with its coverage on the collection itself.
4. **What it predicts**, with several runs: judging each run's own holes, their pool, or the
   midpoint, chosen by holding out units that contributed judgments and judging them together
   (:mod:`judged.analyses.holes.over_choice`).

**Fallback** (stated as such): the score with holes as not relevant (trec_eval's reading)
and the exact bounds as the interval, with fewer than two units or fewer than
:data:`MIN_PSEUDO_HOLES` judged pseudo-holes, and when the estimate fails its own check:
its leave-one-unit-out MAE on the collection (step 3's residuals) exceeds that of holes as
not relevant over the same held-out units (validation on the collection itself, as for any
model chosen by held-out error: Stone, JRSS-B 1974).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ...core.errors import ConventionError
from ...core.measures import Measure
from ...core.measures.bounds import bounds as exact_bounds
from ...core.measures.bounds import sorted_distinct
from ...core.words import counted
from .collection import (FEATURES, HolePool, World, features, judged_relevant_share, make_world, pseudo_holes,
                         world_aligned)
from .drawn_scores import Case, CaseScore, fill_depth, holes_read_as_zero, pool_hole_rows, score_cases
from .estimates import Estimate
from .grade_model import GradeDesign, HoleModel
from .over_choice import AUTO, OverChoice, choose_over, describe_choice

METHOD = "loro-logit"
SOURCE = ("continuation-ratio logistic model of hole grades fitted on leave-one-run-out pseudo-holes "
          "(Zobel, SIGIR 1998; Buttcher et al., SIGIR 2007), holes read inside their feature range, "
          "with a split-conformal interval "
          "(Vovk et al. 2005; Lei et al., JASA 2018)")
FALLBACK = "holes-as-zero"
DEFAULT_LEVEL = 0.9
CALIBRATION_DRAWS = 64  # draws per leave-one-out residual (the target runs take ``samples``)
MIN_PSEUDO_HOLES = 20
# the estimate over the pool and over the run's own holes, averaged: measured on three collections
# (docs/holes.md, "New systems on an old pool"), the first is biased low (the grade model, fitted on
# pseudo-holes, overpredicts the relevance of documents no pooled run retrieved, which raise the
# ideal) and the second high (the ideal misses the other runs' relevant holes)
MIDPOINT = "midpoint"
SHARE_TOLERANCE = 1e-9  # a target's judged relevant share this far outside the calibration runs' is outside
FAILED_CHECK = "the estimate erred more than holes counted as not relevant"  # in the fallback's reason


# ---------------------------------------------------------------------------
# The estimate with its interval


@dataclass
class HoleEstimates:
    """The estimates of a set of runs and how they were made (:meth:`describe`)."""

    method: str  # METHOD or FALLBACK
    measure: Measure
    level: float
    runs: dict  # run index -> Estimate (interval 'conformal', 'bounds' or 'exact'; details: the holes drawn)
    info: dict  # fit, calibration, coverage, fallback reason
    model: HoleModel | None = None

    def __post_init__(self):
        for e in self.runs.values():  # what each run's estimate is, and how it was made
            e.method, e.level, e.estimand = self.method, self.level, str(self.measure)

    def describe(self) -> dict:
        """The method, its source, what it was fitted on, the interval's nominal level and
        its measured coverage (the JSON ``estimate`` object)."""
        source = (SOURCE if self.method == METHOD else self.info["prior"]["source"] if "prior" in self.info else
                  f"holes counted as not relevant (trec_eval); interval = the {self.bounds} bounds")
        return {"method": self.method, "source": source,
                "level": self.level, **self.info,
                "model": self.model.to_dict() if self.model is not None else None}

    @property
    def bounds(self) -> str:
        """What the interval falls back to: the measure's 'exact' or 'conservative' bounds."""
        return self.measure.family.bounds

    def sentence(self) -> str:
        """One line: the method, what it was fitted on, the interval and its coverage."""
        i = self.info
        if self.method == FALLBACK:
            return (f"estimate: fallback ({FALLBACK}: holes counted as not relevant; interval = the {self.bounds} "
                    f"bounds): {i['fallback']}")
        fit = i["fit"]
        refs = f", {fit['reference_runs']} of them reference runs" if fit.get("reference_runs") else ""
        mid = ("; the midpoint of its estimates over the pool of the runs given and over each run's own holes, "
               "the interval holding both") if fit.get("over") == MIDPOINT and not fit.get("over_choice") else ""
        if "prior" in i:
            text = f"estimate: {self.method}, {i['prior']['source']}{mid}" + self._read_relevant()
            if i.get("uncalibrated"):
                if fit.get("over_choice"):
                    text += "; " + describe_choice(fit["over_choice"])
                return text + f"; interval = the {self.bounds} bounds, not an estimate interval: {i['uncalibrated']}"
        else:
            text = (f"estimate: {METHOD}, a grade model of holes fitted on {fit['pseudo_holes']} leave-one-run-out "
                    f"pseudo-holes from {fit['units_with_pseudo_holes']} of {fit['units']} {fit['unit']}s{refs} "
                    f"({fit['relevant_share']:.1%} relevant; pool depth {fit['depth']})")
            if fit.get("same_top_k"):
                text += (f"; runs with the same top {fit['k']} counted as one run: "
                         + ", ".join(" = ".join(m) for m in fit["same_top_k"]))
            text += mid + self._read_relevant()
        if fit.get("over_choice"):
            text += "; " + describe_choice(fit["over_choice"])
        cal = i["calibration"]
        if cal["coverage"] is None:
            text += (f"; interval = the {self.bounds} bounds, not an estimate interval ({cal['units']} {fit['unit']}s "
                     f"with leave-one-out residuals, a {self.level:.0%} conformal interval needs {cal['units_needed']})")
        else:
            text += (f"; {self.level:.0%} conformal interval, measured coverage {cal['coverage']:.1%} "
                     f"({cal['covered']}/{cal['runs']} runs, leave-one-{fit['unit']}-out on this collection)")
            if cal.get("unlike"):
                a, b = cal["relevant_share"]
                where = ("for every run: each run's ideal holds their holes" if cal.get("unlike_in_ideal")
                         else "there")
                text += (f"; {counted(len(cal['unlike']), 'run')} unlike the calibration runs (relevant share of the "
                         f"judged top {fit['k']} outside their {a:.0%}-{b:.0%}): interval = the bounds {where}, not "
                         f"an estimate interval")
        lo = i.get("loro")  # the check's evidence, with or without an interval to calibrate
        if lo and lo["mae_zero"] is not None:
            text += (f"; leave-one-{fit['unit']}-out MAE {lo['mae_estimate']:.4f} (holes as zero "
                     f"{lo['mae_zero']:.4f})")
        return text + self._chosen()

    def _read_relevant(self) -> str:
        """What the estimate assumes of the holes: the share of those it fills that its grade
        source reads as relevant (expected), to set beside the pseudo-holes' share."""
        holes = sum(e.details.get("holes", 0) for e in self.runs.values())
        if not holes:
            return ""
        read = sum(e.details.get("relevant_holes", 0.0) for e in self.runs.values())
        depth = self.info.get("fit", {}).get("holes_estimated_to_rank")
        where = f", in the top {depth}," if depth else ""
        return f"; it reads {read / holes:.1%} of the {counted(holes, 'hole')} it fills{where} as relevant"

    def _chosen(self) -> str:
        """With ``--estimate auto``: which method was chosen, and the others' figures."""
        c = self.info.get("chosen_by")
        if not c:
            return ""
        figs = ", ".join(f"{n} {f['mae']:.4f}" if "not chosen" not in f else f"{n} not: {f['not chosen']}"
                         for n, f in c["methods"].items())
        return f"; chosen (--estimate auto) by the lowest leave-one-out MAE: {figs}"


@dataclass
class Auto:
    """Method ``auto``: each candidate grade source estimates (with its check), and the one
    whose leave-one-unit-out MAE on the collection is lowest is given -- model selection by
    held-out error (Stone, JRSS-B 1974). Candidates that fell back, or estimated with no
    leave-one-out residuals to validate them, are not chosen; with none left, the fallback."""

    candidates: tuple  # (method name, grade source: None for the grade model)
    method = "auto"


@dataclass
class _Checked:
    """An estimate that passed its check, its targets not yet drawn: its ``info`` (fit,
    calibration, leave-one-out figures) and ``finish()``, which draws them."""

    info: dict
    finish: Callable[[], HoleEstimates]
    method = None


def _choose(measure, pool, world, auto: Auto, kw: dict) -> HoleEstimates:
    """:class:`Auto`'s choice among its candidates' estimates (their figures in
    ``info['chosen_by']``); of those that passed their check, only the chosen one's targets
    are drawn."""
    tried = [(name, estimate_runs(measure, pool, world, source=src, defer=True, **kw)) for name, src in auto.candidates]
    figures, valid = {}, []
    for name, e in tried:
        lo = e.info.get("loro") or {}
        if e.method == FALLBACK:
            figures[name] = {"mae": lo.get("mae_estimate"), "not chosen": e.info["fallback"]}
        elif lo.get("mae_estimate") is None or lo.get("mae_zero") is None:
            figures[name] = {"mae": None, "not chosen": "no leave-one-out residuals to validate it on"}
        else:
            figures[name] = {"mae": lo["mae_estimate"]}
            valid.append((lo["mae_estimate"], len(valid), name, e))
    zero = next((e.info["loro"]["mae_zero"] for _, e in tried if (e.info.get("loro") or {}).get("mae_zero") is not None),
                None)
    chosen_by = {"rule": "the lowest leave-one-out MAE among the methods that passed their check", "methods": figures,
                 "mae_zero": zero}
    if valid:
        _, _, name, e = min(valid)
        e = e.finish()
        e.info["chosen_by"] = {**chosen_by, "chosen": name}
        return e
    e = next((e for _, e in tried if e.method == FALLBACK), tried[0][1])
    e.info["chosen_by"] = {**chosen_by, "chosen": None}
    if e.method != FALLBACK:  # estimated, but nothing validated it: say so and give the fallback
        targets = list(range(pool.n_runs)) if kw.get("targets") is None else list(kw["targets"])
        zero_scores = score_cases(measure, pool, world, [Case(i) for i in targets], kw.get("seed", 0), kw.get("maxgrade"))
        info = {**e.info, "fallback": "no method had leave-one-out residuals to validate it on"}
        info.pop("prior", None)
        return _fallback(measure, pool, world, targets, zero_scores, kw.get("bounds"), kw.get("maxgrade"),
                         kw.get("level", DEFAULT_LEVEL), info)
    e.info["fallback"] = "no method passed its leave-one-out check: " + "; ".join(
        f"{n}: {f['not chosen']}" for n, f in figures.items())
    return e


def conformal_quantile(scores, level: float, groups=None) -> float:
    """The split-conformal quantile (Lei et al., JASA 2018): the ceil((n+1) level)-th
    smallest of n scores, inf when that exceeds n. With ``groups`` (runs held out
    together are exchangeable as groups, not as runs) each of the G groups weighs 1,
    shared by its scores, and the quantile is the smallest score whose cumulative weight
    reaches (G+1) level (the pooled-CDF method of Dunn, Wasserman & Ramdas, JASA 2022);
    with one score per group the two agree."""
    s = np.asarray(scores, np.float64)
    if groups is None:
        s = np.sort(s)
        k = int(math.ceil((len(s) + 1) * level - 1e-12))
        return float(s[k - 1]) if 1 <= k <= len(s) else math.inf
    groups = np.asarray(groups)
    labels, inverse, sizes = np.unique(groups, return_inverse=True, return_counts=True)
    weight = 1.0 / sizes[inverse.ravel()]
    order = np.argsort(s, kind="stable")
    need = (len(labels) + 1) * level - 1e-9
    reached = np.flatnonzero(np.cumsum(weight[order]) >= need)
    return float(s[order[reached[0]]]) if len(reached) else math.inf


def units_needed(level: float) -> int:
    """Fewest leave-one-out residuals giving a finite conformal quantile at ``level``."""
    n = 1
    while math.ceil((n + 1) * level - 1e-12) > n:
        n += 1
    return n


def estimate_runs(measure, pool: HolePool, world: World | None = None, *, targets=None, samples: int = 200,
                  seed: int = 0, level: float = DEFAULT_LEVEL, calibration_draws: int | None = None,
                  bounds: dict | None = None, maxgrade: int | None = None, report_loro: bool = True,
                  source=None, over: str = "pool", check: bool = True,
                  defer: bool = False) -> HoleEstimates | _Checked:
    """Estimate ``measure`` for the runs ``targets`` (indices, default all) of ``pool`` in
    ``world`` (default: the qrels as given), with intervals at ``level``.

    ``source``: where the holes' grades come from: None, the grade model fitted on the
    pseudo-holes (``loro-logit``); or a grade source with ``grade_probabilities`` and
    ``fit_without`` (:class:`judged.analyses.holes.priors.RunPrior`), which needs no
    pseudo-holes to estimate, only to calibrate its interval on the same residuals.
    ``over``: what the estimate predicts: ``'pool'`` (default) judging the targets' pool, each
    target's estimate drawing the other targets' holes into its ideal and R too
    (:func:`pool_hole_rows`); ``'run'`` judging each target's own holes; ``'midpoint'``
    (:data:`MIDPOINT`) the mean of the two; ``'auto'`` one of the three, chosen by holding out
    units and judging them together (:func:`~.over_choice.choose_over`; ``info['fit']['over_choice']``).

    ``bounds[i]`` = (mean min, mean max) of run i's exact bounds clips its interval and
    is the interval when it cannot be calibrated (computed when not given).
    ``report_loro``: also score the leave-one-out runs with holes as zero, for the MAE
    comparison :meth:`HoleEstimates.sentence` gives; with it and ``check`` (default), an
    estimate whose leave-one-out MAE exceeds holes-as-zero's is not given: the stated
    fallback, with that reason. ``defer``: an estimate that passed its check is returned as
    :class:`_Checked`, its targets not yet drawn (what ``auto`` compares)."""
    if isinstance(source, Auto):
        measure = holes_read_as_zero(Measure.parse(measure))
        world = make_world(pool) if world is None else world
        return _choose(measure, pool, world, source, dict(
            targets=targets, samples=samples, seed=seed, level=level, calibration_draws=calibration_draws,
            bounds=bounds, maxgrade=maxgrade, report_loro=True, over=over, check=check))
    measure = holes_read_as_zero(Measure.parse(measure))
    calibration_draws = CALIBRATION_DRAWS if calibration_draws is None else calibration_draws
    if not 0 < level < 1:
        raise ConventionError(f"the interval's level must be between 0 and 1, got {level}")
    if samples < 1:
        raise ConventionError(f"the estimate needs at least one sample, got samples={samples}")
    world = make_world(pool) if world is None else world
    targets = list(range(pool.n_runs)) if targets is None else list(targets)
    # learn from the ranks whose holes are estimated: below them, a pool deeper than the
    # judging was (--pool-depth 100 over depth-10 qrels) keeps only the deep documents some
    # other process chose to judge (DL 2019: 0.2% of the top-10 pseudo-holes relevant, 21% of all)
    rows = pseudo_holes(pool, world, fill_depth(measure, pool))
    y = world.row_level[rows]
    units_with = sorted_distinct(pool.unit[pool.run[rows]])
    merged = sum(len(m) - 1 for m in pool.same_lists)  # runs with one top k held out as one run
    unit_word = "run" if pool.n_units + merged == pool.n_runs else "group"
    fit = {"unit": unit_word, "units": pool.n_units, "units_with_pseudo_holes": int(len(units_with)),
           "pseudo_holes": int(len(rows)), "relevant_share": float((y >= 1).mean()) if len(y) else 0.0,
           "depth": pool.depth, "k": pool.k, "holes_estimated_to_rank": fill_depth(measure, pool),
           "features": list(FEATURES), "over": over, "same_top_k": [list(m) for m in pool.same_lists]}
    reason = None
    if len(units_with) < 2:
        reason = (f"{counted(len(units_with), unit_word)} contributed judged documents no other {unit_word} has in its "
                  f"top {pool.depth}; leave-one-{unit_word}-out needs at least 2")
    elif len(rows) < MIN_PSEUDO_HOLES:
        reason = (f"{len(rows)} leave-one-{unit_word}-out pseudo-holes (judged documents only one {unit_word} has "
                  f"in its top {pool.depth}); the model needs at least {MIN_PSEUDO_HOLES}")
    if reason is not None and source is not None:  # it estimates; its interval cannot be calibrated
        if over == AUTO:  # no pseudo-holes to hold out either
            fit["over"] = over = "run"
            fit["over_choice"] = OverChoice("run", reason).describe()
        return _uncalibrated(measure, pool, world, targets, source, samples, seed, level, bounds, maxgrade,
                             {"fit": fit, "fallback": None, "uncalibrated": reason}, over)
    if reason is not None:
        zero = score_cases(measure, pool, world, [Case(i) for i in targets], seed, maxgrade)
        return _fallback(measure, pool, world, targets, zero, bounds, maxgrade, level, {"fit": fit, "fallback": reason})

    if source is None:
        X = features(pool, world, rows, pool.unit[pool.run[rows]])
        owner_unit = pool.unit[pool.run[rows]]
        design = GradeDesign(X, y, pool.levels, owner_unit)
        model = design.fit()
    else:
        design = model = source
    # leave-one-unit-out residuals: each unit's runs with its pseudo-holes made holes,
    # estimated by a model fitted without it, against their score with them judged. Only
    # the removed judgments are drawn: holes the qrels never judged count 0 in both (drawing
    # them too made residuals of no error: three DL 2019 neural runs alone on a traditional
    # pool erred 0.21 left out against 0.04 for holes as zero, and the check set aside an
    # estimate whose error was 0.034 against 0.166)
    judged = world.row_level >= 0
    cases, meta = [], []
    for u in units_with.tolist():
        m_u = design.fit_without(u)
        for i in np.flatnonzero(pool.unit == u).tolist():
            cases += [Case(i, u, m_u, calibration_draws, drawn=judged), Case(i)] + ([Case(i, u)] if report_loro else [])
            meta.append((i, u))
    scored = score_cases(measure, pool, world, cases, seed, maxgrade)
    residuals = []
    per = 3 if report_loro else 2
    for j, (i, u) in enumerate(meta):
        est, truth, *zero = scored[per * j: per * j + per]
        residuals.append((i, u, _point(est) - truth.mean, est.sd, zero[0].mean - truth.mean if zero else math.nan,
                          est.holes))

    # the conformal scale: residual / the run's own standard deviation under the model
    res = np.array([r[2] for r in residuals])
    sds = np.array([r[3] for r in residuals])
    res_unit = np.array([r[1] for r in residuals], np.int64)
    informative = sds > 0
    ratio = np.abs(res[informative]) / sds[informative]
    ratio_unit = res_unit[informative]
    need = units_needed(level)

    def quantile_without(unit: int) -> float:
        others = ratio_unit != unit
        return conformal_quantile(ratio[others], level, ratio_unit[others])

    covered = [bool(r <= quantile_without(u)) for r, u in zip(ratio, ratio_unit)]
    cal_units = len(sorted_distinct(ratio_unit))
    finite = [math.isfinite(quantile_without(u)) for u in ratio_unit]
    calibration = {"units": int(cal_units), "units_needed": need, "runs": int(len(ratio)),
                   "covered": int(sum(c for c, f in zip(covered, finite) if f)),
                   "coverage": (float(np.mean(covered)) if len(ratio) and all(finite) else None),
                   "draws": calibration_draws,
                   "scale": "the run's standard deviation of the mean over queries under the model's draws"}
    loro = {"runs": len(residuals), "mae_estimate": float(np.mean(np.abs(res))) if len(res) else None,
            "mae_zero": float(np.mean(np.abs([r[4] for r in residuals]))) if residuals and report_loro else None,
            "bias_estimate": float(np.mean(res)) if len(res) else None}
    if check and loro["mae_zero"] is not None and loro["mae_estimate"] > loro["mae_zero"]:
        # the collection's own held-out units say the estimate errs more than the fallback: it does not apply
        reason = (f"leave-one-{unit_word}-out on these runs {FAILED_CHECK} "
                  f"(MAE {loro['mae_estimate']:.4f} against {loro['mae_zero']:.4f} over "
                  f"{counted(loro['runs'], 'run')}): it does not apply to them")
        info = {"fit": fit, "fallback": reason, "calibration": calibration, "loro": loro}
        if source is not None:
            info["prior"] = source.describe()
        zero = score_cases(measure, pool, world, [Case(i) for i in targets], seed, maxgrade)
        return _fallback(measure, pool, world, targets, zero, bounds, maxgrade, level, info)
    info = {"fit": fit, "fallback": None, "calibration": calibration, "loro": loro}

    # the targets, drawn once the check has passed (each case's draws are seeded by the case alone;
    # `auto` draws only its chosen method's)
    def finish() -> HoleEstimates:
        nonlocal over
        if over == AUTO:  # what it predicts, chosen by holding out units and judging them together
            choice = choose_over(measure, pool, world, targets, source, seed=seed, maxgrade=maxgrade,
                                 draws=calibration_draws, min_pseudo_holes=MIN_PSEUDO_HOLES)
            fit["over"] = over = choice.chosen
            fit["over_choice"] = choice.describe()
        target_cases = _target_cases(measure, pool, world, targets, model, samples, over) + [Case(i) for i in targets]
        target_scores = _midpoints(score_cases(measure, pool, world, target_cases, seed, maxgrade), len(targets), over)
        est_t, zero_t = target_scores[:len(targets)], target_scores[len(targets):]
        # exchangeability: a target whose judged top k is more (or less) often relevant than every
        # calibration run's is not like them, and their residuals do not calibrate its interval.
        # Every run is read as the calibration runs were when they gave their residuals: without
        # the judgments it alone contributed (a new run contributed none; a calibration run read
        # with its own was set apart from itself: robust03's 17 runs given together, 2 of them)
        share = judged_relevant_share(pool, world)
        held = judged_relevant_share(pool, world, without_own=True)
        cal_runs = sorted({r[0] for r, keep in zip(residuals, informative) if keep})
        span = _calibration_span(held[cal_runs])
        calibration["relevant_share"] = list(span)
        qv = {i: quantile_without(int(pool.unit[i])) for i in targets}
        unlike = [i for i, e in zip(targets, est_t) if (e.holes or e.ideal_holes) and math.isfinite(qv[i])
                  and not span[0] <= held[i] <= span[1]]
        # over the pool (and the midpoint's pool end) every run's ideal holds the other targets'
        # holes: with one target unlike the calibration runs, no run's interval is calibrated.
        # An unlike target without holes of its own puts none there (DL 2019's 37 runs: two of its
        # three unlike runs had none, and took every run's interval to the bounds)
        shared = over != "run" and len(targets) > 1 and any(e.holes for i, e in zip(targets, est_t) if i in unlike)
        if shared:
            calibration["unlike_in_ideal"] = True
        run_bounds = _bounds_for(measure, pool, world, targets, bounds, maxgrade)
        runs = {}
        for i, e, z in zip(targets, est_t, zero_t):
            lo, hi = run_bounds[i]
            if e.holes == 0 and e.ideal_holes == 0:  # exact unless the bounds range over others' holes too
                exact = hi - lo <= 1e-12
                runs[i] = _run_estimate(z.per_query, z.mean, 0.0, z.mean if exact else lo, z.mean if exact else hi,
                                      "exact" if exact else "bounds", 0)
                continue
            if math.isfinite(qv[i]) and not shared and i not in unlike:
                low, high, kind = max(lo, _point(e) - qv[i] * e.sd), min(hi, _point(e) + qv[i] * e.sd), "conformal"
            else:
                low, high, kind = lo, hi, "bounds"
            low, high = min(low, _point(e), *e.ends), max(high, _point(e), *e.ends)
            runs[i] = _run_estimate(e.per_query, _point(e), e.sd, low, high, kind, e.holes, e.relevant_holes)
            runs[i].details["relevant_share"] = float(share[i])
        calibration["unlike"] = [pool.names[i] for i in unlike]
        if source is not None:
            info["prior"] = source.describe()
            return HoleEstimates(source.method, measure, level, runs, info, None)
        return HoleEstimates(METHOD, measure, level, runs, info, model)

    return _Checked(info, finish) if defer else finish()


def _fallback(measure, pool, world, targets, zero, bounds, maxgrade, level, info) -> HoleEstimates:
    """The stated fallback (:data:`FALLBACK`): each target's score with holes as not relevant
    (``zero``, its scores in ``targets`` order), its exact bounds as the interval; ``info['fallback']``
    says why."""
    bounds = _bounds_for(measure, pool, world, targets, bounds, maxgrade)
    runs = {i: _run_estimate(z.per_query, z.mean, 0.0, *bounds[i], "bounds", 0) for i, z in zip(targets, zero)}
    return HoleEstimates(FALLBACK, measure, level, runs, info)


def _uncalibrated(measure, pool, world, targets, source, samples, seed, level, bounds, maxgrade, info, over):
    """The estimates of ``source`` with no leave-one-out residuals to calibrate an interval:
    the interval is the bounds (labelled so: 'bounds', not an estimate interval)."""
    cases = _target_cases(measure, pool, world, targets, source, samples, over) + [Case(i) for i in targets]
    scored = _midpoints(score_cases(measure, pool, world, cases, seed, maxgrade), len(targets), over)
    bounds = _bounds_for(measure, pool, world, targets, bounds, maxgrade)
    runs = {}
    for i, e, z in zip(targets, scored[:len(targets)], scored[len(targets):]):
        lo, hi = bounds[i]
        if e.holes == 0 and e.ideal_holes == 0:
            runs[i] = _run_estimate(z.per_query, z.mean, 0.0, z.mean, z.mean, "exact", 0)
        else:
            runs[i] = _run_estimate(e.per_query, _point(e), e.sd, min(lo, _point(e), *e.ends),
                                    max(hi, _point(e), *e.ends), "bounds", e.holes, e.relevant_holes)
    info["prior"] = source.describe()
    return HoleEstimates(source.method, measure, level, runs, info, None)


def _calibration_span(values: np.ndarray) -> tuple:
    """The range a target's judged relevant share may fall in and be read as like the n
    calibration runs': their [min, max] widened on each side by its mean spacing,
    (max - min) / (n - 1) (an exchangeable run falls beyond their range with probability
    2 / (n + 1); beyond one spacing, rarely); everything with fewer than 2 runs."""
    if len(values) < 2:
        return (-math.inf, math.inf)
    lo, hi = float(values.min()), float(values.max())
    gap = (hi - lo) / (len(values) - 1) + SHARE_TOLERANCE
    return (lo - gap, hi + gap)


def _run_estimate(per_query, mean, sd, low, high, interval, holes, relevant_holes: float = 0.0) -> Estimate:
    """A run's estimate: per-query values, their mean, the model's standard deviation of that
    mean (its ``se``), the interval and how it was made, the holes a draw filled and how many
    of them the grade source reads as relevant (expected: the sum of their P(grade > 0))."""
    return Estimate(mean, low, high, sd, interval=interval, per_query=per_query,
                    details={"holes": holes, "relevant_holes": float(relevant_holes)})


def _target_cases(measure, pool, world, targets, source, samples, over: str) -> list:
    """The targets' cases: drawn over the pool (the others' holes in the ideal), or both over the
    pool and over the run's own holes, the pool's first (``'midpoint'``; ``'run'`` with more than
    one target: the pool's point is one its interval holds, :func:`_midpoints`)."""
    cases = []
    if _over_pool(over, len(targets)):
        ideal = pool_hole_rows(measure, pool, world, targets)
        cases = [Case(i, -1, source, samples, ideal_rows=ideal.get(i)) for i in targets]
    if over != "pool":
        cases += [Case(i, -1, source, samples) for i in targets]
    return cases


def _over_pool(over: str, n: int) -> bool:
    """Whether the targets are drawn over their pool: for 'pool' and 'midpoint', and for 'run'
    with more than one target (the pool's point, an end its interval holds)."""
    return over != "run" or n > 1


def _midpoints(scored: list, n: int, over: str) -> list:
    """Each target's score from its cases (:func:`_target_cases`), then the rest of ``scored`` as
    it is. ``'midpoint'``: the two scores (over the pool, over its own holes) as one, their means,
    the ideal's holes of the first, both points in ``ends`` (the interval holds them). ``'run'``
    with more than one target: the score over its own holes, the pool's point in ``ends``: its
    interval holds what judging the other targets' holes too would give (issue 31: on DL 2019,
    new runs scored on an old pool, the intervals around the own-holes estimate held judging
    every new run's holes for 61 of 104 runs, with the pool's point 94)."""
    if over == "pool" or not _over_pool(over, n):
        return scored
    both, out = scored[:n], []
    for p, r in zip(both, scored[n:2 * n]):
        if over == "run":
            out.append(replace(r, ends=(p.median,)))
            continue
        out.append(replace(p, per_query=(p.per_query + r.per_query) / 2, mean=(p.mean + r.mean) / 2,
                           median=(p.median + r.median) / 2, sd=(p.sd + r.sd) / 2, ends=(p.median, r.median)))
    return out + scored[2 * n:]


def _point(score: CaseScore) -> float:
    """The point estimate: the median over draws of the mean over queries (it minimises
    the expected absolute error; with few likely-relevant holes the mean overshoots more
    often than not)."""
    return score.median


def _bounds_for(measure, pool, world, targets, given, maxgrade) -> dict:
    if given is not None:
        return given
    m = measure if maxgrade is None else replace(measure, maxgrade=int(maxgrade))
    out = {}
    for i in targets:
        lo, hi = exact_bounds(m, world_aligned(pool, world, i))
        out[i] = (float(lo.mean()) if len(lo) else 0.0, float(hi.mean()) if len(hi) else 0.0)
    return out


