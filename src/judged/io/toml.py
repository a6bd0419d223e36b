"""Reading TOML files (grade scales, manifests) with errors that name the file and line."""

from __future__ import annotations

import os
import re
import sys

from ..errors import ParseError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)|\s*\(at end of document\)")


def read_toml(path, what: str = "TOML file") -> dict:
    """The table of a UTF-8 TOML file; a missing, unreadable, binary or malformed file
    is a :class:`~judged.errors.ParseError` naming the file and, when known, the line."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise ParseError(name, None, f"no such {what}")
    except IsADirectoryError:
        raise ParseError(name, None, f"is a directory, not a {what}")
    except OSError as exc:
        raise ParseError(name, None, f"cannot read: {exc.strerror or exc}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(name, data.count(b"\n", 0, exc.start) + 1, f"not UTF-8 text (binary data?), not a {what}")
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
