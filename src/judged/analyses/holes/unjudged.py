"""Holes: the unjudged documents in a run's top k, what judging them could change, and
an estimate of what it probably will change.

A *hole* is a ranked (query, document) pair with no judgment **for that query** (a
document judged only for another query is still a hole here; BEIR's Hole@k counts it
as judged and so understates holes). trec_eval's negative "pooled but unjudged" grade is
counted as judged-not-relevant (``negative="nonrelevant"``, trec_eval's reading) or as a
hole (``negative="unjudged"``).

Bounds (``unjudged=min|max``): the exact minimum and maximum of a query's score over the
holes' grades, :mod:`judged.core.measures.bounds` (the method is there).

Estimate (labelled as such, not a bound): :mod:`judged.analyses.holes.estimate` -- a model of hole
grades learnt from the runs' own leave-one-run-out evidence, with a calibrated interval.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np

from ...core.align import Aligned, Judgments, Ranked, block_offsets
from ...core.conventions import Settings, validate
from ...core.errors import ConventionError, MeasureError
from ...core.measures import BOUNDED, Measure
from ...core.measures.bounds import (block_sums, check_maxgrade, holes_only_in, list_depth, max_grade, ndcg_extremes,
                                    pool_extras, ranked_list, sorted_distinct, zero_filled)
from ...core.measures.bounds import bounds as measure_bounds
from ...core.progress import progress
from ...core.evaluation import Keep, Scorer
from ...core.io import read_qrels
from ...core.querysets import of_scored, refuse_disjoint_runs

BOUNDS_OVER = ("pool", "run")  # default first: what a run's min and max range over (see HolesReport.bounds_scope)
BOUNDS_OVER_TEXT = {
    "pool": "every grade of every hole in the ranked lists of all the runs given, one label per document shared "
            "by all (judging the pool: other runs' holes enter each run's ideal and R)",
    "run": "every grade of the run's own holes only, other runs' holes left unjudged (not what judging a pool of "
           "several runs gives: their holes can raise the ideal and R)"}
BEYOND_POOL = ("unjudged documents no run retrieved can only lower a score (they enter the ideal and R, never "
               "the ranking): the max holds whatever else is judged, the min assumes nothing beyond these holes "
               "is relevant")


ESTIMATE_METHODS = ("loro-logit", "run-prior", "auto")
DEFAULT_ESTIMATE = "loro-logit"


def estimate_source(method: str | None):
    """The grade source of an estimate method: None for the grade model (``loro-logit``),
    a :class:`~judged.analyses.holes.priors.RunPrior` for ``run-prior``, both in an
    :class:`~judged.analyses.holes.estimate.Auto` for ``auto`` (the one with the lower
    leave-one-run-out MAE)."""
    method = method or DEFAULT_ESTIMATE
    if method not in ESTIMATE_METHODS:
        raise ConventionError(f"the estimate's method must be one of {', '.join(ESTIMATE_METHODS)}, got {method!r}")
    if method == "loro-logit":
        return None
    from .priors import RunPrior

    if method == "auto":
        from .estimate import Auto

        return Auto((("loro-logit", None), ("run-prior", RunPrior())))
    return RunPrior()


# chosen on the runs given (judged.analyses.holes.over_choice); measured on three collections
# (docs/holes.md, "New systems on an old pool"): none of run, pool and midpoint wins every cell
DEFAULT_ESTIMATE_OVER = "auto"


ESTIMATE_OVER = ("auto", "run", "pool", "midpoint")  # what each predicts: over_choice.TARGET_TEXT


def estimate_over_of(estimate_over: str | None, own: bool) -> str:
    """What the estimate predicts (:data:`ESTIMATE_OVER`): as given, else 'run' with bounds over
    the run, else :data:`DEFAULT_ESTIMATE_OVER`."""
    if estimate_over is None:
        return "run" if own else DEFAULT_ESTIMATE_OVER
    if estimate_over not in ESTIMATE_OVER:
        raise ConventionError(f"the estimate's --estimate-over must be one of {', '.join(ESTIMATE_OVER)}, got "
                              f"{estimate_over!r}")
    return estimate_over


def check_bounds_over(bounds_over: str) -> str:
    if bounds_over not in BOUNDS_OVER:
        raise ConventionError(f"bounds range over the holes of every run given ('pool', the default) or of each "
                              f"run alone ('run'), got {bounds_over!r}")
    return bounds_over


ESTIMATE_METHOD = ("estimate, not a bound: each hole's grade drawn from a model fitted on the runs' "
                   "leave-one-run-out pseudo-holes (judged documents only one run has in its top k), "
                   "measure averaged over draws; interval split-conformal on the runs' leave-one-out "
                   "residuals, clipped to the exact bounds (judged.estimate)")  # pinned by the golden output


# ---------------------------------------------------------------------------
# Seeing holes


def negative_as(aligned: Aligned, negative: str) -> Aligned:
    """``negative='unjudged'``: negative grades (trec_eval's pooled-but-unjudged) become
    holes and leave the judgments; ``'nonrelevant'`` (default, as trec_eval) keeps them."""
    validate(negative=negative)
    if negative == "nonrelevant":
        return aligned
    r, j = aligned.ranked, aligned.judgments
    grade = np.where(r.grade < 0, np.nan, r.grade)
    keep = j.grade >= 0
    jq = j.q[keep]
    return replace(aligned, ranked=Ranked(r.n_queries, r.q, r.pos, grade, r.row, r.offsets),
                   judgments=Judgments(j.n_queries, jq, j.grade[keep], block_offsets(jq, j.n_queries)))


def hole_table(aligned: Aligned, k: int | None):
    """Every hole in the top k: DataFrame qid, rank (1-based), docid."""
    import pandas as pd

    top = aligned.ranked.top(k)
    h = ~top.judged
    return pd.DataFrame({"qid": aligned.qids[top.q[h]].astype(str), "rank": top.pos[h] + 1,
                         "docid": aligned.docids(top.row[h])})


def holes_per_query(aligned: Aligned, k: int | None) -> np.ndarray:
    top = aligned.ranked.top(k)
    return np.bincount(top.q[~top.judged], minlength=aligned.n_queries)


def bounds(measure, aligned: Aligned, extras=None) -> tuple[np.ndarray, np.ndarray]:
    """(min, max) per query of ``measure`` (a :class:`~judged.core.measures.Measure` or its
    string) over every grade 0..maxgrade of its holes: :func:`judged.core.measures.bounds.bounds`."""
    return measure_bounds(Measure.parse(measure), aligned, extras)


# ---------------------------------------------------------------------------
# Runs and pairs: the `judged holes` report


def hole_counts(judged: np.ndarray, holes: np.ndarray) -> dict:
    """Queries, mean Judged@k, holes, queries with any hole and their share."""
    n = len(holes)
    return {"queries": n, "judged": float(judged.mean()) if n else 0.0, "holes": int(holes.sum()),
            "queries_with_holes": int((holes > 0).sum()),
            "share_queries_with_holes": float((holes > 0).mean()) if n else 0.0}


@dataclass
class RunHoles:
    name: str
    aligned: Aligned = field(repr=False)
    judged: np.ndarray | None  # per query Judged@k (None: not needed, as in a comparison's pairs)
    holes: np.ndarray | None  # per query holes in the top k
    score: np.ndarray  # zero-filled measure
    low: np.ndarray | None  # bounds of the measure (None: not computed; a pair computes its own)
    high: np.ndarray | None
    estimate: np.ndarray | None  # None: not estimated
    estimate_interval: tuple | None
    estimate_detail: object = None  # judged.analyses.holes.estimates.Estimate: se, interval kind, holes filled
    extras: np.ndarray | None = None  # per query, other runs' holes its bounds range over too (None: its own only)

    def summary(self) -> dict:
        n = len(self.holes)
        mean = (lambda v: float(v.mean()) if n else 0.0)
        out = {**hole_counts(self.judged, self.holes), "score": mean(self.score), "min": mean(self.low),
               "max": mean(self.high)}
        if self.estimate is not None:
            out["estimate"] = {"mean": mean(self.estimate), "low": self.estimate_interval[0],
                               "high": self.estimate_interval[1]}
            if self.estimate_detail is not None:
                d = self.estimate_detail
                out["estimate"].update(sd=d.se, interval=d.interval, holes_estimated=d.details["holes"],
                                       relevant_holes_estimated=d.details.get("relevant_holes", 0.0))
        return out

    def worst(self, count: int = 5) -> list[dict]:
        order = np.lexsort((self.aligned.qids.astype(str), -self.holes, self.judged))[:count]
        return [{"qid": str(self.aligned.qids[i]), "judged": float(self.judged[i]), "holes": int(self.holes[i]),
                 "score": float(self.score[i]), "min": float(self.low[i]), "max": float(self.high[i])}
                for i in order if self.holes[i] > 0]


@dataclass
class PairFlip:
    a: str
    b: str
    difference: float  # mean A - mean B, holes not relevant
    low: float  # smallest possible mean A - mean B
    high: float
    exact: bool = False

    @property
    def can_flip(self) -> bool:
        """The interval reaches the other side of 0 (0 itself, for a tie); equal within
        judged.analyses.stats' tolerance rule, so float rounding never makes a flip."""
        from ..stats import TIE

        def sign(x: float, *scale: float) -> int:  # judged.analyses.stats.tie_sign on floats (called per pair)
            tol = TIE * max([1.0] + [abs(v) for v in scale if math.isfinite(v)])
            return 1 if x > tol else -1 if x < -tol else 0

        low, high, diff = float(self.low), float(self.high), float(self.difference)
        lo, hi, d = (sign(x, low, high, diff) for x in (low, high, diff))
        return (lo < 0 < hi) or (d == 0 and sign(high - low, low, high) > 0)

    def sentence(self) -> str:
        verdict = "order can flip" if self.can_flip else "order cannot flip"
        how = "exact" if self.exact else "conservative"
        return (f"{self.a} vs {self.b}: {verdict} (difference {self.difference:+.4f}; judging the holes of "
                f"either run could make it anything in [{self.low:+.4f}, {self.high:+.4f}], {how})")

    @property
    def method(self) -> str:
        if self.exact:
            return "exact: extremes of mean(A) - mean(B) over one grade per hole of either run, shared by both"
        return ("conservative: min(A)-max(B) to max(A)-min(B) per query, each run bounded over the union "
                "of both runs' holes, as if their labels were independent")

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "difference": float(self.difference), "min": float(self.low),
                "max": float(self.high), "can_flip": bool(self.can_flip), "exact": bool(self.exact),
                "interval": self.method}


@dataclass
class HolesReport:
    qrels: object
    k: int
    measure: Measure
    settings: Settings
    negative: str
    maxgrade: int
    runs: dict  # name -> RunHoles
    pairs: list  # PairFlip
    estimates: object = None  # judged.analyses.holes.estimate.HoleEstimates: how the estimates were made
    query_set: object = None  # judged.core.querysets.QuerySet: which queries every mean is over
    bounds_over: str = "pool"  # the holes a run's min and max range over: BOUNDS_OVER_TEXT

    def hole_list(self):
        """Every hole: DataFrame run, qid, rank, docid."""
        import pandas as pd

        frames = [hole_table(rh.aligned, self.k).assign(run=name) for name, rh in self.runs.items()]
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["qid", "rank", "docid", "run"])
        return df[["run", "qid", "rank", "docid"]]

    @property
    def bounds_kind(self) -> str:
        """'exact' (the extremes over the holes' grades) or 'conservative' (an interval that
        holds them: nERR), as the measure's registry record says."""
        return self.measure.family.bounds

    def bounds_method(self) -> str:
        over = ("of the holes of every run given" if self.bounds_over == "pool" and len(self.runs) > 1
                else "of each run's own holes")
        if self.bounds_kind == "exact":
            return f"exact: the min and max of {self.measure} over every grade 0..{self.maxgrade} {over}"
        return (f"conservative, not exact: an interval holding the min and max of {self.measure} over every grade "
                f"0..{self.maxgrade} {over} (judged.core.measures.bounds)")

    def conventions(self) -> dict:
        lo, hi = replace(self.measure, unjudged="min"), replace(self.measure, unjudged="max")
        return {"measure": self.measure.convention(self.settings),
                "min": lo.convention(self.settings, holes=self.bounds_over),
                "max": hi.convention(self.settings, holes=self.bounds_over), "judged": Measure.parse(f"Judged@{self.k}").convention(self.settings),
                "negative": f"negative grades: {self.negative}",
                "estimate": ESTIMATE_METHOD.replace("the exact bounds", f"the {self.bounds_kind} bounds")}

    def to_dict(self, holes: bool = False) -> dict:
        out = {"qrels": {"path": self.qrels.source, "sha256": self.qrels.sha256},
               "k": self.k, "measure": str(self.measure), "maxgrade": self.maxgrade, "negative": self.negative,
               "bounds": self.bounds_kind, "bounds_method": self.bounds_method(),
               "bounds_over": self.bounds_over, "bounds_over_text": BOUNDS_OVER_TEXT[self.bounds_over],
               "beyond_pool": BEYOND_POOL,
               "conventions": self.conventions(),
               "runs": {name: {**rh.summary(), "worst": rh.worst()} for name, rh in self.runs.items()},
               "pairs": [p.to_dict() for p in self.pairs]}
        if self.estimates is not None:
            out["estimate"] = self.estimates.describe()
        if self.query_set is not None:
            out["query_set"] = self.query_set.to_dict()
            out["warnings"] = self.query_set.warnings()
        if holes:
            out["holes"] = self.hole_list().to_dict(orient="records")
            for h in out["holes"]:
                h["rank"] = int(h["rank"])
        return out


def holes_report(qrels, runs, k: int = 10, measure=None, *, maxgrade: int | None = None, samples: int = 200,
                 seed: int = 0, level: float | None = None, reference=None, settings: Settings | None = None,
                 deep: bool = True, bounds_over: str = "pool", estimate: str | None = None,
                 estimate_over: str | None = None) -> HolesReport:
    """Holes of each run in its top k, the bounds of ``measure`` (default nDCG@k) over
    their grades, an estimate with its interval at ``level`` (default 0.9; see
    :mod:`judged.analyses.holes.estimate`), and for every pair of runs whether judging could flip them.

    ``bounds_over='pool'`` (default): a run's min and max, and every pair's interval, range
    over every grade of every hole in the ranked lists of all the runs given, one label per
    document shared by all: what judging their pool can give (other runs' holes raise the
    ideal and R). ``'run'``: each run's own holes only (each pair: the union of its two
    runs'), the bound of one run judged alone. ``estimate``: the estimate's method
    (:data:`ESTIMATE_METHODS`; default :data:`DEFAULT_ESTIMATE`); ``estimate_over``: what it
    predicts: 'pool' judging the pool of the runs (the others' holes enter each run's ideal
    and R), 'run' judging each run's own holes (default :data:`DEFAULT_ESTIMATE_OVER`; with
    ``bounds_over='run'``, 'run').
    ``reference``: more runs (e.g. the collection's pooled runs) whose leave-one-run-out
    evidence the estimate learns from; they are not reported (a path also given in
    ``runs`` is read once).

    Every run is scored over every qrels query (``complete=True``, a run that ranks nothing
    for one scores 0 there: the query-set rule of every command comparing runs,
    :mod:`judged.core.querysets`), so each pair's difference is over one set of queries, as in
    ``judged compare``. A run sharing no query id with the qrels is refused. ``settings``: the
    conventions (default ``Settings(complete=True)``; ``settings.negative``: what a negative
    grade is). ``deep=False``: the
    runs' qid, score and rank columns are dropped once every run is aligned
    (:meth:`~judged.core.data.Run.docids_only`; the CLI without --machine or --sample, which
    read them again), as each run is aligned (the reader's pool emptied before the last
    one); nor are the run files hashed (the report shows no run's sha256: 0.02 CPU-s a
    1M-line file)."""
    settings = Settings(complete=True) if settings is None else settings
    negative = settings.negative
    if samples < 1:
        raise ConventionError(f"the estimate needs at least one sample, got samples={samples}")
    check_maxgrade(maxgrade)
    check_bounds_over(bounds_over)
    m = zero_filled(Measure.parse(measure or f"nDCG@{k}"))
    scorer = Scorer(read_qrels(qrels, on_duplicate=settings.on_duplicate, subtopics=m.family.subtopics), {}, settings)
    if not m.family.boundable:
        raise MeasureError(f"bounds are defined for {', '.join(BOUNDED)}, not {m.name}")
    if maxgrade is not None:
        m = replace(m, maxgrade=int(maxgrade))
    out = {}
    with ThreadPoolExecutor(2, thread_name_prefix="judged-holes") as pool:
        if not m.family.subtopics:  # the estimate's modules imported while the runs are read
            pool.submit(_import_estimate)
        # each run's counts (and its own bounds: --bounds-over run) in a thread as soon as it
        # is aligned, while the next one is read
        own = bounds_over == "run"
        scored = scorer.runs(runs, Keep(True, docids_only=not deep), digests=deep, each=lambda name, rr: out.__setitem__(
            name, pool.submit(run_holes, name, negative_as(rr.aligned, negative), m, k, samples=0, own_bounds=own)))
        refuse_disjoint_runs(scored)
        qrels, aligned = scored.qrels, scored.alignments()
        with progress(len(aligned), f"bounds of {m} per run") as advance:
            for name, done in out.items():
                out[name] = done.result()
                advance()
            if not own:  # over the pool: every run's holes known, each run's bounds with the others' as extras
                bound_over_pool(m, out, k, pool)
        if isinstance(reference, dict):
            reference = {name: r for name, r in reference.items() if str(name) not in out}
        else:
            reference = [r for r in reference or [] if not isinstance(r, (str, os.PathLike)) or os.fspath(r) not in out]
        refs = {name: negative_as(a, negative) for name, a in scorer.runs(
            reference, Keep(True, docids_only=not deep), digests=deep).alignments().items()} if reference else {}
        names = list(out)
        # the pairs' intervals in a thread while the estimate is made (each as alone: the same numbers)
        pairs = pool.submit(pair_flips, m, [out[n] for n in names], list(combinations(range(len(names)), 2)),
                            over_pool=not own)
        with progress(None, "estimating the holes"):  # the estimator's model grades documents, not subtopics
            estimates = None if m.family.subtopics else estimate_holes(m, out, k, samples=samples, seed=seed,
                                                                       level=level, reference=refs,
                                                                       over=estimate_over_of(estimate_over, own),
                                                                       method=estimate)
        with progress(None, "intervals of every pair of runs"):
            pairs = pairs.result()
    return HolesReport(qrels, k, m, settings, negative, max_grade(m, next(iter(out.values())).aligned) if out else 0,
                       out, pairs, estimates, of_scored(scored, measures=[m]), bounds_over)


def bound_over_pool(measure: Measure, runs: dict, k: int, pool=None) -> None:
    """Each :class:`RunHoles` of ``runs`` bounded over every hole of every run in the pool
    of their top k (``bounds_over='pool'``): its low, high and extras set in place
    (``pool``: an executor bounding the runs at once)."""
    extras = pool_extras(measure, [rh.aligned for rh in runs.values()], depth=k)
    found = list((pool.map if pool is not None else map)(lambda r, e: bounds(measure, r.aligned, e), runs.values(),
                                                         extras))
    for rh, e, (lo, hi) in zip(runs.values(), extras, found):
        rh.low, rh.high, rh.extras = lo, hi, e


def result_holes(result, measure: str, k: int, *, maxgrade: int | None = None,
                 bounds_over: str = "pool") -> HolesReport:
    """The ``judged holes`` report of an evaluated :class:`~judged.core.evaluation.Result` (its runs
    aligned already) on ``measure`` (as given to it), without the estimate: every run's
    Judged@k, holes and bounds, every pair's interval, as :func:`holes_report` computes them
    (the report's first screen: which runs could swap places)."""
    check_bounds_over(bounds_over)
    negative = result.settings.negative
    m = zero_filled(result.measures[measure])
    if not m.family.boundable:
        raise MeasureError(f"bounds are defined for {', '.join(BOUNDED)}, not {m.name}")
    if maxgrade is not None:
        m = replace(m, maxgrade=int(maxgrade))
    own = bounds_over == "run"
    runs = {name: run_holes(name, negative_as(rr.aligned, negative), m, k, samples=0, own_bounds=own)
            for name, rr in result.runs.items()}
    if not own:
        bound_over_pool(m, runs, k)
    names = list(runs)
    pairs = pair_flips(m, [runs[n] for n in names], list(combinations(range(len(names)), 2)), over_pool=not own)
    return HolesReport(result.qrels, k, m, result.settings, negative,
                       max_grade(m, next(iter(runs.values())).aligned) if runs else 0, runs, pairs, None,
                       result.query_set, bounds_over)


def _import_estimate() -> None:
    """Import what the estimate and the pairs' verdicts import (judged.analyses.holes.estimate, numpy.random,
    judged.analyses.stats: 0.015-0.03 s, otherwise on the main thread after the last run is aligned)."""
    import numpy.random  # noqa: F401

    from . import estimate
    from .. import stats  # noqa: F401


def run_holes(name: str, aligned: Aligned, measure: Measure, k: int, samples: int = 200, seed: int = 0,
              own_bounds: bool = True) -> RunHoles:
    """One run's Judged@k, holes in the top k, zero-filled ``measure`` and its bounds over
    its own holes (``own_bounds=False``: None, the caller bounds it over a pool);
    the estimate only when ``samples`` > 0 (one run alone: the stated fallback, see
    :func:`estimate_holes`, which estimates several runs from each other's evidence)."""
    lo, hi = measure_bounds(measure, aligned) if own_bounds else (None, None)
    rh = RunHoles(name, aligned, Measure.parse(f"Judged@{k}").compute(aligned), holes_per_query(aligned, k),
                  measure.compute(aligned), lo, hi, None, None)
    if samples:
        estimate_holes(measure, {name: rh}, k, samples=samples, seed=seed)
    return rh


def estimate_holes(measure: Measure, runs: dict, k: int, *, samples: int = 200, seed: int = 0, depth=None,
                   level: float | None = None, reference: dict | None = None, over: str = "pool",
                   method: str | None = None):
    """Estimate ``measure`` for every :class:`RunHoles` of ``runs`` (filled in place) from
    the runs' own leave-one-run-out evidence (:mod:`judged.analyses.holes.estimate`), and that of the
    ``reference`` runs ({name: Aligned}: evidence only, not estimated); returns the
    :class:`~judged.analyses.holes.estimate.HoleEstimates` that says how. ``over``: what the estimate
    predicts (:data:`ESTIMATE_OVER`; default 'pool': judging the pool of ``runs``, each run's
    ideal taking the others' holes too, as the bounds)."""
    from .estimate import DEFAULT_LEVEL, estimate_runs
    from .collection import build_pool

    if not runs:
        return None
    names = list(runs)
    named = [(n, runs[n].aligned) for n in names] + list((reference or {}).items())
    ld = list_depth(measure)
    pool = build_pool(named, k, depth, zone=None if ld is None else max(ld, k, depth or k))
    bound = {i: (_mean(runs[n].low), _mean(runs[n].high)) for i, n in enumerate(names)}
    est = estimate_runs(measure, pool, targets=range(len(names)), samples=samples, seed=seed,
                        level=DEFAULT_LEVEL if level is None else level, bounds=bound, maxgrade=measure.maxgrade,
                        over=over, source=estimate_source(method))
    est.info["fit"]["reference_runs"] = len(reference or {})
    for i, n in enumerate(names):
        e = est.runs[i]
        runs[n].estimate, runs[n].estimate_interval, runs[n].estimate_detail = e.per_query, (e.low, e.high), e
    return est


def _mean(v) -> float:
    return float(v.mean()) if len(v) else 0.0


# ---------------------------------------------------------------------------
# Holes in a comparison: `judged compare` and `judged report`


@dataclass
class ComparisonHoles:
    """Judged@k of every run of a comparison and, per (measure, run), whether judging the
    holes of the run and of the baseline could reverse their order (:func:`pair_flip`)."""

    k: int
    maxgrade: int
    negative: str
    runs: dict  # run name -> {"judged", "holes", "queries_with_holes", "share_queries_with_holes", "queries"}
    flips: dict  # (measure as given, run) -> PairFlip of run vs baseline (difference = run - baseline)
    bounded: dict  # measure as given -> the zero-filled measure whose bounds were taken
    # measure as given -> why its holes were not bounded here (a bounded family whose bounds refuse
    # these data, e.g. ERR on grades above max_rel); its comparison still stands
    skipped: dict = field(default_factory=dict)

    def flip(self, measure: str, run: str) -> "PairFlip | None":
        return self.flips.get((measure, run))

    def to_dict(self) -> dict:
        out = {"k": self.k, "maxgrade": self.maxgrade, "negative": self.negative,
               "judged": f"Judged@{self.k} judged=grade-for-this-query",
               "runs": {name: dict(r) for name, r in self.runs.items()},
               "bounded_measures": {g: str(m) for g, m in self.bounded.items()},
               "bounds_over": "pool", "bounds_over_text": BOUNDS_OVER_TEXT["pool"], "beyond_pool": BEYOND_POOL}
        if self.skipped:
            out["skipped_measures"] = dict(self.skipped)
        return out


def comparison_holes(result, baseline: str, k: int, *, maxgrade: int | None = None) -> ComparisonHoles:
    """Holes of an evaluated :class:`~judged.core.evaluation.Result` (its runs already aligned):
    per run Judged@k and the holes in its top k; per bounded measure (the registry's
    ``boundable`` families) and run, the interval of mean(run) - mean(baseline) over every
    grade of the holes of every run compared, one label per document (judging their pool;
    exact for nDCG and DCG, else conservative). A measure whose
    bounds refuse the data (ERR on grades above max_rel, INST with T < 1/2) is skipped, with
    the reason (``skipped``), not an error: its comparison stands without the holes' interval."""
    negative = result.settings.negative
    aligned = {name: negative_as(rr.aligned, negative) for name, rr in result.runs.items()}
    judged_m = Measure.parse(f"Judged@{k}")
    runs = {name: hole_counts(judged_m.compute(a), holes_per_query(a, k)) for name, a in aligned.items()}
    flips, bounded, skipped, top = {}, {}, {}, 0
    with progress(len(result.measures), "holes: what judging them could change") as advance:
        for given, measure in result.measures.items():
            advance()
            if not measure.family.boundable:
                continue
            m = zero_filled(measure)
            if maxgrade is not None:
                m = replace(m, maxgrade=int(maxgrade))
            bounded[given] = m
            # the pair intervals need each run's zero-filled score, not its own bounds (the exact
            # pairs solve both runs at once; the conservative ones bound over the union of holes):
            # the evaluation's own values when the measure is zero-filled and the alignment unchanged
            scored = replace(m, maxgrade=measure.maxgrade) == measure and negative == "nonrelevant"
            per_run = {name: RunHoles(name, a, None, None, result.runs[name].values[given] if scored else m.compute(a),
                                      None, None, None, None) for name, a in aligned.items()}
            others = [name for name in per_run if name != baseline]
            order = others + [baseline]
            try:
                done = pair_flips(m, [per_run[n] for n in order], [(i, len(others)) for i in range(len(others))],
                                  depth=k)
            except ConventionError as e:
                del bounded[given]
                skipped[given] = str(e)
                continue
            top = max(top, max_grade(m, aligned[baseline]))
            for name, flip in zip(others, done):
                flips[(given, name)] = flip
    if not bounded:
        top = maxgrade if maxgrade is not None else max_grade(judged_m, aligned[baseline])
    return ComparisonHoles(k, int(top), negative, runs, flips, bounded, skipped)


def _hole_keys(measure, aligned) -> list[set]:
    top = ranked_list(measure, aligned)
    h = ~top.judged
    keys = [set() for _ in range(aligned.n_queries)]
    for q, d in zip(top.q[h].tolist(), aligned.docids(top.row[h])):
        keys[q].add(d)
    return keys


def pair_flip(measure, a: RunHoles, b: RunHoles) -> PairFlip:
    """The interval of mean(A) - mean(B) over the grades of both runs' holes.

    Exact for nDCG (ideal=judged) and DCG: both runs share one ideal, so per query
    (w_A DCG_A - w_B DCG_B) / IDCG (w = 1/queries of the run) is again linear over IDCG,
    and :func:`judged.core.measures.bounds.ndcg_extreme` solves it with signed hole weights. Otherwise conservative:
    each run is bounded over the union of the two runs' holes (the other run's holes move
    only its ideal / R), then min A - max B and max A - min B, as if the runs' labels were
    independent."""
    return pair_flips(measure, [a, b], [(0, 1)])[0]


def pair_flips(measure, runs: list, pairs: list, over_pool: bool = True, depth: int | None = None) -> list:
    """:func:`pair_flip` of every pair (i, j) of ``runs`` (RunHoles): the exact ones solved
    together (each run's per-query data read once, the problems of every pair batched).

    ``over_pool`` (default): over every grade of the holes of all ``runs``, one label per
    document shared by all (the other runs' holes enter the ideal and R: exact pairs get
    them as holes of weight 0, conservative ones bound each run over the pool, each run's
    ``extras`` kept; the pool: the runs' ranked lists, or their top ``depth`` when deeper,
    :func:`~judged.core.measures.bounds.pool_extras`); else over the pair's two runs' holes."""
    mean = (lambda v: float(v.mean()) if len(v) else 0.0)
    extras = None
    if over_pool:
        extras = ([r.extras for r in runs] if all(r.extras is not None for r in runs)
                  else pool_extras(measure, [r.aligned for r in runs], depth))
    if measure.family.label_worth == "gain" and measure.ideal == "judged":  # DCG, nDCG with ideal=judged
        # DCG has no ideal: the other runs' holes cannot move it
        extremes = _exact_pairs(measure, [r.aligned for r in runs], pairs,
                                extras if measure.family.normaliser else None)
        return [PairFlip(runs[i].name, runs[j].name, mean(runs[i].score) - mean(runs[j].score), lo, hi, exact=True)
                for (i, j), (lo, hi) in zip(pairs, extremes)]
    if not over_pool:
        return [_conservative_pair(measure, runs[i], runs[j]) for i, j in pairs]
    for r, e in zip(runs, extras):
        if r.low is None or r.extras is None:
            r.low, r.high = bounds(measure, r.aligned, e)
            r.extras = e
    return [PairFlip(runs[i].name, runs[j].name, mean(runs[i].score) - mean(runs[j].score),
                     mean(runs[i].low) - mean(runs[j].high), mean(runs[i].high) - mean(runs[j].low))
            for i, j in pairs]


def _conservative_pair(measure, a: RunHoles, b: RunHoles) -> PairFlip:
    mean = (lambda v: float(v.mean()) if len(v) else 0.0)
    difference = mean(a.score) - mean(b.score)
    counted = _extra_holes(measure, a.aligned, b.aligned)
    if counted is not None:
        ea, eb = counted
        lo_a, hi_a = bounds(measure, a.aligned, ea) if ea.any() or a.low is None else (a.low, a.high)
        lo_b, hi_b = bounds(measure, b.aligned, eb) if eb.any() or b.low is None else (b.low, b.high)
        return PairFlip(a.name, b.name, difference, mean(lo_a) - mean(hi_b), mean(hi_a) - mean(lo_b))
    ka, kb = _hole_keys(measure, a.aligned), _hole_keys(measure, b.aligned)
    qa = {q: i for i, q in enumerate(a.aligned.qids.tolist())}
    qb = {q: i for i, q in enumerate(b.aligned.qids.tolist())}

    def extras(keys_self, keys_other, index_other, qids_self):
        out = np.zeros(len(keys_self), np.int64)
        for i, q in enumerate(qids_self):
            j = index_other.get(q)
            if j is not None:
                out[i] = len(keys_other[j] - keys_self[i])
        return out

    ea = extras(ka, kb, qb, a.aligned.qids.tolist())
    eb = extras(kb, ka, qa, b.aligned.qids.tolist())
    lo_a, hi_a = bounds(measure, a.aligned, ea) if ea.any() or a.low is None else (a.low, a.high)
    lo_b, hi_b = bounds(measure, b.aligned, eb) if eb.any() or b.low is None else (b.low, b.high)
    return PairFlip(a.name, b.name, difference, mean(lo_a) - mean(hi_b), mean(hi_a) - mean(lo_b))


def _code_starts(top: Ranked, aligned: Aligned, n_codes: int) -> np.ndarray:
    """Where each query code's rows of ``top`` (a run's ranked list, its queries in code
    order as :func:`judged.core.align.align` lists them) start: n_codes + 1 offsets."""
    lengths = np.zeros(n_codes, np.int64)
    lengths[np.asarray(aligned.qid_codes, np.int64)] = np.diff(top.offsets)
    start = np.zeros(n_codes + 1, np.int64)
    np.cumsum(lengths, out=start[1:])
    return start


def _extra_holes(measure, a: Aligned, b: Aligned):
    """(per query of A, B's holes that are not A's; per query of B, A's that are not B's),
    distinct docids counted by :func:`judged.core.measures.bounds.holes_only_in`; None when
    the runs were aligned with different qrels or list their queries out of code order
    (the sets decide)."""
    if a.qrels is not b.qrels or a.qid_codes is None or b.qid_codes is None or not all(
            (np.diff(np.asarray(al.qid_codes, np.int64)) > 0).all() for al in (a, b)):
        return None
    nq = len(a.qrels.index.query_ids)
    tops = [ranked_list(measure, al) for al in (a, b)]
    only_a, only_b = holes_only_in(*[x for al, top in zip((a, b), tops) for x in (
        _code_starts(top, al, nq), top.grade, top.row, al.run.docid_hash, al.run.docid)])
    return only_b[np.asarray(a.qid_codes, np.int64)], only_a[np.asarray(b.qid_codes, np.int64)]


def _exact_pairs(measure, aligned: list, pairs: list, extras: list | None = None) -> list:
    """Exact extremes of mean_A - mean_B for nDCG (ideal=judged) or DCG, summed per query
    in qid order, for every pair (i, j) of ``aligned``. Each run's per-query parts are
    read once; every pair's per-query problems are then solved together. ``extras[i]``:
    per query of run i, the pool's holes it lacks (:func:`pool_extras`): a pair's problem
    gets the pool's holes neither of its runs has as holes of weight 0 (they move the ideal)."""
    M = max_grade(measure, aligned[0])
    values = sorted_distinct(measure.gain(np.arange(M + 1, dtype=np.float64)))
    k = measure.cutoff
    qindex, dindex, taken, judged = {}, {}, set(), []  # judged: (query index, positive gain) of each judgment
    data, pool_union = {}, {}  # pool_union: query index -> the pool's distinct holes there

    def per_query(i):
        """(query indices, dfix per query, queries' count, hole query index, hole doc index, hole weight)."""
        if i in data:
            return data[i]
        al = aligned[i]
        top = ranked_list(measure, al)
        w = measure.discount.divide(np.ones(len(top.q)), top.pos + 1.0)
        hole = np.isnan(top.grade)
        # per query the judged rows' gains x discounts, summed as query by query (block_sums)
        dfixes = block_sums(measure.gain(top.grade) * w, top.offsets, ~hole)
        qids = al.qids.tolist()
        qs = np.array([qindex.setdefault(qid, len(qindex)) for qid in qids], np.int64)
        rows = np.flatnonzero(hole)
        hole_q = np.repeat(np.arange(len(qids)), np.diff(top.offsets))[rows]
        hd = [dindex.setdefault(key, len(dindex))
              for key in zip([qids[q] for q in hole_q.tolist()], al.docids(top.row[rows]))]
        j = al.judgments
        gain = measure.gain(j.grade.astype(np.float64))
        fresh = np.array([g not in taken for g in qs.tolist()], bool)  # each query's judgments from one run
        taken.update(qs.tolist())
        keep = fresh[j.q] & (gain > 0)
        judged.append((qs[j.q[keep]], gain[keep]))
        data[i] = (qs, dfixes, max(al.n_queries, 1), qs[hole_q], np.array(hd, np.int64), w[rows])
        if extras is not None:  # the pool's holes per query: the run's own distinct ones and the others'
            _, once = np.unique(np.array(hd, np.int64), return_index=True)
            own = np.bincount(hole_q[once], minlength=len(qids))
            for q, n in zip(qs.tolist(), (own + np.asarray(extras[i], np.int64)).tolist()):
                pool_union.setdefault(q, n)
        return data[i]

    for i in sorted({x for pair in pairs for x in pair}):
        per_query(i)
    # queries ranked by qid (a fixed order: the float sums must not vary between processes)
    names = list(qindex)
    rank_of = np.empty(len(names), np.int64)
    rank_of[np.array(sorted(range(len(names)), key=names.__getitem__), np.int64)] = np.arange(len(names))
    # documents ranked by docid within their query: each query's holes in docid order (DCG sums them so)
    doc_keys = list(dindex)
    doc_rank = np.empty(len(doc_keys), np.int64)
    doc_rank[np.array(sorted(range(len(doc_keys)), key=doc_keys.__getitem__), np.int64)] = np.arange(len(doc_keys))
    n_docs = max(len(dindex), 1)
    prob_q, prob_pair, prob_dfix, prob_nh, coef_parts = [], [], [], [], []
    order_q = np.array(sorted(range(len(names)), key=names.__getitem__), np.int64)  # rank -> query index
    for p, (a, b) in enumerate(pairs):
        qa, da, na, hqa, hda, hwa = data[a]
        qb, db, nb, hqb, hdb, hwb = data[b]
        union = sorted_distinct(np.concatenate((rank_of[qa], rank_of[qb])))  # qid order
        fa, fb = np.zeros(len(union)), np.zeros(len(union))
        ina, inb = np.zeros(len(union), bool), np.zeros(len(union), bool)
        at_a, at_b = np.searchsorted(union, rank_of[qa]), np.searchsorted(union, rank_of[qb])
        fa[at_a], fb[at_b] = da, db
        ina[at_a], inb[at_b] = True, True
        dfix = np.where(ina, fa, 0.0) / na - np.where(inb, fb, 0.0) / nb
        # the union of both runs' holes per query: coef = w_A / n_A - w_B / n_B (0.0 for a run without it)
        keys = np.concatenate((rank_of[hqa] * n_docs + doc_rank[hda], rank_of[hqb] * n_docs + doc_rank[hdb]))
        uk, inv = np.unique(keys, return_inverse=True)
        ca, cb = np.zeros(len(uk)), np.zeros(len(uk))
        ca[inv[:len(hqa)]] = hwa
        cb[inv[len(hqa):]] = hwb
        coef = ca / na - cb / nb
        nh = np.bincount(np.searchsorted(union, uk // n_docs), minlength=len(union))
        if pool_union:  # the pool's holes neither run has: weight 0, after the pair's own in each query
            coef, nh = _with_pool_holes(coef, nh, np.array([pool_union.get(x, 0) for x in order_q[union].tolist()],
                                                           np.int64))
        prob_q.append(union)
        prob_pair.append(np.full(len(union), p))
        prob_dfix.append(dfix)
        prob_nh.append(nh)
        coef_parts.append(coef)
    q = order_q[np.concatenate(prob_q)] if prob_q else np.zeros(0, np.int64)
    owner = np.concatenate(prob_pair) if prob_pair else np.zeros(0, np.int64)
    dfix = np.concatenate(prob_dfix) if prob_dfix else np.zeros(0)
    nh = np.concatenate(prob_nh) if prob_nh else np.zeros(0, np.int64)
    coef = np.concatenate(coef_parts) if coef_parts else np.zeros(0)
    starts = np.concatenate(([0], np.cumsum(nh)[:-1])) if len(nh) else nh
    if measure.family.normaliser is None:  # DCG: no ideal
        hi_each = [float(np.where(c > 0, c * values.max(), c * values.min()).sum()) for c in np.split(coef, starts[1:])]
        lo_each = [float(np.where(c > 0, c * values.min(), c * values.max()).sum()) for c in np.split(coef, starts[1:])]
        lo_each = (dfix + np.array(lo_each)).tolist() if len(dfix) else []
        hi_each = (dfix + np.array(hi_each)).tolist() if len(dfix) else []
    else:
        jq = np.concatenate([part[0] for part in judged]) if judged else np.zeros(0, np.int64)
        jg = np.concatenate([part[1] for part in judged]) if judged else np.zeros(0)
        levels = sorted_distinct(np.concatenate([values[values > 0], jg]))
        jcounts = np.bincount(jq * len(levels) + np.searchsorted(levels, jg), minlength=len(names) * len(levels)) \
            .reshape(len(names), len(levels))
        longest = int((jcounts.sum(axis=1)[q] + nh).max()) if len(q) else 0
        disc = measure.discount.divide(np.ones(longest), np.arange(1, longest + 1, dtype=np.float64))
        disc[k:] = 0.0
        lo_v, hi_v = np.zeros(len(q)), np.zeros(len(q))
        for h in sorted_distinct(nh).tolist():
            idx = np.flatnonzero(nh == h)
            hw = coef[starts[idx][:, None] + np.arange(h)[None, :]] if h else np.zeros((len(idx), 0))
            lo_v[idx] = ndcg_extremes(hw, dfix[idx], jcounts[q[idx]], levels, disc, values, "min")
            hi_v[idx] = ndcg_extremes(hw, dfix[idx], jcounts[q[idx]], levels, disc, values, "max")
        lo_each, hi_each = lo_v.tolist(), hi_v.tolist()
    sums = [[0.0, 0.0] for _ in pairs]
    for p, l, h in zip(owner.tolist(), lo_each, hi_each):
        sums[p][0] += l
        sums[p][1] += h
    return [tuple(x) for x in sums]


def _with_pool_holes(coef: np.ndarray, nh: np.ndarray, pool: np.ndarray) -> tuple:
    """A pair's per-query hole weights ``coef`` (``nh`` per query, query after query) with
    ``pool - nh`` zeros appended to each query's: the pool's holes neither run has."""
    more = np.maximum(pool - nh, 0)
    if not more.any():
        return coef, nh
    wider = nh + more
    start = np.cumsum(wider) - wider
    within = np.arange(len(coef)) - np.repeat(np.cumsum(nh) - nh, nh)
    out = np.zeros(int(wider.sum()))
    out[np.repeat(start, nh) + within] = coef
    return out, wider
