"""The columnar data model: a Qrels (the answer key) and a Run (one system's rankings).

Both hold one row per (query, document) pair, as columns: ids as Arrow string arrays,
numbers as numpy arrays, in input order. Nothing here parses files (that is `judged.core.io`)
or computes scores (that is `judged.core.align` and `judged.core.measures`).
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa

from .words import counted
from .kernels import FALLBACK, block_rows, kernel
from .lazy import lazy

pc = lazy("pyarrow.compute")  # imported on first use (judged.core.lazy)


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


_NUMPY_OF_ARROW = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
                   pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
                   pa.float32(): np.float32, pa.float64(): np.float64}


def as_numpy(values: pa.Array, null=None) -> np.ndarray:
    """A numeric or boolean Arrow array as numpy, read from its buffers (pyarrow's own
    ``to_numpy`` imports pandas, 0.2 s of a command's start). Nulls become ``null``
    (required when there are any)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n, at = len(values), values.offset
    validity, data = values.buffers()[:2]
    if pa.types.is_boolean(values.type):
        bits = np.frombuffer(data, dtype=np.uint8) if n else np.zeros(0, np.uint8)
        out = np.unpackbits(bits, bitorder="little")[at:at + n].astype(bool)
    else:
        dtype = _NUMPY_OF_ARROW[values.type]
        out = np.frombuffer(data, dtype=dtype, count=n, offset=at * np.dtype(dtype).itemsize) if n else np.zeros(0, dtype)
    if values.null_count:
        if null is None:
            raise ValueError("nulls in an array read without a null value")
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[at:at + n].astype(bool)
        out = np.where(valid, out, null)
    return out


def arrow_indices(rows: np.ndarray) -> pa.Array:
    """Row numbers as an Arrow int64 array over the same memory (``pa.array`` imports pandas)."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(rows), [None, pa.py_buffer(rows)])


def arrow_strings(values: list[str]) -> pa.Array:
    """Python strings as an Arrow string array, built from buffers (``pa.array`` imports pandas)."""
    data = [v.encode() for v in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])


@kernel
def take_strings(values: pa.Array, rows: np.ndarray) -> pa.Array:
    """``values.take(rows)`` for a string array. Up to :data:`FEW_STRINGS` rows (each query's
    first line, a top 10 of 1,000 queries) gathered by numpy from its buffers, since Arrow's
    ``take`` imports ``pyarrow.compute`` (0.04-0.06 s; see :mod:`judged.core.lazy`); more,
    with Arrow's ``take``, faster then. The compiled binding copies the bytes of any number."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) > FEW_STRINGS:
        return values.take(arrow_indices(rows))
    offsets, body = string_buffers(values)
    start = offsets[rows].astype(np.int64)
    length = offsets[rows + 1] - start
    out = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(length, out=out[1:])
    gather = np.repeat(start - out[:-1], length) + np.arange(int(out[-1]), dtype=np.int64)
    data = np.frombuffer(body, dtype=np.uint8)[gather] if len(gather) else np.zeros(0, np.uint8)
    return pa.Array.from_buffers(pa.string(), len(rows), [None, pa.py_buffer(out.astype(np.int32)),
                                                          pa.py_buffer(data)])


@take_strings.binding
def _(native, values: pa.Array, rows: np.ndarray):
    if not pa.types.is_string(values.type) or values.null_count:
        return FALLBACK  # Arrow decides (nulls kept)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    offsets, body = string_buffers(values)
    out = np.empty(len(rows) + 1, np.int32)
    data = native.gather_strings(offsets, body, rows, out)
    if data is None:  # a row out of range, or 2 GiB of strings: Arrow decides
        return FALLBACK
    return pa.Array.from_buffers(pa.string(), len(rows), [None, pa.py_buffer(out), pa.py_buffer(data)])


FEW_STRINGS = 10_000  # up to this many strings or runs, take_strings, take_runs and byte_order: no pyarrow.compute


def take_runs(values: pa.Array, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """The rows ``starts[i]`` to ``starts[i] + lengths[i] - 1`` of a string array, run after
    run: its blocks in another order. Up to :data:`FEW_STRINGS` runs, each run's bytes are
    copied whole (Arrow's ``take`` imports ``pyarrow.compute``, 0.05 s); more, with Arrow's
    ``take``, faster then."""
    offsets, body = string_buffers(values)
    starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    before = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=before[1:])
    rows = np.repeat(starts - before[:-1], lengths) + np.arange(int(before[-1]), dtype=np.int64)
    if len(starts) > FEW_STRINGS:
        return values.take(arrow_indices(rows))
    out = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(offsets[rows + 1] - offsets[rows], out=out[1:])
    first, last = offsets[starts].tolist(), offsets[starts + lengths].tolist()
    with memoryview(body) as view:
        data = b"".join([view[a:b] for a, b in zip(first, last)])
    return pa.Array.from_buffers(pa.string(), len(rows), [None, pa.py_buffer(out.astype(np.int32)), pa.py_buffer(data)])


def byte_order(values: pa.Array) -> tuple[np.ndarray, bool]:
    """(the stable order of a string array by its bytes, which is Arrow's ``sort_indices``
    order and code point order; whether the sorted strings strictly increase, i.e. are
    distinct). Up to :data:`FEW_STRINGS` strings (query ids), numpy sorts them as fixed-width
    bytes padded with NUL; Arrow's ``sort_indices`` (``pyarrow.compute``, 0.05 s to import)
    sorts more, or strings holding a NUL byte or longer than 1,000 bytes."""
    n = len(values)
    offsets, body = string_buffers(values)
    data = np.frombuffer(body, dtype=np.uint8)[offsets[0]:offsets[-1]] if n else np.zeros(0, np.uint8)
    length = np.diff(offsets).astype(np.int64)
    width = int(length.max()) if n else 0
    if n > FEW_STRINGS or width > 1000 or not data.all():
        order = as_numpy(pc.sort_indices(values)).astype(np.int64)
        ordered = values.take(arrow_indices(order))
        return order, n < 2 or bool(pc.all(pc.less(ordered[:-1], ordered[1:])).as_py())
    grid = np.zeros((n, max(width, 1)), dtype=np.uint8)
    row = np.repeat(np.arange(n, dtype=np.int64), length)
    grid[row, np.arange(len(data), dtype=np.int64) - (offsets[:-1].astype(np.int64) - offsets[0])[row]] = data
    keys = grid.view(f"S{max(width, 1)}").ravel()
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    return order, bool((ordered[1:] > ordered[:-1]).all())


def id_blocks(ids: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """(first row, id) of each run of equal consecutive ids: one per query in a file grouped by query."""
    if len(ids) == 0:
        return np.empty(0, dtype=np.int64), ids
    runs = pc.run_end_encode(ids)
    ends = as_numpy(runs.run_ends).astype(np.int64)
    return np.concatenate(([0], ends[:-1])), runs.values


def id_codes(ids: pa.Array, vocab: pa.Array, blocks: tuple | None = None) -> np.ndarray:
    """Each id's position in ``vocab`` (-1 when absent). Looked up once per run of equal
    consecutive ids (``blocks``, from :func:`id_blocks` when not given), so a file grouped
    by query costs one lookup per query, not per line."""
    if len(ids) == 0:
        return np.empty(0, dtype=np.int64)
    starts, values = blocks if blocks is not None else id_blocks(ids)
    code = as_numpy(pc.index_in(values, value_set=vocab), null=-1)  # null: absent
    return np.repeat(code.astype(np.int64), np.diff(np.append(starts, len(ids))))


_M1, _M2, _MQ = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


_TAIL_MASK = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def string_buffers(values: pa.Array) -> tuple[np.ndarray, object]:
    """An Arrow string array's int32 offsets (n+1, the array's own slice) and data buffer,
    as the compiled kernels take them."""
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32, count=len(values) + 1, offset=values.offset * 4) \
        if len(values) else np.zeros(1, np.int32)
    body = values.buffers()[2]
    return offsets, b"" if body is None else body


@kernel
def strings_equal(a: pa.Array, rows_a: np.ndarray, b: pa.Array, rows_b: np.ndarray) -> np.ndarray:
    """Per pair i: whether string a[rows_a[i]] equals b[rows_b[i]] (confirms hash matches)."""
    return as_numpy(pc.equal(a.take(arrow_indices(rows_a)), b.take(arrow_indices(rows_b))))


@strings_equal.binding
def _(native, a, rows_a, b, rows_b):
    out = np.empty(len(rows_a), dtype=bool)
    native.equal_at(*string_buffers(a), np.ascontiguousarray(rows_a, np.int64), *string_buffers(b),
                    np.ascontiguousarray(rows_b, np.int64), out.view(np.uint8))
    return out


@kernel
def string_hash(values: pa.Array) -> np.ndarray:
    """A 64-bit hash of each string, computed over the Arrow buffers 8 bytes at a time
    (vectorised; no Python per string). Used to find repeated and matching ids quickly;
    every match it suggests is confirmed on the strings themselves."""
    values = as_string_array(values)
    n = len(values)
    offsets, body = string_buffers(values)
    start, length = offsets[:-1].astype(np.intp), np.diff(offsets)
    data = np.zeros(len(body) + 8, dtype=np.uint8)
    data[:-8] = np.frombuffer(body, dtype=np.uint8)
    words = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    h = length.astype(np.uint64) * _M1
    longest = int(length.max()) if n else 0
    with np.errstate(over="ignore"):
        for j in range(0, longest, 8):
            if j == 0:
                x = words[start] & _TAIL_MASK[np.minimum(length, 8)]
                x ^= h
            else:
                at = np.flatnonzero(length > j)
                x = words[start[at] + j] & _TAIL_MASK[np.minimum(length[at] - j, 8)]
                x ^= h[at]
            x *= _M2
            x ^= x >> np.uint64(31)
            if j == 0:
                h = x
            else:
                h[at] = x
        h ^= h >> np.uint64(30)
        h *= _M2
        h ^= h >> np.uint64(27)
        h *= _MQ
        h ^= h >> np.uint64(31)
        return h


@string_hash.binding
def _(native, values):
    values = as_string_array(values)
    out = np.empty(len(values), dtype=np.uint64)
    native.string_hash(*string_buffers(values), out)
    return out


@kernel
def string_codes(group: np.ndarray, values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(code, first): each row's number among the distinct (group, string) pairs of the rows,
    ordered by group (0 or more), then by the string's bytes, a prefix first (for UTF-8 text,
    code point order: Python's order of ``str``); ``first[c]`` the first row of pair c. Exact:
    the strings compared whole (big-endian 8-byte words, then the length), no hash.

    >>> code, first = string_codes(np.array([1, 0, 1, 0, 1]), arrow_strings(["b", "b", "a", "b", "b"]))
    >>> code.tolist(), first.tolist()
    ([2, 0, 1, 0, 2], [1, 2, 0])
    """
    group = np.asarray(group, np.int64)
    offsets, body = string_buffers(values)
    start, length = offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64)
    data = np.zeros(len(body) + 8, dtype=np.uint8)
    data[:len(body)] = np.frombuffer(body, dtype=np.uint8)
    words = np.ndarray(shape=(len(data) - 7,), dtype=">u8", buffer=data, strides=(1,))
    keys = [length]  # lexsort: the last key first; equal words (zero-padded) leave the shorter string first
    longest = int(length.max()) if len(length) else 0
    for j in range(8 * ((longest - 1) // 8), -1, -8) if longest else ():  # the 8-byte words, the last first
        word = words[np.minimum(start + j, len(words) - 1)].astype(np.uint64)
        keys.append(word & _HEAD_MASK[np.clip(length - j, 0, 8)])
    keys.append(group)
    order = np.lexsort(keys)  # stable: the rows of one pair in row order
    same = np.ones(max(len(order) - 1, 0), dtype=bool)
    for key in keys:
        ordered = key[order]
        same &= ordered[1:] == ordered[:-1]
    new = np.concatenate(([True], ~same)) if len(order) else np.zeros(0, dtype=bool)
    code = np.empty(len(order), dtype=np.int64)
    code[order] = np.cumsum(new) - 1
    return code, order[new]


@string_codes.binding
def _(native, group, values):
    group = np.ascontiguousarray(group, np.int64)
    if not pa.types.is_string(values.type) or (len(group) and group.min() < 0):
        return FALLBACK
    n_groups = int(group.max()) + 1 if len(group) else 0
    code, first = np.empty(len(group), np.int64), np.empty(len(group), np.int64)
    count = native.string_codes(group, n_groups, *string_buffers(values), code, first)
    return code, first[:count].copy()


_HEAD_MASK = np.array([((1 << (8 * r)) - 1) << (8 * (8 - r)) for r in range(9)], dtype=np.uint64)  # a word's first r bytes


def pair_keys(qcode: np.ndarray, docid_hash: np.ndarray) -> np.ndarray:
    """One 64-bit key per (query code, docid hash) pair."""
    with np.errstate(over="ignore"):
        return docid_hash + qcode.astype(np.uint64) * _MQ


def any_repeated(keys: np.ndarray) -> bool:
    """Whether two of the uint64 ``keys`` are equal. Keys are first counted into 4n buckets
    by their top bits; only keys sharing a bucket (about a fifth) are sorted and compared."""
    if len(keys) < 2:
        return False
    bits = max(int(len(keys) * 4 - 1).bit_length(), 4)
    bucket = (keys >> np.uint64(64 - bits)).astype(np.intp)
    shared = np.sort(keys[np.bincount(bucket, minlength=1 << bits)[bucket] > 1])
    return bool((shared[1:] == shared[:-1]).any())


class _Pairs:
    """What :class:`Qrels` and :class:`Run` share: values per (qid, docid) row, in the column
    named ``_values`` (grade, score), and what is computed from the ids once, on first use."""

    @cached_property
    def query_ids(self) -> np.ndarray:
        """Sorted distinct query ids (strcmp order, as trec_eval)."""
        return np.array(sorted(pc.unique(self.qid).to_pylist()), dtype=object)

    @cached_property
    def docid_hash(self) -> np.ndarray:
        """:func:`string_hash` of each docid (shared by the duplicate check and the qrels lookup)."""
        return string_hash(self.docid)

    @cached_property
    def qid_blocks(self) -> tuple[np.ndarray, pa.Array]:
        """:func:`id_blocks` of the qids (the compiled tokenizer finds them while reading)."""
        return id_blocks(self.qid)

    def _columns(self, dtype) -> None:
        """The ids as Arrow strings, the values as ``dtype``; every column one length."""
        self.qid = as_string_array(self.qid)
        self.docid = as_string_array(self.docid)
        values = np.asarray(getattr(self, self._values), dtype=dtype)
        setattr(self, self._values, values)
        if not (len(self.qid) == len(self.docid) == len(values)):
            raise ValueError(f"qid, docid and {self._values} must have the same length")

    def __len__(self) -> int:
        return len(self.docid)  # every column one length (a run's docids_only() keeps this one)

    def known(self, docid_hash: np.ndarray | None = None, qid_blocks: tuple | None = None,
              query_ids: np.ndarray | None = None):
        """The same object, with :attr:`docid_hash`, :attr:`qid_blocks` and :attr:`query_ids`
        as a reader (or the qrels index) already computed them, instead of computing them
        again on first use."""
        if docid_hash is not None:
            self.__dict__["docid_hash"] = docid_hash
        if query_ids is not None and "query_ids" not in self.__dict__:
            self.__dict__["query_ids"] = query_ids
        if qid_blocks is not None:
            self.__dict__["qid_blocks"] = qid_blocks
        return self

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame({"qid": self.qid.to_pylist(), "docid": self.docid.to_pylist(),
                             self._values: getattr(self, self._values)})


@dataclass(eq=False)
class Qrels(_Pairs):
    """Relevance judgments: one integer grade per (qid, docid).

    A grade >= 1 is relevant at trec_eval's default level; 0 is judged not relevant;
    a negative grade is trec_eval's "pooled but unjudged" marker (gain 0, and ignored
    by Bpref and by ``unjudged=condensed``, as trec_eval does). A pair that is absent
    is unjudged: a hole.
    """

    _values = "grade"
    qid: pa.Array
    docid: pa.Array
    grade: np.ndarray
    source: str = "<memory>"
    sha256: str | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self._columns(np.int64)
        if self.sha256 is None:
            self.sha256 = content_hash(self.qid, self.docid, self.grade)

    def __repr__(self) -> str:
        return f"Qrels({self.source!r}, {counted(len(self), 'judgment')}, {counted(len(self.query_ids), 'query')})"

    @cached_property
    def index(self) -> "QrelsIndex":
        return QrelsIndex.build(self)


@dataclass(eq=False)
class Run(_Pairs):
    """One system's ranked results: a score per (qid, docid), rows in input order.

    ``rank`` (the run file's rank column, as numbers) is needed only for ``ties='rank'``;
    a TREC reader keeps the column's text (``rank_text``), parsed when asked
    (:func:`judged.core.io.trec_files.rank_column`), and ``reread()``, which reads the file's raw text
    again to name a bad line. ``distinct_blocks``: the reader checked that each query's rows
    form one block. What a reader computed on the way (docid hashes, qid blocks) is given
    to :meth:`known`.
    """

    _values = "score"
    qid: pa.Array
    docid: pa.Array
    score: np.ndarray
    name: str = "run"
    rank: np.ndarray | None = None
    source: str = "<memory>"
    sha256: str | None = None
    rank_text: pa.Array | None = field(default=None, repr=False)
    reread: object = field(default=None, repr=False)  # () -> judged.core.io.text.RawFile, or None
    distinct_blocks: bool = False

    def __post_init__(self):
        self._columns(np.float64)
        if self.rank is not None:
            self.rank = np.asarray(self.rank, dtype=np.float64)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {counted(len(self), 'row')})"

    def docids_only(self) -> "Run":
        """This run without its qid, score and rank columns, for a caller done with ranking
        and aligning it that reads only the docids of aligned rows (and their hashes, and the
        qid blocks, kept): a third of a TREC run's memory (judged.analyses.comparison)."""
        self.docid_hash, self.qid_blocks  # computed from the columns dropped here, if not yet
        slim = copy.copy(self)
        slim.qid = slim.score = slim.rank = slim.rank_text = None
        return slim


def stack_runs(parts: list, name: str = "run", source: str = "<memory>") -> Run:
    """The rows of the runs ``parts`` one after another, as one run (their docid hashes too,
    when every part has them)."""
    if not parts:
        empty = pa.array([], pa.string())
        return Run(empty, empty, np.zeros(0), name=name, source=source)
    ranks = [p.rank for p in parts]
    run = Run(pa.concat_arrays([as_string_array(p.qid) for p in parts]),
              pa.concat_arrays([as_string_array(p.docid) for p in parts]), np.concatenate([p.score for p in parts]),
              name=name, rank=None if any(r is None for r in ranks) else np.concatenate(ranks), source=source)
    hashes = [p.__dict__.get("docid_hash") for p in parts]
    return run.known(docid_hash=None if any(h is None for h in hashes) else np.concatenate(hashes),
                     qid_blocks=_stacked_blocks(parts))


def _stacked_blocks(parts: list) -> tuple | None:
    """The :func:`id_blocks` of runs stacked, from each part's (None unless every part knows
    its own): each part's shifted, the first merged into the block before when it goes on."""
    blocks = [p.__dict__.get("qid_blocks") for p in parts]
    if any(b is None for b in blocks):
        return None
    at = np.cumsum([0] + [len(p) for p in parts[:-1]]).tolist()
    starts, ids, last = [], [], None
    for shift, (s, v) in zip(at, blocks):
        if not len(s):
            continue
        go_on = last is not None and v[0].as_py() == last
        starts.append(s[1:] + shift if go_on else s + shift)
        ids.append(as_string_array(v[1:] if go_on else v))
        last = v[len(v) - 1].as_py()
    if not starts:
        return np.zeros(0, np.int64), pa.array([], pa.string())
    return np.concatenate(starts).astype(np.int64), pa.concat_arrays(ids)


@dataclass(eq=False)
class QrelsIndex:
    """Qrels sorted into per-query blocks (CSR), with sorted (query, docid) hash keys for lookups.

    Rows are ordered by query code (position in ``query_ids``), then input order.
    """

    query_ids: np.ndarray
    query_vocab: pa.Array
    offsets: np.ndarray  # len(query_ids)+1
    grade: np.ndarray  # grades in block order
    docid: pa.Array  # docids in block order
    docid_hash: np.ndarray  # string_hash of those docids
    _judgments: dict = field(default_factory=dict, repr=False)  # see judgments_of
    _memo: dict = field(default_factory=dict, repr=False)  # see remember: per-query IDCG and counts of every query

    @staticmethod
    def build(qrels: Qrels) -> "QrelsIndex":
        grouped = QrelsIndex._build_grouped(qrels)
        if grouped is not None:
            return grouped
        query_ids = qrels.query_ids
        distinct = pc.unique(qrels.qid)
        query_vocab = distinct.take(pc.sort_indices(distinct))  # byte order = code point order = query_ids
        qcode = id_codes(qrels.qid, query_vocab)
        order = np.argsort(qcode, kind="stable")
        counts = np.bincount(qcode, minlength=len(query_ids))
        offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        docid = qrels.docid.take(arrow_indices(order))
        return QrelsIndex(query_ids, query_vocab, offsets, qrels.grade[order], docid, qrels.docid_hash[order])

    @staticmethod
    def _build_grouped(qrels: Qrels) -> "QrelsIndex | None":
        """The same index without sorting the rows, when each query's judgments form one
        block of lines (as qrels files list them): the blocks are ordered, not the rows.
        None when a query has more than one block."""
        starts, values = qrels.qid_blocks
        by_id, increasing = byte_order(values)
        if not increasing:
            return None  # a query id in two blocks
        query_vocab = take_strings(values, by_id)
        lengths = np.diff(np.append(starts, len(qrels.qid)))
        offsets = np.zeros(len(starts) + 1, dtype=np.int64)
        np.cumsum(lengths[by_id], out=offsets[1:])
        if "query_ids" not in qrels.__dict__:
            qrels.known(query_ids=np.array(query_vocab.to_pylist(), dtype=object))
        if (by_id[1:] > by_id[:-1]).all():  # the blocks are already in id order
            return QrelsIndex(qrels.query_ids, query_vocab, offsets, qrels.grade, qrels.docid, qrels.docid_hash)
        order = np.repeat(starts[by_id] - offsets[:-1], lengths[by_id]) + np.arange(len(qrels.qid))
        return QrelsIndex(qrels.query_ids, query_vocab, offsets, qrels.grade[order],
                          take_runs(qrels.docid, starts[by_id], lengths[by_id]), qrels.docid_hash[order])

    @cached_property
    def table(self) -> "KeyTable | None":
        """(query, docid) keys -> block-order row; None after a hash collision."""
        return KeyTable.build(pair_keys(self.row_query, self.docid_hash))

    def judgments_of(self, evaluated: np.ndarray, build):
        """The :class:`judged.core.align.Judgments` of the ``evaluated`` queries (their sorted
        query codes), built by ``build()`` once and shared by every run evaluated on the
        same queries (with what its measures cache). The last two are kept."""
        key = evaluated.tobytes()
        if key not in self._judgments:
            if len(self._judgments) >= 2:
                del self._judgments[next(iter(self._judgments))]
            self._judgments[key] = build()
        return self._judgments[key]

    @cached_property
    def _vocab_table(self) -> "KeyTable | None":
        """string_hash of each query id -> its code (None after a hash collision)."""
        return KeyTable.build(string_hash(self.query_vocab))

    def query_codes(self, ids: pa.Array, blocks: tuple | None = None) -> np.ndarray:
        """Each id's query code (its position in ``query_ids``; -1 when the qrels lack it),
        looked up once per run of equal consecutive ids (``blocks``: :func:`id_blocks`).
        The runs are hashed and looked up in a table of the query ids kept with the index
        (every match confirmed on the strings); after a hash collision among the query ids,
        with one Arrow ``index_in``."""
        if len(ids) == 0:
            return np.empty(0, dtype=np.int64)
        starts, values = blocks if blocks is not None else id_blocks(ids)
        if self._vocab_table is not None:
            code = self._vocab_table.find(string_hash(values))
            hit = np.flatnonzero(code >= 0)
            code[hit[~strings_equal(values, hit, self.query_vocab, code[hit])]] = -1
            return np.repeat(code, np.diff(np.append(starts, len(ids))))
        return id_codes(ids, self.query_vocab, (starts, values))

    @cached_property
    def row_query(self) -> np.ndarray:
        """Query code of each judgment (block order)."""
        return np.repeat(np.arange(len(self.query_ids)), np.diff(self.offsets))

    @cached_property
    def has_relevant(self) -> np.ndarray:
        """Per query code: whether any judgment has grade >= 1 (trec_eval's default level)."""
        return self.count_grades(1) > 0

    def count_grades(self, low: int, high: int | None = None) -> np.ndarray:
        """Per query code: judgments with low <= grade (< high), int64; kept per (low, high)."""
        def count():
            m = self.grade >= low if high is None else (self.grade >= low) & (self.grade < high)
            counts = np.zeros(len(self.query_ids), dtype=np.int64)
            if len(m):
                counts = np.add.reduceat(m.astype(np.int64), self.offsets[:-1])
            return counts

        return self.remember(("count", low, high), count)

    def remember(self, key, build):
        """What depends on the qrels alone, per query code (an ideal DCG, counts of grades),
        computed once by ``build()`` and kept with the index for every run and block; a
        ``build()`` giving None is not kept."""
        if key not in self._memo:
            value = build()
            if value is None:
                return None
            self._memo[key] = value
        return self._memo[key]

    def rows_of(self, queries: np.ndarray) -> np.ndarray:
        """Block-order rows of the judgments of ``queries`` (increasing query codes), in order."""
        return block_rows(self.offsets, queries)

    def lookup(self, qcode: np.ndarray, docid: pa.Array, docid_hash: np.ndarray | None = None,
               rows: np.ndarray | None = None) -> np.ndarray:
        """Grades (float, NaN where unjudged) of docids under query codes (-1: unknown query).

        ``rows``: where each entry's docid sits in ``docid`` (default: entry i is docid[i]);
        ``docid_hash``: :func:`string_hash` of those docids, if already known."""
        out = np.full(len(qcode), np.nan)
        if len(self.grade) == 0 or len(qcode) == 0:
            return out
        if rows is None:
            rows = np.arange(len(qcode))
        if self.table is None:
            return self._lookup_exact(qcode, docid.take(arrow_indices(rows)))
        if docid_hash is None:
            docid_hash = string_hash(docid.take(arrow_indices(rows)))
        found = self.table.find(pair_keys(qcode, docid_hash))
        hit = np.flatnonzero((found >= 0) & (qcode >= 0))
        mine = found[hit]
        same = as_numpy(pc.equal(docid.take(arrow_indices(rows[hit])), self.docid.take(arrow_indices(mine))))
        out[hit[same]] = self.grade[mine[same]]
        return out

    def _lookup_exact(self, qcode: np.ndarray, docid: pa.Array) -> np.ndarray:
        """The same answer without hashing: (query, docid code) keys over the qrels' docids."""
        vocab = pc.unique(self.docid)
        nd = max(len(vocab), 1)
        mine = pc.index_in(self.docid, value_set=vocab).to_numpy(zero_copy_only=False).astype(np.int64)
        qkeys = self.row_query * nd + mine
        order = np.argsort(qkeys)
        qkeys = qkeys[order]
        out = np.full(len(qcode), np.nan)
        dcode = pc.index_in(docid, value_set=vocab).to_numpy(zero_copy_only=False)
        known = (qcode >= 0) & ~np.isnan(dcode.astype(np.float64))
        if not known.any():
            return out
        key = qcode[known] * nd + dcode[known].astype(np.int64)
        at = np.minimum(np.searchsorted(qkeys, key), len(qkeys) - 1)
        hit = qkeys[at] == key
        vals = np.full(len(key), np.nan)
        vals[hit] = self.grade[order[at[hit]]]
        out[known] = vals
        return out


@dataclass(eq=False)
class KeyTable:
    """An open-addressing hash table (linear probing) from distinct uint64 keys to row
    numbers, built with one sort and probed with whole-array numpy steps: one random access
    per probe where a binary search would need twenty.

    A key's home slot is its top bits, so sorting the keys sorts them by home slot, and
    linear probing places the i-th of them at max(home_i, place_{i-1} + 1): a running
    maximum. The table does not wrap around; it ends with empty slots instead."""

    keys: np.ndarray
    rows: np.ndarray  # -1 = empty slot
    shift: np.uint64

    @staticmethod
    def build(keys: np.ndarray) -> "KeyTable | None":
        """None when two keys are equal (the caller then matches strings exactly)."""
        # at most a quarter full: a missing key (most run rows) then mostly ends at its home
        # slot; half full cost 1.5x the probing time on deep.run for 24 MB less per 1M judgments
        bits = max(int(len(keys) * 4 - 1).bit_length(), 4)
        shift = np.uint64(64 - bits)
        by_key = np.argsort(keys)
        ordered = keys[by_key]
        if len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any():
            return None
        step = np.arange(len(ordered))
        place = np.maximum.accumulate((ordered >> shift).astype(np.int64) - step) + step if len(ordered) else step
        size = max((1 << bits), int(place[-1]) + 1 if len(place) else 0) + 1  # at least one empty slot at the end
        table_keys = np.zeros(size, dtype=np.uint64)
        table_rows = np.full(size, -1, dtype=np.int32 if len(keys) < 2**31 else np.int64)
        table_keys[place] = ordered
        table_rows[place] = by_key
        return KeyTable(table_keys, table_rows, shift)

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Row of each key, -1 when absent."""
        out = np.full(len(keys), -1, dtype=np.int64)
        slot = (keys >> self.shift).astype(np.intp)
        r = self.rows[slot]  # first probe of every key, without index arrays
        match = (r >= 0) & (self.keys[slot] == keys)
        out[match] = r[match]
        pending = np.flatnonzero((r >= 0) & ~match)
        slot = slot[pending] + 1
        while len(pending):
            r = self.rows[slot]
            match = (r >= 0) & (self.keys[slot] == keys[pending])
            out[pending[match]] = r[match]
            go_on = (r >= 0) & ~match
            pending, slot = pending[go_on], slot[go_on] + 1
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


@kernel
def grades_of_rows(index: QrelsIndex, rows: np.ndarray, qcode: np.ndarray, docid: pa.Array,
                   docid_hash: np.ndarray) -> np.ndarray:
    """Grades (float, NaN where unjudged) of run rows ``rows`` (grouped by query) given the
    run's per-row query codes, docids and docid hashes: :meth:`QrelsIndex.lookup`."""
    return index.lookup(qcode[rows], docid, docid_hash[rows], rows=rows)


@grades_of_rows.binding
def _(native, index, rows, qcode, docid, docid_hash):
    """One small hash table per query (``lookup_blocks``), every match confirmed on the bytes;
    the rows' codes and hashes are gathered by the C code itself."""
    if len(index.grade) == 0 or len(rows) == 0:
        return FALLBACK
    out = np.empty(len(rows))
    native.lookup_blocks(np.ascontiguousarray(qcode, np.int64), np.ascontiguousarray(docid_hash, np.uint64),
                         np.ascontiguousarray(rows, np.int64), *string_buffers(docid), index.offsets, index.docid_hash,
                         *string_buffers(index.docid), np.ascontiguousarray(index.grade, np.int64), out)
    return out


@dataclass(eq=False)
class SubtopicQrels:
    """Judgments per subtopic (ndeval's ``qid subtopic docid grade``): one integer grade per
    (qid, subtopic, docid), for the diversity measures (:mod:`judged.core.measures.diversity`).
    In a TREC qrels file the subtopic is the second (iteration) column, as ir_measures
    reads it. ``row`` is each row's line number (1-based) or row in its source."""

    qid: pa.Array
    subtopic: pa.Array
    docid: pa.Array
    grade: np.ndarray
    source: str = "<memory>"
    _memo: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.qid, self.subtopic, self.docid = (as_string_array(a) for a in (self.qid, self.subtopic, self.docid))
        self.grade = np.asarray(self.grade, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.grade)

    def __repr__(self) -> str:
        return f"SubtopicQrels({self.source!r}, {counted(len(self), 'judgment')})"

    def flat(self, sha256: str | None = None) -> Qrels:
        """The qrels every other measure reads: each (qid, docid) once, with its largest
        grade over the subtopics (relevant to the query when relevant to any subtopic, as
        ndeval's MAP), in the order of first appearance; this table in ``meta['subtopics']``."""
        t = pa.table({"q": self.qid, "d": self.docid, "g": pa.array(self.grade), "i": arrow_indices(
            np.arange(len(self), dtype=np.int64))})
        agg = t.group_by(["q", "d"], use_threads=False).aggregate([("g", "max"), ("i", "min")])
        order = np.argsort(agg["i_min"].to_numpy())
        agg = agg.take(arrow_indices(order))
        return Qrels(agg["q"].combine_chunks(), agg["d"].combine_chunks(), agg["g_max"].to_numpy(),
                     source=self.source, sha256=sha256, meta={"subtopics": self})
