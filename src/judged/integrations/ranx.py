"""ranx (Bassani, ECIR 2022): judged's qrels and runs as ``ranx.Qrels`` / ``ranx.Run``.

Reading needs no conversion: ``judged.read_qrels``, ``judged.read_run`` and
``judged.evaluate`` take ranx objects as they are (:mod:`judged.core.io.ranx_objects`). Two
conventions differ between ranx and judged's defaults (docs/migrating.md): ranx keeps
tied scores in input order (judged: ``ties="input"``) and scores a qrels query missing
from the run 0 after ``make_comparable=True`` (judged: ``complete=True``).
"""

from __future__ import annotations

import numpy as np
from ..core.io import read_qrels, read_run

try:
    import ranx as _ranx
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ModuleNotFoundError("judged.integrations.ranx needs ranx: pip install 'judged[ranx]'",
                              name=exc.name) from exc


def _nested(qids, docids, values, cast) -> dict:
    out: dict = {}
    for q, d, v in zip(qids, docids, values):
        out.setdefault(q, {})[d] = cast(v)
    return out


def to_qrels(qrels) -> "_ranx.Qrels":
    """Anything ``judged.read_qrels`` reads, as a ``ranx.Qrels`` (grades as ints)."""
    q = read_qrels(qrels)
    return _ranx.Qrels(_nested(q.qid.to_pylist(), q.docid.to_pylist(), np.asarray(q.grade).tolist(), int))


def to_run(run, name: str | None = None) -> "_ranx.Run":
    """Anything ``judged.read_run`` reads, as a ``ranx.Run`` named ``name`` (default: the run's name)."""
    r = read_run(run)
    return _ranx.Run(_nested(r.qid.to_pylist(), r.docid.to_pylist(), np.asarray(r.score).tolist(), float),
                     name=name or r.name)
