"""ranx's ``Qrels`` and ``Run`` objects (Bassani, ECIR 2022) as judged inputs.

Recognised by type name and module, so reading them never imports ranx (nor numba).
Their ``to_dict()`` gives ``{qid: {docid: value}}``; a ranx Run keeps its ``name``. The
export to ranx objects is :mod:`judged.integrations.ranx`.
"""

from __future__ import annotations
from . import frames


def _is(obj, cls: str) -> bool:
    t = type(obj)
    return t.__name__ == cls and t.__module__.split(".")[0] == "ranx"


def is_qrels(obj) -> bool:
    return _is(obj, "Qrels")


def is_run(obj) -> bool:
    return _is(obj, "Run")


def qrels_from_ranx(obj, on_duplicate: str = "error"):
    q = frames.qrels_from_dict(_plain(obj), source=f"<ranx.Qrels {getattr(obj, 'name', None) or ''}>".replace(" >", ">"),
                               on_duplicate=on_duplicate)
    return q


def run_from_ranx(obj, name: str | None = None):
    run_name = name or getattr(obj, "name", None) or "run"
    return frames.run_from_dict(_plain(obj), run_name, source=f"<ranx.Run {run_name}>")


def _plain(obj) -> dict:
    """{qid: {docid: value}} as Python dicts (numba's typed dicts copied out)."""
    d = obj.to_dict()
    return {str(q): {str(doc): v for doc, v in docs.items()} for q, docs in d.items()}
