"""The compiled fast path, ``judged._native`` (src/judged/_native.c): one switch for every caller.

setup.py builds the extension when the machine has a C compiler; without one judged runs
on its pure Python/numpy path, which gives the same numbers bit for bit (the tests run
both). Callers ask :func:`compiled` each time (``native = compiled()``; ``if native is not
None``) and keep their numpy code as the fallback, so one switch turns the whole engine to
either path:

* ``JUDGED_PURE_PYTHON=1`` turns the extension off (read when judged is imported);
* ``with judged.native.pure():`` runs the block on the pure path (the tests use it to run
  the oracle suites on both back ends in one process).

``judged.native.native`` is :func:`compiled` read as an attribute; :func:`status` says which
path runs and why (``judged --version`` prints it).
"""

from __future__ import annotations

import contextlib
import os
import threading

DISABLED = "disabled by JUDGED_PURE_PYTHON"


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


def status() -> tuple[str, str | None]:
    """("compiled", None), or ("pure", why): the extension is not built, or is turned off."""
    if compiled() is not None:
        return "compiled", None
    return "pure", _why_not or "judged.native.pure() is active"


def __getattr__(name):
    if name == "native":
        return compiled()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
