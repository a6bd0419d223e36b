"""judged: evaluate ranked retrieval honestly.

Every score declares its convention, shows the unjudged documents behind it, and
matches trec_eval where the conventions match.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["read_qrels", "read_run", "evaluate", "Measure", "Qrels", "Run", "Result", "Settings",
           "ParseError", "MeasureError", "ConventionError", "JudgedError", "__version__"]

_LAZY = {
    "read_qrels": "judged.io", "read_run": "judged.io", "evaluate": "judged.evaluation",
    "Result": "judged.evaluation", "Measure": "judged.measures", "Qrels": "judged.data", "Run": "judged.data",
    "Settings": "judged.conventions", "ParseError": "judged.errors", "MeasureError": "judged.errors",
    "ConventionError": "judged.errors", "JudgedError": "judged.errors",
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
