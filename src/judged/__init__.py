"""judged: evaluate ranked retrieval honestly.

Every score declares its convention, shows the unjudged documents behind it, and
matches trec_eval where the conventions match.
"""

from __future__ import annotations

import sys
import types

__version__ = "0.1.0"

__all__ = ["read_qrels", "read_run", "evaluate", "compare", "compare_records", "Comparison", "Manifest", "Measure", "Qrels", "Run", "Result", "Settings",
           "ParseError", "MeasureError", "ConventionError", "JudgedError", "__version__"]

_LAZY = {
    "read_qrels": "judged.io", "read_run": "judged.io", "evaluate": "judged.evaluate",
    "Result": "judged.evaluate", "Measure": "judged.measures", "Qrels": "judged.data", "Run": "judged.data",
    "Settings": "judged.conventions", "ParseError": "judged.errors", "MeasureError": "judged.errors",
    "ConventionError": "judged.errors", "JudgedError": "judged.errors",
    "compare": "judged.compare", "compare_records": "judged.compare", "Comparison": "judged.compare",
    "Manifest": "judged.manifest",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'judged' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """``judged.evaluate`` and ``judged.compare`` stay the functions after their modules of
    the same name are imported (the import system would otherwise set the modules there)."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == f"{__name__}.{name}":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
