"""Reading TOML files (grade scales, manifests) with errors that name the file and line."""

from __future__ import annotations

import os
import re
import sys

from ..errors import ParseError
from .text import decode_utf8, read_bytes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)|\s*\(at end of document\)")


def read_toml(path, what: str = "TOML file") -> dict:
    """The table of a UTF-8 TOML file; a missing, unreadable, binary or malformed file
    is a :class:`~judged.core.errors.ParseError` naming the file and, when known, the line."""
    name = os.fspath(path)
    text = decode_utf8(name, read_bytes(name, what), what)
    if "\x00" in text:
        raise ParseError(name, text.count("\n", 0, text.index("\x00")) + 1,
                         f"binary data (NUL byte), not a {what}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = getattr(exc, "msg", None) or str(exc)
        at = _AT.search(str(exc))
        line = getattr(exc, "lineno", None) or (int(at.group(1)) if at and at.group(1) else None)
        if line is None and at is not None:  # "at end of document"
            line = text.count("\n") + (0 if text.endswith("\n") else 1)
        raise ParseError(name, line, f"invalid TOML, not a {what}: {_AT.sub('', msg)}")
