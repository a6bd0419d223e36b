"""judged: evaluate ranked retrieval honestly.

Every score declares its convention, shows the unjudged documents behind it, and
matches trec_eval where the conventions match.

The code is layered in folders: ``judged.core`` (read, align, measure, evaluate) <
``judged.analyses`` (holes, estimates, pooling, inference, comparisons) < the front ends
(``cli``, ``judge``, ``report``, ``notebook``, ``compat``, ``integrations``, ``spark``).
"""

from __future__ import annotations

import importlib

from .core import DISPLAY, __version__

__all__ = ["read_qrels", "read_run", "evaluate", "compare", "compare_records", "Comparison", "Manifest", "Measure",
           "Qrels", "Run", "Result", "Settings", "ParseError", "MeasureError", "ConventionError", "JudgedError",
           "calc_aggregate", "iter_calc", "gate", "__version__"]

_LAZY = {
    "read_qrels": "judged.core.io", "read_run": "judged.core.io", "evaluate": "judged.core.evaluation",
    "Result": "judged.core.evaluation", "Measure": "judged.core.measures", "Qrels": "judged.core.data",
    "Run": "judged.core.data", "Settings": "judged.core.conventions", "ParseError": "judged.core.errors",
    "MeasureError": "judged.core.errors", "ConventionError": "judged.core.errors", "JudgedError": "judged.core.errors",
    "calc_aggregate": "judged.compat.ir_measures", "iter_calc": "judged.compat.ir_measures",
    "compare": "judged.analyses.comparison", "compare_records": "judged.analyses.comparison",
    "Comparison": "judged.analyses.comparison", "Manifest": "judged.core.manifest", "gate": "judged.analyses.gate",
}


def _drawn_by_notebook(name: str):
    """Jupyter's view of results (``judged.core.DISPLAY``): :mod:`judged.notebook`'s, imported when first shown."""
    def draw(*args):
        from . import notebook

        return getattr(notebook, name)(*args)
    return draw


DISPLAY.update((name, _drawn_by_notebook(name)) for name in ("result_html", "plot_result", "comparison_html",
                                                             "plot_comparison"))


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'judged' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
