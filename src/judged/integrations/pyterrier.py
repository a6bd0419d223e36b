"""PyTerrier (Macdonald & Tonellotto, ICTIR 2020): judged as its evaluation back end.

PyTerrier's result frames (``qid``, ``docno``, ``score``, ``rank``) and qrels frames
(``qid``, ``docno``, ``label``) are judged inputs as they are (``read_run``,
``read_qrels``, ``evaluate``). :func:`Experiment` takes what ``pt.Experiment`` takes
(transformers or result frames, topics, qrels, measures, ``baseline``, ``correction``)
and returns its table (``name``, one column per measure; with a baseline ``<m> +``,
``<m> -``, ``<m> p-value`` and, with a correction, ``<m> reject`` and
``<m> p-value corrected``), computed by judged and extended with what judged adds:
Judged@k and the exact bounds of the first bounded measure over the holes of the top k
per system, and per comparison whether judging those holes could flip it
(``<m> can flip``). ``table.attrs`` holds the conventions (measure -> canonical string)
and the :class:`judged.Result` / :class:`judged.Comparison` behind the numbers.

The query set is ``pt.Experiment``'s: the qrels' queries among the topics, a system that
returns nothing for one of them scoring 0 there (judged's ``complete=True``). Ties follow
judged's declared order (trec_eval's by default; ``ties="rank"`` reads PyTerrier's rank
column). ``test="t-test"`` is ``pt.Experiment``'s default paired t-test; judged also has
``wilcoxon``, ``sign``, ``randomization`` and ``bootstrap``.

To make ``pt.Experiment`` itself compute with judged, see
:func:`judged.integrations.ir_measures.use_judged`.
"""

from __future__ import annotations

try:
    import pandas as pd
    import pyterrier as pt
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ModuleNotFoundError("judged.integrations.pyterrier needs PyTerrier: pip install 'judged[pyterrier]'",
                              name=exc.name) from exc

__all__ = ["Experiment", "results"]


def results(system, topics) -> "pd.DataFrame":
    """A system's result frame for ``topics``: a transformer is run, a frame is taken as it is."""
    if isinstance(system, pd.DataFrame):
        return system
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


def Experiment(retr_systems, topics, qrels, eval_metrics=("nDCG@10",), names=None, *, baseline=None,
               test: str = "t-test", correction: str | None = None, perquery: bool = False, k: int = 10,
               holes: bool = True, round: int | None = None, ties: str = "trec", no_relevant: str = "zero",
               ignore_identical_ids: bool = False, permutations: int | None = None, seed: int = 0):
    """``pt.Experiment`` computed by judged: see the module's documentation.

    ``eval_metrics`` are judged or ir_measures measures (strings or ir_measures objects);
    ``baseline`` is a system's index or name; ``correction`` one of holm, bonferroni, bh.
    ``perquery=True`` gives the tidy per-query table (``name``, ``qid``, ``measure``, ``value``).
    """
    import builtins
    from dataclasses import replace

    import judged
    from judged.analyses import stats
    from judged.core.measures import BOUNDED, Measure

    labels = _names(retr_systems, names)
    systems = list(retr_systems.values()) if isinstance(retr_systems, dict) else list(retr_systems)
    if len(set(labels)) != len(labels):
        raise ValueError(f"system names must differ: {labels}")
    if test not in stats.TESTS:
        raise ValueError(f"unknown test {test!r} (judged has {', '.join(stats.TESTS)})")
    wanted = set(topics["qid"].astype(str))
    qrels = judged.read_qrels(qrels)
    qrels_frame = qrels.to_pandas()
    qrels = judged.read_qrels(qrels_frame[qrels_frame["qid"].isin(wanted)])     # pt: filter_by_topics
    runs = {}
    for label, system in zip(labels, systems):
        res = results(system, topics)
        res = res[res["qid"].astype(str).isin(wanted)] if len(res) else res
        runs[label] = judged.read_run(res[[c for c in ("qid", "docno", "score", "rank") if c in res.columns]],
                                      name=label) if len(res) else {}
    measures = [str(m) for m in ([eval_metrics] if isinstance(eval_metrics, str) else eval_metrics)]
    shown = list(measures)
    if holes:
        bounded = next((Measure.parse(m) for m in measures if Measure.parse(m).name in BOUNDED), Measure.parse(f"nDCG@{k}"))
        bounded = replace(bounded, cutoff=bounded.cutoff or k)
        lo, hi = str(replace(bounded, unjudged="min")), str(replace(bounded, unjudged="max"))
        shown += [m for m in (f"Judged@{k}", lo, hi) if m not in shown]
    conventions = dict(ties=ties, complete=True, no_relevant=no_relevant, ignore_identical_ids=ignore_identical_ids)
    result = judged.evaluate(qrels, runs, shown, **conventions)
    if perquery:
        table = result.per_query().rename(columns={"run": "name"})
        table.attrs.update(conventions=result.conventions, result=result)
        return table
    rows = [{"name": label, **{m: result.aggregate(label, m) for m in shown}} for label in labels]
    table = pd.DataFrame(rows, columns=["name", *shown])
    comparison = None
    if baseline is not None:
        base = labels[baseline] if isinstance(baseline, int) else str(baseline)
        if base not in labels:
            raise ValueError(f"baseline {baseline!r} is not one of the systems {labels}")
        from judged.analyses.comparison import compare_result

        comparison = compare_result(result, base, correction=correction or "holm", seed=seed, regressions=0,
                                    depth=k, holes=holes, show_progress=False,
                                    **({"permutations": permutations} if permutations else {}))
        extra = {}
        for m in measures:
            plus, minus, p, adj, reject, flip = [], [], [], [], [], []
            for label in labels:
                if label == base:
                    for col in (plus, minus, p, adj, reject, flip):
                        col.append(None)
                    continue
                c = comparison.get(m, label)
                plus.append(c.test.wins)
                minus.append(c.test.losses)
                p.append(c.test.p_values[test])
                adj.append(c.p_adjusted[test])
                reject.append(bool(c.p_adjusted[test] < 0.05))
                f = comparison.flip(c) if holes else None
                flip.append(None if f is None else bool(f.can_flip))
            extra[f"{m} +"], extra[f"{m} -"], extra[f"{m} p-value"] = plus, minus, p
            if correction is not None:
                extra[f"{m} reject"], extra[f"{m} p-value corrected"] = reject, adj
            if holes and any(v is not None for v in flip):
                extra[f"{m} can flip"] = flip
        table = pd.concat([table, pd.DataFrame(extra)], axis=1)
    if round is not None:
        table[shown] = table[shown].apply(lambda col: col.map(lambda v: builtins.round(v, round)))
    table.attrs.update(conventions=result.conventions, result=result, comparison=comparison)
    return table

