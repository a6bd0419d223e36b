"""The compiled fast path, ``judged.core._native`` (src/judged/core/_native.c): one switch.

setup.py builds the extension when the machine has a C compiler; without one judged runs
on its pure Python/numpy path, which gives the same numbers bit for bit (the tests run
both). Only the kernel layer (:mod:`judged.core.kernels`) asks :func:`compiled`: a caller
calls a kernel and never branches on the back end (``tests/core/test_native.py`` checks it).
One switch turns the whole engine to either path:

* ``JUDGED_PURE_PYTHON=1`` turns the extension off (read when judged is imported);
* ``with judged.core.native.pure():`` runs the block on the pure path (the tests use it to run
  the oracle suites on both back ends in one process).

``judged.core.native.native`` is :func:`compiled` read as an attribute; :func:`status` says which
path runs and why (``judged --version`` prints :func:`describe`). When the extension is not
built (not when it is turned off), the first file of at least :data:`NOTE_BYTES` read on
the pure path prints one note on stderr (:func:`note_slow_path`): the install went without
a C compiler and everything runs about 4x slower on large files.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

DISABLED = "disabled by JUDGED_PURE_PYTHON"
NOTE_BYTES = 32 << 20  # a file this large read on the pure path when the extension is not built: one note
REBUILD = "install a C compiler and Python's headers (Debian: apt-get install gcc python3-dev) and reinstall judged"


def _load():
    """(the compiled module or None, why it is None)."""
    if os.environ.get("JUDGED_PURE_PYTHON", "") not in ("", "0"):
        return None, DISABLED
    try:
        from . import _native
    except ImportError as exc:
        return None, f"not built ({exc})"
    return _native, None


_loaded, _why_not = _load()
_pure_blocks = 0
_lock = threading.Lock()


def compiled():
    """The compiled module, or None when judged runs on its pure path."""
    return None if _pure_blocks else _loaded


@contextlib.contextmanager
def pure():
    """The pure Python/numpy path inside the ``with`` block, for the whole process (every
    thread): for comparing the two paths, not for use while another thread scores."""
    global _pure_blocks
    with _lock:
        _pure_blocks += 1
    try:
        yield
    finally:
        with _lock:
            _pure_blocks -= 1


def release_pool() -> int:
    """Free the blocks the compiled reader keeps for the columns it makes next (freed columns
    go to a pool of up to 512 MB, so that streaming reuses memory already mapped), for a
    caller that reads no more files and has dropped columns; the bytes freed (0 without
    the extension)."""
    return _loaded.pool_trim() if _loaded is not None else 0


def status() -> tuple[str, str | None]:
    """("compiled", None), or ("pure", why): the extension is not built, or is turned off."""
    if compiled() is not None:
        return "compiled", None
    return "pure", _why_not or "judged.core.native.pure() is active"


def describe() -> str:
    """One line for ``judged --version``: which path runs, and why when it is the slow one."""
    path, why = status()
    if path == "compiled":
        return "compiled extension: built (judged.core._native, the fast path)"
    if why == DISABLED:
        return "compiled extension: off (JUDGED_PURE_PYTHON=1): the pure Python/numpy path runs (about 4x slower)"
    return f"compiled extension: {why}: the pure Python/numpy path runs (about 4x slower); to build it, {REBUILD}"


_noted = False


def note_slow_path(nbytes: int, name: str = "") -> None:
    """Once per process, on stderr: a file of ``nbytes`` (at least :data:`NOTE_BYTES`) is read
    on the pure path because the extension is not built. Silent when it is built, turned
    off on purpose (``JUDGED_PURE_PYTHON=1``, ``pure()``), or the file is small."""
    global _noted
    if _noted or nbytes < NOTE_BYTES or compiled() is not None or _pure_blocks or _why_not == DISABLED:
        return
    _noted = True
    size = f"{nbytes / (1 << 20):.0f} MB"
    print(f"judged: note: {name + ' ' if name else ''}({size}) is read and scored on the pure Python path, "
          f"about 4x slower on large files: the compiled extension is {_why_not}; to build it, {REBUILD} "
          "(JUDGED_PURE_PYTHON=1 chooses the pure path without this note)", file=sys.stderr)


def __getattr__(name):
    if name == "native":
        return compiled()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
