"""New systems against an old pool: protocols that put the hole bounds and estimates where a
user puts them -- scoring runs that did not contribute to the qrels.

Leave-one-run-out (:mod:`judged.analyses.meta.holdout`) removes one run's own judgments;
the other runs' top k stay judged. A user more often scores several new systems at once on
qrels pooled from older ones, so that every new run has holes, and the new runs' holes
move each other's ideal. Two protocols mimic that (Zobel, SIGIR 1998, pooled from some
runs and scored the others; Voorhees, "The Philosophy of Information Retrieval
Evaluation", CLEF 2001):

* **shift**: the qrels are cut to the judgments of the pairs some runs (the *pool runs*)
  rank above the pool depth; the other runs are scored with ``judged holes`` on the cut
  qrels, the pool runs given as reference evidence (``--reference``). The truth is the cut
  qrels plus the judgments of every scored run's top k: what judging their holes (their
  pool) gives; ``truth_own``, the cut plus the run's own top k alone: what judging only its
  holes gives (what ``--estimate-over run`` predicts). The pool runs: ``pool_runs`` as
  given, else the weaker half by the measure on the full qrels, and ``seeds`` random halves.
* **few**: the 3 strongest scored runs of each shift cell alone with its cut qrels (the
  pool runs not given), truth = the cut qrels plus the judgments of their top k: a user
  with a few new systems and old qrels.

Per cell and run: the score with holes as zero, condensed (Sakai, SIGIR 2007), the exact
bounds over the scored runs' pool (a violation is a defect, for the run's mean and for
every query), the estimate and its interval, against the truth. Runs whose truth still
has holes (pairs of their top k the full qrels never judged) are left out of the summary
and listed apart: their truth is not a truth.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

import numpy as np

from ...core.errors import ConventionError, JudgedError
from ...core.progress import progress
from ...core.runnames import run_stem
from ..holes.unjudged import holes_report, negative_as
from ...core.align import align
from ...core.measures.bounds import bounds
from ...core.evaluation import ALIGNMENT, Scorer, evaluate
from ...core.querysets import refuse_disjoint_runs
from ...core.io import read_qrels
from ...core.measures import Measure
from ..holes.estimate import FALLBACK

SHIFT_PROTOCOLS = ("shift", "few")
DEFAULT_SEEDS = 5  # random halves of the runs as pool runs, beside the weaker half
FEW = 3  # the strongest scored runs scored alone in the `few` protocol
TOLERANCE = 1e-9  # a truth this far outside the bounds is a violation, not rounding
# a run whose truth could still move by more than this (the mean width of its exact bounds
# over the holes its truth keeps) has no truth to measure an error against: left out, listed
TRUTH_WIDTH = 0.02


class TruthChecks:
    """What a row with ``truth``, its bounds (``min``, ``max``) and its estimate's interval
    (``low``, ``high``) says of them: the interval covers the truth; the truth breaks the bounds."""

    @property
    def covered(self) -> bool:
        return self.low - TOLERANCE <= self.truth <= self.high + TOLERANCE

    @property
    def violation(self) -> bool:
        return not (self.min - TOLERANCE <= self.truth <= self.max + TOLERANCE)


@dataclass
class CellRun(TruthChecks):
    """One scored run of a cell: its scores on the cut qrels and its truth."""

    run: str
    truth: float
    truth_holes: int  # pairs of its top k the full qrels never judged (counted 0 in the truth)
    truth_width: float  # how far judging those could still move the truth: its mean max - mean min
    holes: int  # holes in its top k on the cut qrels
    judged: float  # mean Judged@k on the cut qrels
    zero: float
    condensed: float
    min: float
    max: float
    estimate: float | None  # None: the estimator abstained (``abstain`` says why)
    low: float
    high: float
    interval: str  # conformal | bounds | exact | ...
    method: str
    queries: int
    cell_violations: int  # queries whose truth lies outside the run's per-query bounds
    abstain: str | None = None
    # the truth of judging this run's own holes only (the cut qrels and its top k judged): what
    # `--estimate-over run` predicts, where ``truth`` is what judging every scored run's gives
    truth_own: float | None = None
    # its holes on the cut qrels that the truth judges relevant (grade > 0), and that the estimate
    # reads as relevant (expected; None: no estimate): the grade model's assumption, checked
    truth_relevant_holes: int | None = None
    estimate_relevant_holes: float | None = None
    read_holes: int | None = None  # its holes the estimate fills (above its fill depth): the shares' denominator

    @property
    def covered_own(self) -> bool:
        """The interval holds :attr:`truth_own` (False without one)."""
        return self.truth_own is not None and self.low - TOLERANCE <= self.truth_own <= self.high + TOLERANCE

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out.update(covered=self.covered, violation=self.violation)
        return out


@dataclass
class Cell:
    """One split: the pool runs, the scored runs and what happened to each."""

    name: str
    protocol: str
    pool_runs: list
    scored: list
    runs: list  # CellRun
    removed: int  # judgments of the full qrels not in the cut
    cut: int  # judgments in the cut qrels
    estimate: dict = field(default_factory=dict)

    def summary(self) -> dict:
        return summarize(self.runs)

    def to_dict(self) -> dict:
        return {"name": self.name, "protocol": self.protocol, "pool_runs": self.pool_runs, "scored": self.scored,
                "judgments_in_cut": self.cut, "judgments_removed": self.removed, "estimate": self.estimate,
                "runs": [r.to_dict() for r in self.runs], "summary": self.summary()}


def summarize(runs: list) -> dict:
    """MAE and bias of each scoring over the runs with a truth (judging what its truth left
    unjudged could move it by at most :data:`TRUTH_WIDTH`) that the estimator estimated
    (``mae_all``: every run, the truth's holes as 0; ``mae_own``: against the truth of judging
    each run's own holes alone, ``truth_own``); interval coverage over those with holes;
    violations of the bounds (means and query cells) over every run; abstentions and
    left-out runs listed. ``runs``: rows with run, truth, truth_width, zero, condensed,
    estimate (None: abstained), abstain, low, high, interval, min, max, queries, cell_violations."""
    counted = [r for r in runs if r.truth_width <= TRUTH_WIDTH]
    left_out = [{"run": r.run, "truth_width": r.truth_width} for r in runs if r.truth_width > TRUTH_WIDTH]
    estimated = [r for r in counted if not abstains(r)]
    abstained = [{"run": r.run, "why": r.abstain} for r in counted if abstains(r)]
    out = {"runs": len(runs), "counted": len(counted), "left_out": left_out, "truth_width_limit": TRUTH_WIDTH,
           "estimated": len(estimated), "abstained": abstained}
    for name in ("zero", "condensed", "estimate"):
        err = np.array([getattr(r, name) - r.truth for r in estimated])
        out.setdefault("mae", {})[name] = float(np.abs(err).mean()) if len(err) else float("nan")
        out.setdefault("bias", {})[name] = float(err.mean()) if len(err) else float("nan")
        out.setdefault("max_error", {})[name] = float(np.abs(err).max()) if len(err) else float("nan")
        every = np.array([getattr(r, name) - r.truth for r in runs if not abstains(r)])
        out.setdefault("mae_all", {})[name] = float(np.abs(every).mean()) if len(every) else float("nan")
        # against the truth of judging each run's own holes alone (what --estimate-over run predicts)
        own = np.array([getattr(r, name) - r.truth_own for r in estimated
                        if getattr(r, "truth_own", None) is not None])
        out.setdefault("mae_own", {})[name] = float(np.abs(own).mean()) if len(own) else float("nan")
        out.setdefault("bias_own", {})[name] = float(own.mean()) if len(own) else float("nan")
    # coverage over the estimate intervals only: an interval that is the bounds informs nothing
    with_holes = [r for r in estimated if r.interval == "conformal"]
    out["intervals"] = len(with_holes)
    out["covered"] = int(sum(r.covered for r in with_holes))
    out["coverage"] = out["covered"] / len(with_holes) if with_holes else float("nan")
    # the same intervals against judging each run's own holes alone (what --estimate-over run predicts)
    out["covered_own"] = int(sum(getattr(r, "covered_own", False) for r in with_holes))
    out["mean_width"] = float(np.mean([r.high - r.low for r in with_holes])) if with_holes else float("nan")
    out["bounds_only"] = int(sum(r.interval == "bounds" for r in estimated))
    out["violations"] = int(sum(r.violation for r in runs))
    out["cell_violations"] = int(sum(r.cell_violations for r in runs))
    out["cells"] = int(sum(r.queries for r in runs))
    # the share of the estimated runs' holes read as relevant against the share the truth judges
    # relevant (runs scored in a protocol cell; their holes on the cut qrels)
    read = [r for r in estimated if getattr(r, "estimate_relevant_holes", None) is not None]
    holes = sum(r.read_holes for r in read)
    out["holes_relevant"] = ({"holes": int(holes), "estimate": sum(r.estimate_relevant_holes for r in read) / holes,
                              "truth": sum(r.truth_relevant_holes for r in read) / holes} if holes else None)
    return out


def pool_splits(names: list, full_scores: dict, *, protocol: str, pool_runs=None, seeds: int = DEFAULT_SEEDS,
                seed: int = 0, scored_runs=None) -> list:
    """(cell name, pool runs, scored runs) of each cell: ``pool_runs`` as given, else the
    weaker half (by ``full_scores``) and ``seeds`` random halves; ``few`` keeps each split's
    :data:`FEW` strongest scored runs. ``scored_runs``: one cell scoring those runs (all of
    them, under ``few`` too), pooled from ``pool_runs`` or else from every other run."""
    if len(names) < 2:
        raise JudgedError(f"the {protocol} protocol needs at least two runs")
    if scored_runs:
        scored = _named(scored_runs, names, "--scored-runs")
        pool = _named(pool_runs, names) if pool_runs else [n for n in names if n not in scored]
        both = sorted(set(scored) & set(pool))
        if both:
            raise ConventionError(f"--scored-runs and --pool-runs share {', '.join(both)}: a run is pooled or scored")
        if not pool:
            raise ConventionError("--scored-runs: no run is left to pool the qrels from")
        return [("runs given", pool, scored)]
    if pool_runs:
        chosen = _named(pool_runs, names)
        splits = [("pool runs given", chosen)]
    else:
        order = sorted(names, key=lambda n: (full_scores[n], n))
        splits = [("weaker half", order[:len(names) // 2])]
        rng = np.random.default_rng(seed)
        for s in range(seeds):
            pick = rng.permutation(len(names))[:len(names) // 2]
            splits.append((f"random half {s + 1}", [names[i] for i in sorted(pick.tolist())]))
    out = []
    for label, pool in splits:
        scored = [n for n in names if n not in pool]
        if not scored or not pool:
            raise JudgedError(f"{label}: the pool runs must leave at least one run to score, and be at least one")
        if protocol == "few":
            scored = sorted(scored, key=lambda n: (-full_scores[n], n))[:FEW]
        out.append((label, list(pool), scored))
    return out


def _named(given: list, names: list, flag: str = "--pool-runs") -> list:
    """The runs ``given`` name (:func:`match_run`), each once, in the order first named."""
    return list(dict.fromkeys(match_run(g, names, flag) for g in given))


def match_run(given: str, names: list, flag: str = "--pool-runs") -> str:
    """The run ``given`` names: its name, file name or file name without .gz/.run/.txt/.trec."""
    for key in (lambda n: n, os.path.basename, run_stem):
        hits = [n for n in names if key(n) == given]
        if len(hits) == 1:
            return hits[0]
    raise ConventionError(f"{flag}: no run named {given!r} among the runs given")


def shift_protocol(qrels, runs, measure, k: int, *, protocol: str = "shift", pool_runs=None,
                   seeds: int = DEFAULT_SEEDS, depth: int | None = None, samples: int = 200, seed: int = 0,
                   level: float | None = None, maxgrade: int | None = None, settings=None, estimate: str | None = None,
                   estimate_over: str | None = None, scored_runs=None) -> list:
    """The cells of ``protocol`` ('shift' or 'few'; module doc) on the full ``qrels`` and
    ``runs``, each scored by :func:`judged.analyses.holes.unjudged.holes_report` on its cut qrels."""
    import pandas as pd

    if protocol not in SHIFT_PROTOCOLS:
        raise ConventionError(f"protocol must be one of {', '.join(SHIFT_PROTOCOLS)}, got {protocol!r}")
    depth = k if depth is None else int(depth)
    m = replace(Measure.parse(measure), unjudged="zero", maxgrade=None)
    full = read_qrels(qrels, on_duplicate=settings.on_duplicate)
    scored = Scorer(full, {}, settings).runs(runs, ALIGNMENT)
    refuse_disjoint_runs(scored)
    aligned = scored.alignments()
    names = list(aligned)
    full_scores = {n: float(np.mean(m.compute(negative_as(a, settings.negative)))) for n, a in aligned.items()}
    # every run's top max(k, depth): query, docid, grade in the full qrels (NaN: never judged)
    rows = {}
    for n, a in aligned.items():
        top = a.ranked.top(max(k, depth))
        rows[n] = pd.DataFrame({"qid": a.qids.astype(str)[top.q], "docid": a.docids(top.row),
                                "grade": top.grade, "pos": top.pos})
    cells = []
    splits = pool_splits(names, full_scores, protocol=protocol, pool_runs=pool_runs, seeds=seeds, seed=seed,
                         scored_runs=scored_runs)
    condensed_m = replace(m, unjudged="condensed")
    with progress(len(splits), f"{protocol}: scoring new runs on qrels pooled from the others") as advance:
        for label, pool, scored in splits:
            cut = _judged_pairs([rows[n][rows[n].pos < depth] for n in pool])
            truth = _judged_pairs([cut] + [rows[n][rows[n].pos < k] for n in scored])
            cut_q = read_qrels(cut[["qid", "docid", "grade"]].reset_index(drop=True))
            truth = truth[truth.qid.isin(set(cut.qid))]  # the cut's queries: the means are over them
            truth_q = read_qrels(truth[["qid", "docid", "grade"]].reset_index(drop=True))
            targets = {n: aligned[n].run for n in scored}
            reference = {n: aligned[n].run for n in pool} if protocol == "shift" else None
            report = holes_report(cut_q, targets, k=k, measure=str(m), maxgrade=maxgrade,
                                  samples=samples, seed=seed, level=level, reference=reference, settings=settings,
                                  estimate=estimate, estimate_over=estimate_over)
            # the ranks the estimate filled holes above (its own record; k without an estimate)
            fill_to = (report.estimates.info["fit"]["holes_estimated_to_rank"]
                       if report.estimates is not None and "fit" in report.estimates.info else k)
            true = evaluate(truth_q, targets, [str(m)], settings=replace(settings, complete=True))
            cond = evaluate(cut_q, targets, [str(condensed_m)], settings=replace(settings, complete=True))
            out = []
            for n in scored:
                rh = report.runs[n]
                tv = _values_on(true.runs[n], str(m), rh.aligned.qids)
                own = _judged_pairs([cut, rows[n][rows[n].pos < k]])
                own = read_qrels(own[own.qid.isin(set(cut.qid))].reset_index(drop=True))
                own = evaluate(own, {n: targets[n]}, [str(m)], settings=replace(settings, complete=True))
                top = rows[n][rows[n].pos < k]
                filled = top[top.pos < fill_to]  # the holes the estimate fills
                holes_top = filled.merge(cut[["qid", "docid"]], on=["qid", "docid"], how="left", indicator=True)
                holes_top = holes_top[(holes_top["_merge"] == "left_only") & holes_top.qid.isin(set(cut.qid))]
                lo_t, hi_t = bounds(replace(m, maxgrade=maxgrade), align(truth_q, aligned[n].run, settings))
                out.append(CellRun(
                    run=n, truth=float(tv.mean()), truth_holes=int(top.grade.isna().sum()),
                    truth_width=float(hi_t.mean() - lo_t.mean()),
                    holes=int(rh.holes.sum()), judged=float(rh.judged.mean()), zero=float(rh.score.mean()),
                    condensed=float(np.mean(cond.runs[n].values[str(condensed_m)])),
                    min=float(rh.low.mean()), max=float(rh.high.mean()),
                    **_estimate_fields(rh, report.estimates), queries=len(tv),
                    cell_violations=int(((tv < rh.low - TOLERANCE) | (tv > rh.high + TOLERANCE)).sum()),
                    truth_own=float(_values_on(own.runs[n], str(m), rh.aligned.qids).mean()),
                    truth_relevant_holes=int((holes_top.grade > 0).sum()), read_holes=int(len(holes_top))))
            est = report.estimates.describe() if report.estimates is not None else {}
            cells.append(Cell(label, protocol, pool, scored, out, int(len(full) - len(cut)), int(len(cut)),
                              {"method": est.get("method"), "fallback": est.get("fallback"),
                               "over": (est.get("fit") or {}).get("over")}))
            advance()
    return cells


def _judged_pairs(frames: list):
    """The distinct judged (qid, docid) pairs of ``frames``, with their grades."""
    import pandas as pd

    both = pd.concat(frames, ignore_index=True)
    both = both[both.grade.notna()]
    return both.drop_duplicates(["qid", "docid"])[["qid", "docid", "grade"]].astype({"grade": "int64"})


def _values_on(run_result, measure: str, qids: np.ndarray) -> np.ndarray:
    """The run's per-query values in the order of ``qids`` (0 for a query it lacks)."""
    at = {q: i for i, q in enumerate(run_result.qids.astype(str).tolist())}
    v = run_result.values[measure]
    return np.array([v[at[q]] if q in at else 0.0 for q in qids.astype(str).tolist()])


def abstains(row) -> bool:
    """Whether the estimator gave no estimate of this run: none at all, or its stated fallback
    (holes counted as zero, the reason in ``abstain``), which is not an estimate."""
    return row.estimate is None or row.method == FALLBACK


def _estimate_fields(rh, estimates) -> dict:
    if rh.estimate is None or estimates is None:
        return {"estimate": None, "low": float(rh.low.mean()), "high": float(rh.high.mean()), "interval": "none",
                "method": "none", "abstain": "no estimate for this measure"}
    fallback = estimates.info.get("fallback")
    detail = rh.estimate_detail
    read = None if fallback or detail is None else float(detail.details["relevant_holes"])
    return {"estimate_relevant_holes": read, "estimate": float(np.mean(rh.estimate)), "low": float(rh.estimate_interval[0]),
            "high": float(rh.estimate_interval[1]), "interval": getattr(rh.estimate_detail, "interval", "bounds"),
            "method": estimates.method, "abstain": f"{estimates.method}: {fallback}" if fallback else None}


@dataclass
class ShiftResult:
    """The cells of a shift or few protocol (``judged meta holdout --protocol shift|few``)."""

    protocol: str
    measure: str
    convention: str
    k: int
    depth: int
    level: float
    cells: list  # Cell

    def summary(self) -> dict:
        """Each cell's summary, and one over every cell's runs together."""
        return {"cells": {c.name: c.summary() for c in self.cells},
                "all": summarize([r for c in self.cells for r in c.runs])}

    def to_dict(self) -> dict:
        return {"protocol": self.protocol, "measure": self.measure, "convention": self.convention, "k": self.k,
                "depth": self.depth, "level": self.level, "cells": [c.to_dict() for c in self.cells],
                "summary": self.summary()}
