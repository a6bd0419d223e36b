"""Whitespace-separated text files: the one tokenizer of every TREC-style reader.

The contract: each line is ``bytes.split()``; blank lines and lines whose first field starts
with ``#`` are skipped (trec_eval 10); a bad line is an error saying FILE:LINE. Also taken:
CRLF line ends, a UTF-8 byte-order mark and gzip, bz2 or xz files (:mod:`.compressed`). :func:`tokenize` meets it
with the compiled function when the extension is loaded and with its Arrow reference
otherwise (the same bits; ``tests/core/test_kernels.py``); the line-by-line reader
(:func:`iter_lines`) explains a line the tokenizer refused, and reads a file whose refused
line Python takes.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa

from ..errors import ParseError
from ..data import as_numpy, string_hash
from ..kernels import kernel
from ..lazy import lazy
from ..native import note_slow_path
from . import compressed

pc = lazy("pyarrow.compute")  # imported on first use (judged.core.lazy)


@dataclass
class RawFile:
    name: str  # as the user gave it (used in error messages)
    data: bytes  # decompressed, BOM removed
    sha256: str  # of the bytes on disk


def open_file(name: str, what: str = "file"):
    try:
        return open(name, "rb")
    except FileNotFoundError:
        raise ParseError(name, None, f"no such {what}")
    except IsADirectoryError:
        raise ParseError(name, None, f"is a directory, not a {what}")
    except PermissionError:
        raise ParseError(name, None, "permission denied")
    except OSError as exc:
        raise ParseError(name, None, f"cannot read: {exc.strerror or exc}")


def file_size(path) -> int:
    """A file's size in bytes; 0 when it cannot be read (the reader then says why)."""
    try:
        return os.path.getsize(path)
    except (OSError, TypeError, ValueError):
        return 0


def read_bytes(path, what: str = "file") -> bytes:
    """A file's bytes as stored; a missing, unreadable or directory path is a ParseError
    saying what was expected (``what``: file, record, grade scale...)."""
    name = os.fspath(path)
    with open_file(name, what) as fh:
        try:
            return fh.read()
        except OSError as exc:
            raise ParseError(name, None, f"cannot read: {exc.strerror or exc}")


def decode_utf8(name: str, data: bytes, what: str = "text file") -> str:
    """UTF-8 text, or a ParseError naming the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(name, data.count(b"\n", 0, exc.start) + 1, f"not UTF-8 text (binary data?), not a {what}")


def read_raw(path, text: bool = True) -> RawFile:
    """Read a file's bytes (decompressed if gzip, bz2 or xz), refusing missing, empty and
    damaged files, and binary ones when ``text``."""
    name = os.fspath(path)
    disk = read_bytes(name)
    sha = hashlib.sha256(disk).hexdigest()
    data = compressed.decompress(name, disk)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.strip():
        raise ParseError(name, None, "empty file")
    nul = data.find(b"\x00") if text else -1
    if nul >= 0:
        raise ParseError(name, data.count(b"\n", 0, nul) + 1, "binary data (NUL byte), not a text file")
    return RawFile(name, data, sha)


def iter_lines(raw: RawFile):
    """(line number, fields) for each data line: not blank, not a ``#`` comment."""
    for lineno, line in enumerate(raw.data.split(b"\n"), start=1):
        fields = _fields(raw, lineno, line)
        if fields:
            yield lineno, fields


def _fields(raw: RawFile, lineno: int, line: bytes) -> list[str]:
    """A line's fields ([] for a blank or ``#`` comment line); not UTF-8 is an error."""
    fields = line.split()
    if not fields or fields[0].startswith(b"#"):
        return []
    try:
        return [f.decode("utf-8") for f in fields]
    except UnicodeDecodeError:
        raise ParseError(raw.name, lineno, "not valid UTF-8 text")


def utf8_line(name, lineno: int, line: bytes) -> str:
    """A line's text without its end of line; not UTF-8 is a ParseError naming the byte."""
    line = line.rstrip(b"\r\n")
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(os.fspath(name), lineno, f"not UTF-8 text (byte 0x{line[exc.start]:02x} "
                                                  f"at column {exc.start + 1})") from None


def require_rows(raw: RawFile, n: int) -> None:
    """A file whose lines are all blank or comments is as empty as an empty file."""
    if n == 0:
        raise ParseError(raw.name, None, "empty file (no data lines, only blank lines and comments)")


def line_of_row(raw: RawFile, row: int) -> int:
    """The line number of the row-th data line (0-based row), for error messages."""
    for i, (lineno, _) in enumerate(iter_lines(raw)):
        if i == row:
            return lineno
    return None


# -- the tokenizer: one contract, the compiled function and its Arrow reference -----------


@dataclass(frozen=True)
class Layout:
    """What the compiled tokenizer keeps of a line of ``fields`` fields: the text of
    ``strings`` (field numbers; the first is 0, the query id), one number field parsed as
    ``float`` (Python's float(), finite) or ``int`` (int64), and the 64-bit
    :func:`judged.core.data.string_hash` of field ``hashed``. ``check(raw, lineno, fields)``
    raises the pure reader's ParseError for a line the tokenizer refused. ``extra``: a
    line may have more fields, which are ignored (trec_eval's run format)."""

    fields: int
    strings: tuple
    number: int
    kind: str
    hashed: int
    check: Callable
    extra: bool = False


@dataclass
class Tokens:
    """Columns of a tokenized text: Arrow strings in ``layout.strings`` order, the number
    column, the hash column, the rows where the first field (the query id) changes, and
    the byte offset and the number of the line where it last changed."""

    rows: int
    strings: list
    number: np.ndarray
    hashes: np.ndarray
    blocks: np.ndarray
    last_block_at: int = 0
    last_block_line: int = 1

    def head(self, rows: int) -> "Tokens":
        """The first ``rows`` rows (zero-copy slices)."""
        return Tokens(rows, [s.slice(0, rows) for s in self.strings], self.number[:rows], self.hashes[:rows],
                      self.blocks[self.blocks < rows])


@kernel
def tokenize(data, layout: Layout, first_line: int = 1) -> "Tokens | int":
    """Tokenize bytes as :func:`iter_lines` reads them (``bytes.split()`` per line, blank and
    ``#`` lines skipped): :class:`Tokens`, or the number of the first line it refuses (wrong
    field count, a number that does not parse or is not finite, invalid UTF-8, a NUL byte),
    which the caller explains with the line-by-line reader's words; 0: too large (the string
    offsets are 32-bit). The reference, in Arrow (lines are slices of one buffer, split with
    ``ascii_split_whitespace``), gives the compiled tokenizer's results."""
    buf = np.frombuffer(data, dtype=np.uint8)
    starts = np.concatenate(([0], np.flatnonzero(buf == 10) + 1))
    if starts[-1] == len(buf):
        starts = starts[:-1]
    end, nul_line, nul = len(buf), 0, np.flatnonzero(buf == 0)
    if len(nul):  # the lines before a NUL byte are read, its own is refused
        index = int(np.searchsorted(starts, nul[0], side="right")) - 1
        nul_line, end, starts = index + 1, int(starts[index]), starts[:index]
    offsets = np.append(starts, end).astype(np.int64)
    lines = pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(offsets), pa.py_buffer(data))
    lines = pc.ascii_trim_whitespace(lines)
    data_line = pc.and_(pc.not_equal(lines, ""), pc.invert(pc.starts_with(lines, "#")))  # not blank nor comment
    keep = np.flatnonzero(data_line.to_numpy(zero_copy_only=False)) if len(lines) else np.array([], np.int64)
    tokens = pc.ascii_split_whitespace(lines.filter(data_line)) if len(keep) < len(lines) else \
        pc.ascii_split_whitespace(lines)
    line_no = keep + first_line

    def refused(rows) -> int:  # the first refused line: a bad row's, else the NUL byte's
        return int(line_no[rows[0]]) if len(rows) else nul_line + first_line - 1

    count = pc.list_value_length(tokens).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero((count < layout.fields) | ((count > layout.fields) & (not layout.extra)))
    if len(bad) == 0:
        try:
            tokens.validate(full=True)  # UTF-8
        except pa.ArrowInvalid:
            bad = np.array([next(i for i, row in enumerate(keep) if not _utf8(data, starts[row], offsets[row + 1]))])
    if len(bad) or nul_line:
        return refused(bad)
    fields = [pc.list_element(tokens, i) if len(tokens) else pa.array([], pa.large_string())
              for i in range(layout.fields)]
    if layout.kind == "float":
        try:
            number = as_numpy(pc.cast(fields[layout.number], pa.float64()))
        except pa.ArrowInvalid:
            number = np.array([_float_or_nan(t) for t in fields[layout.number].to_pylist()], dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(number))
    else:
        number, bad = _int64s(fields[layout.number])
    if len(bad):
        return refused(bad)
    try:
        strings = [fields[i].cast(pa.string()) for i in layout.strings]
        hashed = fields[layout.hashed].cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowCapacityError):
        return 0
    qid = fields[0]
    changed = np.flatnonzero(pc.not_equal(qid.slice(1), qid.slice(0, max(len(qid) - 1, 0))).to_numpy(
        zero_copy_only=False)) + 1 if len(qid) > 1 else np.array([], np.int64)
    blocks = np.concatenate(([0], changed)).astype(np.int64) if len(qid) else np.array([], np.int64)
    last = int(keep[blocks[-1]]) if len(blocks) else None
    return Tokens(len(keep), strings, number, string_hash(hashed), blocks,
                  0 if last is None else int(starts[last]), first_line if last is None else last + first_line)


def _utf8(data, start: int, end: int) -> bool:
    try:
        bytes(data[start:end]).decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _float_or_nan(token: str) -> float:
    """A token the C grammar takes ([+-]digits[.digits][e[+-]digits]) as its double, else NaN."""
    import re

    return float(token) if re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", token) else float("nan")


def _int64s(text) -> tuple:
    """Decimal integer tokens ([+-]digits) as int64, and the rows that are not one."""
    values = text.to_pylist()
    if pc.all(pc.match_substring_regex(text, r"^[+-]?[0-9]+$")).as_py() is not False:
        try:
            return as_numpy(pc.cast(pc.replace_substring_regex(text, r"^\+", ""), pa.int64())), np.array([], np.int64)
        except pa.ArrowInvalid:
            pass
    out, bad = np.zeros(len(values), np.int64), []
    for i, t in enumerate(values):
        u = t[1:] if t[:1] in "+-" else t
        if not (u.isascii() and u.isdigit() and -2**63 <= int(t) < 2**63):
            bad.append(i)
        else:
            out[i] = int(t)
    return out, np.array(bad, np.int64)


@tokenize.binding
def _(native, data, layout: Layout, first_line: int = 1):
    out = native.tokenize(data, layout.fields, bytes(layout.strings), layout.number,
                          0 if layout.kind == "float" else 1, layout.hashed, first_line, layout.extra)
    if isinstance(out, int):
        return out
    rows, strings, number, hashes, blocks, last_block_at, last_block_line = out
    return Tokens(rows,
                  [pa.Array.from_buffers(pa.string(), rows, [None, pa.py_buffer(o), pa.py_buffer(d)]) for o, d in strings],
                  np.frombuffer(number, dtype=np.float64 if layout.kind == "float" else np.int64),
                  np.frombuffer(hashes, dtype=np.uint64), np.frombuffer(blocks, dtype=np.int64), last_block_at,
                  last_block_line)


def read_tokens(path, layout: Layout, digest: bool = True) -> "tuple[Tokens, str | None] | None":
    """A plain or compressed text file through :func:`tokenize`: (tokens, sha256 of the bytes on
    disk); a bad line raises the line-by-line reader's ParseError for it. None when the
    tokenizer refused a line that reader takes (or the file is too large for 32-bit offsets).

    A plain file is memory-mapped, and its sha256 computed in a second thread while the
    tokenizer runs (both release the GIL); ``digest=False``: not computed (None), for a
    caller that shows no file's hash (20 ms of CPU per 27 MB)."""
    note_slow_path(file_size(path), os.fspath(path))
    name = os.fspath(path)
    with open_file(name) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0 or compressed.kind(fh.read(compressed.MAGIC_BYTES)):
            raw = read_raw(name)  # compressed (or empty: read_raw says so)
            return _checked(tokenize(raw.data, layout), layout, lambda: raw), raw.sha256
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            hashed = {}
            sha = threading.Thread(target=lambda: hashed.update(sha256=hashlib.sha256(mm).hexdigest()), daemon=True)
            if digest:
                sha.start()
            with memoryview(mm) as view:
                tokens = tokenize(view[3:] if mm[:3] == b"\xef\xbb\xbf" else view, layout)
            if digest:
                sha.join()
    return _checked(tokens, layout, lambda: read_raw(name)), hashed.get("sha256")


def _checked(tokens, layout: Layout, raw: Callable) -> Tokens | None:
    """The tokens, or the pure reader's error for the line the tokenizer refused."""
    if isinstance(tokens, int):
        if tokens == 0:
            return None
        r = raw()  # refuses NUL bytes and empty files itself
        lineno, fields = tokens, line_fields(r, tokens)
        if fields:
            layout.check(r, lineno, fields)
        return None  # the tokenizer refused a line the Python reader takes: it reads the file
    if tokens.rows == 0:
        require_rows(raw(), 0)
    return tokens


def line_fields(raw: RawFile, lineno: int) -> list[str]:
    """The fields of line ``lineno`` as :func:`iter_lines` gives them ([] for a blank or
    comment line), with its error for text that is not UTF-8."""
    nl = np.flatnonzero(np.frombuffer(raw.data, dtype=np.uint8) == 10)
    start = int(nl[lineno - 2]) + 1 if lineno >= 2 else 0
    end = int(nl[lineno - 1]) if lineno - 1 < len(nl) else len(raw.data)
    return _fields(raw, lineno, raw.data[start:end])
