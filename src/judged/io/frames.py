"""Qrels and runs from DataFrames (pandas, polars, Arrow), dicts and Parquet files."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa

from ..data import Qrels, Run
from ..errors import ParseError
from .text import read_raw
from .trec import dedupe_qrels, dedupe_run

QID_NAMES = ("qid", "query_id", "query-id", "query")
DOCID_NAMES = ("docid", "doc_id", "corpus-id", "corpus_id", "doc")
GRADE_NAMES = ("grade", "relevance", "rel", "label", "score")
SCORE_NAMES = ("score", "sim", "similarity")


def to_arrow_table(frame) -> pa.Table:
    if isinstance(frame, pa.Table):
        return frame
    mod = type(frame).__module__
    if mod.startswith("polars"):
        return frame.to_arrow()
    if mod.startswith("pandas"):
        return pa.Table.from_pandas(frame, preserve_index=False)
    if hasattr(frame, "__arrow_c_stream__"):
        return pa.table(frame)
    raise TypeError(f"cannot read {type(frame).__name__}: give a path, a DataFrame, an Arrow table or a dict")


def _pick(table: pa.Table, names, source, what) -> pa.ChunkedArray:
    for n in names:
        if n in table.column_names:
            return table[n]
    raise ParseError(source, None, f"no {what} column (looked for {', '.join(names)}; found {', '.join(table.column_names)})")


def _check_finite(values: np.ndarray, source: str, what: str):
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ParseError(source, row + 1, f"{what} {values[row]!r} is not a finite number")


def qrels_from_table(table: pa.Table, source: str = "<dataframe>", on_duplicate="error") -> Qrels:
    qid = _pick(table, QID_NAMES, source, "query id")
    docid = _pick(table, DOCID_NAMES, source, "document id")
    grade_col = _pick(table, GRADE_NAMES, source, "grade")
    g = grade_col.to_numpy().astype(np.float64) if grade_col.null_count == 0 else None
    if g is None:
        row = int(np.flatnonzero(grade_col.is_null().to_numpy(zero_copy_only=False))[0])
        raise ParseError(source, row + 1, "missing grade")
    _check_finite(g, source, "grade")
    bad = g != np.round(g)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ParseError(source, row + 1, f"grade {g[row]!r} is not an integer")
    q = Qrels(qid, docid, g.astype(np.int64), source=source)
    return dedupe_qrels(q, on_duplicate, lambda row: row + 1)


def run_from_table(table: pa.Table, name: str, source: str = "<dataframe>", on_duplicate="error") -> Run:
    qid = _pick(table, QID_NAMES, source, "query id")
    docid = _pick(table, DOCID_NAMES, source, "document id")
    score_col = _pick(table, SCORE_NAMES, source, "score")
    if score_col.null_count:
        row = int(np.flatnonzero(score_col.is_null().to_numpy(zero_copy_only=False))[0])
        raise ParseError(source, row + 1, "missing score")
    s = score_col.to_numpy().astype(np.float64)
    _check_finite(s, source, "score")
    rank = table["rank"].to_numpy().astype(np.float64) if "rank" in table.column_names else None
    run = Run(qid, docid, s, name=name, rank=rank, source=source)
    return dedupe_run(run, on_duplicate, lambda row: row + 1)


def qrels_from_dict(d: dict, source="<dict>", on_duplicate="error") -> Qrels:
    qids, docids, grades = [], [], []
    for q, docs in d.items():
        if not isinstance(docs, dict):
            raise ParseError(source, None, f"query {q!r}: expected a mapping docid -> grade, found {type(docs).__name__}")
        for doc, g in docs.items():
            if isinstance(g, bool) or not isinstance(g, (int, float)) or not math.isfinite(g) or g != int(g):
                raise ParseError(source, None, f"query {q!r} docid {doc!r}: grade {g!r} is not an integer")
            qids.append(str(q)); docids.append(str(doc)); grades.append(int(g))
    if not qids:
        raise ParseError(source, None, "no judgments")
    return Qrels(pa.array(qids, pa.string()), pa.array(docids, pa.string()), np.array(grades, np.int64), source=source)


def run_from_dict(d: dict, name: str, source="<dict>") -> Run:
    qids, docids, scores = [], [], []
    for q, docs in d.items():
        if not isinstance(docs, dict):
            raise ParseError(source, None, f"query {q!r}: expected a mapping docid -> score, found {type(docs).__name__}")
        for doc, s in docs.items():
            if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s):
                raise ParseError(source, None, f"query {q!r} docid {doc!r}: score {s!r} is not a finite number")
            qids.append(str(q)); docids.append(str(doc)); scores.append(float(s))
    return Run(pa.array(qids, pa.string()), pa.array(docids, pa.string()), np.array(scores, np.float64),
               name=name, source=source)


def load_json(path) -> tuple[dict, object]:
    raw = read_raw(path)
    try:
        obj = json.loads(raw.data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ParseError(raw.name, None, "not valid UTF-8 text")
    except json.JSONDecodeError as exc:
        raise ParseError(raw.name, exc.lineno, f"invalid JSON: {exc.msg}")
    if not isinstance(obj, dict):
        raise ParseError(raw.name, 1, "expected a JSON object {qid: {docid: value}}")
    return obj, raw


def read_parquet_table(path) -> pa.Table:
    import pyarrow.parquet as pq

    raw = read_raw(path)  # existence, emptiness
    try:
        return pq.read_table(pa.BufferReader(raw.data)), raw
    except (pa.ArrowInvalid, OSError) as exc:
        raise ParseError(raw.name, None, f"not a readable Parquet file ({exc})")
