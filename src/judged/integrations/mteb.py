"""MTEB retrieval tasks (Muennighoff et al., EACL 2023; Enevoldsen et al., ICLR 2025) judged.

MTEB scores a retrieval task with pytrec_eval (trec_eval's code) over the queries both in
the model's results and in the qrels, keeps or drops documents whose id is the query's as
the task says (``ignore_identical_ids``, default kept), and reports each mean rounded to 5
digits, nDCG@10 first. Its scores are float32 (the models' own precision), so judged's
double comparisons order them exactly as pytrec_eval does, and ``judged eval`` of the saved
predictions gives MTEB's numbers (to its 5 digits) and then what MTEB does not show: the
unjudged documents behind each number, their exact bounds, and paired tests between models.

From files (no mteb needed):

* predictions: ``mteb.evaluate(..., prediction_folder=DIR)`` writes
  ``DIR/<Task>_predictions.json``; :func:`read_predictions` (or ``read_run``, or any judged
  command) reads them as runs;
* task data: the task's dataset folder (an mteb/* dataset downloaded or cloned, or a
  ``save_to_disk`` copy) is read by :mod:`judged.core.io.hf` wherever a qrels path is accepted
  (``judged eval --beir DIR predictions.json``; a multilingual task's language:
  ``--subset LANG``, its ``LANG-qrels`` config and the predictions' ``LANG`` results);
* MTEB's reported scores: :func:`read_scores` reads ``<cache>/results/<model>/<rev>/<Task>.json``.

With mteb installed, :func:`task_qrels` takes the qrels from a loaded task object and
:func:`task_conventions` the keyword arguments that make :func:`judged.evaluate` score
as the task does.
"""

from __future__ import annotations

import re

from ..core.io.mteb_files import read_predictions, read_scores  # noqa: F401  (the public names of this integration)
from ..core.io import read_qrels

__all__ = ["read_predictions", "read_scores", "measure_of", "task_qrels", "task_conventions", "reported"]

_METRIC = re.compile(r"^(ndcg|map|recall|precision|mrr|hit_rate)_at_(\d+)$")
_MEASURES = {"ndcg": "nDCG", "map": "AP", "recall": "R", "precision": "P", "mrr": "RR", "hit_rate": "Success"}


def measure_of(metric: str) -> str:
    """MTEB's metric name -> judged's measure: ``ndcg_at_10`` -> ``nDCG@10``, ``map_at_100``
    -> ``AP@100`` (trec_eval's map_cut), ``recall_at_k`` -> ``R@k``, ``precision_at_k`` ->
    ``P@k``, ``hit_rate_at_k`` -> ``Success@k``, ``mrr_at_k`` -> ``RR@k``."""
    m = _METRIC.match(metric)
    if not m:
        raise ValueError(f"no judged measure for MTEB metric {metric!r} (known: {', '.join(_MEASURES)} _at_k)")
    return f"{_MEASURES[m.group(1)]}@{m.group(2)}"


def reported(results_path, metric: str = "ndcg_at_10", subset: str = "default", split: str = "test") -> float:
    """The value MTEB reported for ``metric`` in a results file."""
    scores = read_scores(results_path)
    if (subset, split) not in scores:
        raise KeyError(f"{results_path}: no scores for {subset}/{split} (has {sorted(scores)})")
    return float(scores[(subset, split)][metric])


def _load(task):
    if not getattr(task, "data_loaded", False):
        task.load_data()
    if hasattr(task, "convert_v1_dataset_format_to_v2"):
        task.convert_v1_dataset_format_to_v2(num_proc=None)
    return task


def task_qrels(task, split: str = "test", subset: str = "default"):
    """The qrels MTEB scores ``task`` with (loaded if need be: a Hub task downloads its
    data), as a :class:`judged.Qrels`; queries without any judgment are left out, as MTEB does."""
    data = _load(task).dataset
    if subset not in data:
        raise KeyError(f"task {task.metadata.name} has no subset {subset!r} (has {sorted(data)})")
    if split not in data[subset]:
        raise KeyError(f"task {task.metadata.name} subset {subset!r} has no split {split!r} (has {sorted(data[subset])})")
    relevant = data[subset][split]["relevant_docs"]
    q = read_qrels({str(qid): {str(d): int(g) for d, g in docs.items()} for qid, docs in relevant.items() if docs})
    q.source = f"mteb:{task.metadata.name}/{subset}/{split}"
    return q


def task_conventions(task) -> dict:
    """Keyword arguments of :func:`judged.evaluate` that score as ``task`` does (its
    ``ignore_identical_ids``); a task that skips each query's first result is refused,
    since judged has no such convention."""
    if getattr(task, "skip_first_result", False):
        raise ValueError(f"task {task.metadata.name} skips each query's first result; judged has no such convention")
    return {"ignore_identical_ids": bool(getattr(task, "ignore_identical_ids", False))}
