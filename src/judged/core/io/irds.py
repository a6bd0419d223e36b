"""ir_datasets (MacAvaney et al., SIGIR 2021) as a source of qrels, queries and documents.

``irds:<dataset-id>`` is accepted wherever a qrels path is (``read_qrels``, ``evaluate``,
``judged eval irds:beir/scifact/test RUN``). ir_datasets is an optional extra
(``pip install 'judged[irds]'``); it downloads a collection the first time it is used and
reads it from its cache (``IR_DATASETS_HOME``) afterwards.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..data import Qrels
from ..errors import ParseError, UsageError
from .trec_files import dedupe_qrels
from .subtopics import read_subtopic_qrels

PREFIX = "irds:"


def dataset(dataset_id: str):
    """The ir_datasets dataset object for ``dataset_id`` (with or without ``irds:``)."""
    if dataset_id.startswith(PREFIX):
        dataset_id = dataset_id[len(PREFIX):]
    try:
        import ir_datasets
    except ImportError:
        raise UsageError("irds: sources need the ir_datasets package: pip install 'judged[irds]'")
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise ParseError(PREFIX + dataset_id, None, "no such ir_datasets dataset")


def _require(ds, what: str, dataset_id: str):
    if not getattr(ds, f"has_{what}", lambda: hasattr(ds, f"{what}_iter"))():
        raise ParseError(PREFIX + dataset_id.removeprefix(PREFIX), None, f"this dataset has no {what}")


def load_qrels(dataset_id: str, on_duplicate: str = "error", subtopics: bool = False) -> Qrels:
    """The dataset's qrels (``qrels_iter()``: query_id, doc_id, relevance); ``subtopics``:
    as subtopic qrels, the subtopic from the records' ``subtopic_id`` (ir_datasets' diversity
    qrels, TREC Web 2009-2012) or ``iteration`` field (:mod:`judged.core.io.subtopics`)."""
    ds = dataset(dataset_id)
    _require(ds, "qrels", dataset_id)
    if subtopics:
        rows = [(str(q.query_id), str(getattr(q, "subtopic_id", getattr(q, "iteration", "0"))), str(q.doc_id),
                 int(q.relevance)) for q in ds.qrels_iter()]
        if not rows:
            raise ParseError(PREFIX + dataset_id.removeprefix(PREFIX), None, "no judgments")
        qrels = read_subtopic_qrels(pa.table(dict(zip(("qid", "subtopic", "docid", "grade"), map(list, zip(*rows))))))
        qrels.source = qrels.meta["subtopics"].source = PREFIX + dataset_id.removeprefix(PREFIX)
        return qrels
    qids, docids, grades = [], [], []
    for q in ds.qrels_iter():
        qids.append(str(q.query_id)); docids.append(str(q.doc_id)); grades.append(int(q.relevance))
    name = PREFIX + dataset_id.removeprefix(PREFIX)
    if not qids:
        raise ParseError(name, None, "no judgments")
    qrels = Qrels(pa.array(qids, pa.string()), pa.array(docids, pa.string()), np.array(grades, np.int64), source=name)
    return dedupe_qrels(qrels, on_duplicate, lambda row: None)


def _text(record) -> str:
    if hasattr(record, "default_text"):
        return record.default_text()
    return getattr(record, "text", "")


def load_queries(dataset_id: str) -> dict[str, str]:
    """Query id -> query text (ir_datasets' ``default_text()``: the title for TREC topics)."""
    ds = dataset(dataset_id)
    _require(ds, "queries", dataset_id)
    return {str(q.query_id): _text(q) for q in ds.queries_iter()}


def load_docs(dataset_id: str, doc_ids=None) -> dict[str, dict]:
    """Document id -> ``{"title", "text"}``; with ``doc_ids``, only those, fetched through
    ir_datasets' docs store (random access) instead of a scan of the corpus."""
    ds = dataset(dataset_id)
    _require(ds, "docs", dataset_id)
    if doc_ids is None:
        docs = ds.docs_iter()
    else:
        docs = ds.docs_store().get_many([str(d) for d in doc_ids]).values()
    return {str(d.doc_id): {"title": getattr(d, "title", "") or "", "text": _text(d)} for d in docs}
