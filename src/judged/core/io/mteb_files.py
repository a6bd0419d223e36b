"""MTEB's retrieval outputs (Enevoldsen et al., "MMTEB", ICLR 2025; mteb 2.x) as runs.

``mteb.evaluate(model, tasks, prediction_folder=DIR)`` writes ``DIR/<Task>_predictions.json``::

    {"mteb_model_meta": {"model_name": ..., "revision": ...},
     "<hf_subset>": {"<split>": {qid: {docid: score}}}}

Each (subset, split) is one run: :func:`run_from_predictions` reads one, named after the
model. ``read_run`` recognises the file by its ``mteb_model_meta`` key and reads the
``default``/``test`` pair, or the only pair there is; a multilingual task's file holds one
subset per language, chosen with ``judged eval --subset NAME``. MTEB's scores per task are in its
results folder (``<cache>/results/<model>/<revision>/<Task>.json``: ``scores`` ->
split -> one entry per subset with ``ndcg_at_10``, ``main_score``, ...):
:func:`read_scores` reads them, so a judged number can be set beside MTEB's. The mteb
versions read here (2.x) save no per-query scores; judged computes them from the
predictions. The task's qrels are read from its dataset folder
(:mod:`judged.core.io.hf`) or, in Python, from the loaded task
(:func:`judged.integrations.mteb.task_qrels`).
"""

from __future__ import annotations

import json
import os

from ..errors import ParseError
from . import frames

META = "mteb_model_meta"


def is_predictions(obj) -> bool:
    return isinstance(obj, dict) and META in obj


def pairs(obj: dict) -> list[tuple[str, str]]:
    """The (subset, split) pairs a predictions object holds."""
    return [(subset, split) for subset, splits in obj.items() if subset != META and isinstance(splits, dict)
            for split in splits]


def model_name(obj: dict) -> str | None:
    meta = obj.get(META) or {}
    return meta.get("model_name") or meta.get("name")


def run_from_predictions(obj: dict, source: str, subset: str | None = None, split: str | None = None,
                         name: str | None = None):
    """One (subset, split) of a predictions object as a :class:`~judged.core.data.Run`.

    Without ``subset``/``split``: the only pair, else ``default``/``test`` when present."""
    have = pairs(obj)
    if not have:
        raise ParseError(source, None, "an MTEB predictions file with no subset/split of results")
    chosen = [(a, b) for a, b in have if (subset is None or a == subset) and (split is None or b == split)]
    if len(chosen) > 1:
        chosen = [p for p in chosen if p[0] == (subset or "default") and p[1] == (split or "test")] or chosen
    if len(chosen) != 1:
        listed = ", ".join(f"{a}/{b}" for a, b in have)
        subsets = ", ".join(sorted({a for a, _ in have}))
        wanted = f"subset {subset!r}, split {split!r}" if subset and split else \
            f"subset {subset!r}" if subset else f"split {split!r}" if split else "(none named)"
        raise ParseError(source, None, f"MTEB predictions hold {listed} (subsets {subsets}); "
                                       f"{'none matches' if not chosen else 'several match'} {wanted}: choose with "
                                       "--subset NAME / --split NAME (judged eval) or "
                                       "read_predictions(path, subset=, split=)")
    a, b = chosen[0]
    run_name = name or model_name(obj) or source
    return frames.run_from_dict(obj[a][b], run_name, source=f"{source} ({a}/{b})")


def read_predictions(path, subset: str | None = None, split: str | None = None, name: str | None = None,
                     on_duplicate: str = "error"):
    """``<Task>_predictions.json`` -> Run (see :func:`run_from_predictions`)."""
    obj, raw = frames.load_json(os.fspath(path), on_duplicate)
    if not is_predictions(obj):
        raise ParseError(raw.name, None, f'not an MTEB predictions file (no "{META}" key)')
    run = run_from_predictions(obj, raw.name, subset, split, name)
    if len(run) == 0:
        raise ParseError(raw.name, None, "no ranked documents")
    run.sha256 = raw.sha256
    return run


def read_scores(path) -> dict:
    """MTEB's reported scores of one task: ``{(subset, split): {metric: value}}`` from a
    results file ``<Task>.json`` (``scores`` -> split -> entries with ``hf_subset``)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            obj = json.load(fh)
    except FileNotFoundError:
        raise ParseError(path, None, "no such file")
    except json.JSONDecodeError as exc:
        raise ParseError(path, exc.lineno, f"invalid JSON: {exc.msg}")
    if not isinstance(obj, dict) or not isinstance(obj.get("scores"), dict):
        raise ParseError(path, None, 'not an MTEB results file (no "scores" object)')
    out = {}
    for split, entries in obj["scores"].items():
        for entry in entries if isinstance(entries, list) else []:
            out[(entry.get("hf_subset", "default"), split)] = {
                k: v for k, v in entry.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return out
