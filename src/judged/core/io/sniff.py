"""What a file looks like, from its content: for reading Parquet, JSON and TREC text
whatever their names (a TREC run named ``.json`` is read as TREC), and for saying what a
file that fails to parse probably is (swapped qrels and run, a CSV or TSV with a header).

Only the first data line is read (from the first 64 KB, decompressed if need be), so a guess
costs nothing; it never decides a number, only which reader runs or what an error message
suggests.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from ..errors import ParseError
from ..words import counted
from . import compressed

PARQUET_MAGIC = b"PAR1"
HEAD = 1 << 16

RUN_FORMAT = "qid Q0 docid rank score tag"
QRELS_FORMAT = "qid iter docid grade"
_HEADER_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def parquet_files(path: str) -> list[str]:
    """The data files of a Parquet file or folder (Spark writes a folder of ``part-*``
    files, with ``_SUCCESS`` and ``.crc`` files beside them), in name order; [] when the
    path is neither (decided by the files' first bytes, ``PAR1``, not by names)."""
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if not n.startswith(("_", ".")) and not n.endswith(".crc"))
        files = [os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))]
        return files if files and all(_magic(f) == PARQUET_MAGIC for f in files) else []
    return [path] if _magic(path) == PARQUET_MAGIC else []


def _magic(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(4)
    except OSError:
        return b""


def head(path: str) -> bytes:
    """The first 64 KB of a file's text (decompressed, byte-order mark removed); b"" when it
    cannot be read (the reader then says why)."""
    return compressed.head(path, HEAD).removeprefix(b"\xef\xbb\xbf")


def first_line(data: bytes) -> tuple[int, str] | None:
    """(number, text) of the first line that is not blank or a ``#`` comment (None if there
    is none in ``data``, or it is not UTF-8 text)."""
    for number, line in enumerate(data.split(b"\n")[:1000], start=1):
        text = line.strip()
        if text and not text.startswith(b"#"):
            try:
                return number, text.decode("utf-8")
            except UnicodeDecodeError:
                return None
    return None


def _number(token: str) -> bool:
    try:
        return math.isfinite(float(token))
    except ValueError:
        return False


def _integer(token: str) -> bool:
    return re.fullmatch(r"[+-]?\d+", token) is not None


@dataclass(frozen=True)
class Looks:
    kind: str  # run, qrels, csv, tsv, json, parquet, results (qid docid score, no header)
    description: str  # e.g. "a qrels file (4 fields: qid iter docid grade)"
    line: int | None = None  # the line it was seen on


def looks_like(path) -> Looks | None:
    """What the file's content looks like, from its first data line; None when nothing is
    recognised (or the file cannot be read)."""
    name = os.fspath(path)
    if parquet_files(name):
        return Looks("parquet", "a Parquet file")
    data = head(name)
    if data.lstrip()[:1] in (b"{", b"["):
        return Looks("json", "a JSON file", 1)
    found = first_line(data)
    if found is None:
        return None
    number, line = found
    fields = line.split()
    cells = [c.strip() for c in line.split(",")]
    if len(cells) >= 3 and len(fields) < 4:
        header = all(_HEADER_WORD.match(c) for c in cells)
        what = f"with a header ({','.join(cells)})" if header else f"({len(cells)} comma-separated fields)"
        return Looks("csv", f"a CSV file {what}", number)
    if 3 <= len(fields) <= 4 and all(_HEADER_WORD.match(f) for f in fields):
        return Looks("tsv", f"a {'TSV' if chr(9) in line else 'text'} file with a header ({' '.join(fields)})", number)
    if len(fields) >= 6 and _number(fields[4]):
        return Looks("run", f"a run file ({counted(len(fields), 'field')}: {RUN_FORMAT})", number)
    if len(fields) == 4 and _integer(fields[3]):
        return Looks("qrels", f"a qrels file (4 fields: {QRELS_FORMAT})", number)
    if len(fields) == 3 and _number(fields[2]):
        return Looks("results", "qid docid score lines (3 fields, no header)", number)
    return None


def text_or_json(path) -> str | None:
    """``json`` when the content starts as JSON does (``{`` or ``[``), ``text`` when its first
    data line is a TREC run or qrels line, None when neither (the name then decides)."""
    data = head(os.fspath(path))
    if data.lstrip()[:1] in (b"{", b"["):
        return "json"
    seen = looks_like(path)
    return "text" if seen is not None and seen.kind in ("run", "qrels") else None


EXPECTED = {"run": f"a TREC run ({RUN_FORMAT})", "qrels": f"TREC qrels ({QRELS_FORMAT})",
            "json": "JSON {qid: {docid: value}}"}


def hinted(exc: ParseError, path, expected: str) -> ParseError:
    """``exc`` (the reader's refusal of ``path`` read as ``expected``: run, qrels or json),
    or, when the content looks like something else, one line saying what it looks like
    and what was probably meant."""
    seen = looks_like(path)
    if seen is None or seen.kind == expected or seen.kind == "parquet":
        return exc
    if {seen.kind, expected} == {"run", "qrels"}:
        advice = "are the arguments swapped?"
    elif expected == "json":  # a TREC file named .json is read as TREC (text_or_json): not here
        advice = "a .json file is read as {qid: {docid: value}}"
    else:  # csv, tsv, results: three columns of some kind
        value = "score" if expected == "run" else "grade"
        advice = f"convert it, or read it with pandas and pass the DataFrame (columns qid, docid, {value})"
        if expected == "qrels" and seen.kind == "results":
            advice += ", or give it BEIR's header line (query-id corpus-id score)"
    return ParseError(exc.source, seen.line, f"looks like {seen.description}, expected {EXPECTED[expected]} — {advice}")
