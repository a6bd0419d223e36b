"""PyTerrier (Macdonald & Tonellotto, ICTIR 2020): judged as its evaluation back end.

PyTerrier's result frames (``qid``, ``docno``, ``score``, ``rank``) and qrels frames
(``qid``, ``docno``, ``label``) are judged inputs as they are (``read_run``,
``read_qrels``, ``evaluate``). :func:`Experiment` is ``pt.Experiment`` (python-terrier
1.x: its parameters, in its order, with its meaning; two it refuses, said there) computed
by judged, and extended with what judged adds: Judged@k and the exact bounds of the first
bounded measure over the holes of the top k per system, and per comparison whether
judging those holes could flip it (``<m> can flip``). ``table.attrs`` holds the
conventions (measure -> canonical string) and the :class:`judged.Result` /
:class:`judged.Comparison` behind the numbers.

To make ``pt.Experiment`` itself compute with judged, see
:func:`judged.integrations.ir_measures.use_judged`.
"""

from __future__ import annotations

import os
import types
import warnings
from collections import namedtuple
import judged
from judged.core.errors import MeasureError
from judged.core.measures import Measure
from judged.analyses import stats
from judged.analyses.comparison import compare_result

try:
    import pandas as pd
    import pyterrier as pt
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ModuleNotFoundError("judged.integrations.pyterrier needs PyTerrier: pip install 'judged[pyterrier]'",
                              name=exc.name) from exc

__all__ = ["Experiment", "ExperimentTables", "results"]

MRT = "mrt"  # pt.Experiment's mean response time (ms per query), not a measure of the ranking
TEST_NAMES = {"t": "t-test"}  # pt.Experiment's test names -> judged's (judged's own names taken too)
CORRECTIONS = {"holm": "holm", "h": "holm", "bonferroni": "bonferroni", "bonf": "bonferroni", "b": "bonferroni",
               "bh": "bh", "fdr_bh": "bh", "fdr_i": "bh", "fdr_p": "bh", "fdri": "bh", "fdrp": "bh"}  # + statsmodels'
SAVE_MODES = ("reuse", "overwrite", "error", "warn")
REQUIRED = ("qid", "docno", "score")  # the columns of a result frame judged scores
OVERLAP = ("There is no overlap between the qids found in the topics and qrels. If this is intentional, set "
           "filter_by_topics=False and filter_by_qrels=False.")


class ExperimentTables(namedtuple("ExperimentTables", ["averages", "perquery"])):
    """``perquery="both"``: the means table and the per-query table (``pt.Experiment``'s
    ``EvaluationDataTuple``: unpack it, or read ``.averages`` / ``.perquery``)."""

    def _repr_html_(self):
        return "".join(t._repr_html_() if hasattr(t, "_repr_html_") else f"<pre>{t!r}</pre>" for t in self)


def results(system, topics, batch_size: int | None = None) -> "pd.DataFrame":
    """A system's result frame for ``topics``: a transformer is run (``batch_size`` topics
    at a time when given, as ``pt.Experiment`` does), a frame is taken as it is."""
    if isinstance(system, pd.DataFrame):
        return system
    if batch_size is not None and hasattr(system, "transform_gen"):
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, not {batch_size}")
        parts = list(system.transform_gen(topics, batch_size=batch_size))
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(REQUIRED))
    if batch_size is not None and batch_size > 0 and len(topics) > batch_size:
        return pd.concat([results(system, topics.iloc[i:i + batch_size]) for i in range(0, len(topics), batch_size)],
                         ignore_index=True)
    if hasattr(system, "transform"):
        return system.transform(topics)
    if callable(system):
        return system(topics)
    raise TypeError(f"cannot get results from {type(system).__name__}: give a PyTerrier transformer or a result frame")


def _names(retr_systems, names) -> list:
    if isinstance(retr_systems, dict):
        return [str(n) for n in retr_systems]
    if names is not None:
        if len(names) != len(retr_systems):
            raise ValueError(f"{len(names)} names for {len(retr_systems)} systems")
        return [str(n) for n in names]
    return [str(s) if not isinstance(s, pd.DataFrame) else f"results {i}" for i, s in enumerate(retr_systems)]


def _columns(eval_metrics) -> tuple[list, bool]:
    """([(column, judged measure string)], mrt wanted) of ``eval_metrics``: judged's measure
    strings, trec_eval's names, ir_measures objects, and ir_measures' families ("official")."""
    wanted = [eval_metrics] if isinstance(eval_metrics, str) else list(eval_metrics)
    out = []
    for m in wanted:
        if isinstance(m, str) and m == MRT:
            continue
        try:
            Measure.parse(str(m))
            out.append((str(m), str(m)))
        except MeasureError:
            import ir_measures

            try:
                family = ir_measures.parse_trec_measure(m) if isinstance(m, str) else []
            except (ValueError, KeyError, TypeError):
                family = []
            if not family:
                raise
            out += [(str(f), str(f)) if len(family) > 1 else (m, str(f)) for f in family]
    if not out and MRT not in wanted:
        raise ValueError(f"no measures in {eval_metrics!r}")
    return out, MRT in wanted


def _check(round, highlight, save_mode, validate, plan, precompute_prefix, correction, baseline, perquery, test):
    """pt.Experiment's checks of its options (and judged's refusals), before anything runs."""
    if plan != "linear" or precompute_prefix:
        raise ValueError("plan='tree' and precompute_prefix share the pipelines' common prefix, which judged's "
                         "Experiment does not do (it runs each system in turn, pt's plan='linear'): run the shared "
                         "part once and pass result frames, or run pt.Experiment inside "
                         "judged.integrations.ir_measures.use_judged()")
    if isinstance(round, dict):
        for m, digits in round.items():
            if not isinstance(digits, int) or digits < 0:
                raise ValueError(f"rounding number for measure {m} should be integer >= 0, not {digits!r}")
    elif round is not None and (not isinstance(round, int) or round < 0):
        raise ValueError(f"round should be an integer >= 0 or a dict measure -> integer, not {round!r}")
    if highlight not in (None, "bold", "color", "colour"):
        raise ValueError(f"highlight is 'bold', 'color' or 'colour', not {highlight!r}")
    if save_mode not in SAVE_MODES:
        raise ValueError(f"Unknown save_mode argument {save_mode!r}, valid options are {', '.join(SAVE_MODES)}")
    if validate not in ("warn", "error", "ignore"):
        raise ValueError(f"validate is 'warn', 'error' or 'ignore', not {validate!r}")
    if perquery not in (False, True, "both"):
        raise ValueError(f"perquery is False, True or 'both', not {perquery!r}")
    if correction is not None and baseline is None:
        raise ValueError("Requested multiple testing correction, but no baseline was specified.")
    if correction is not None and correction not in CORRECTIONS:
        raise ValueError(f"correction {correction!r}: judged computes holm, bonferroni and bh (statsmodels' names "
                         f"{', '.join(sorted(CORRECTIONS))}); for another, correct the 'p-value' columns yourself")
    if baseline is not None and perquery is True:
        raise ValueError("a baseline's tests go with the means: use perquery='both' (pt.Experiment refuses "
                         "baseline with perquery too)")
    if (isinstance(test, str) and TEST_NAMES.get(test, test) not in stats.TESTS) or \
            not (isinstance(test, str) or callable(test)):
        raise ValueError(f"unknown test {test!r}: 't' (or 't-test'), 'wilcoxon', 'sign', 'randomization', "
                         "'bootstrap', or a function as scipy.stats.ttest_rel returning (statistic, p)")


def _validate(systems, labels, topics, validate) -> None:
    """pt.Experiment's ``validate``: each transformer inspected (``pt.inspect``) for the
    columns judged scores; 'warn' warns, 'error' raises for a system that cannot produce them."""
    if validate == "ignore":
        return
    wrong, unknown = [], []
    for i, (label, system) in enumerate(zip(labels, systems)):
        if isinstance(system, pd.DataFrame):
            found = list(system.columns)
        elif isinstance(system, pt.Transformer):
            try:
                found = pt.inspect.transformer_outputs(system, input_columns=list(topics.columns)) or []
            except (pt.inspect.InspectError, pt.validate.InputValidationError):
                unknown.append(f"#{i} {label}")
                continue
        else:
            continue
        if set(REQUIRED) - set(found):
            wrong.append(f"#{i} {label} (produces {found})")
    if wrong or unknown:
        message = "Experiment validation: " + "; ".join(
            ([f"these systems do not produce {', '.join(REQUIRED)}: {', '.join(wrong)}"] if wrong else []) +
            ([f"these could not be inspected: {', '.join(unknown)} (validate='ignore' silences this)"]
             if unknown else []))
        if validate == "error" and wrong:
            raise ValueError(message)
        warnings.warn(message, stacklevel=3)


def _save_file(save_dir, name, save_format) -> str:
    if save_format == "trec":
        ext = "res.gz"
    elif isinstance(save_format, types.ModuleType):
        ext = "mod"
    elif isinstance(save_format, tuple) and len(save_format) == 2:
        ext = "custom"
    else:
        raise ValueError(f"Unknown save_format {save_format!r}: 'trec', a module with load/dump (pickle) or a "
                         "(read, write) tuple")
    return os.path.join(save_dir, f"{name}.{ext}")


def _load_saved(path, save_format) -> "pd.DataFrame":
    if save_format == "trec":
        return pt.io.read_results(path)
    with pt.io.autoopen(path, "rb") as fh:
        return save_format.load(fh) if isinstance(save_format, types.ModuleType) else save_format[0](fh)


def _store(res, path, save_format) -> None:
    if save_format == "trec":
        missing = [c for c in ("qid", "docno", "score", "rank") if c not in res.columns]
        if missing:
            raise TypeError(f"save_dir was set, but the results lack {missing} for a TREC file: set "
                            "save_format=pickle")
        pt.io.write_results(res, path)
        return
    with pt.io.autoopen(path, "wb") as fh:
        save_format.dump(res, fh) if isinstance(save_format, types.ModuleType) else save_format[1](res, fh)


def _run(system, label, topics, batch_size, save_dir, save_mode, save_format) -> tuple:
    """(result frame, milliseconds the system took): from ``save_dir`` when reused, else run
    (and saved there), as pt.Experiment does."""
    from timeit import default_timer as timer

    path = _save_file(save_dir, label, save_format) if save_dir is not None else None
    if path is not None and os.path.exists(path):
        if save_mode == "reuse":
            return _load_saved(path, save_format), 0.0
        if save_mode == "error":
            raise ValueError(f"save_dir is set, but the file '{path}' already exists: save_mode='reuse' reads it, "
                             "'overwrite' replaces it")
        if save_mode == "warn":     # and it is written over below, as pt.Experiment does
            warnings.warn(f"save_dir is set, but the file '{path}' already exists; save_mode='reuse' reads it, "
                          "'overwrite' replaces it without this warning", stacklevel=3)
        else:
            os.remove(path)
    start = timer()
    res = results(system, topics, batch_size)
    elapsed = (timer() - start) * 1000.0 if not isinstance(system, pd.DataFrame) else 0.0
    if path is not None and not isinstance(system, pd.DataFrame):
        _store(res, path, save_format)
    return res, elapsed


def _query_sets(topics, qrels, filter_by_qrels: bool, filter_by_topics: bool):
    """(topics, qrels) after pt.Experiment's filters: topics without qrels dropped
    (``filter_by_qrels``), qrels of queries that are not topics dropped (``filter_by_topics``)."""
    if isinstance(topics, (str, os.PathLike)) and os.path.isfile(topics):
        topics = pt.io.read_topics(os.fspath(topics))
    qrels = judged.read_qrels(qrels)
    judged_qids = set(qrels.query_ids.tolist())
    if filter_by_qrels:
        topics = topics[topics["qid"].astype(str).isin(judged_qids)]
        if len(topics) == 0:
            raise ValueError(OVERLAP)
    if filter_by_topics:
        frame = qrels.to_pandas()
        frame = frame[frame["qid"].isin(set(topics["qid"].astype(str)))]
        if len(frame) == 0:
            raise ValueError(OVERLAP)
        qrels = judged.read_qrels(frame)
    return topics, qrels


def _highlighted(table, columns: dict, highlight: str):
    """pt.Experiment's ``highlight``: the best cell of each column bold, or coloured (the
    last best green, other equal ones antique white); best = largest, smallest for ``-``."""
    def style(col):
        if col.name not in columns:
            return [""] * len(col)
        best = col.max() if columns[col.name] == "+" else col.min()
        hits = [v == best for v in col]
        if highlight == "bold":
            return ["font-weight: bold" if h else "" for h in hits]
        last = len(hits) - 1 - hits[::-1].index(True) if True in hits else -1
        return ["background-color: lightgreen" if i == last else "background-color: antiquewhite" if h else ""
                for i, h in enumerate(hits)]

    return table.style.apply(style, axis=0)


def _rounded(value, column, round):
    import builtins

    digits = round.get(column) if isinstance(round, dict) else round
    return value if digits is None or value != value else builtins.round(value, digits)


def Experiment(retr_systems, topics, qrels, eval_metrics=("nDCG@10",), names=None, perquery=False, dataframe=True,
               batch_size=None, filter_by_qrels=False, filter_by_topics=True, baseline=None, test="t",
               correction=None, correction_alpha=0.05, highlight=None, round=None, verbose="auto", validate="warn",
               save_dir=None, save_mode="warn", save_format="trec", precompute_prefix=False, plan="linear", *,
               k: int = 10, holes: bool = True, ties: str = "trec", no_relevant: str = "zero",
               ignore_identical_ids: bool = False, permutations: int | None = None, seed: int = 0):
    """``pt.Experiment`` (python-terrier 1.x) computed by judged.

    As ``pt.Experiment``: ``retr_systems`` (transformers or result frames; a dict names
    them), ``topics`` (a frame or a topics file), ``qrels`` (a frame or anything
    :func:`judged.read_qrels` reads), ``eval_metrics`` (judged or ir_measures measures,
    trec_eval names, ir_measures families such as ``"official"``, and ``"mrt"``: the mean
    response time in ms per query), ``names``, ``perquery`` (True: the per-query table
    ``name``, ``qid``, ``measure``, ``value``, NaN for a topic without qrels, with a
    warning; ``"both"``: :class:`ExperimentTables` of both), ``dataframe`` (False:
    ``{name: {measure: mean}}`` and per query ``{system index: {qid: {measure: value}}}``),
    ``batch_size`` (topics per ``transform`` call), ``filter_by_qrels`` (drop topics without
    qrels), ``filter_by_topics`` (drop qrels of queries that are not topics; False: such a
    query counts, scored 0), ``baseline`` (an index or a name), ``test`` (``"t"``,
    ``"wilcoxon"`` or a function ``f(run, baseline) -> (statistic, p)`` as
    ``scipy.stats.ttest_rel``; judged's ``"sign"``, ``"randomization"``, ``"bootstrap"``
    too), ``correction`` (holm, bonferroni, bh, with statsmodels' names for them: h, b,
    bonf, fdr_bh, ...), ``correction_alpha`` (``reject``: corrected p <= alpha),
    ``highlight`` (``"bold"``, ``"color"``: a pandas Styler), ``round`` (digits, or a dict
    measure -> digits), ``verbose`` (a progress bar over the systems), ``validate``
    (transformers inspected for ``qid``, ``docno``, ``score``), ``save_dir`` with
    ``save_mode`` and ``save_format`` (each system's results saved as ``<name>.res.gz`` and
    reused, overwritten, warned or refused; ``aggregated.csv`` and ``perquery.csv``
    written, other systems' rows kept).

    Refused, with a message: ``plan="tree"`` and ``precompute_prefix=True`` (judged runs
    each system in turn; pass result frames, or run ``pt.Experiment`` inside
    :func:`judged.integrations.ir_measures.use_judged`); a correction judged does not
    compute (sidak, holm-sidak, fdr_by, ...); ``baseline`` with ``perquery=True`` (as
    pt.Experiment; ``"both"`` gives the tests with the means).

    judged's own: ``k`` and ``holes`` (Judged@k and the bounds), ``ties`` (judged's declared
    order, trec_eval's by default; ``"rank"`` reads PyTerrier's rank column),
    ``no_relevant``, ``ignore_identical_ids``, ``permutations`` and ``seed`` (randomization
    and bootstrap tests).

    Where the numbers can differ from pt.Experiment's (otherwise equal: the tests compare
    them): scores are compared as doubles (pt's pytrec_eval reads them as float32, so scores
    equal in float32 tie there); two per-query values within 1e-12 x max(1, |value|) are
    equal for ``+``/``-`` and every test (pt: any nonzero difference); the t-test gives
    p = 1 when every difference is 0 (scipy: NaN) and NaN for constant nonzero differences
    (scipy: about 0); ``"wilcoxon"`` is judged's signed-rank test, not scipy's: with tied
    or zero differences judged's p is exact (the distribution of the signed-rank sum over
    all sign assignments, tied |d| at their average rank) up to 50 nonzero differences,
    where ``scipy.stats.wilcoxon`` (pt's) uses its normal approximation from 14 differences
    on (and counts the zeros towards its 50), and differences equal within the tolerance
    above are ties and zeros in judged, not in scipy. On random per-query values the two
    p-values differed by up to 130% (relative) with tied or zero differences for 14-100
    queries, by up to 70% at any size where values differ in their last bits only
    (0.3 - 0.2 against 0.1), and were equal to 1e-15 otherwise; ``test=scipy.stats.wilcoxon``
    gives scipy's p-values exactly. A NaN p-value (a test not defined) is left out of its
    correction family. With ``perquery="both"`` and a topic without qrels, pt 1.x's means
    are NaN (its NaN rows enter them); judged's are the means over the qrels' queries.
    """
    from dataclasses import replace

    _check(round, highlight, save_mode, validate, plan, precompute_prefix, correction, baseline, perquery, test)
    labels = _names(retr_systems, names)
    systems = list(retr_systems.values()) if isinstance(retr_systems, dict) else list(retr_systems)
    if len(set(labels)) != len(labels):
        raise ValueError(f"system names must differ: {labels}")
    if save_dir is not None:
        if not os.path.isdir(save_dir):
            raise ValueError(f"save_dir {save_dir} is not an existing directory")
        bad = [n for n in labels if not pt.io.ok_filename(n)]
        if bad:
            raise ValueError(f"save_dir is set, but these names cannot be file names: {bad}")
    columns, mrt_wanted = _columns(eval_metrics)
    topics, qrels = _query_sets(topics, qrels, filter_by_qrels, filter_by_topics)
    _validate(systems, labels, topics, validate)
    wanted = set(topics["qid"].astype(str))
    judged_strings = list(dict.fromkeys(s for _, s in columns))
    shown = list(judged_strings)
    if holes:
        parsed = [Measure.parse(m) for m in judged_strings]
        bounded = next((m for m in parsed if m.family.boundable), Measure.parse(f"nDCG@{k}"))
        bounded = replace(bounded, cutoff=bounded.cutoff or k)
        lo, hi = str(replace(bounded, unjudged="min")), str(replace(bounded, unjudged="max"))
        shown += [m for m in (f"Judged@{k}", lo, hi) if m not in shown]

    runs, mrt = {}, {}
    num_q = max(1, len(qrels.query_ids))
    with pt.tqdm(total=len(systems), disable=verbose in (False, "auto"), unit="system", desc="Experiment") as bar:
        for label, system in zip(labels, systems):
            res, elapsed = _run(system, label, topics, batch_size, save_dir, save_mode, save_format)
            mrt[label] = elapsed / num_q
            res = res[res["qid"].astype(str).isin(wanted)] if len(res) else res
            runs[label] = judged.read_run(res[[c for c in ("qid", "docno", "score", "rank") if c in res.columns]],
                                          name=label) if len(res) else {}
            bar.update()
    conventions = dict(ties=ties, complete=True, no_relevant=no_relevant, ignore_identical_ids=ignore_identical_ids)
    result = judged.evaluate(qrels, runs, shown, **conventions)

    # the columns: pt's names (as given) for the measures asked for, judged's for what it adds
    named = [c for c, _ in columns] + [m for m in shown if m not in judged_strings]
    source = {c: s for c, s in columns} | {m: m for m in shown if m not in judged_strings}
    means = {label: {c: _rounded(result.aggregate(label, source[c]), c, round) for c in named} for label in labels}
    if mrt_wanted:
        for label in labels:
            means[label][MRT] = _rounded(mrt[label], MRT, round)
    table = pd.DataFrame([{"name": label, **means[label]} for label in labels])

    per_query = result.per_query().rename(columns={"run": "name"})
    per_query = pd.concat([per_query[per_query["measure"] == source[c]].assign(measure=c) for c in named],
                          ignore_index=True)
    per_query["value"] = [_rounded(v, c, round) for v, c in zip(per_query["value"], per_query["measure"])]
    comparison = None
    if baseline is not None:
        table, comparison = _tests(table, result, labels, baseline, [c for c, _ in columns], source, test,
                                   correction, correction_alpha, k, holes, permutations, seed)
    table.attrs.update(conventions=result.conventions, result=result, comparison=comparison)
    if save_dir is not None:
        _save_tables(save_dir, table[["name", *named, *([MRT] if mrt_wanted else [])]],
                     per_query.sort_values(["name", "qid"], kind="stable"), labels)
    kinds = {c: "+" for c in named} | ({MRT: "-"} if mrt_wanted else {}) | \
        {f"{c} {sign}": sign for c, _ in columns for sign in "+-"}   # best: the largest, the smallest for '-'
    averages = means if not dataframe else _highlighted(table, kinds, highlight) if highlight else table
    if perquery is False:
        return averages

    missing = sorted(wanted - set(qrels.query_ids.tolist()))  # topics without qrels: NaN rows, as pt's
    if missing:
        warnings.warn(f"{len(missing)} topic(s) not found in qrels. Scores for these topics are given as NaN and "
                      "should not contribute to averages.", stacklevel=2)
        per_query = pd.concat([per_query, pd.DataFrame([{"name": label, "qid": q, "measure": c, "value": float("nan")}
                                                        for label in labels for q in missing for c in named])],
                              ignore_index=True)
    per_query = per_query.sort_values(["name", "qid"], kind="stable").reset_index(drop=True)
    per_query.attrs.update(conventions=result.conventions, result=result)
    if not dataframe:
        by_system: dict = {}
        for row in per_query.itertuples(index=False):
            by_system.setdefault(labels.index(row.name), {}).setdefault(row.qid, {})[row.measure] = row.value
        per_query = by_system
    return per_query if perquery is True else ExperimentTables(averages, per_query)


def _tests(table, result, labels, baseline, measured, source, test, correction, alpha, k, holes, permutations, seed):
    """pt.Experiment's baseline columns (``<m> +``, ``<m> -``, ``<m> p-value``; with a
    correction ``<m> reject`` and ``<m> p-value corrected``) and judged's ``<m> can flip``."""
    import numpy as np

    if isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool):
        if not 0 <= baseline < len(labels):
            raise ValueError(f"baseline {baseline} is not the index of one of the {len(labels)} systems")
        base = labels[baseline]
    else:
        base = str(baseline)
        if base not in labels:
            raise ValueError(f"Unknown baseline {baseline!r}. Valid options are: {', '.join(labels)}")
    method = CORRECTIONS[correction] if correction is not None else "holm"
    comparison = compare_result(result, base, correction=method, seed=seed, regressions=0, depth=k, holes=holes,
                                show_progress=False, **({"permutations": permutations} if permutations else {}))
    named_test = TEST_NAMES.get(test, test) if isinstance(test, str) else None
    extra = {}
    for column in measured:
        m = source[column]
        plus, minus, p, flip = [], [], [], []
        for label in labels:
            if label == base:
                plus.append(None), minus.append(None), p.append(None), flip.append(None)
                continue
            c = comparison.get(m, label)
            plus.append(c.test.wins)
            minus.append(c.test.losses)
            if named_test is not None:
                p.append(c.test.p_values[named_test])
            else:
                run, base_values = np.asarray(comparison.values[label][m]), np.asarray(comparison.values[base][m])
                p.append(float(test(run, base_values)[1]))        # pt's order: the run, then the baseline
            f = comparison.flip(c) if holes else None
            flip.append(None if f is None else bool(f.can_flip))
        extra[f"{column} +"], extra[f"{column} -"], extra[f"{column} p-value"] = plus, minus, p
        if correction is not None:
            others = [i for i, label in enumerate(labels) if label != base]
            adjusted = stats.adjust(np.array([p[i] for i in others], dtype=np.float64), method).tolist()
            corrected = [None] * len(labels)
            for i, a in zip(others, adjusted):
                corrected[i] = a
            extra[f"{column} reject"] = [False if a is None else bool(a <= alpha) for a in corrected]
            extra[f"{column} p-value corrected"] = [float("nan") if a is None else a for a in corrected]
        if holes and any(v is not None for v in flip):
            extra[f"{column} can flip"] = flip
    return pd.concat([table, pd.DataFrame(extra)], axis=1), comparison


def _save_tables(save_dir, averages, per_query, labels) -> None:
    """``aggregated.csv`` and ``perquery.csv`` in ``save_dir``, the rows of systems not in
    this experiment kept (pt.Experiment's files)."""
    for name, frame in (("aggregated.csv", averages), ("perquery.csv", per_query)):
        path = os.path.join(save_dir, name)
        if os.path.exists(path):
            old = pd.read_csv(path, dtype={"name": str, "qid": str} if name == "perquery.csv" else {"name": str})
            if set(old.columns) != set(frame.columns):
                warnings.warn(f"the columns of '{path}' ({', '.join(sorted(old.columns))}) differ from this "
                              f"experiment's ({', '.join(sorted(frame.columns))}); missing values are NaN",
                              stacklevel=3)
            old = old[~old["name"].isin(labels)]
            if len(old):
                frame = pd.concat([frame, old], ignore_index=True)
        frame.to_csv(path, index=False)
