"""Writing output files safely: new content goes to a temporary file beside the target
and replaces it (``os.replace``, atomic on POSIX) only once complete, so a failure never
truncates or half-writes a file that was already there."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager

from ..errors import UsageError


@contextmanager
def replacing(path, what: str = ""):
    """Yield a temporary path beside ``path`` (same suffix, so tools that pick a format by
    suffix still can); on success it replaces ``path``, on any error it is removed.
    ``what`` names the output in the error (``cannot write plot PATH: ...``)."""
    path = os.fspath(path)
    label = f"{what} {path}" if what else path
    if os.path.isdir(path):
        raise UsageError(f"cannot write {label}: it is a directory")
    folder, base = os.path.split(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=os.path.splitext(base)[1] or ".tmp", dir=folder or ".")
    except OSError as exc:
        raise UsageError(f"cannot write {label}: {exc.strerror or exc}") from None
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, _mode(path))
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise UsageError(f"cannot write {label}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(tmp)
        raise


@contextmanager
def open_replacing(path, mode: str = "w", encoding: str | None = "utf-8", newline: str | None = None):
    """``open(path, mode)`` that replaces ``path`` only when the ``with`` block succeeds."""
    with replacing(path) as tmp:
        with open(tmp, mode, encoding=None if "b" in mode else encoding, newline=newline) as fh:
            yield fh


def write_new_or_same(files: dict, whose: str, instead: str) -> None:
    """Write ``files`` (path -> bytes) together, each through :func:`replacing`, unless one of
    the paths holds something else already (a project's own qrels.txt where a tool writes its
    example files): then one line, nothing written. The same files again are written over.
    ``whose``: whose files these are; ``instead``: what to do about it."""
    for path, content in files.items():
        if os.path.lexists(path) and not _holds(path, content):
            raise UsageError(f"{path} is there already and is not {whose}: {instead} (nothing was written)")
    for path, content in files.items():
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with replacing(path) as tmp:
            with open(tmp, "wb") as fh:
                fh.write(content)


def _holds(path: str, content: bytes) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read() == content
    except OSError:  # a directory, unreadable: not this content
        return False


def _mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777  # keep an existing file's permissions
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass
