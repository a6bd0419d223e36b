"""The columnar data model: a Qrels (the answer key) and a Run (one system's rankings).

Both hold one row per (query, document) pair, as columns: ids as Arrow string arrays,
numbers as numpy arrays, in input order. Nothing here parses files (that is `judged.io`)
or computes scores (that is `judged.align` and `judged.measures`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def as_string_array(values) -> pa.Array:
    """An Arrow string array from any sequence of ids (numbers become their text)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        if pa.types.is_dictionary(values.type):
            values = values.dictionary_decode()
        if pa.types.is_string(values.type):
            return values
        if pa.types.is_large_string(values.type) or pa.types.is_string_view(values.type):
            return values.cast(pa.string())
        return pc.cast(values, pa.string())
    arr = np.asarray(values)
    if arr.dtype.kind in "iuf":
        if arr.dtype.kind == "f" and np.all(np.mod(arr, 1) == 0):
            arr = arr.astype(np.int64)
        return pa.array(arr).cast(pa.string())
    return pa.array([str(v) for v in arr.tolist()], type=pa.string())


@dataclass(eq=False)
class Qrels:
    """Relevance judgments: one integer grade per (qid, docid).

    A grade >= 1 is relevant at trec_eval's default level; 0 is judged not relevant;
    a negative grade is trec_eval's "pooled but unjudged" marker (gain 0, and ignored
    by Bpref and by ``unjudged=condensed``, as trec_eval does). A pair that is absent
    is unjudged: a hole.
    """

    qid: pa.Array
    docid: pa.Array
    grade: np.ndarray
    source: str = "<memory>"
    sha256: str | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.qid = as_string_array(self.qid)
        self.docid = as_string_array(self.docid)
        self.grade = np.asarray(self.grade, dtype=np.int64)
        if not (len(self.qid) == len(self.docid) == len(self.grade)):
            raise ValueError("qid, docid and grade must have the same length")
        if self.sha256 is None:
            self.sha256 = content_hash(self.qid, self.docid, self.grade)

    def __len__(self) -> int:
        return len(self.grade)

    def __repr__(self) -> str:
        return f"Qrels({self.source!r}, {len(self)} judgments, {len(self.query_ids)} queries)"

    @cached_property
    def query_ids(self) -> np.ndarray:
        """Sorted distinct query ids (strcmp order, as trec_eval)."""
        return np.array(sorted(pc.unique(self.qid).to_pylist()), dtype=object)

    @cached_property
    def index(self) -> "QrelsIndex":
        return QrelsIndex.build(self)

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame({"qid": self.qid.to_pylist(), "docid": self.docid.to_pylist(), "grade": self.grade})


@dataclass(eq=False)
class Run:
    """One system's ranked results: a score per (qid, docid), rows in input order.

    ``rank`` (the run file's rank column, as given) is kept only for ``ties='rank'``.
    """

    qid: pa.Array
    docid: pa.Array
    score: np.ndarray
    name: str = "run"
    rank: np.ndarray | None = None
    source: str = "<memory>"
    sha256: str | None = None

    def __post_init__(self):
        self.qid = as_string_array(self.qid)
        self.docid = as_string_array(self.docid)
        self.score = np.asarray(self.score, dtype=np.float64)
        if not (len(self.qid) == len(self.docid) == len(self.score)):
            raise ValueError("qid, docid and score must have the same length")
        if self.rank is not None:
            self.rank = np.asarray(self.rank, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.score)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(self)} rows)"

    @cached_property
    def query_ids(self) -> np.ndarray:
        return np.array(sorted(pc.unique(self.qid).to_pylist()), dtype=object)

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame({"qid": self.qid.to_pylist(), "docid": self.docid.to_pylist(), "score": self.score})


@dataclass(eq=False)
class QrelsIndex:
    """Qrels sorted into per-query blocks (CSR), with a sorted pair key for lookups.

    ``qcode``: each row's position in ``query_ids``; rows are ordered by (qcode, docid code).
    """

    query_ids: np.ndarray
    query_vocab: pa.Array
    doc_vocab: pa.Array
    offsets: np.ndarray  # len(query_ids)+1
    grade: np.ndarray  # grades in block order
    keys: np.ndarray  # qcode * len(doc_vocab) + dcode, ascending (== block order)

    @staticmethod
    def build(qrels: Qrels) -> "QrelsIndex":
        query_ids = qrels.query_ids
        query_vocab = pa.array(query_ids.tolist(), type=pa.string())
        qcode = pc.index_in(qrels.qid, value_set=query_vocab).to_numpy(zero_copy_only=False).astype(np.int64)
        doc_vocab = pc.unique(qrels.docid)
        dcode = pc.index_in(qrels.docid, value_set=doc_vocab).to_numpy(zero_copy_only=False).astype(np.int64)
        keys = qcode * max(len(doc_vocab), 1) + dcode
        order = np.argsort(keys, kind="stable")
        counts = np.bincount(qcode, minlength=len(query_ids))
        offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return QrelsIndex(query_ids, query_vocab, doc_vocab, offsets, qrels.grade[order], keys[order])

    def lookup(self, qcode: np.ndarray, docid: pa.Array) -> np.ndarray:
        """Grades (float, NaN where unjudged) of docids under query codes (-1: unknown query)."""
        out = np.full(len(qcode), np.nan)
        dcode = pc.index_in(docid, value_set=self.doc_vocab).to_numpy(zero_copy_only=False)
        known = (qcode >= 0) & ~np.isnan(dcode.astype(np.float64))
        if not known.any() or len(self.keys) == 0:
            return out
        key = qcode[known] * max(len(self.doc_vocab), 1) + dcode[known].astype(np.int64)
        at = np.searchsorted(self.keys, key)
        at_c = np.minimum(at, len(self.keys) - 1)
        hit = self.keys[at_c] == key
        vals = np.full(len(key), np.nan)
        vals[hit] = self.grade[at_c[hit]]
        out[known] = vals
        return out


def content_hash(*columns) -> str:
    """sha256 of in-memory columns (files are hashed by their bytes instead)."""
    h = hashlib.sha256()
    for col in columns:
        if isinstance(col, pa.Array):
            for buf in col.buffers():
                if buf is not None:
                    h.update(memoryview(buf))
        else:
            h.update(np.ascontiguousarray(col).tobytes())
    return h.hexdigest()
