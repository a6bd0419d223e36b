"""Streaming evaluation of a TREC run file grouped by query: bounded memory, same numbers.

Every measure is a function of one query's ranked documents and judgments, so a run file
that lists each query in one block can be evaluated block by block. :class:`PieceReader`
reads the file in pieces cut where a query ends and tokenizes them (:func:`judged.core.io.text.tokenize`,
compiled or its Arrow reference) in a second thread, ahead of this thread, which aligns and
scores the queries of each piece. Memory is the qrels index plus a few pieces, whatever the file's size; the
numbers are the in-memory engine's (each query is computed by the same ``align`` and
kernels, on the same rows).

When the file is not grouped by query, or anything needs the in-memory reader (gzip, a
line to explain in an error),
:func:`evaluate_run_file` returns None and the caller reads the whole file instead (or
partitions it on disk: :mod:`judged.core.spill`).
"""

from __future__ import annotations

import os

from .conventions import Settings
from .data import any_repeated, string_hash, take_strings
from .blocks import assemble, block_settings, file_realigner, score_block
from .progress import ByteProgress
from .io import compressed
from .io.text import file_size, line_of_row, read_raw, tokenize
from .io.trec_files import RUN_LAYOUT, dedupe_run, duplicate_rows, run_from_tokens
from .native import note_slow_path

BLOCK_SIZE = 1 << 22  # bytes of text per piece


class _NotStreamable(Exception):
    """The file needs the in-memory path."""


def evaluate_run_file(versions: list, path, settings: Settings, *, name: str | None = None,
                      block_size: int | None = None, progress: bool = False,
                      reader: PieceReader | None = None, each=None) -> list | None:
    """One RunResult per (qrels, measures) of ``versions`` (measures: given string ->
    Measure) for the run file at ``path``, streamed by query blocks; None when the file
    cannot be streamed (see the module). The file is read once; each block is aligned and
    scored under one version after another (one block's alignment held at a time).
    ``each(aligned)`` is given every block's alignment under the first version once scored,
    for a caller that keeps part of it; when None is returned, the blocks given so far are
    to be let go. ``reader``: a :class:`PieceReader` already started on the file."""
    source = os.fspath(path)
    name = name or source
    with open(source, "rb") as fh:
        if compressed.kind(fh.read(compressed.MAGIC_BYTES)):
            return None
    note_slow_path(file_size(source), source)
    try:
        with ByteProgress(source, progress) as advance:
            parts = list(zip(*_scored_blocks(versions, source, name, settings, block_size, advance, reader, each)))
    except _NotStreamable:
        return None
    parts = parts or [() for _ in versions]
    return [assemble(qrels, list(blocks), measures, settings, name, file_realigner(qrels, source, name, settings),
                     source) for (qrels, measures), blocks in zip(versions, parts)]


def query_cut(text, end: int) -> int:
    """Where the lines of the last query of ``text[:end]`` begin (a line start): 0 when every
    data line there belongs to one query (or there is none). ``text[:end]`` ends with a line
    end. Fields are ``bytes.split()``'s and blank and ``#`` lines are skipped, as the tokenizer
    reads them; the query's lines are found by bisection, taking the file to be grouped by
    query: when it is not, a query lands in two pieces and the checks on the tokenized pieces
    send the file to the whole-file reader."""
    def first_qid(at: int):
        """(qid of the first data line at or after line start ``at``, where it begins)."""
        while at < end:
            nl = text.find(b"\n", at, end)
            nl = end if nl < 0 else nl
            fields = bytes(text[at:min(nl, at + 4096)]).split(None, 1)
            if fields and not fields[0].startswith(b"#"):
                return fields[0], at
            at = nl + 1
        return None, end

    last = text.rfind(b"\n", 0, end - 1) + 1  # the last line's start: then back to its last data line
    qid = None
    while qid is None:
        qid, _ = first_qid(last)
        if qid is None:
            if last == 0:
                return 0
            last = text.rfind(b"\n", 0, last - 1) + 1
    if first_qid(0)[0] == qid:
        # one query all through, if the file is grouped; a line between with another query
        # says it is not: a cut before the last line then lets the checks find the repeat,
        # where reading on would take in the whole file
        middle = first_qid(text.rfind(b"\n", 0, last // 2) + 1)
        return last if middle[0] not in (qid, None) and middle[1] < last else 0
    lo, hi = 0, last  # lo: a line start whose next data line is another query's; hi: the query's
    while True:
        mid = text.rfind(b"\n", 0, (lo + hi) // 2) + 1
        if mid <= lo:
            mid = text.find(b"\n", lo, hi) + 1
        if mid <= lo or mid >= hi:
            return hi
        if first_qid(mid)[0] == qid:
            hi = mid
        else:
            lo = mid


class _Pieces:
    """The file's text in pieces that end where a query ends, read in order: each piece is
    about ``size`` bytes of whole lines, cut before the lines of its last query (by
    :func:`query_cut`), which begin the next piece. Each reader thread reads into a buffer
    of its own."""

    def __init__(self, source: str, size: int):
        self.fh = open(source, "rb")
        self.size = max(size, 1)
        self.carry, self.eof = b"", False
        if self.fh.read(3) != b"\xef\xbb\xbf":  # a UTF-8 byte-order mark is not text
            self.fh.seek(0)

    def next(self, buf: bytearray) -> "tuple[int, int] | None":
        """Fill ``buf`` (grown as needed) with the next piece: (bytes read from the file, its
        length in ``buf``), or None at the end."""
        if self.eof and not self.carry:
            return None
        end, read = len(self.carry), 0
        if len(buf) < max(self.size, 2 * end):
            buf.extend(bytes(max(self.size, 2 * end) - len(buf)))
        buf[:end] = self.carry
        while True:
            if not self.eof:
                if end == len(buf):  # one query longer than the buffer: grow it
                    buf.extend(bytes(len(buf)))
                with memoryview(buf) as view:
                    n = self.fh.readinto(view[end:])
                self.eof, read, end = n == 0, read + n, end + n
            if self.eof:
                self.carry = b""
                return read, end
            full = buf.rfind(b"\n", 0, end) + 1  # whole lines
            cut = query_cut(buf, full) if full else 0
            if cut:
                self.carry = bytes(buf[cut:end])
                return read, cut
            # no line end yet, or one query all through: read more before cutting

    def close(self):
        self.fh.close()


class PieceReader:
    """A run file read in pieces of whole queries and tokenized by ``threads`` reader
    threads (two on two cores or more: the tokenizer releases the GIL, so two pieces are
    tokenized at once), up to ``AHEAD`` pieces ahead of its consumer, which gets them in
    file order. Each thread reads its piece (one at a time, in order), then tokenizes it and
    finds its queries and repeated pairs. ``judged.evaluate`` starts one for the first run
    file before it reads the qrels, so both files are read at once (the pieces read
    meanwhile wait, at most ``AHEAD`` x 4 MB of text); :func:`evaluate_run_file` takes it."""

    AHEAD = 4

    def __init__(self, source: str, block_size: int = 0, threads: int | None = None):
        import threading

        self.source, self.used = source, False
        self.pieces = _Pieces(source, block_size or BLOCK_SIZE)
        self.row0 = 0  # data rows handed out so far
        self.done = {}  # piece number -> its result (or the exception it raised)
        self.next_read = self.next_out = 0
        self.closed = False
        self.read_lock, self.ready = threading.Lock(), threading.Condition()
        self.room = threading.Semaphore(self.AHEAD)  # pieces read and not yet taken
        self.threads = [threading.Thread(target=self._work, name="judged-tokenizer", daemon=True)
                        for _ in range(threads or tokenizer_threads())]
        for t in self.threads:
            t.start()

    def _work(self):
        buf = bytearray()
        while True:
            self.room.acquire()
            with self.read_lock:
                if self.closed:
                    return
                number, self.next_read = self.next_read, self.next_read + 1
                try:
                    got = self.pieces.next(buf)
                except BaseException as exc:  # noqa: BLE001  (handed to the consumer)
                    got = exc
            try:
                result = got if got is None or isinstance(got, BaseException) else _tokenized(buf, *got)
            except BaseException as exc:  # noqa: BLE001
                result = exc
            with self.ready:
                self.done[number] = result
                self.ready.notify_all()
            if result is None or isinstance(result, BaseException):
                return  # the end (or a failure): the pieces after it are not read

    def __iter__(self):
        while True:
            with self.ready:
                while self.next_out not in self.done:
                    self.ready.wait()
                done = self.done.pop(self.next_out)
            self.next_out += 1
            self.room.release()
            if done is None:
                return
            if isinstance(done, BaseException):
                raise done
            read, tokens, blocks, qhash, dup = done
            row0, self.row0 = self.row0, self.row0 + tokens.rows
            yield read, row0, tokens, blocks, qhash, dup

    def close(self):
        with self.read_lock:
            self.closed = True
        for _ in self.threads:
            self.room.release()  # a thread waiting for room wakes, sees closed and ends
        for t in self.threads:
            t.join()
        self.pieces.close()

    @staticmethod
    def start(path) -> "PieceReader | None":
        """A reader for a plain-text run file."""
        if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
            return None
        try:
            with open(path, "rb") as fh:
                if compressed.kind(fh.read(compressed.MAGIC_BYTES)):
                    return None
        except OSError:
            return None
        return PieceReader(os.fspath(path))


def tokenizer_threads() -> int:
    """Reader threads of a :class:`PieceReader`: two when the compiled tokenizer runs (it
    releases the GIL) and this process may use two cores or more, else one (the Arrow
    reference holds the GIL between its many calls: a second thread added CPU time, 8.2
    against 6.9 CPU-s on deep at load 14, without a faster wall clock)."""
    if not tokenize.compiled:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 if cores >= 2 else 1


def _tokenized(buf: bytearray, read: int, length: int):
    """(bytes read, tokens of whole queries, qid blocks, their qids' hashes, the rows
    repeating a pair) of the piece ``buf[:length]``."""
    with memoryview(buf) as view:
        tokens = tokenize(view[:length], RUN_LAYOUT)
    if isinstance(tokens, int):
        raise _NotStreamable  # a line to explain: the whole-file reader names it
    qid = tokens.strings[0]
    blocks = (tokens.blocks, take_strings(qid, tokens.blocks))
    # each query in one block, checked on 64-bit hashes of the qids: a collision
    # (or a repeat) only sends the file to the whole-file reader
    qhash = string_hash(blocks[1])
    if any_repeated(qhash):
        raise _NotStreamable  # a query in more than one block
    # repeated (qid, docid) pairs are found here too, off the scoring thread
    dup = duplicate_rows(qid, tokens.strings[1], tokens.hashes, blocks, distinct_blocks=True)
    return read, tokens, blocks, qhash.tolist(), dup


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
    if reader.row0 == 0:
        raise _NotStreamable  # no data lines: the whole-file reader says so


def _scored_blocks(versions, source, name, settings, block_size, advance, reader=None, each=None):
    """Each block of whole queries scored by :func:`judged.core.blocks.score_block` under each
    (qrels, measures) of ``versions``: a tuple of blocks, one per version (``each`` given
    the first version's alignment)."""
    on_duplicate, settings = settings.on_duplicate, block_settings(settings)
    for row0, run, dup in _runs(source, name, block_size, advance, reader):
        run = dedupe_run(run, on_duplicate, lambda row, row0=row0: line_of_row(read_raw(source), row0 + row), dup)
        blocks = []
        for qrels, measures in versions:
            aligned, block = score_block(qrels, run, measures, settings)
            if each is not None and not blocks:
                each(aligned)
            blocks.append(block)
        yield tuple(blocks)
