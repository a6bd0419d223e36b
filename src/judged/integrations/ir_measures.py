"""judged as an ir_measures provider (MacAvaney et al., ECIR 2022), so ir_measures and the
tools built on it (PyTerrier's ``pt.Experiment``) compute with judged.

``provider`` is registered with ir_measures as ``judged_engine`` (ir_measures' own
``judged`` provider is its Judged@k implementation). Use it by name::

    ir_measures.providers.registry["judged_engine"].calc_aggregate([nDCG@10], qrels, run)

or put it first in ir_measures' default pipeline, for everything that calls
``ir_measures.calc_aggregate`` / ``iter_calc`` (PyTerrier does)::

    with use_judged():
        pt.Experiment([bm25], topics, qrels, [nDCG@10, AP])

It supports every measure judged parses from the measure's ``str()`` (nDCG with
``dcg='exp-log2'``, ``judged_only=True``, ``rel=``, P, R, AP, RR, Rprec, Bpref, Success,
Judged, NumRel, NumRet, NumRelRet, ...); the others fall through to the next provider.
Conventions are ir_measures': a qrels query missing from the run scores each measure's
default (0), the mean is over the qrels' queries; scores are compared as doubles
(ir_measures' pytrec_eval provider rounds them to float32) and ties broken by trec_eval's
rule (docid descending).
"""

from __future__ import annotations

import contextlib
from ..core.errors import MeasureError
from ..core.measures import Measure
from ..compat.ir_measures import as_qrels, Evaluator

try:
    import ir_measures
    from ir_measures import providers
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ModuleNotFoundError("judged.integrations.ir_measures needs ir_measures: pip install ir-measures",
                              name=exc.name) from exc

NAME = "judged_engine"


def _judged_measure(measure):
    try:
        return Measure.parse(str(measure))
    except MeasureError:
        return None


class JudgedEngineProvider(providers.Provider):
    """Measures computed by judged's engine (``judged.compat.ir_measures.Evaluator``)."""

    NAME = NAME
    SUPPORTED_MEASURES = []  # decided by :meth:`supports`: whatever judged parses

    def supports(self, measure) -> bool:
        return _judged_measure(measure) is not None

    def _evaluator(self, measures, qrels):
        qrels = as_qrels(_qrels_records(qrels))
        return JudgedEngineEvaluator(list(measures), qrels)


def _qrels_records(qrels):
    """ir_measures' inputs (dicts, DataFrames, iterables of Qrel) as judged reads them."""
    if isinstance(qrels, dict) or hasattr(qrels, "columns"):
        return qrels
    return list(ir_measures.util.QrelsConverter(qrels).as_namedtuple_iter())


class JudgedEngineEvaluator(providers.Evaluator):
    def __init__(self, measures, qrels):
        super().__init__(measures, set(qrels.query_ids.tolist()))
        self._evaluator = Evaluator(measures, qrels)

    def _iter_calc(self, run):
        if not isinstance(run, dict) and not hasattr(run, "columns"):
            run = list(ir_measures.util.RunConverter(run).as_namedtuple_iter())
        for m in self._evaluator.iter_calc(run):
            yield ir_measures.Metric(query_id=m.query_id, measure=m.measure, value=m.value)


provider = providers.register(JudgedEngineProvider())


@contextlib.contextmanager
def use_judged(pipeline=None):
    """Within the block, ``pipeline`` (default ``ir_measures.DefaultPipeline``, which
    PyTerrier calls) asks judged first; the other providers keep the measures judged does
    not compute. The pipeline's provider list is restored on exit."""
    pipeline = pipeline or ir_measures.DefaultPipeline
    before = list(pipeline.providers)
    pipeline.providers[:] = [provider, *[p for p in before if p is not provider]]
    try:
        yield provider
    finally:
        pipeline.providers[:] = before
