"""TREC run files (``qid Q0 docid rank score tag``; fields after the tag are ignored, as
trec_eval ignores them) and TREC qrels (``qid iter docid grade``, exactly four fields, as
trec_eval requires)."""

from __future__ import annotations

import math
import os

import numpy as np
import pyarrow as pa

from ..conventions import validate
from ..data import (Qrels, Run, any_repeated, id_blocks, id_codes, pair_keys, string_buffers, string_hash,
                    take_strings)
from ..errors import ParseError
from ..kernels import kernel
from ..lazy import lazy
from . import compressed
from .text import Layout, RawFile, Tokens, iter_lines, line_of_row, read_raw, read_tokens, require_rows

pc = lazy("pyarrow.compute")  # imported on first use (judged.core.lazy)


def parse_score(raw: RawFile, lineno: int, token: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise ParseError(raw.name, lineno, f"score {token!r} is not a number")
    if "_" in token or not token.isascii():  # Python reads 1_0 as 10 and "１" as 1; C does not
        raise ParseError(raw.name, lineno, f"score {token!r} is not a number")
    if not math.isfinite(value):
        raise ParseError(raw.name, lineno, f"score {token!r} is not a finite number")
    return value


TAIL = 1 << 16  # bytes read from the end of a plain run file for its last line


def run_tag(path) -> str | None:
    """trec_eval's ``runid``: the tag (sixth field) of a TREC run file's last data line,
    the one trec_eval keeps (get_trec_results.c: "the run_id field of the last line is kept",
    unchecked against the others); None when ``path`` is no TREC run file on disk, or its
    last data line has no tag."""
    try:
        name = os.fspath(path)
        if not os.path.isfile(name):
            return None
        if compressed.kind_of_file(name):
            data = read_raw(name).data
        else:
            with open(name, "rb") as fh:
                fh.seek(max(0, os.fstat(fh.fileno()).st_size - TAIL))
                data = fh.read()
    except (OSError, TypeError, ValueError, ParseError):
        return None
    for line in reversed(data.split(b"\n")):
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            return fields[5].decode("utf-8", "replace") if len(fields) >= 6 else None
    return None


def parse_grade(raw: RawFile, lineno: int, token: str) -> int:
    t = token[1:] if token[:1] in "+-" else token
    if not t.isdigit() or not t.isascii():
        raise ParseError(raw.name, lineno, f"grade {token!r} is not an integer")
    value = int(token)
    if not -2**63 <= value < 2**63:
        raise ParseError(raw.name, lineno, f"grade {token!r} is out of range")
    return value


def _run_line(raw: RawFile, lineno: int, f: list[str]) -> tuple:
    """(qid, docid, rank text, score) of a run line's fields, or the line's ParseError.
    Fields after the tag are ignored, as trec_eval ignores them."""
    if len(f) < 6:
        raise ParseError(raw.name, lineno, f"expected 6 fields (qid Q0 docid rank score tag), found {len(f)}")
    return f[0], f[2], f[3], parse_score(raw, lineno, f[4])


def _qrels_line(raw: RawFile, lineno: int, f: list[str]) -> tuple:
    """(qid, docid, grade) of a qrels line's fields, or the line's ParseError."""
    if len(f) != 4:
        raise ParseError(raw.name, lineno, f"expected 4 fields (qid iter docid grade), found {len(f)}")
    return f[0], f[2], parse_grade(raw, lineno, f[3])


RUN_LAYOUT = Layout(fields=6, strings=(0, 2, 3), number=4, kind="float", hashed=2, check=_run_line, extra=True)
QRELS_LAYOUT = Layout(fields=4, strings=(0, 2), number=3, kind="int", hashed=2, check=_qrels_line)


def run_from_tokens(tokens: Tokens, name: str, source: str, sha256: str | None = None,
                    qid_blocks: tuple | None = None, distinct_blocks: bool = False) -> Run:
    """A :class:`Run` of the compiled tokenizer's columns (:data:`RUN_LAYOUT`), keeping what
    it found on the way: the docid hashes and the qid blocks (``distinct_blocks``: the
    caller checked that each query is in one block)."""
    qid, docid, rank_text = tokens.strings
    run = Run(qid, docid, tokens.number, name=name, source=source, sha256=sha256, rank_text=rank_text,
              reread=lambda: read_raw(source), distinct_blocks=distinct_blocks)
    return run.known(tokens.hashes, qid_blocks or (tokens.blocks, take_strings(qid, tokens.blocks)))


def read_trec_run(path, name: str | None = None, on_duplicate: str = "error", digest: bool = True) -> Run:
    tokens, sha256 = read_tokens(path, RUN_LAYOUT, digest) or (None, None)
    source = os.fspath(path)
    if tokens is not None:
        run = run_from_tokens(tokens, name or source, source, sha256)
        return dedupe_run(run, on_duplicate, lambda row: line_of_row(read_raw(source), row))
    raw = read_raw(path)  # a line the tokenizer refused and Python reads: the line-by-line reader
    qids, docids, ranks, scores = [], [], [], []
    for lineno, f in iter_lines(raw):
        q, d, r, sc = _run_line(raw, lineno, f)
        qids.append(q); docids.append(d); ranks.append(r); scores.append(sc)
    require_rows(raw, len(scores))
    run = Run(pa.array(qids, pa.string()), pa.array(docids, pa.string()), np.array(scores, dtype=np.float64),
              name=name or source, rank=None, source=source, sha256=raw.sha256, rank_text=pa.array(ranks, pa.string()),
              reread=lambda: raw)
    return dedupe_run(run, on_duplicate, lambda row: line_of_row(raw, row))


def rank_column(run: Run) -> np.ndarray:
    """The run file's rank column as numbers (needed only for ``ties='rank'``)."""
    if run.rank is not None:
        return run.rank
    text = run.rank_text
    if text is None:
        raise ParseError(run.source, None, "this run has no rank column (ties='rank' needs one)")
    try:
        run.rank = pc.cast(text, pa.float64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raw = run.reread()
        for lineno, f in iter_lines(raw):
            try:
                float(f[3])
            except ValueError:
                raise ParseError(raw.name, lineno, f"rank {f[3]!r} is not a number (ties='rank' needs one)")
        raise
    return run.rank


def duplicate_rows(qid: pa.Array, docid: pa.Array, docid_hash: np.ndarray | None = None,
                   blocks: tuple | None = None, distinct_blocks: bool = False) -> np.ndarray:
    """Row indices (input order) that repeat an earlier (qid, docid) pair (``blocks``: the
    qids' :func:`judged.core.data.id_blocks`, when known; ``distinct_blocks``: the caller knows
    each query is in one block).

    Fast path: distinct (query, docid-hash) keys prove there is none; only when two keys
    meet (a repeat, or a hash collision) are the strings grouped exactly."""
    if len(qid) < 2:
        return np.empty(0, dtype=np.int64)
    starts, values = blocks if blocks is not None else id_blocks(qid)  # cheap when grouped
    vocab = values if distinct_blocks or not any_repeated(string_hash(values)) else pc.unique(values)
    if len(vocab) == len(values):  # each query in one block: the block number is its code
        qcode = np.repeat(np.arange(len(vocab)), np.diff(np.append(starts, len(qid))))
    else:
        qcode = id_codes(qid, vocab, (starts, values))
    return repeated_pair_rows(qid, docid, qcode, len(vocab), string_hash(docid) if docid_hash is None else docid_hash)


@kernel
def repeated_pair_rows(qid: pa.Array, docid: pa.Array, qcode: np.ndarray, n_queries: int,
                       docid_hash: np.ndarray) -> np.ndarray:
    """The rows (ascending) repeating an earlier row's (qid, docid) pair; ``qcode``: each
    row's query code (0..n_queries-1). Distinct (query, docid-hash) keys prove there is none;
    only when two keys meet (a repeat, or a hash collision) are the strings grouped."""
    if not any_repeated(pair_keys(qcode, docid_hash)):
        return np.empty(0, dtype=np.int64)
    t = pa.table({"q": qid, "d": docid, "i": pa.array(np.arange(len(qid)))})
    first = t.group_by(["q", "d"], use_threads=False).aggregate([("i", "min"), ("i", "count")])
    if len(first) == len(qid):
        return np.empty(0, dtype=np.int64)
    keep = np.zeros(len(qid), dtype=bool)
    keep[first["i_min"].to_numpy()] = True
    return np.flatnonzero(~keep)


@repeated_pair_rows.binding
def _(native, qid, docid, qcode, n_queries, docid_hash):
    """Exact: per-query hash sets, every match confirmed on the bytes."""
    return np.sort(np.frombuffer(native.repeated_rows(np.ascontiguousarray(qcode, np.int64), n_queries,
                                                      np.ascontiguousarray(docid_hash, np.uint64),
                                                      *string_buffers(docid)), dtype=np.int64))


def dedupe_run(run: Run, on_duplicate: str, line_of, dup: np.ndarray | None = None) -> Run:
    """The run without repeated (qid, docid) pairs, as ``on_duplicate`` says (``dup``: the
    :func:`duplicate_rows`, when already known)."""
    if dup is None:
        dup = duplicate_rows(run.qid, run.docid, run.docid_hash, run.qid_blocks,
                             distinct_blocks=run.distinct_blocks)
    if len(dup) == 0:
        return run
    if on_duplicate == "error":
        row = int(dup[0])
        raise ParseError(run.source, line_of(row),
                         f"docid {run.docid[row].as_py()!r} appears twice for query {run.qid[row].as_py()!r} "
                         "(use --on-duplicate first|max to accept)")
    t = pa.table({"q": run.qid, "d": run.docid, "s": pa.array(run.score), "i": pa.array(np.arange(len(run)))})
    if on_duplicate == "first":
        keep = t.group_by(["q", "d"], use_threads=False).aggregate([("i", "min")])["i_min"].to_numpy()
    elif on_duplicate == "max":
        # highest score wins; the earliest line among equal scores
        order = np.lexsort((np.arange(len(run)), -run.score))
        t2 = t.take(pa.array(order))
        keep = t2.group_by(["q", "d"], use_threads=False).aggregate([("i", "first")])["i_first"].to_numpy()
    else:
        validate(on_duplicate=on_duplicate)
    keep = np.sort(keep)
    idx = pa.array(keep)
    return Run(run.qid.take(idx), run.docid.take(idx), run.score[keep], name=run.name,
               rank=None if run.rank is None else run.rank[keep], source=run.source, sha256=run.sha256,
               rank_text=None if run.rank_text is None else run.rank_text.take(idx),
               reread=run.reread if run.rank_text is not None else None)


def read_trec_qrels(path, on_duplicate: str = "error") -> Qrels:
    tokens, sha256 = read_tokens(path, QRELS_LAYOUT) or (None, None)
    source = os.fspath(path)
    if tokens is not None:
        qrels = Qrels(*tokens.strings, tokens.number, source=source, sha256=sha256).known(
            tokens.hashes, qid_blocks=(tokens.blocks, take_strings(tokens.strings[0], tokens.blocks)))
        return dedupe_qrels(qrels, on_duplicate, lambda row: line_of_row(read_raw(source), row))
    raw = read_raw(path)  # a line the tokenizer refused and Python reads: the line-by-line reader
    qids, docids, grades = [], [], []
    for lineno, f in iter_lines(raw):
        q, d, g = _qrels_line(raw, lineno, f)
        qids.append(q); docids.append(d); grades.append(g)
    require_rows(raw, len(grades))
    return dedupe_qrels(Qrels(pa.array(qids, pa.string()), pa.array(docids, pa.string()), np.array(grades, np.int64),
                              source=source, sha256=raw.sha256), on_duplicate, lambda row: line_of_row(raw, row))


def dedupe_qrels(qrels: Qrels, on_duplicate: str, line_of) -> Qrels:
    """Repeated identical judgments collapse to one; two different grades for one pair
    are an error unless ``on_duplicate`` is ``first`` or ``max``."""
    dup = duplicate_rows(qrels.qid, qrels.docid, qrels.docid_hash, qrels.qid_blocks)
    if len(dup) == 0:
        return qrels
    t = pa.table({"q": qrels.qid, "d": qrels.docid, "g": pa.array(qrels.grade), "i": pa.array(np.arange(len(qrels)))})
    agg = t.group_by(["q", "d"], use_threads=False).aggregate([("g", "min"), ("g", "max"), ("i", "min")])
    conflicting = (agg["g_min"].to_numpy() != agg["g_max"].to_numpy())
    if conflicting.any() and on_duplicate == "error":
        bad_pairs = set(zip(agg["q"].filter(pa.array(conflicting)).to_pylist(),
                            agg["d"].filter(pa.array(conflicting)).to_pylist()))
        qs, ds = qrels.qid.to_pylist(), qrels.docid.to_pylist()
        for row in dup:
            if (qs[row], ds[row]) in bad_pairs:
                grades = sorted(set(qrels.grade[[i for i in range(len(qs)) if qs[i] == qs[row] and ds[i] == ds[row]]].tolist()))
                raise ParseError(qrels.source, line_of(int(row)),
                                 f"query {qs[row]!r} docid {ds[row]!r} is judged twice with different grades "
                                 f"{grades} (use --on-duplicate first|max to accept)")
    if on_duplicate == "max":
        keep_rows = agg["i_min"].to_numpy()
        grades = agg["g_max"].to_numpy()
    else:  # identical duplicates, or 'first'
        keep_rows = agg["i_min"].to_numpy()
        grades = qrels.grade[keep_rows]
    order = np.argsort(keep_rows)
    keep_rows, grades = keep_rows[order], grades[order]
    idx = pa.array(keep_rows)
    return Qrels(qrels.qid.take(idx), qrels.docid.take(idx), grades, source=qrels.source, sha256=qrels.sha256,
                 meta=qrels.meta)
