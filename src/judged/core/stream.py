"""Streaming evaluation of a TREC run file grouped by query: bounded memory, same numbers.

Every measure is a function of one query's ranked documents and judgments, so a run file
that lists each query in one block can be evaluated block by block. :class:`PieceReader`
reads the file in pieces cut where a query ends and tokenizes them (:func:`judged.io.text.tokenize`,
compiled or its Arrow reference) in a second thread, ahead of this thread, which aligns and
scores the queries of each piece. Memory is the qrels index plus a few pieces, whatever the file's size; the
numbers are the in-memory engine's (each query is computed by the same ``align`` and
kernels, on the same rows).

When the file is not grouped by query, or anything needs the in-memory reader (gzip, a
line to explain in an error),
:func:`evaluate_run_file` returns None and the caller reads the whole file instead (or
partitions it on disk: :mod:`judged.spill`).
"""

from __future__ import annotations

import os

import numpy as np

from .conventions import Settings
from .data import Qrels, arrow_indices, string_hash
from .blocks import assemble, block_settings, file_realigner, score_block
from .progress import ByteProgress
from .results import RunResult
from .io.text import file_size, line_of_row, read_raw, tokenize
from .io.trec import RUN_LAYOUT, dedupe_run, duplicate_rows, run_from_tokens
from .native import note_slow_path

BLOCK_SIZE = 1 << 22  # bytes of text per piece


class _NotStreamable(Exception):
    """The file needs the in-memory path."""


def evaluate_run_file(qrels: Qrels, path, measures: dict, settings: Settings, *, name: str | None = None,
                      on_duplicate: str = "error", block_size: int | None = None, progress: bool = False,
                      reader: PieceReader | None = None) -> RunResult | None:
    """Per-query values of ``measures`` (given string -> Measure) for the run file at ``path``,
    streamed by query blocks; None when the file cannot be streamed (see the module)."""
    source = os.fspath(path)
    name = name or source
    with open(source, "rb") as fh:
        if fh.read(2) == b"\x1f\x8b":
            return None
    note_slow_path(file_size(source), source)
    try:
        with ByteProgress(source, progress) as advance:
            parts = list(_scored_blocks(qrels, source, name, measures, settings, on_duplicate, block_size, advance,
                                        reader))
    except _NotStreamable:
        return None
    return assemble(qrels, parts, measures, settings, name, file_realigner(qrels, source, name, settings, on_duplicate),
                    source)



class _Pieces:
    """The file's text in pieces that end where a query ends, each tokenized. A piece is about ``size`` bytes; the lines of its last query (which may go
    on in the next read) are carried into the next piece and tokenized again there."""

    def __init__(self, source: str, size: int):
        self.fh = open(source, "rb")
        self.buf = bytearray(max(size, 1))  # reused: the carried lines, then what is read next
        self.end, self.line, self.row0, self.eof = 0, 1, 0, False
        if self.fh.read(3) != b"\xef\xbb\xbf":  # a UTF-8 byte-order mark is not text
            self.fh.seek(0)

    def next(self):
        """(bytes read, first data row, tokens of whole queries, qid blocks, their qids'
        hashes, the rows repeating a pair), or None at the end."""
        read = 0
        while True:
            if not self.eof:
                if self.end == len(self.buf):  # one query longer than the buffer: grow it
                    self.buf.extend(bytes(len(self.buf)))
                with memoryview(self.buf) as view:
                    n = self.fh.readinto(view[self.end:])
                self.eof, read, self.end = n == 0, read + n, self.end + n
            cut = self.end if self.eof else self.buf.rfind(b"\n", 0, self.end) + 1
            if cut == 0:
                if self.eof:
                    return None
                continue  # no line end yet
            with memoryview(self.buf) as view:
                tokens = tokenize(view[:cut], RUN_LAYOUT, first_line=self.line)
            if isinstance(tokens, int):
                raise _NotStreamable  # a line to explain: the whole-file reader names it
            last = int(tokens.blocks[-1]) if len(tokens.blocks) else 0
            if self.eof:
                used = cut
            elif last == 0:  # one query all through: read more before cutting
                continue
            else:  # the last query may go on: its lines are tokenized again with the next read
                used, self.line = tokens.last_block_at, tokens.last_block_line
                tokens = tokens.head(last)
            self.buf[:self.end - used] = self.buf[used:self.end]
            self.end -= used
            row0, self.row0 = self.row0, self.row0 + tokens.rows
            qid = tokens.strings[0]
            blocks = (tokens.blocks, qid.take(arrow_indices(tokens.blocks)))
            # each query in one block, checked on 64-bit hashes of the qids: a collision
            # (or a repeat) only sends the file to the whole-file reader
            qhash = string_hash(blocks[1])
            if len(np.unique(qhash)) != len(qhash):
                raise _NotStreamable  # a query in more than one block
            # repeated (qid, docid) pairs are found here too, off the scoring thread
            dup = duplicate_rows(qid, tokens.strings[1], tokens.hashes, blocks, distinct_blocks=True)
            return read, row0, tokens, blocks, qhash.tolist(), dup

    def close(self):
        self.fh.close()


class PieceReader:
    """A run file read and tokenized in a second thread, up to
    ``AHEAD`` pieces ahead of its consumer. ``judged.evaluate`` starts one for the first run
    file before it reads the qrels, so both files are read at once (the pieces read
    meanwhile wait, at most ``AHEAD`` x 4 MB of text); :func:`evaluate_run_file` takes it."""

    AHEAD = 8

    def __init__(self, source: str, block_size: int = 0):
        from collections import deque
        from concurrent.futures import ThreadPoolExecutor

        self.source, self.used = source, False
        self.pieces = _Pieces(source, block_size or BLOCK_SIZE)
        self.pool = ThreadPoolExecutor(max_workers=1)  # one worker: calls to next() run in order, never at once
        self.ahead = deque(self.pool.submit(self.pieces.next) for _ in range(self.AHEAD))

    def __iter__(self):
        while (done := self.ahead.popleft().result()) is not None:
            self.ahead.append(self.pool.submit(self.pieces.next))
            yield done

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.pieces.close()

    @staticmethod
    def start(path) -> "PieceReader | None":
        """A reader for a plain-text run file."""
        if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
            return None
        try:
            with open(path, "rb") as fh:
                if fh.read(2) == b"\x1f\x8b":
                    return None
        except OSError:
            return None
        return PieceReader(os.fspath(path))


def _runs(source: str, name: str, block_size: int, advance, reader: PieceReader | None = None):
    """(first data row, Run, its repeated rows) of runs of whole queries, tokenized in a
    second thread ahead of the caller (:class:`PieceReader`)."""
    reader = reader or PieceReader(source, block_size)
    seen = set()
    try:
        for read, row0, tokens, blocks, qhash, dup in reader:
            advance(read)
            if tokens.rows == 0:
                continue
            if not seen.isdisjoint(qhash):
                raise _NotStreamable  # a query in more than one piece (or a hash collision)
            seen.update(qhash)
            yield row0, run_from_tokens(tokens, name, source, qid_blocks=blocks, distinct_blocks=True), dup
    finally:
        reader.close()
    if reader.pieces.row0 == 0:
        raise _NotStreamable  # no data lines: the whole-file reader says so


def _scored_blocks(qrels, source, name, measures, settings, on_duplicate, block_size, advance, reader=None):
    """Each block of whole queries scored by :func:`judged.blocks.score_block`."""
    settings = block_settings(settings)
    for row0, run, dup in _runs(source, name, block_size, advance, reader):
        run = dedupe_run(run, on_duplicate, lambda row, row0=row0: line_of_row(read_raw(source), row0 + row), dup)
        yield score_block(qrels, run, measures, settings)[1]
