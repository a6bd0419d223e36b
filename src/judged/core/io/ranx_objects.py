"""ranx's ``Qrels`` and ``Run`` objects (Bassani, ECIR 2022) as judged inputs.

Recognised by type name and module, so telling them apart never imports ranx. Their
pairs are read from ranx's numba typed dicts by numba (:func:`ranx_columns`, through
:mod:`judged.core.io.typed_dicts`, imported only then: numba is already loaded by ranx);
the reference reads ``to_dict()``. A ranx Run keeps its ``name``. The export to ranx
objects is :mod:`judged.integrations.ranx`.
"""

from __future__ import annotations

import numpy as np

from ..data import Qrels, Run, string_hash
from ..errors import ParseError
from ..kernels import FALLBACK, kernel
from . import frames


def _is(obj, cls: str) -> bool:
    t = type(obj)
    return t.__name__ == cls and t.__module__.split(".")[0] == "ranx"


def is_qrels(obj) -> bool:
    return _is(obj, "Qrels")


def is_run(obj) -> bool:
    return _is(obj, "Run")


def qrels_from_ranx(obj, on_duplicate: str = "error"):
    source = f"<ranx.Qrels {getattr(obj, 'name', None) or ''}>".replace(" >", ">")
    qid, docid, grade, hashes, blocks = ranx_columns(obj, True, source)
    if not len(grade):
        raise ParseError(source, None, "no judgments")
    return Qrels(qid, docid, grade, source=source).known(docid_hash=hashes, qid_blocks=blocks)


def run_from_ranx(obj, name: str | None = None):
    run_name = name or getattr(obj, "name", None) or "run"
    source = f"<ranx.Run {run_name}>"
    qid, docid, score, hashes, blocks = ranx_columns(obj, False, source)
    return Run(qid, docid, score, name=run_name, source=source).known(docid_hash=hashes, qid_blocks=blocks)


def _plain(obj) -> dict:
    """{qid: {docid: value}} as Python dicts (numba's typed dicts copied out)."""
    d = obj.to_dict()
    return {str(q): {str(doc): v for doc, v in docs.items()} for q, docs in d.items()}


def _typed(obj):
    """The numba typed dict a ranx object keeps its pairs in."""
    return obj.qrels if is_qrels(obj) else obj.run


@kernel
def ranx_columns(obj, integer: bool, source: str) -> tuple:
    """A ranx ``Qrels`` / ``Run`` as :func:`judged.core.io.frames.dict_columns` reads its
    ``to_dict()``. The compiled binding reads ranx's numba typed dicts in numba
    (:mod:`judged.core.io.typed_dicts`), no pair boxed into Python objects."""
    return frames.dict_columns(_plain(obj), integer, source)


@ranx_columns.binding
def _(native, obj, integer: bool, source: str):
    from . import typed_dicts

    ok, rows, qo, qd, do, dd, values, starts, bo, bd = typed_dicts.pairs(_typed(obj))
    if not ok or integer and len(values) and np.abs(values).max() >= 2.0**63:
        return FALLBACK  # the reference names the problem (or decides)
    docid = frames.strings(rows, do, dd)
    return (frames.strings(rows, qo, qd), docid, values.astype(np.int64) if integer else values, string_hash(docid),
            (starts, frames.strings(len(starts), bo, bd)))
