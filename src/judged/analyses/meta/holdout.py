"""Leave-one-run-out (or leave-one-group-out): how reusable is this collection for a
run that did not contribute to its pool, and does the hole estimate hold?

For each run (or each group of runs, e.g. a team's submissions), the judgments that only
it contributed are removed: those of the (query, document) pairs it alone has in its top
``depth`` (``--pool-depth``) among the given runs and groups (Zobel, SIGIR 1998; Voorhees,
"The Philosophy of Information Retrieval Evaluation", CLEF 2001; Buttcher et al., SIGIR
2007). The run is
then scored on the reduced qrels, as a new system would be, and compared with its score
on the full qrels:

* **holes as zero**: the reduced qrels as they are (trec_eval's reading);
* **condensed**: unjudged documents removed from the ranking before scoring (Sakai,
  SIGIR 2007; trec_eval -J);
* **bounds**: the exact min and max over every grade of the holes (:mod:`judged.analyses.holes.unjudged`);
  the full score must lie inside, and a violation is a defect;
* **estimate** and its interval (:mod:`judged.analyses.holes.estimate`), computed exactly as ``judged
  holes`` would compute them on the reduced qrels with the same runs: the model is
  fitted without the held-out run's judgments (they are gone from the reduced qrels) and
  the interval is calibrated on the other runs' leave-one-out residuals in that world.

Runs that rank the same k documents in the same order for every query are one system to
the pool (each has what the other has): held out by run, they are held out together, as
``judged holes`` counts them as one unit (the JSON's ``estimate.same_top_k`` lists them).

A run's "full" score counts the holes it has even on the full qrels as not relevant
(there is no truth for them); the summary says how many runs have such holes.

The summary gives each scoring's mean absolute error, mean signed error and largest
error against the full score, the interval's coverage, the bound violations and Kendall's
tau between the system ranking under each scoring and under the full qrels.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

import numpy as np

from ...core.words import counted
from ...core.conventions import Settings
from ...core.errors import ConventionError, JudgedError, ParseError
from ...core.progress import progress
from ...core.runnames import run_stem
from ...core.querysets import of_scored
from .protocols import TOLERANCE, TruthChecks, summarize, DEFAULT_SEEDS, ShiftResult, shift_protocol
from .stability import kendall_tau, tau_ap
from ..holes.estimate import DEFAULT_LEVEL, estimate_runs
from ..holes.collection import build_pool, make_world, unit_removal, world_aligned
from ..holes.drawn_scores import fill_depth
from ...core.evaluation import Keep, Scorer
from ...core.measures.bounds import bounds, check_maxgrade, list_depth, pool_extras
from ..holes.unjudged import estimate_over_of, estimate_source, negative_as
from ...core.measures import BOUNDED, Measure
from ...core.measures.registry import family

SCORINGS = ("zero", "condensed", "estimate")
PROTOCOLS = ("loro", "group", "shift", "few")
DEFAULT_GROUP_REGEX = r"[A-Za-z]+"  # a run's leading letters; a label without letters is its own group


@dataclass
class HoldoutRun(TruthChecks):
    """One run held out: its scores on the full and the reduced qrels."""

    run: str
    group: str
    removed: int  # judgments removed (only this run's unit contributed them)
    holes: int  # holes in the measure's ranked list on the reduced qrels
    judged: float  # mean Judged@k on the reduced qrels
    full_holes: int  # holes in the measure's ranked list on the full qrels (they count as 0 in ``full``)
    full: float
    zero: float
    condensed: float
    min: float
    max: float
    estimate: float
    low: float
    high: float
    interval: str  # conformal | bounds | exact
    method: str  # the estimate's method (or its fallback)
    truth_width: float = 0.0  # how far judging the full qrels' own holes could move ``full`` (mean max - min)
    queries: int = 0
    cell_violations: int = 0  # queries whose full score lies outside the run's per-query bounds
    abstain: str | None = None  # why the estimator did not estimate this run (``estimate`` is then None)
    # its holes on the reduced qrels that the full qrels judge relevant (grade > 0), and that the
    # estimate reads as relevant (expected; None: no estimate)
    truth_relevant_holes: int | None = None
    estimate_relevant_holes: float | None = None
    read_holes: int | None = None  # its holes the estimate fills (above its fill depth): the shares' denominator

    @property
    def truth(self) -> float:
        return self.full

    @property
    def truth_holes(self) -> int:
        return self.full_holes

    def to_dict(self) -> dict:
        return {"run": self.run, "group": self.group, "removed": self.removed, "holes": self.holes,
                "judged": self.judged, "full_holes": self.full_holes, "full": self.full, "zero": self.zero,
                "condensed": self.condensed, "min": self.min, "max": self.max, "estimate": self.estimate,
                "low": self.low, "high": self.high, "interval": self.interval, "method": self.method,
                "covered": self.covered, "violation": self.violation, "truth_width": self.truth_width,
                "queries": self.queries, "cell_violations": self.cell_violations, "abstain": self.abstain,
                "truth_relevant_holes": self.truth_relevant_holes,
                "estimate_relevant_holes": self.estimate_relevant_holes, "read_holes": self.read_holes}


@dataclass
class HoldoutResult:
    qrels: object
    measure: object
    convention: str
    k: int
    depth: int
    by: str
    level: float
    runs: list  # HoldoutRun, in the order given
    estimate: dict  # how the estimates were made
    groups: dict = field(default_factory=dict)  # group -> run names
    query_set: object = None  # judged.core.querysets.QuerySet: every run over every qrels query
    protocol: str = "loro"  # loro | group (this result); shift and few: judged.analyses.meta.protocols

    @property
    def warnings(self) -> list:
        return self.query_set.warnings() if self.query_set is not None else []

    def summary(self) -> dict:
        """MAE, bias and largest error per scoring over the runs with a truth (``left_out``:
        those whose full score judging its own holes could move by more than
        :data:`~judged.analyses.meta.protocols.TRUTH_WIDTH`; ``mae_all``: over every run);
        interval coverage; violations of the bounds (means, and query ``cell_violations``); tau."""
        full = np.array([r.full for r in self.runs])
        shared = summarize(self.runs)
        out = {"runs": len(self.runs), "held_out": len({r.group for r in self.runs}),
               "removed": int(sum(r.removed for r in self.runs)),
               "runs_with_holes": int(sum(r.holes > 0 for r in self.runs)),
               "runs_with_holes_in_full": int(sum(r.full_holes > 0 for r in self.runs)),
               "holes_in_full": int(sum(r.full_holes for r in self.runs))}
        for key in ("counted", "left_out", "truth_width_limit", "estimated", "abstained", "mae", "bias", "max_error",
                    "mae_all", "cell_violations", "cells", "holes_relevant"):
            out[key] = shared[key]
        for s in SCORINGS:
            v = np.array([r.full if getattr(r, s) is None else getattr(r, s) for r in self.runs])
            out.setdefault("kendall_tau", {})[s] = kendall_tau(full, v) if len(v) > 1 else float("nan")
            if len(v) > 1:
                names = [r.run for r in self.runs]
                ref = [names[i] for i in np.argsort(-full, kind="stable")]
                got = [names[i] for i in np.argsort(-v, kind="stable")]
                out.setdefault("tau_ap", {})[s] = tau_ap(ref, got)
            else:
                out.setdefault("tau_ap", {})[s] = float("nan")
        # coverage over the estimate intervals (conformal) of the runs with a truth: an interval that
        # is the bounds (too few runs to calibrate one) holds the truth by construction, informing nothing
        open_runs = [r for r in self.runs if r.interval == "conformal" and r.truth_width <= shared["truth_width_limit"]]
        out["coverage"] = (float(np.mean([r.covered for r in open_runs])) if open_runs else float("nan"))
        out["covered"] = int(sum(r.covered for r in open_runs))
        out["intervals"] = len(open_runs)
        out["bounds_only"] = int(sum(r.interval == "bounds" for r in self.runs))
        out["coverage_all_runs"] = float(np.mean([r.covered for r in self.runs])) if self.runs else float("nan")
        # the runs the protocol tests: those whose held-out step removed judgments. A run that
        # contributed nothing of its own (e.g. one the pool never reached) is scored on the
        # full qrels either way; its holes are holes there too, counted as 0 in `full`, and an
        # estimate that fills them misses that number by design (the synthetic 59-run
        # collection, 40 runs pooled: 0/19 of the others covered, 37/40 of the pooled)
        tested = [r for r in self.runs if r.removed > 0]
        out["intervals_tested"] = sum(r.interval != "exact" for r in tested)
        out["covered_tested"] = int(sum(r.covered for r in tested if r.interval != "exact"))
        out["coverage_tested"] = (out["covered_tested"] / out["intervals_tested"] if out["intervals_tested"]
                                  else float("nan"))
        out["mae_tested"] = {sc: float(np.mean([abs(getattr(r, sc) - r.full) for r in tested
                                                if getattr(r, sc) is not None])) if tested
                             else float("nan") for sc in SCORINGS}
        out["mean_width"] = float(np.mean([r.high - r.low for r in open_runs])) if open_runs else 0.0
        out["violations"] = int(sum(r.violation for r in self.runs))
        out["fallbacks"] = int(sum(r.method != self.estimate["method"] for r in self.runs))
        return out

    def to_dict(self) -> dict:
        return {"protocol": self.protocol,
                "qrels": {"path": self.qrels.source, "sha256": self.qrels.sha256}, "measure": str(self.measure),
                "convention": self.convention, "k": self.k, "depth": self.depth, "by": self.by,
                "level": self.level, "estimate": self.estimate, "groups": self.groups,
                "runs": [r.to_dict() for r in self.runs], "summary": self.summary(),
                **({"query_set": self.query_set.to_dict()} if self.query_set is not None else {}),
                "warnings": self.warnings}


def run_groups(names: list, *, mapping: str | None = None, regex: str | None = None) -> dict:
    """Group of each run name: from a mapping file (lines ``RUN GROUP``; RUN is the name
    as given, its file name, or its file name without .gz/.run/.txt/.trec) or from
    ``regex`` (its first group, else the whole first match) searched in the run's label:
    its file name without those endings and without the prefix, up to a '.', '-' or
    '_', every run's file name shares (``input.``, ``dl-19-official-input.``); by default
    (:data:`DEFAULT_GROUP_REGEX`) the label's leading letters."""
    labels = _labels(names)
    if mapping is not None:
        table = _read_groups(mapping)
        out, missing = {}, []
        for name, label in zip(names, labels):
            keys = (name, os.path.basename(name), run_stem(name), label)
            hit = next((table[k] for k in keys if k in table), None)
            if hit is None:
                missing.append(os.path.basename(name))
            out[name] = hit
        if missing:
            raise JudgedError(f"{mapping}: no group for run(s) {', '.join(missing[:5])}"
                              f"{' ...' if len(missing) > 5 else ''}")
        return out
    try:
        pattern = re.compile(regex or DEFAULT_GROUP_REGEX)
    except re.error as exc:
        raise ConventionError(f"--group-regex {regex!r} is not a regular expression: {exc}")
    out = {}
    for name, label in zip(names, labels):
        m = pattern.search(label)
        if m is None and regex is None:  # the default: a label without letters ('1', '2') is its own group
            out[name] = label
            continue
        if m is None:
            raise ConventionError(f"--group-regex {pattern.pattern!r} does not match run {label!r}")
        out[name] = m.group(1) if m.groups() and m.group(1) is not None else m.group(0)
    return out


def _labels(names: list) -> list:
    stems = [run_stem(n) for n in names]
    if len(stems) < 2:
        return stems
    prefix = os.path.commonprefix(stems)
    cut = max(prefix.rfind(c) for c in ".-_ ") + 1  # the shared prefix up to its last separator
    return [s[cut:] for s in stems]


def _read_groups(path: str) -> dict:
    table = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            parts = text.split()
            if len(parts) != 2:
                raise ParseError(path, n, f"expected 'RUN GROUP', got {counted(len(parts), 'field')}")
            table[parts[0]] = parts[1]
    return table


def holdout(qrels, runs, k: int = 10, measure=None, *, by: str = "run", groups: str | None = None,
            group_regex: str | None = None, depth: int | None = None, samples: int = 200, seed: int = 0,
            level: float | None = None, maxgrade: int | None = None, settings: Settings | None = None,
            protocol: str | None = None, pool_runs=None,
            seeds: int | None = None, estimate: str | None = None, estimate_over: str | None = None,
            scored_runs=None):
    """Hold out each run (``by='run'``, ``protocol='loro'``) or group (``by='group'``,
    ``protocol='group'``) in turn; see the module doc. ``protocol='shift'`` or ``'few'``: new
    runs scored on qrels pooled from the others (``pool_runs``, else the weaker half and
    ``seeds`` random halves; ``scored_runs``: one cell scoring those, pooled from ``pool_runs``
    or every other run), a :class:`~judged.analyses.meta.protocols.ShiftResult`
    (:mod:`judged.analyses.meta.protocols`).

    ``k``: the depth holes are counted at and the measure's default cutoff (nDCG@k);
    ``depth``: the pool depth a run contributes (default k); ``groups``: a file of
    ``RUN GROUP`` lines, else ``group_regex`` on the run names (see :func:`run_groups`).
    Runs are scored over every qrels query (``complete=True``, the query-set rule of every
    command comparing runs, :mod:`judged.core.querysets`; ``settings`` default
    ``Settings(complete=True)``); a run sharing no query id with the qrels is refused."""
    settings = Settings(complete=True) if settings is None else settings
    negative = settings.negative
    if by not in ("run", "group"):
        raise ConventionError(f"--by must be run or group, got {by!r}")
    if protocol is not None:
        if protocol not in PROTOCOLS:
            raise ConventionError(f"--protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
        if protocol in ("loro", "group") and by != "run" and by != {"loro": "run", "group": "group"}[protocol]:
            raise ConventionError(f"--protocol {protocol} and --by {by} disagree (--by is the old spelling)")
        by = "group" if protocol == "group" else "run" if protocol == "loro" else by
    if protocol not in ("shift", "few") and (pool_runs or seeds is not None or scored_runs):
        raise ConventionError("--pool-runs, --scored-runs and --seeds go with --protocol shift or few")
    if k < 1:
        raise ConventionError(f"-k must be a positive integer, got {k}")
    if depth is not None and depth < 1:
        raise ConventionError(f"--pool-depth must be a positive integer, got {depth}")
    if by == "run" and (groups is not None or group_regex is not None):
        raise ConventionError("--groups and --group-regex go with --by group")
    check_maxgrade(maxgrade)
    level = DEFAULT_LEVEL if level is None else float(level)
    if by == "group" and not isinstance(runs, dict) and all(isinstance(r, (str, os.PathLike)) for r in runs):
        run_groups([os.fspath(r) for r in runs], mapping=groups, regex=group_regex)  # refused before any reading
    m = Measure.parse(measure or f"nDCG@{k}")
    # the estimate models grades, not subtopics; holdout reports exact bounds (not nERR's conservative ones)
    estimable = [name for name in BOUNDED if not family(name).subtopics and family(name).bounds == "exact"]
    if not (m.family.boundable and not m.family.subtopics and m.family.bounds == "exact"):
        raise ConventionError(f"holdout bounds and estimates are defined for {', '.join(estimable)}, not {m.name}")
    m = replace(m, unjudged="zero", maxgrade=None if maxgrade is None else int(maxgrade))
    if protocol in ("shift", "few"):
        cells = shift_protocol(qrels, runs, m, k, protocol=protocol, pool_runs=pool_runs,
                               seeds=DEFAULT_SEEDS if seeds is None else seeds, depth=depth, samples=samples, seed=seed,
                               level=level, maxgrade=maxgrade, settings=settings,
                               estimate=estimate, estimate_over=estimate_over, scored_runs=scored_runs)
        return ShiftResult(protocol, str(replace(m, maxgrade=None)), replace(m, maxgrade=None).convention(settings), k,
                           k if depth is None else int(depth), level, cells)
    zero_m = replace(m, maxgrade=None)
    condensed_m = replace(zero_m, unjudged="condensed")
    scored = Scorer(qrels, {}, settings).runs(runs, Keep(True, docids_only=True), digests=False)  # no sha256 shown
    qrels, aligned = scored.qrels, scored.alignments()
    query_set = of_scored(scored, measures=[m])
    named = [(name, negative_as(a, negative)) for name, a in aligned.items()]
    if len(named) < 2:
        raise JudgedError("leave-one-run-out needs at least two runs")
    names = [n for n, _ in named]
    if by == "group":
        of = run_groups(names, mapping=groups, regex=group_regex)
        unit_names = list(dict.fromkeys(of[n] for n in names))
        units = np.array([unit_names.index(of[n]) for n in names])
        if len(unit_names) < 2:
            raise JudgedError(f"leave-one-group-out needs at least two groups; every run is in {unit_names[0]!r}")
    else:  # build_pool's units: runs with the same top k are one system, held out together as `judged holes` counts them
        of = {n: os.path.basename(n) for n in names}
        units = unit_names = None
    depth = k if depth is None else int(depth)
    ld = list_depth(zero_m)
    pool = build_pool(named, k, depth, units, unit_names, zone=None if ld is None else max(ld, k, depth))
    units, unit_names = pool.unit, pool.unit_names
    judged_m = Measure.parse(f"Judged@{k}")

    rows, fits = [], []
    with progress(len(unit_names), f"holding out each {by} in turn") as advance:
        for u in range(len(unit_names)):
            members = np.flatnonzero(units == u).tolist()
            removal = unit_removal(pool, [u])
            world = make_world(pool, removal)
            reduced = {i: world_aligned(pool, world, i) for i in members}
            # bounds over the held-out unit's pool (its runs' holes in their top max(k, depth)): the
            # judgments removed are all there, so the full qrels are one labelling of it
            extras = pool_extras(m, [reduced[i] for i in members], depth=max(k, depth))
            bound, per_query = {}, {}
            for i, e in zip(members, extras):
                per_query[i] = bounds(m, reduced[i], e)
                bound[i] = (_mean(per_query[i][0]), _mean(per_query[i][1]))
            est = estimate_runs(zero_m, pool, world, targets=members, samples=samples, seed=seed, level=level,
                                bounds=bound, maxgrade=maxgrade, source=estimate_source(estimate),
                                over=estimate_over_of(estimate_over, False))
            fits.append(est)
            removed = int(removal.sum())
            for i in members:
                a, r = named[i][1], reduced[i]
                e = est.runs[i]
                top = r.ranked.top(m.cutoff)
                full_q = zero_m.compute(a)
                lo_q, hi_q = per_query[i]
                full_top = a.ranked.top(m.cutoff)
                width = 0.0
                filled = (~top.judged) & (top.pos < fill_depth(zero_m, pool))  # the holes the estimate fills
                if (~full_top.judged).any():  # the full qrels' own holes: how far judging them could move it
                    lo_f, hi_f = bounds(m, a)
                    width = _mean(hi_f) - _mean(lo_f)
                rows.append(HoldoutRun(
                    run=names[i], group=of[names[i]] if by == "group" else unit_names[u], removed=removed,
                    holes=int((~top.judged).sum()), judged=_mean(judged_m.compute(r)),
                    full_holes=int((~full_top.judged).sum()), full=_mean(full_q),
                    zero=_mean(zero_m.compute(r)), condensed=_mean(condensed_m.compute(r)), min=bound[i][0],
                    max=bound[i][1], estimate=e.value, low=e.low, high=e.high, interval=e.interval, method=est.method,
                    truth_width=width, queries=len(full_q),
                    abstain=f"{est.method}: {est.info['fallback']}" if est.info.get("fallback") else None,
                    cell_violations=int(((full_q < lo_q - TOLERANCE) | (full_q > hi_q + TOLERANCE)).sum()),
                    truth_relevant_holes=int((filled & (full_top.grade > 0)).sum()), read_holes=int(filled.sum()),
                    estimate_relevant_holes=None if est.info.get("fallback") else float(e.details["relevant_holes"])))
            del reduced, top, r, per_query  # this unit's grades: freed before the next unit's are made
            advance()
    order = {n: j for j, n in enumerate(names)}
    rows.sort(key=lambda r: order[r.run])
    first = next((f for f in fits if f.method != "holes-as-zero"), fits[0])
    described = first.describe()
    estimate = {"method": described["method"], "source": described["source"], "level": level,
                "samples": samples, "seed": seed,
                "nested": (f"each held-out {by}'s estimate and interval are those `judged holes` gives on its reduced "
                           f"qrels: the model fitted on the other {by}s' leave-one-out pseudo-holes there, the "
                           f"interval calibrated on their residuals there"),
                "fits": [{"held_out": unit_names[u], "method": f.method, "pseudo_holes": f.info["fit"]["pseudo_holes"],
                          "fallback": f.info.get("fallback")} for u, f in enumerate(fits)],
                "features": described["fit"]["features"],
                "same_top_k": [[os.path.basename(n) for n in m] for m in pool.same_lists]}
    grouped = {}
    for n in names:
        grouped.setdefault(of[n] if by == "group" else os.path.basename(n), []).append(n)
    return HoldoutResult(qrels, m, zero_m.convention(settings), k, depth, by, level, rows, estimate,
                         grouped if by == "group" else {}, query_set, "group" if by == "group" else "loro")


def _mean(v) -> float:
    return float(np.mean(v)) if len(v) else 0.0
