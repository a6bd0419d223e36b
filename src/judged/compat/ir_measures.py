"""ir_measures' calling forms, computed by judged: ``judged.calc_aggregate`` and ``judged.iter_calc``.

``calc_aggregate(measures, qrels, run)`` -> ``{measure: value}`` and
``iter_calc(measures, qrels, run)`` -> :class:`Metric` ``(query_id, measure, value)`` per
query, as ir_measures (MacAvaney et al., ECIR 2022). Measures are strings (``"nDCG@10"``,
``"P(rel=2)@5"``) or ir_measures measure objects (read through ``str()``); results are
keyed by the measure exactly as given. Qrels and runs may be dicts of dicts, DataFrames
(``query_id``/``doc_id``/``relevance`` or ``score`` columns), iterables of ir_measures'
``Qrel``/``ScoredDoc`` namedtuples, paths, or judged objects.

Conventions are judged's defaults (trec_eval's), named and changeable by keyword
(``ties``, ``complete``, ``no_relevant``, ``ignore_identical_ids``; see
:class:`judged.core.conventions.Settings`). Two differ from ir_measures: ir_measures counts a
qrels query missing from the run as 0 (``complete=True`` does the same for every averaged
measure; not for ``NumRel``, where ``complete=True`` is trec_eval -c and counts the missing
query's relevant documents while ir_measures counts 0: leave ``complete`` off for its
``NumRel`` sum), and its pytrec_eval provider compares scores as float32, judged as doubles.
ir_measures measure objects are read through ``str()``; their ``gains=`` keeps its meaning
(a grade not listed keeps its grade as gain, so the identity entries its ``str()`` drops
change nothing).
"""

from __future__ import annotations

import os
from typing import NamedTuple

import pyarrow as pa
from ..core.data import Qrels, Run
from ..core.io import frames, read_qrels, read_run
from ..core.io.subtopics import read_subtopic_qrels
from ..core.measures import Measure
from ..core.conventions import Settings
from ..core.evaluation import Scorer


class Metric(NamedTuple):
    """One query's value of one measure (ir_measures.Metric)."""

    query_id: str
    measure: object
    value: float


def _records_table(records, fields: tuple[str, ...], defaults: dict | None = None) -> pa.Table:
    cols = {f: [] for f in fields}
    for rec in records:
        for f in fields:
            cols[f].append(getattr(rec, f) if defaults is None or f not in defaults else getattr(rec, f, defaults[f]))
    return pa.table(cols)


def as_qrels(qrels, subtopics: bool = False):
    """judged's Qrels; ``subtopics`` (a diversity measure is asked for): with the subtopic
    judgments, read from the ``iteration`` field or column as ir_measures reads them
    (a record without one: subtopic '0', as ir_measures' Qrel)."""
    if isinstance(qrels, (Qrels, dict, str, os.PathLike)) or hasattr(qrels, "columns") or isinstance(qrels, pa.Table):
        return read_qrels(qrels, subtopics=subtopics)
    if subtopics:
        return read_subtopic_qrels(_records_table(qrels, ("query_id", "iteration", "doc_id", "relevance"),
                                                  {"iteration": "0"}))
    return frames.qrels_from_table(_records_table(qrels, ("query_id", "doc_id", "relevance")), source="<records>")


def as_run(run):
    if isinstance(run, (Run, dict, str, os.PathLike)) or hasattr(run, "columns") or isinstance(run, pa.Table):
        return read_run(run)
    return frames.run_from_table(_records_table(run, ("query_id", "doc_id", "score")), "run", source="<records>")


def _measures(measures) -> dict:
    """Measure as given -> judged Measure."""
    if isinstance(measures, (str, Measure)) or not hasattr(measures, "__iter__"):
        measures = [measures]
    return {given: Measure.parse(given if isinstance(given, (str, Measure)) else str(given)) for given in measures}


class Evaluator:
    """ir_measures.evaluator(measures, qrels): the qrels read once, runs scored on call."""

    def __init__(self, measures, qrels, **conventions):
        self.measures = _measures(measures)
        self.qrels = as_qrels(qrels, subtopics=any(m.family.subtopics for m in self.measures.values()))
        self.settings = Settings(**conventions)

    def _scored(self, run):
        """The run's :class:`~judged.core.results.RunResult` (:class:`judged.core.evaluation.Scorer`)."""
        (scored,) = Scorer(self.qrels, self.measures, self.settings).runs([as_run(run)]).runs.values()
        return scored

    def iter_calc(self, run):
        scored = self._scored(run)
        for i, q in enumerate(scored.qids.tolist()):
            for given, v in scored.values.items():
                yield Metric(q, given, float(v[i]))

    def calc_aggregate(self, run) -> dict:
        """Mean over the queries both in the run and the qrels; NumRel/NumRet/NumRelRet summed (trec_eval)."""
        return {given: self.measures[given].aggregate_of(v) for given, v in self._scored(run).values.items()}


def evaluator(measures, qrels, **conventions) -> Evaluator:
    return Evaluator(measures, qrels, **conventions)


def iter_calc(measures, qrels, run, **conventions):
    """Yield :class:`Metric` (query_id, measure, value) for every evaluated query and measure."""
    return Evaluator(measures, qrels, **conventions).iter_calc(run)


def calc_aggregate(measures, qrels, run, **conventions) -> dict:
    """{measure as given: aggregate value}; conventions as :class:`judged.core.conventions.Settings`."""
    return Evaluator(measures, qrels, **conventions).calc_aggregate(run)
