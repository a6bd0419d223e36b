"""Compressed files, told by their first bytes: gzip, bz2 and xz, whatever their names.

The one place that opens them. Every codec's failure on damaged data (zlib's bad deflate
codes or check value, a truncated stream, bz2's and xz's own errors) becomes one
``ParseError`` naming the file and the line of its text where decompression failed:
:func:`decompress` for the readers; :func:`head` (the first bytes of the text, b"" when
they cannot be read: the reader then says why) for the sniffers; :func:`kind_of_file` for
the streamed readers, which leave a compressed file to the in-memory reader. trec_eval reads
none of them; gzip is what TREC collections ship, bz2 and xz what archives hold.
"""

from __future__ import annotations

import importlib
import io
import re
import zlib

from ..errors import ParseError

# (name, the first bytes of its stream, module); bz2's "BZh" is followed by the block size
# '1'..'9' and the magic of a block (pi) or of the stream's end (sqrt(pi)): checked too
CODECS = (("gzip", b"\x1f\x8b", "gzip"), ("bz2", b"BZh", "bz2"), ("xz", b"\xfd7zXZ\x00", "lzma"))
BZ2_BLOCKS = (b"1AY&SY", b"\x17rE8P\x90")
MAGIC_BYTES = 10  # enough to tell every codec
SUFFIXES = (".gz", ".bz2", ".xz")  # the names they usually have (the content decides)
STEP = 1 << 12  # bytes of text per read when finding the line where damaged data fails


def kind(first: bytes) -> str | None:
    """gzip, bz2 or xz when ``first`` (a file's first :data:`MAGIC_BYTES` bytes) opens such a
    stream, else None."""
    for name, magic, _ in CODECS:
        if first.startswith(magic) and (name != "bz2" or first[3:4].isdigit() and first[3:4] != b"0"
                                         and first[4:10] in BZ2_BLOCKS):
            return name
    return None


def kind_of_file(path) -> str | None:
    """:func:`kind` of a file's first bytes; None when it cannot be read (its reader says why)."""
    try:
        with open(path, "rb") as fh:
            return kind(fh.read(MAGIC_BYTES))
    except (OSError, TypeError, ValueError):
        return None


def _errors() -> tuple:
    """What the codecs raise on damaged data: OSError (gzip's and bz2's bad headers, bz2's
    bad data), EOFError (a truncated stream read as a file), ValueError (bz2.decompress's
    truncated stream), zlib.error (bad deflate codes, a bad check value), lzma.LZMAError."""
    errors = [OSError, EOFError, ValueError, zlib.error]
    try:
        import lzma

        errors.append(lzma.LZMAError)
    except ImportError:  # a Python built without lzma: xz files are refused by open_stream
        pass
    return tuple(errors)


def _module(name: str):
    module = dict((n, m) for n, _, m in CODECS)[name]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ParseError("", None, f"{name}-compressed, and this Python has no {module} module")


def decompress(name: str, data: bytes) -> bytes:
    """``data`` decompressed when it is a gzip, bz2 or xz stream (several streams one after
    another, as ``cat a.gz b.gz`` makes, are read as one), else ``data`` itself. Damaged
    data is a ParseError naming the line of the text where decompression failed."""
    codec = kind(data[:MAGIC_BYTES])
    if codec is None:
        return data
    try:
        module = _module(codec)
    except ParseError as exc:
        raise ParseError(name, None, exc.why) from None
    try:
        return module.decompress(data)
    except _errors() as exc:
        raise ParseError(name, _failing_line(module, data), f"corrupt {codec} data, decompression fails at or "
                                                            f"after this line ({_reason(exc)})") from None


def _failing_line(module, data: bytes) -> int:
    """The line of the text being decompressed when the codec failed (text read STEP bytes
    at a time: the failure is at this line or within the next STEP bytes of text)."""
    lines = 1
    try:
        with module.open(io.BytesIO(data), "rb") as fh:
            while piece := fh.read(STEP):
                lines += piece.count(b"\n")
    except _errors():
        pass
    return lines


def _reason(exc: BaseException) -> str:
    """The codec's words, without zlib's error number."""
    return re.sub(r"^Error -?\d+ while decompressing( data)?: ", "", str(exc)) or type(exc).__name__


def head(path, size: int) -> bytes:
    """A file's first ``size`` bytes of text: decompressed when it is gzip, bz2 or xz; b""
    when it cannot be read or decompressed (its reader then says why)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(size)
        codec = kind(data[:MAGIC_BYTES])
        if codec is not None:
            with _module(codec).open(path, "rb") as fh:
                data = fh.read(size)
    except (ParseError, *_errors()):
        return b""
    return data


