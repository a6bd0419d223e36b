"""Whitespace-separated text files: the shared tokenizer of every TREC-style reader.

The fast path hands the bytes to pyarrow's CSV reader (C++), after folding irregular
white space only when the file has any. When the fast path refuses a file, the pure
Python path reads it line by line and names the first bad line, so errors always say
FILE:LINE. Accepted everywhere: any run of spaces or tabs between fields, CRLF line
ends, a UTF-8 byte-order mark, blank lines, ``#`` comment lines (trec_eval 10) and
gzip-compressed files.
"""

from __future__ import annotations

import gzip
import hashlib
import mmap
import os
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import ParseError
from ..native import compiled, note_slow_path

CHUNK = 1 << 23


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
    """Read a file's bytes (gunzipped if gzip), refusing missing and empty files, and
    binary ones when ``text``."""
    name = os.fspath(path)
    disk = read_bytes(name)
    sha = hashlib.sha256(disk).hexdigest()
    data = disk
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ParseError(name, None, f"corrupt gzip data ({exc})")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.strip():
        raise ParseError(name, None, "empty file")
    nul = data.find(b"\x00") if text else -1
    if nul >= 0:
        raise ParseError(name, data.count(b"\n", 0, nul) + 1, "binary data (NUL byte), not a text file")
    return RawFile(name, data, sha)


@dataclass
class FileRead:
    """A file parsed straight from disk: its table and the sha256 of its bytes."""

    name: str
    table: pa.Table
    sha256: str

    def raw(self) -> RawFile:
        """The bytes, read again only when an error message needs a line number."""
        return read_raw(self.name)


def read_table(path, names: list[str], types: dict) -> FileRead | None:
    """The fast path for a plain (uncompressed) file: pyarrow parses it from disk while a
    second thread hashes the bytes and looks for what pyarrow would read differently from
    the TREC tokenizer (tabs, lone CR, NUL). None when the file needs the in-memory path
    (gzip, irregular white space, comments, fields after the last, errors to explain)."""
    name = os.fspath(path)
    with open_file(name) as fh:
        head = fh.read(2)
    if head == b"\x1f\x8b":
        return None
    scan = Scan(name)
    table = _csv(name, names, types)
    plain = scan.plain()  # joined in every case: no thread left reading a file at exit
    if table is None or not plain or len(table) == 0:
        return None
    return FileRead(name, table, scan.sha256)


class Scan:
    """Hash a file's bytes in a background thread, and note what pyarrow would read
    differently from the TREC tokenizer: tabs and other white space, NUL, a lone CR."""

    def __init__(self, name: str):
        self.name, self.sha256, self.odd = name, None, False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        sha, odd, tail = hashlib.sha256(), False, b""
        with open(self.name, "rb") as fh:
            while chunk := fh.read(CHUNK):
                sha.update(chunk)
                odd = odd or any(c in chunk for c in (b"\t", b"\x00", b"\x0b", b"\x0c")) or (
                    (b"\r" in chunk or tail == b"\r") and _lone_cr(tail + chunk + b"\n"))
                tail = chunk[-1:]
        self.sha256, self.odd = sha.hexdigest(), odd

    def plain(self) -> bool:
        """Wait for the scan; True when pyarrow's reading is the TREC reading."""
        self.thread.join()
        return self.sha256 is not None and not self.odd


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


def fast_table(raw: RawFile, names: list[str], types: dict, extra: bool = False) -> pa.Table | None:
    """Parse bytes already in memory; None when they do not parse (the slow path then explains).

    Regular files (single spaces, LF or CRLF) go straight to pyarrow's CSV reader; files with
    irregular white space or ``#`` comments, and with ``extra`` those pyarrow refuses (lines
    with fields after the last, which are ignored), are tokenized by :func:`split_table`
    (vectorised, no per-line Python)."""
    if _irregular(raw.data):
        return split_table(raw.data, names, types, extra)
    table = _csv(pa.BufferReader(raw.data), names, types)
    return split_table(raw.data, names, types, extra) if table is None and extra else table


def _irregular(data: bytes) -> bool:
    return (any(c in data for c in (b"\t", b"\x0b", b"\x0c", b"  ", b"\n ", b" \n", b"\n#"))
            or data[:1] in (b" ", b"#") or data.endswith(b" ") or _lone_cr(data))


def _lone_cr(data: bytes) -> bool:
    """A carriage return that does not end a CRLF line (pyarrow would read it as a line end)."""
    return b"\r" in data and data.count(b"\r") != data.count(b"\r\n")


def csv_options(names: list[str], types: dict, block_size: int = 1 << 22) -> dict:
    """pyarrow CSV options that read single-space separated TREC lines, nothing else."""
    return dict(
        read_options=pacsv.ReadOptions(column_names=names, block_size=block_size),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                         escape_char=False, ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False,
                                             quoted_strings_can_be_null=False, check_utf8=True),
    )


def _csv(source, names: list[str], types: dict) -> pa.Table | None:
    try:
        table = pacsv.read_csv(source, **csv_options(names, types))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    return None if misread(table) else table


def misread(table: pa.Table | pa.RecordBatch) -> bool:
    """Signs that pyarrow accepted a line the TREC tokenizer would refuse or skip: an empty
    field (a doubled, leading or trailing space on a line short of fields) or a ``#`` comment
    line that happens to have the right number of fields."""
    for col in table.columns:
        if pa.types.is_string(col.type) and len(col) and pc.min(pc.binary_length(col)).as_py() == 0:
            return True
    return len(table) > 0 and pc.any(pc.starts_with(table.column(0), "#")).as_py()


def split_table(data: bytes, names: list[str], types: dict, extra: bool = False) -> pa.Table | None:
    """Tokenize like ``bytes.split()`` on every line, in Arrow: lines are slices of the
    buffer, blank and ``#`` lines dropped, runs of spaces, tabs and CR collapsed. None if a
    line has the wrong number of fields (fewer, or more unless ``extra``) or a field does
    not convert."""
    nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    starts = np.concatenate(([0], nl + 1))
    if starts[-1] == len(data):
        starts = starts[:-1]
    offsets = np.append(starts, len(data)).astype(np.int64)
    lines = pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(offsets), pa.py_buffer(data))
    tokens = pc.ascii_split_whitespace(pc.ascii_trim_whitespace(lines))
    first = pc.list_element(tokens, 0)
    keep = pc.and_(pc.not_equal(first, ""), pc.invert(pc.starts_with(first, "#")))
    tokens = tokens.filter(keep)
    k = len(names)
    wrong = pc.less if extra else pc.not_equal
    if len(tokens) == 0 or pc.any(wrong(pc.list_value_length(tokens), k)).as_py():
        return None
    columns = {}
    try:
        lines.validate(full=True)  # UTF-8
        for i, name in enumerate(names):
            columns[name] = pc.list_element(tokens, i).cast(types.get(name, pa.string()))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    return pa.table(columns)


# -- the compiled tokenizer (judged._native) ------------------------------------------


@dataclass(frozen=True)
class Layout:
    """What the compiled tokenizer keeps of a line of ``fields`` fields: the text of
    ``strings`` (field numbers; the first is 0, the query id), one number field parsed as
    ``float`` (Python's float(), finite) or ``int`` (int64), and the 64-bit
    :func:`judged.data.string_hash` of field ``hashed``. ``check(raw, lineno, fields)``
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


def tokenize(data, layout: Layout, first_line: int = 1) -> "Tokens | int":
    """Tokenize bytes with the compiled tokenizer: :class:`Tokens`, or the number of the
    first line it refused (0: too large for 32-bit string offsets)."""
    native = compiled()
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


def read_tokens(path, layout: Layout) -> "tuple[Tokens, str] | None":
    """A plain or gzip text file through the compiled tokenizer: (tokens, sha256 of the
    bytes on disk); a bad line raises the pure reader's ParseError for it. None when the
    extension is not built (or the file is too large for it): the caller reads it in Python.

    A plain file is memory-mapped, and its sha256 computed in a second thread while the
    tokenizer runs (both release the GIL)."""
    if compiled() is None:
        note_slow_path(file_size(path), os.fspath(path))
        return None
    name = os.fspath(path)
    with open_file(name) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0 or fh.read(2) == b"\x1f\x8b":
            raw = read_raw(name)  # gzip (or empty: read_raw says so)
            return _checked(tokenize(raw.data, layout), layout, lambda: raw), raw.sha256
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            digest = {}
            sha = threading.Thread(target=lambda: digest.update(sha256=hashlib.sha256(mm).hexdigest()), daemon=True)
            sha.start()
            with memoryview(mm) as view:
                tokens = tokenize(view[3:] if mm[:3] == b"\xef\xbb\xbf" else view, layout)
            sha.join()
    return _checked(tokens, layout, lambda: read_raw(name)), digest["sha256"]


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
