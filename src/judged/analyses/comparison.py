"""Paired comparison of runs against a baseline over the same queries.

``compare(qrels, [baseline, run, ...], measures)`` scores every run with
:func:`judged.evaluate` over the qrels' queries (a run missing a query scores 0 there:
``complete=True``, counted in ``counts``), then, per run and measure, computes the
paired statistics of :mod:`judged.analyses.stats` on the per-query differences and corrects
the p-values across the runs compared on one measure. ``regressions`` lists, per run,
the queries it lost most on, with both rankings side by side and the unjudged
documents newly in its top k.
"""

from __future__ import annotations

import contextlib
import json
import sys
from dataclasses import dataclass, field, replace

import numpy as np

from . import stats
from ..core import DISPLAY
from ..core.errors import JudgedError, MeasureError
from ..core.measures import MIN_GEO_MEAN, named_measures, Measure
from ..core.progress import progress
from ..core.evaluation import ALIGNMENT, VALUES, Keep, evaluate, sugared
from ..core.measures.bounds import check_maxgrade, list_depth
from ..core.querysets import refuse_disjoint_runs
from .holes.unjudged import comparison_holes

DEFAULT_MEASURES = ("nDCG@10",)
ALPHA = 0.05  # the significance marks' level
MARK_TEST = "randomization"  # the test behind the marks (its p corrected across the runs of a measure)
NOT_TESTED = "not tested: Judged@k measures how much of the ranking was judged (coverage), not its quality"
DEFAULT_REGRESSIONS = 5
DEFAULT_DEPTH = 10  # ranks shown for a measure without a cutoff
ON_LOGS = ("paired tests, W/L/T and d_z on log(max(value, 1e-05)) per query (trec_eval's gm_map floor); Δ mean = "
           "the difference of the geometric means; 95% CI = the t interval of the mean log ratio r, as "
           "GM(baseline) x (exp(r) - 1)")


@dataclass
class PairedComparison:
    """One run against the baseline on one measure."""

    measure: str
    baseline: str
    run: str
    mean_baseline: float
    mean_run: float
    test: stats.PairedTest
    p_adjusted: dict = field(default_factory=dict)
    # a geometric-mean measure (GMAP): the tests ran on log(max(value, 1e-5)) per query, whose mean
    # difference and interval are kept here; test.mean_delta / ci95 are on the geometric means (ON_LOGS)
    log_ratio: dict | None = None

    @property
    def paired_on(self) -> str | None:
        """How the tests read the per-query values when not as they are (GMAP: ON_LOGS), else None."""
        return ON_LOGS if self.log_ratio else None

    @property
    def mark(self) -> str:
        """▲/▼ when :data:`MARK_TEST`'s corrected p is below :data:`ALPHA`; blank otherwise,
        for an undefined p and for a coverage measure (Judged@k, never tested)."""
        return significance_mark(self.p_adjusted.get(MARK_TEST, float("nan")), self.test.mean_delta)

    def to_dict(self) -> dict:
        t = self.test
        return {"measure": self.measure, "baseline": self.baseline, "run": self.run,
                "mean_baseline": self.mean_baseline, "mean_run": self.mean_run, "mean_delta": t.mean_delta,
                "ci95": [t.ci95[0], t.ci95[1]], "wins": t.wins, "losses": t.losses, "ties": t.ties,
                "effect_size": t.effect_size if np.isfinite(t.effect_size) else None,  # sd 0: no finite d_z
                "p_values": _defined(t.p_values), "p_adjusted": _defined(self.p_adjusted),
                "methods": dict(t.methods), "queries": t.n,
                **({"paired_on": self.paired_on, "log_ratio": dict(self.log_ratio)} if self.log_ratio else {})}


@dataclass
class Regression:
    """A query the run lost on, with both top-k rankings: (rank, docid, grade or None)."""

    run: str
    measure: str
    qid: str
    baseline_value: float
    run_value: float
    baseline_ranking: list
    run_ranking: list
    newly_unjudged: list  # unjudged docids in the run's top k, absent from the baseline's top k

    @property
    def delta(self) -> float:
        return self.run_value - self.baseline_value

    def to_dict(self) -> dict:
        def rows(ranking):
            return [{"rank": r, "docid": d, "grade": g} for r, d, g in ranking]

        return {"run": self.run, "measure": self.measure, "qid": self.qid, "baseline_value": self.baseline_value,
                "run_value": self.run_value, "delta": self.delta, "baseline_ranking": rows(self.baseline_ranking),
                "run_ranking": rows(self.run_ranking), "newly_unjudged": list(self.newly_unjudged)}


@dataclass
class Comparison:
    baseline: str
    runs: list  # compared runs, baseline excluded, in the order given
    measures: dict  # measure as given -> canonical convention string
    comparisons: list  # PairedComparison, measure-major
    correction: str
    permutations: int
    seed: int
    qids: np.ndarray
    values: dict  # run -> measure -> per-query values (aligned with qids)
    counts: dict = field(default_factory=dict)  # run -> query counts
    regressions: list = field(default_factory=list)
    provenance: dict = field(default_factory=dict)  # qrels, manifest, record notes
    result: object = field(default=None, repr=False)  # the evaluate() Result, when there is one
    holes: object = None  # judged.analyses.holes.unjudged.ComparisonHoles: Judged@k per run, can judging flip a comparison
    sample: object = None  # judged.analyses.holes.inference.SampleDecisions: estimates from a judged sample (--sample)
    answers: dict = field(default_factory=dict)  # run -> judged.analyses.answers.AnswerPairing, with an answers file
    machine: object = None  # judged.analyses.holes.machine.MachineFilled: the scores with the holes machine-labelled, apart
    ppi: object = None  # judged.analyses.holes.ppi.PPIReport: prediction-powered estimates (--machine with --sample)

    def get(self, measure: str, run: str) -> PairedComparison:
        for c in self.comparisons:
            if c.measure == measure and c.run == run:
                return c
        raise KeyError((measure, run))

    def table(self):
        """One row per (measure, run): means, delta, CI, W/L/T, effect size, p-values."""
        import pandas as pd

        rows = []
        for c in self.comparisons:
            d = c.to_dict()
            flat = {k: d[k] for k in ("measure", "baseline", "run", "mean_baseline", "mean_run", "mean_delta",
                                      "wins", "losses", "ties", "effect_size", "queries")}
            flat["ci95_lo"], flat["ci95_hi"] = d["ci95"]
            flat.update({f"p_{k}": v for k, v in d["p_values"].items()})
            flat.update({f"p_adjusted_{k}": v for k, v in d["p_adjusted"].items()})
            rows.append(flat)
        return pd.DataFrame(rows)

    def settings(self) -> dict:
        return {"correction": self.correction, "permutations": self.permutations, "seed": self.seed,
                "tie": f"|difference| <= {stats.TIE:g} x max(1, largest |score|)", "tolerance": stats.TOLERANCE,
                "ci95": stats.CI_METHOD, "effect_size": stats.EFFECT_SIZE, "tests": stats.TESTS_METHOD}

    def flip(self, c: PairedComparison):
        """The :class:`judged.analyses.holes.unjudged.PairFlip` of a comparison (run - baseline), or None."""
        return self.holes.flip(c.measure, c.run) if self.holes is not None else None

    @property
    def checks(self):
        """The :class:`judged.core.checks.Checks` of the evaluation (scale, leaks, evidence...), or None."""
        return getattr(self.result, "checks", None)

    def leaks(self) -> dict:
        """Run name -> its leaks (ineligible documents in the top k); empty without eligibility data."""
        return self.checks.leaks(self.result) if self.checks is not None else {}

    @property
    def query_set(self):
        """Which queries every comparison is over (:mod:`judged.core.querysets`), or None (records)."""
        return self.result.query_set if self.result is not None else None

    def to_dict(self) -> dict:
        """The ``judged compare --format json`` contract, plus ``query_set``, ``holes`` (Judged@k per run and,
        in the order of ``comparisons``, whether judging the holes could flip each one),
        ``checks`` and ``answers`` when known, and ``sample`` (estimates from a judged sample,
        per run whether its order with the baseline is decided) with ``--sample``."""
        out = {"comparisons": [c.to_dict() for c in self.comparisons],
               "baseline": self.baseline, "runs": list(self.runs), "measures": dict(self.measures),
               "settings": self.settings(), "queries": {name: dict(c) for name, c in self.counts.items()},
               "regressions": [r.to_dict() for r in self.regressions], **self.provenance}
        if self.query_set is not None:
            out["query_set"] = self.query_set.to_dict()
        if self.holes is not None:
            flips = [(c, self.flip(c)) for c in self.comparisons]
            out["holes"] = {**self.holes.to_dict(),
                            "comparisons": [{"measure": c.measure, "baseline": c.baseline, "run": c.run,
                                             **{k: v for k, v in f.to_dict().items() if k not in ("a", "b")}}
                                            for c, f in flips if f is not None]}
        if self.checks is not None:
            out["checks"] = {**self.checks.to_dict(self.result),
                             "runs": {name: self.checks.run_dict(self.result, name) for name in self.result.runs}}
        if self.answers:
            out["answers"] = {name: p.to_dict() for name, p in self.answers.items()}
        if self.machine is not None:
            out["machine"] = self.machine.to_dict()
        if self.ppi is not None:
            out["ppi"] = {**self.ppi.to_dict(), "notes": list(getattr(self.ppi, "notes", []))}
        if self.sample is not None:
            out["sample"] = self.sample.to_dict()
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=_json_default)

    def _repr_html_(self) -> str:
        """Jupyter: the comparison tables with conventions (see :mod:`judged.notebook`)."""
        return DISPLAY["comparison_html"](self)

    def plot(self, measure: str | None = None, run: str | None = None, ax=None):
        """Sorted per-query differences run − baseline (matplotlib); see :func:`judged.notebook.plot_comparison`."""
        return DISPLAY["plot_comparison"](self, measure, run, ax)


def significance_mark(p_adjusted: float, delta: float, alpha: float = ALPHA) -> str:
    """▲ (better) / ▼ (worse) when the corrected p is below ``alpha``; blank when it is not,
    or not defined (NaN)."""
    if not p_adjusted < alpha:
        return ""
    return "▲" if delta > 0 else "▼"


def is_coverage_measure(measure: str) -> bool:
    """A measure string naming a coverage measure (Judged@k): never tested, never marked."""
    try:
        return Measure.parse(measure).is_coverage
    except MeasureError:
        return False


def _defined(p: dict) -> dict:
    """p-values with a test not defined on the data (NaN) as None (JSON null)."""
    return {k: (None if v != v else v) for k, v in p.items()}


def _json_default(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    raise TypeError(type(x))


def paired_comparisons(values: dict, baseline: str, measures, *, correction: str = "holm",
                       permutations: int = stats.DEFAULT_PERMUTATIONS, seed: int = stats.DEFAULT_SEED,
                       show_progress: bool | None = None, pool=None) -> list:
    """Every run in ``values`` (run -> measure -> per-query array, same queries) against
    ``baseline``, per measure; p-values corrected across the runs of each measure. A
    coverage measure (Judged@k) gets the descriptive statistics only, no test. The random
    draws of the tests run in ``pool`` (an executor; default: two threads), the same numbers
    as one by one (:func:`judged.analyses.stats.paired_tests`)."""
    check_stats_options(correction, permutations, seed)
    others = [r for r in values if r != baseline]
    if not others:
        raise JudgedError("compare needs a baseline and at least one other run")
    tested = [(m, r) for m in measures if not is_coverage_measure(m) for r in others]
    logged = {m for m in measures if _geometric(m)}
    paired = (lambda m, v: np.log(np.maximum(np.asarray(v, np.float64), MIN_GEO_MEAN)) if m in logged else v)
    out = []
    with progress(len(others) * len(measures), "paired tests", show_progress) as advance, \
            _threads(2) if pool is None else contextlib.nullcontext(pool) as pool:
        tests = dict(zip(tested, stats.paired_tests([(paired(m, values[baseline][m]), paired(m, values[r][m]))
                                                     for m, r in tested], permutations, seed, pool=pool,
                                                    done=advance)))
        for m in measures:
            family = []
            base = values[baseline][m]
            for r in others:
                t = tests.get((m, r))
                if t is None:
                    t = stats.described_pair(paired(m, base), paired(m, values[r][m]), NOT_TESTED)
                    advance()
                c = PairedComparison(m, baseline, r, aggregate(m, base), aggregate(m, values[r][m]), t)
                family.append(_on_geometric_means(c) if m in logged else c)
            for test in stats.TESTS:
                adjusted = stats.adjust(np.array([c.test.p_values[test] for c in family]), correction)
                for c, p in zip(family, adjusted.tolist()):
                    c.p_adjusted[test] = p
            out += family
    return out


def _geometric(measure: str) -> bool:
    """A measure aggregated by its geometric mean (GMAP, GMBpref)."""
    try:
        return Measure.parse(measure).aggregate == "geometric-mean"
    except MeasureError:
        return False


def _on_geometric_means(c: PairedComparison) -> PairedComparison:
    """``c`` tested on the logs: its delta becomes GM(run) - GM(baseline) (exp of the mean log
    ratio r is GM(run) / GM(baseline)) and its interval the t interval of r as GM(baseline) x
    (exp(r) - 1); the log-scale figures move to ``log_ratio`` (ON_LOGS)."""
    t = c.test
    scale = lambda r: c.mean_baseline * float(np.expm1(r))
    c.log_ratio = {"mean_delta": t.mean_delta, "ci95": [t.ci95[0], t.ci95[1]]}
    c.test = replace(t, mean_delta=c.mean_run - c.mean_baseline, ci95=(scale(t.ci95[0]), scale(t.ci95[1])))
    return c


def _threads(n: int):
    """An executor of ``n`` threads (numpy and the kernels release the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(n, thread_name_prefix="judged-compare")


def check_stats_options(correction: str, permutations, seed) -> None:
    """A known correction, at least one random draw, a non-negative integer seed."""
    if correction not in stats.CORRECTIONS:
        raise JudgedError(f"unknown correction {correction!r} (choose {', '.join(stats.CORRECTIONS)})")
    _require_int("--permutations", permutations, 1)
    _require_int("--seed", seed, 0)


def _require_int(option: str, value, least: int) -> None:
    """``value`` must be an integer >= ``least`` (``option`` names it in the error)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        kind = "a positive integer" if least == 1 else f"an integer >= {least}"
        raise JudgedError(f"{option} must be {kind}, got {value!r}")


def aggregate(measure: str, values) -> float:
    """The run's number on ``measure`` from its per-query values, by the measure's registered
    aggregate (mean; sum for counts; geometric mean, floored at 1e-5, for GMAP and GMBpref),
    as ``judged eval`` prints it; the mean for a name that is not a measure."""
    try:
        return Measure.parse(measure).aggregate_of(values)
    except MeasureError:
        return float(np.mean(values)) if len(values) else 0.0


def compare(qrels, runs, measures=None, *, correction: str = "holm",
            permutations: int = stats.DEFAULT_PERMUTATIONS, seed: int = stats.DEFAULT_SEED,
            regressions: int = DEFAULT_REGRESSIONS, depth: int | None = None, manifest=None, holes: bool = True,
            maxgrade: int | None = None, answers=None, high: float | None = None, show_progress: bool | None = None,
            settings=None, side=None, deep: bool = True, digests: bool = True, **conventions) -> Comparison:
    """Compare runs with the first one (the baseline) over the qrels' queries.

    A run missing a query scores 0 there (``complete=True``: the query-set rule of every
    command that compares runs, :mod:`judged.core.querysets`); ``counts`` says how many and
    ``query_set`` states the rule. ``settings`` (a :class:`judged.core.conventions.Settings`)
    gives the conventions as one value (``depth_cut`` scores only each query's top N, trec_eval
    ``-M``, for runs of different depths; ``negative`` as in ``judged holes``) and ``side``
    (a :class:`judged.core.checks.SideFiles`) the side files (scale, requirements,
    eligibility, principal, unanswerable, abstain_marker, score_unanswerable) that go to
    :func:`judged.evaluate`; ``conventions`` is their keyword sugar, as evaluate's.
    ``manifest`` (a path or :class:`judged.core.manifest.Manifest`) fixes qrels, query set,
    measures and conventions and refuses qrels that changed. ``regressions`` queries
    per run (on the first measure) are listed with their top ``depth`` documents
    (default: the measure's cutoff, else 10); ``depth`` is also the k of Judged@k and
    of the leak and evidence-gap lists.

    ``holes`` (default on): Judged@k per run and, per comparison on a bounded measure,
    whether judging the holes could flip it (:func:`judged.analyses.holes.unjudged.comparison_holes`;
    ``maxgrade`` as in ``judged holes``); ``answers`` (a file of verdicts) pairs the first nDCG
    measure with answer acceptance (:func:`judged.analyses.answers.pair_answers`, ``high``).
    ``deep=False``: the caller reads the runs' alignments (``result``) no deeper than the
    comparison does, so when every measure reads a cutoff only, each run keeps the ranks
    down to the deepest cutoff and k (:func:`ranks_read`), not the whole ranking.
    ``digests=False``: the run files are not hashed (nothing shows their sha256).

    >>> c = compare({"q1": {"a": 1}, "q2": {"b": 1}},
    ...             {"base": {"q1": {"a": 1.0}, "q2": {"x": 1.0}}, "new": {"q1": {"a": 1.0}, "q2": {"b": 1.0}}},
    ...             ["RR"], permutations=1000)
    >>> c.get("RR", "new").test.mean_delta
    0.5
    """
    import math

    # the conventions as one value (settings=, or its keyword sugar), over every qrels query (judged.core.querysets)
    settings, side = sugared("compare", settings, side, conventions)
    settings = replace(settings, complete=True)
    check_stats_options(correction, permutations, seed)
    _require_int("--regressions", regressions, 0)
    if depth is not None:
        _require_int("--depth", depth, 1)
    check_maxgrade(maxgrade)
    if high is not None and not (isinstance(high, (int, float)) and math.isfinite(high)):
        raise JudgedError(f"--high must be a finite number, got {high!r}")
    if manifest is not None:
        from ..core.manifest import Manifest, evaluate_frozen

        if measures is not None:
            raise JudgedError("a manifest fixes the measures: pass measures=None with manifest=")
        manifest = Manifest.load(manifest)
        result = evaluate_frozen(manifest, runs, qrels=qrels, on_duplicate=settings.on_duplicate, side=side)
        result.settings = replace(result.settings, negative=settings.negative)  # where the holes are looked for
    else:
        # trec_eval's P.5,10: P_5 and P_10, as judged eval names them
        measures = list(named_measures(DEFAULT_MEASURES if measures is None else measures))
        # deep=False: nothing reads the runs' qids, scores or rank columns again, nor another file
        keep = VALUES if not (holes or regressions > 0) else ALIGNMENT if deep else Keep(
            True, ranks_read(measures, depth), docids_only=True)
        result = evaluate(qrels, runs, measures, settings=settings, side=side, keep=keep, digests=digests,
                          progress=sys.stderr.isatty() if show_progress is None else show_progress)
    result.checks.depth = depth
    if high is not None:
        result.checks.high = high
    c = compare_result(result, correction=correction, permutations=permutations, seed=seed,
                       regressions=regressions, depth=depth, holes=holes, maxgrade=maxgrade,
                       show_progress=show_progress)
    if answers is not None:
        from .answers import pair_answers

        c.answers = pair_answers(result, answers, high=result.checks.high)
    if manifest is not None:
        c.provenance["manifest"] = manifest.provenance()
    return c


def ranks_read(measures, depth: int | None = None) -> int | None:
    """The ranks a comparison of ``measures`` reads in each run's alignment: the deepest
    cutoff, and k (``depth``, else the first measure's cutoff, else 10) for Judged@k, the
    regressions and the holes; None when a measure reads every rank (no cutoff, the ideal
    of the retrieved documents, condensed lists: :func:`judged.core.measures.bounds.list_depth`)."""
    parsed = [Measure.parse(m) for m in ([measures] if isinstance(measures, str) else measures)]
    depths = [list_depth(m) for m in parsed]
    if not parsed or None in depths:
        return None
    return max(depths + [depth or parsed[0].cutoff or DEFAULT_DEPTH])


def compare_result(result, baseline: str | None = None, *, correction: str = "holm",
                   permutations: int = stats.DEFAULT_PERMUTATIONS, seed: int = stats.DEFAULT_SEED,
                   regressions: int = DEFAULT_REGRESSIONS, depth: int | None = None, holes: bool = True,
                   maxgrade: int | None = None, show_progress: bool | None = None) -> Comparison:
    """The paired comparison of an :class:`~judged.core.evaluation.Result`'s runs (first = baseline);
    with ``holes``, Judged@k (k = ``depth``, else the first measure's cutoff, else 10) and
    whether judging the holes could flip each comparison (negative grades as its settings say)."""
    refuse_disjoint_runs(result)  # a run sharing no query id with the qrels: nothing to compare
    names = list(result.runs)
    baseline = baseline or names[0]
    qids = result.runs[baseline].qids
    for name in names:
        if not np.array_equal(result.runs[name].qids, qids):
            raise JudgedError(f"runs {baseline!r} and {name!r} were scored over different queries; "
                              "compare them with complete=True")
    values = {name: dict(result.runs[name].values) for name in names}
    first = next(iter(result.measures), None)
    k = depth or (result.measures[first].cutoff if first is not None else None) or DEFAULT_DEPTH
    with _threads(2) as pool:
        # the holes' bounds, the tests' random draws and the regressions at once (numpy and the
        # kernels release the GIL); each computed as alone, so the numbers are the same
        found = None
        if holes and first is not None:
            found = pool.submit(comparison_holes, result, baseline, k, maxgrade=maxgrade)
        rows = paired_comparisons(values, baseline, list(result.measures), correction=correction,
                                  permutations=permutations, seed=seed, show_progress=show_progress, pool=pool)
        comparison = Comparison(baseline, [n for n in names if n != baseline], result.conventions, rows, correction,
                                permutations, seed, qids, values, {n: dict(result.runs[n].counts) for n in names},
                                provenance={"qrels": {"path": result.qrels.source, "sha256": result.qrels.sha256}},
                                result=result)
        if regressions and first is not None:
            for name in comparison.runs:
                comparison.regressions += find_regressions(result, baseline, name, first, regressions, k)
        if found is not None:
            comparison.holes = found.result()
    return comparison


def top_k(aligned, i: int, k: int) -> list:
    """(rank, docid, grade or None) of query ``i``'s top k in an Aligned."""
    r = aligned.ranked
    lo, hi = int(r.offsets[i]), int(r.offsets[i + 1])
    hi = min(hi, lo + k)
    docids = aligned.docids(r.row[lo:hi])
    grades = r.grade[lo:hi]
    return [(j + 1, d, None if np.isnan(g) else int(g)) for j, (d, g) in enumerate(zip(docids, grades.tolist()))]


def find_regressions(result, baseline: str, run: str, measure: str, n: int, k: int) -> list:
    """The ``n`` queries where ``run`` lost most to ``baseline`` on ``measure`` (losses only)."""
    base, new = result.runs[baseline], result.runs[run]
    d = stats.differences(base.values[measure], new.values[measure])
    losers = [i for i in np.argsort(d, kind="stable")[:n].tolist() if d[i] < 0]
    out = []
    for i in losers:
        b_top, r_top = top_k(base.aligned, i, k), top_k(new.aligned, i, k)
        seen = {doc for _, doc, _ in b_top}
        newly = [doc for _, doc, g in r_top if g is None and doc not in seen]
        out.append(Regression(run, measure, str(base.qids[i]), float(base.values[measure][i]),
                              float(new.values[measure][i]), b_top, r_top, newly))
    return out


def compare_records(a, b, *, allow_different_qrels: bool = False, baseline: str | None = None, measures=None,
                    correction: str = "holm", permutations: int = stats.DEFAULT_PERMUTATIONS,
                    seed: int = stats.DEFAULT_SEED, show_progress: bool | None = None) -> Comparison:
    """Compare the runs of record ``b`` with the baseline run of record ``a`` (its first
    run, or ``baseline``) on the measures both records hold under the same convention,
    over the queries both hold. Records made under different qrels are refused unless
    ``allow_different_qrels``; then ``provenance['qrels_changes']`` says what changed."""
    from ..core.manifest import load_record, qrels_changes

    ra, rb = load_record(a), load_record(b)
    changes = qrels_changes(ra["qrels"], rb["qrels"])
    if changes and not allow_different_qrels:
        raise JudgedError("the records were made under different judgments: " + "; ".join(changes)
                          + " (pass --allow-different-qrels to compare anyway)")
    shared = [m for m, conv in ra["measures"].items() if rb["measures"].get(m) == conv]
    if measures:
        missing = [m for m in measures if m not in shared]
        if missing:
            raise JudgedError(f"measure(s) {', '.join(missing)} not in both records under one convention "
                              f"(shared: {', '.join(shared) or 'none'})")
        shared = list(measures)
    measures = shared
    if not measures:
        raise JudgedError("the records share no measure computed under the same convention: "
                          f"{ra['measures']} vs {rb['measures']}")
    base_name = baseline or next(iter(ra["runs"]))
    if base_name not in ra["runs"]:
        raise JudgedError(f"no run {base_name!r} in {a} (runs: {', '.join(ra['runs'])})")
    base = ra["runs"][base_name]
    names = {}
    for name, entry in rb["runs"].items():
        label = name if name != base_name else f"{name} ({b})"
        names[label] = entry
    qids = sorted(set(base["per_query"]).intersection(*(set(e["per_query"]) for e in names.values())))
    if not qids:
        sizes = ", ".join(f"{name} {len(e['per_query'])}" for name, e in [(base_name, base), *names.items()])
        raise JudgedError(f"the records share no query, nothing to compare (queries per run: {sizes})")
    values = {base_name: {m: np.array([base["per_query"][q][m] for q in qids]) for m in measures}}
    for label, entry in names.items():
        values[label] = {m: np.array([entry["per_query"][q][m] for q in qids]) for m in measures}
    rows = paired_comparisons(values, base_name, measures, correction=correction, permutations=permutations,
                              seed=seed, show_progress=show_progress)
    counts = {base_name: {"compared": len(qids), "in_record": len(base["per_query"])}}
    counts.update({label: {"compared": len(qids), "in_record": len(e["per_query"])} for label, e in names.items()})
    provenance = {"records": [str(a), str(b)], "qrels": {"a": ra["qrels"].get("sha256"), "b": rb["qrels"].get("sha256")},
                  "qrels_changes": changes}
    return Comparison(base_name, list(names), {m: ra["measures"][m] for m in measures}, rows, correction,
                      permutations, seed, np.array(qids, dtype=object), values, counts, [], provenance)
