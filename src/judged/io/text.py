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
import os
import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.csv as pacsv

from ..errors import ParseError

_IRREGULAR = re.compile(rb"\t|  |^ | $|\r(?!\n)|(^|\n)#| \r", re.MULTILINE)


@dataclass
class RawFile:
    name: str  # as the user gave it (used in error messages)
    data: bytes  # decompressed, BOM removed
    sha256: str  # of the bytes on disk


def read_raw(path, text: bool = True) -> RawFile:
    """Read a file's bytes (gunzipped if gzip), refusing missing and empty files, and
    binary ones when ``text``."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            disk = fh.read()
    except FileNotFoundError:
        raise ParseError(name, None, "no such file")
    except IsADirectoryError:
        raise ParseError(name, None, "is a directory, not a file")
    except PermissionError:
        raise ParseError(name, None, "permission denied")
    except OSError as exc:
        raise ParseError(name, None, f"cannot read: {exc.strerror or exc}")
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


def iter_lines(raw: RawFile):
    """(line number, fields) for each data line: not blank, not a ``#`` comment."""
    for lineno, line in enumerate(raw.data.split(b"\n"), start=1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        try:
            yield lineno, [f.decode("utf-8") for f in fields]
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


def fast_table(raw: RawFile, names: list[str], types: dict) -> pa.Table | None:
    """Parse with pyarrow's CSV reader; None when it refuses (the slow path then explains)."""
    data = raw.data
    if _IRREGULAR.search(data):
        lines = (b" ".join(line.split()) for line in data.split(b"\n"))
        data = b"\n".join(line for line in lines if line and not line.startswith(b"#"))
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                              escape_char=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False, check_utf8=True),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    return table
