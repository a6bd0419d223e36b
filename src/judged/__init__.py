"""judged: evaluate ranked retrieval honestly.

Every score declares its convention, shows the unjudged documents behind it, and
matches trec_eval where the conventions match.

The code is layered in folders: ``judged.core`` (read, align, measure, evaluate) <
``judged.analyses`` (holes, estimates, pooling, inference, comparisons) < the front ends
(``cli``, ``judge``, ``report``, ``notebook``, ``compat``, ``integrations``, ``spark``).
Every module that moved into a layer keeps its public name: ``judged.holes`` is
``judged.analyses.holes``, ``judged.io`` is ``judged.core.io`` (see ``MOVED``).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys

__version__ = "0.1.0"

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

# judged.<name> -> the module's home in its layer (the name it was published under before the layers)
MOVED = {name: f"judged.{layer}.{name}" for layer, names in {
    "core": ("errors", "conventions", "native", "_native", "kernels", "naturalsort", "runnames", "progress", "io",
             "data", "align", "measures", "results", "blocks", "evaluation", "stream", "spill", "querysets",
             "manifest", "checks"),
    "core.checks": ("abstention", "answer_key", "eligibility", "evidence", "sidefiles", "scale"),
    "analyses": ("holes", "estimate", "inference", "sampling", "pool", "pooling", "ppi", "machine", "machine_pool",
                 "stats", "comparison", "meta", "answers", "explain", "qrels_ops"),
}.items() for name in names}


class _PublicNames:
    """Imports ``judged.holes`` (and ``judged.holes.x``) as the module ``judged.analyses.holes``
    itself: one module object under two names, never a copy."""

    def find_spec(self, fullname, path=None, target=None):
        parts = fullname.split(".")
        if len(parts) < 2 or parts[0] != "judged" or parts[1] not in MOVED:
            return None
        home = ".".join([MOVED[parts[1]], *parts[2:]])
        try:
            module = importlib.import_module(home)
        except ModuleNotFoundError as exc:
            if exc.name == home:
                return None
            raise
        return importlib.machinery.ModuleSpec(fullname, self, loader_state=(module, module.__spec__))

    def create_module(self, spec):
        return spec.loader_state[0]

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state[1]  # the import system gave it the public name's spec


sys.meta_path.insert(0, _PublicNames())

from .core import DISPLAY  # noqa: E402


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
