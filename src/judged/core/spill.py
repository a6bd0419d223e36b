"""Evaluating a large TREC run file that is not grouped by query: partition to disk, then score.

A run file whose queries are scattered over the file cannot be streamed block by block
(:mod:`judged.core.stream`). When such a plain-text file is larger than ``JUDGED_SPILL_BYTES``
(default 1 GiB), its lines are spilled into K temporary files by a hash of their qid (the
first field), K = file size / ``JUDGED_SPILL_PARTITION_BYTES`` (default 64 MiB). The file
is read in 2 MB binary chunks and each chunk is split with numpy and Arrow (no Python per
line); a partition keeps its lines in file order, so it holds whole queries in their
original order (``ties='input'`` and ``on_duplicate='first'`` see the same order). Each
partition is then read and scored by the in-memory engine (``read_run``, ``align``, the
measure kernels) and the pieces are put together by :func:`judged.core.blocks.assemble`, so the
numbers are those of reading the whole file. Memory is one partition's evaluation, however
large the file; disk is the file's size plus 8 bytes a line (the original line numbers).

Errors name the original file and line: each partition keeps the original line number of
each of its lines (``.lines``, int64), and the error the in-memory reader would raise first
(a bad line before a repeated pair, each the earliest in the file) is the one raised. The
temporary directory (``tempfile``: ``TMPDIR``) is removed on success, error or interrupt.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .conventions import Settings
from .errors import ParseError, UsageError
from .blocks import assemble, block_settings, file_realigner, score_block
from .io import compressed, read_run
from .progress import ByteProgress
from .results import RunResult
from .io.trec_files import rank_column

SPILL_BYTES = 1 << 30  # files larger than this (bytes) are partitioned when not grouped by query
PARTITION_BYTES = 64 << 20  # bytes of run lines per partition (about; a query is never split)
CHUNK = 1 << 21  # bytes read and split at a time (small enough to stay in the CPU caches)

_WHITE = np.zeros(256, dtype=bool)  # bytes.split()'s white space, as the TREC tokenizer splits
_WHITE[list(b" \t\n\r\x0b\x0c")] = True
_LEADING = 64  # bytes of white space before a first field skipped by numpy; beyond that, by re
_NOT_WHITE = re.compile(rb"[^ \t\n\r\x0b\x0c]")
# the partition key's mixing constants (splitmix64's) and the masks keeping a word's first r bytes
_M1, _M2, _MQ = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_TAIL_MASK = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def spill_bytes() -> int:
    """The size above which a run file not grouped by query is spilled (``JUDGED_SPILL_BYTES``)."""
    return _environment_bytes("JUDGED_SPILL_BYTES", SPILL_BYTES)


def partition_bytes() -> int:
    """The partition budget in bytes of run lines (``JUDGED_SPILL_PARTITION_BYTES``)."""
    return max(1, _environment_bytes("JUDGED_SPILL_PARTITION_BYTES", PARTITION_BYTES))


def _environment_bytes(variable: str, default: int) -> int:
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{variable}={text!r} is not a number of bytes")


@dataclass
class Partition:
    """One temporary file of whole queries: its run lines (file order) and their line numbers."""

    path: str  # the run lines
    lines_path: str  # int64 original line number of each of them
    size: int = 0  # bytes written

    def original_line(self, line: int | None) -> int | None:
        """The original file's line number of the partition's 1-based ``line``."""
        if line is None:
            return None
        return int(np.fromfile(self.lines_path, dtype=np.int64, count=1, offset=8 * (line - 1))[0])


class _NotSpillable(Exception):
    """The file needs the in-memory reader (gzip, a NUL byte, no data line)."""


def evaluate_run_file(qrels, path, measures: dict, settings: Settings, *, name: str | None = None,
                      progress: bool = False, threshold: int | None = None, budget: int | None = None) -> RunResult | None:
    """Per-query values of ``measures`` (given string -> Measure) for the run file at ``path``,
    partitioned by qid on disk; None when the file is not larger than ``threshold`` (default
    :func:`spill_bytes`) or needs the in-memory reader. ``budget``: bytes per partition
    (default :func:`partition_bytes`)."""
    source = os.fspath(path)
    name = name or source
    size = os.path.getsize(source)
    if size <= (spill_bytes() if threshold is None else threshold):
        return None
    k = min(max(1, -(-size // (partition_bytes() if budget is None else budget))), _most_partitions())
    with tempfile.TemporaryDirectory(prefix="judged-spill-") as tmp:
        try:
            with ByteProgress(source, progress, "partitioning") as advance:
                parts = partition(source, tmp, k, advance)
        except _NotSpillable:
            return None
        with ByteProgress(source, progress, "scoring") as advance:
            scored = _score(qrels, source, name, parts, measures, settings, advance)
    return assemble(qrels, scored, measures, settings, name, file_realigner(qrels, source, name, settings), source)


def _most_partitions() -> int:
    """Two files are open per partition while spilling: stay well inside the open-file limit."""
    try:
        import resource
    except ImportError:  # not on Unix
        return 256
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 4096 if soft == resource.RLIM_INFINITY else max(1, min(4096, (soft - 64) // 2))


def partition(source: str, directory: str, k: int, advance=lambda n: None) -> list[Partition]:
    """Spill the data lines of ``source`` into ``k`` files under ``directory`` by a hash of
    their first field; blank and ``#`` comment lines are left out, as the reader skips them.
    Partitions that receive no line are dropped from the list."""
    parts = [Partition(os.path.join(directory, f"part-{i:04d}.run"), os.path.join(directory, f"part-{i:04d}.lines"))
             for i in range(k)]
    handles = []
    try:
        for p in parts:
            handles.append((open(p.path, "wb"), open(p.lines_path, "wb")))
        lines_before = 0
        for chunk, n_read in _chunks(source):
            advance(n_read)
            lines_before = _split(chunk, lines_before, k, parts, handles)
    finally:
        for run_fh, lines_fh in handles:
            run_fh.close()
            lines_fh.close()
    parts = [p for p in parts if p.size]
    if not parts:
        raise _NotSpillable  # only blank lines and comments: the reader says so
    return parts


def _chunks(source: str):
    """(bytes ending with a line end, bytes read from disk) in about ``CHUNK`` pieces; the
    byte-order mark dropped, a line end added to a last line without one."""
    with open(source, "rb") as fh:
        carry, first = b"", True
        while block := fh.read(CHUNK):
            if first:
                if compressed.kind(block[:compressed.MAGIC_BYTES]):
                    raise _NotSpillable  # gzip, bz2, xz: the in-memory reader
                if block.startswith(b"\xef\xbb\xbf"):
                    block = block[3:]
                first = False
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if cut:
                yield memoryview(data)[:cut], len(block)
        if carry:
            yield carry + b"\n", 0


def _split(chunk, lines_before: int, k: int, parts: list[Partition], handles) -> int:
    """Append the chunk's data lines to their partitions; the line count after the chunk."""
    buf = np.frombuffer(chunk, dtype=np.uint8)
    if buf.size and not buf.all():
        raise _NotSpillable  # a NUL byte: the reader refuses the file as binary
    ends = np.flatnonzero(buf == 10)
    starts = np.concatenate(([0], ends[:-1] + 1))
    first, key = _first_fields(chunk, buf, starts, ends)
    data_line = (first < ends) & (buf[first] != ord("#"))
    rows = np.flatnonzero(data_line)
    which = (key[rows] % np.uint64(k)).astype(np.uint16 if k < 1 << 16 else np.int64)
    order = np.argsort(which, kind="stable")  # a radix sort for 16-bit keys
    rows = rows[order]
    offsets = np.append(starts, len(buf)).astype(np.int64)
    lines = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(starts), [None, pa.py_buffer(offsets),
                                                                           pa.py_buffer(chunk)])
    taken = lines.take(pa.array(rows))
    taken_offsets = np.frombuffer(taken.buffers()[1], dtype=np.int64)
    body = memoryview(taken.buffers()[2]) if len(rows) else memoryview(b"")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(which, minlength=k))))
    numbers = rows + (lines_before + 1)
    for i in np.flatnonzero(np.diff(bounds)):
        a, b = int(bounds[i]), int(bounds[i + 1])
        lo, hi = int(taken_offsets[a]), int(taken_offsets[b])
        run_fh, lines_fh = handles[i]
        run_fh.write(body[lo:hi])
        lines_fh.write(numbers[a:b].astype(np.int64).tobytes())
        parts[i].size += hi - lo
    return lines_before + len(starts)


def _first_fields(chunk, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """Per line: where its first field starts (the line end for a blank line), and a 64-bit
    key of the field: its length and its first and last 8 bytes, mixed. Equal fields get
    equal keys (all a partition needs); fields that differ only in the middle of more
    than 16 bytes may share one, which only makes partitions less even."""
    first = starts.copy()
    lead = np.flatnonzero(_WHITE[buf[first]] & (first < ends))  # leading white space
    for _ in range(_LEADING):
        if not lead.size:
            break
        first[lead] += 1
        lead = lead[_WHITE[buf[first[lead]]] & (first[lead] < ends[lead])]
    for i in lead.tolist():  # much leading white space: let re find the field
        found = _NOT_WHITE.search(chunk, int(first[i]), int(ends[i]))
        first[i] = found.start() if found else ends[i]
    white = np.flatnonzero((buf == 32) | (buf - np.uint8(9) <= 4))  # _WHITE; every line end is white
    length = white[np.searchsorted(white, first)] - first
    padded = np.concatenate((buf, np.zeros(8, dtype=np.uint8)))
    words = np.ndarray(shape=(len(buf) + 1,), dtype="<u8", buffer=padded, strides=(1,))
    head = words[first] & _TAIL_MASK[np.minimum(length, 8)]
    tail = np.where(length > 8, words[np.maximum(first + length - 8, 0)], 0)
    with np.errstate(over="ignore"):
        key = (head * _M1) ^ (tail * _M2) ^ length.astype(np.uint64)
        key ^= key >> np.uint64(31)
        key *= _MQ
        key ^= key >> np.uint64(29)
    return first, key


def _score(qrels, source: str, name: str, parts: list[Partition], measures: dict, settings: Settings,
           advance) -> list:
    """Each partition read and scored by the in-memory engine, as :func:`judged.core.blocks.assemble`'s blocks. A
    bad partition does not stop the reading of the others: the error raised is the one
    reading the whole file raises (the earliest bad line, else the earliest repeated pair)."""
    scored, errors = [], []
    for part in parts:
        try:
            done = _score_partition(qrels, part, name, measures, settings, check_only=bool(errors))
        except _PartitionError as failed:
            errors.append(_located(failed.error, source, part, failed.stage))
            done = None
        advance(part.size)
        if done is not None:
            scored.append(done)
    if errors:
        raise min(errors, key=lambda e: e[:2])[2]
    return scored


class _PartitionError(Exception):
    def __init__(self, stage: int, error: ParseError):
        self.stage, self.error = stage, error


def _score_partition(qrels, part: Partition, name: str, measures: dict, settings: Settings, check_only: bool):
    """One partition's :class:`judged.core.blocks.Block`; None when ``check_only`` (another
    partition failed: only an earlier error matters). Its run is freed on return."""
    try:
        run = read_run(part.path, name=name, on_duplicate=settings.on_duplicate)
    except ParseError as exc:
        raise _PartitionError(_reading_error_stage(part, name, settings.on_duplicate), exc)
    try:
        if check_only:
            if settings.ties == "rank":
                rank_column(run)
            return None
        return score_block(qrels, run, measures, block_settings(settings))[1]
    except ParseError as exc:
        raise _PartitionError(2, exc)


def _reading_error_stage(part: Partition, name: str, on_duplicate: str) -> int:
    """0: a line the reader refuses; 1: a repeated (qid, docid) pair, which the reader checks
    only once every line has been read."""
    if on_duplicate != "error":
        return 0
    try:
        read_run(part.path, name=name, on_duplicate="first")
    except ParseError:
        return 0
    return 1


def _located(exc: ParseError, source: str, part: Partition, stage: int) -> tuple:
    """(stage, original line, the error naming the original file and line)."""
    if exc.source != part.path:
        return stage, -1, exc
    line = part.original_line(exc.line)
    return stage, -1 if line is None else line, ParseError(source, line, exc.why)
