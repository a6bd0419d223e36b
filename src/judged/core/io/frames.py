"""Qrels and runs from DataFrames (pandas, polars, Arrow), dicts and Parquet files."""

from __future__ import annotations

import collections
import json
import math
import numbers
import os

import numpy as np
import pyarrow as pa

from ..data import Qrels, Run, id_blocks, string_hash
from ..errors import ParseError
from ..kernels import FALLBACK, kernel
from ..lazy import lazy
from .text import RawFile, read_raw
from .trec_files import dedupe_qrels, dedupe_run
from .sniff import parquet_files

pc = lazy("pyarrow.compute")  # imported on first use (judged.core.lazy)

QID_NAMES = ("qid", "query_id", "query-id", "query")
DOCID_NAMES = ("docid", "doc_id", "corpus-id", "corpus_id", "doc", "docno")  # docno: PyTerrier
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
    """The first column called one of ``names``; every row must have a value."""
    for n in names:
        if n in table.column_names:
            col = table[n]
            if col.null_count:
                row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
                raise ParseError(source, row + 1, f"missing {what}")
            return col
    raise ParseError(source, None, f"no {what} column (looked for {', '.join(names)}; found {', '.join(table.column_names)})")


def _numbers(col: pa.ChunkedArray, source: str, what: str) -> np.ndarray:
    """A column as finite float64 (numeric text, as CSV-born frames have, is accepted)."""
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        try:
            col = pc.cast(col, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            for row, v in enumerate(col.to_pylist()):  # the error path only: name the row
                try:
                    float(v)
                except (TypeError, ValueError):
                    raise ParseError(source, row + 1, f"{what} {v!r} is not a number")
            raise ParseError(source, None, f"{what} column of type {col.type} is not numeric")
    values = col.to_numpy().astype(np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ParseError(source, row + 1, f"{what} {float(values[row])!r} is not a finite number")
    return values


def qrels_from_table(table: pa.Table, source: str = "<dataframe>", on_duplicate="error") -> Qrels:
    qid = _pick(table, QID_NAMES, source, "query id")
    docid = _pick(table, DOCID_NAMES, source, "document id")
    g = _numbers(_pick(table, GRADE_NAMES, source, "grade"), source, "grade")
    bad = (g != np.round(g)) | (np.abs(g) >= 2.0**63)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ParseError(source, row + 1, f"grade {float(g[row])!r} is not an integer" if g[row] != np.round(g[row])
                         else f"grade {float(g[row])!r} is out of range")
    q = Qrels(qid, docid, g.astype(np.int64), source=source)
    return dedupe_qrels(q, on_duplicate, lambda row: row + 1)


def run_from_table(table: pa.Table, name: str, source: str = "<dataframe>", on_duplicate="error") -> Run:
    qid = _pick(table, QID_NAMES, source, "query id")
    docid = _pick(table, DOCID_NAMES, source, "document id")
    s = _numbers(_pick(table, SCORE_NAMES, source, "score"), source, "score")
    rank = _numbers(_pick(table, ["rank"], source, "rank"), source, "rank") if "rank" in table.column_names else None
    run = Run(qid, docid, s, name=name, rank=rank, source=source)
    return dedupe_run(run, on_duplicate, lambda row: row + 1)


def _finite(value) -> float | None:
    """A real number (numpy scalars too) as a finite float; None for bools, text, NaN,
    infinities and integers too large for a double."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    try:
        f = float(value)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def qrels_from_dict(d: dict, source="<dict>", on_duplicate="error") -> Qrels:
    """Qrels from ``{qid: {docid: grade}}`` (grades whole numbers; ids as ``str()`` gives them)."""
    qid, docid, grade, hashes, blocks = dict_columns(d, True, source)
    if not len(grade):
        raise ParseError(source, None, "no judgments")
    return Qrels(qid, docid, grade, source=source).known(docid_hash=hashes, qid_blocks=blocks)


def run_from_dict(d: dict, name: str, source="<dict>") -> Run:
    """A run from ``{qid: {docid: score}}`` (finite scores; ids as ``str()`` gives them)."""
    qid, docid, score, hashes, blocks = dict_columns(d, False, source)
    return Run(qid, docid, score, name=name, source=source).known(docid_hash=hashes, qid_blocks=blocks)


@kernel
def dict_columns(d: dict, integer: bool, source: str = "<dict>") -> tuple:
    """``{qid: {docid: value}}`` as columns, one row per pair in the dict's order: (qid,
    docid: Arrow strings of ``str(id)``; values: float64, or int64 whole numbers with
    ``integer``; the docids' :func:`~judged.core.data.string_hash`; the qids'
    :func:`~judged.core.data.id_blocks`). A value must be a real number (not a bool),
    finite, and with ``integer`` a whole number below 2**63 in magnitude: else a
    :class:`ParseError` naming the query and document. The compiled binding walks the
    dicts in C (``dict_pairs``) with the same result."""
    qids, docids, values = [], [], []
    for q, docs in d.items():
        if not isinstance(docs, dict):
            what = "grade" if integer else "score"
            raise ParseError(source, None, f"query {q!r}: expected a mapping docid -> {what}, found {type(docs).__name__}")
        qids += [str(q)] * len(docs)
        docids += map(str, docs)
        values += docs.values()
    numbers = _plain_numbers(values, integer)
    if numbers is None:  # a value of another type, or a bad one: each pair looked at, the first bad one named
        numbers = np.array([_pair_value(q, doc, v, integer, source) for q, docs in d.items() for doc, v in docs.items()],
                           np.float64)
    qid, docid = pa.array(qids, pa.string()), pa.array(docids, pa.string())
    return (qid, docid, numbers.astype(np.int64) if integer else numbers, string_hash(docid), id_blocks(qid))


def _plain_numbers(values: list, integer: bool) -> np.ndarray | None:
    """``values`` as float64 when every one is a Python float or int that :func:`_pair_value`
    takes (finite; with ``integer`` whole and below 2**63 in magnitude), else None: the
    pure path's shortcut, no Python code run per value."""
    if not set(map(type, values)) <= {float, int}:
        return None
    try:
        numbers = np.array(values, np.float64)  # float(int) for an int, as float() converts it
    except OverflowError:
        return None
    ok = np.isfinite(numbers).all()
    if ok and integer:
        ok = (numbers == np.round(numbers)).all() and (np.abs(numbers) < 2.0**63).all()
    return numbers if ok else None


def _pair_value(q, doc, v, integer: bool, source: str) -> float:
    """The value ``v`` of query ``q``, document ``doc`` as a float: a real number (not a
    bool), finite, and with ``integer`` a whole number below 2**63 in magnitude; else a
    :class:`ParseError` naming the pair."""
    what = "grade" if integer else "score"
    value = _finite(v)
    if integer and value is not None and value != int(value):
        value = None
    if value is None:
        raise ParseError(source, None, f"query {q!r} docid {doc!r}: {what} {v!r} is not "
                                       + ("an integer" if integer else "a finite number"))
    if integer and abs(value) >= 2.0**63:
        raise ParseError(source, None, f"query {q!r} docid {doc!r}: grade {v!r} is out of range")
    return value


@dict_columns.binding
def _(native, d, integer, source="<dict>"):
    if type(d) not in MAPPINGS:
        return FALLBACK
    out = native.dict_pairs(d, integer, MAPPINGS, _finite)
    if out is None:
        return FALLBACK  # the reference names the problem (or decides what C does not)
    rows, (qo, qd), (do, dd), values, hashes, starts, (bo, bd), _ = out
    blocks = np.frombuffer(starts, np.int64)
    return (strings(rows, qo, qd), strings(rows, do, dd), np.frombuffer(values, np.int64 if integer else np.float64),
            np.frombuffer(hashes, np.uint64), (blocks, strings(len(blocks), bo, bd)))


MAPPINGS = (dict, collections.defaultdict)  # the inner mappings dict_pairs walks (their order is the dict's own)


def strings(n: int, offsets, data) -> pa.Array:
    """An Arrow string array of ``n`` strings over int32 ``offsets`` and UTF-8 ``data`` (no copy)."""
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def load_json(path, on_duplicate: str = "error") -> tuple[dict, object]:
    raw = read_raw(path)

    def pairs_to_dict(pairs):
        """json keeps the last of repeated keys silently; judged applies ``on_duplicate``."""
        out = {}
        for key, value in pairs:
            if key not in out:
                out[key] = value
            elif value == out[key]:
                continue
            elif on_duplicate == "error":
                raise ParseError(raw.name, None, f"key {key!r} appears twice in one JSON object "
                                                 "(use --on-duplicate first|max to accept)")
            elif on_duplicate == "max" and isinstance(value, (int, float)) and value > out[key]:
                out[key] = value
        return out

    try:
        obj = json.loads(raw.data.decode("utf-8"), object_pairs_hook=pairs_to_dict)
    except UnicodeDecodeError:
        raise ParseError(raw.name, None, "not valid UTF-8 text")
    except json.JSONDecodeError as exc:
        raise ParseError(raw.name, exc.lineno, f"invalid JSON: {exc.msg}")
    if not isinstance(obj, dict):
        raise ParseError(raw.name, 1, "expected a JSON object {qid: {docid: value}}")
    return obj, raw


def read_parquet_table(path) -> tuple[pa.Table, RawFile]:
    """A Parquet file, or a folder of Parquet part files (as Spark writes them) read in name
    order: (table, a RawFile naming ``path`` with the sha256 of the file, or of the part
    files' sha256s in order)."""
    import hashlib

    import pyarrow.parquet as pq

    name = os.fspath(path)
    tables, digests = [], []
    for part in parquet_files(name) or [name]:
        raw = read_raw(part, text=False)  # existence, emptiness
        try:
            tables.append(pq.read_table(pa.BufferReader(raw.data)))
        except (pa.ArrowInvalid, OSError) as exc:
            raise ParseError(raw.name, None, f"not a readable Parquet file ({exc})")
        digests.append(raw.sha256)
    try:
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ParseError(name, None, f"the Parquet part files do not share one schema ({exc})")
    sha = digests[0] if len(digests) == 1 else hashlib.sha256("".join(digests).encode()).hexdigest()
    return table, RawFile(name, b"", sha)
