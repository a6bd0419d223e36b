"""MLflow: a :class:`judged.Result` logged to an MLflow run, its conventions with its numbers.

:func:`log_result` logs, to the active run (MLflow starts one when none is):

* **params**: ``judged.version``, the qrels (path, sha256, queries, judgments), the engine-wide
  conventions (``judged.settings``: :meth:`judged.core.conventions.Settings.canonical`), the query set
  and, per measure, ``convention.<key>``: the measure's canonical convention string, so every
  metric says how it was computed;
* **metrics**: every run's aggregate per measure (mean; sum for the counts; geometric mean for
  GMAP), keyed ``<key>`` for one run, ``<run>/<key>`` for several; ``step`` as given;
* **artifacts** (under ``artifact_path``, default ``judged``): ``per_query.tsv`` (run, qid,
  measure, value: every per-query value, written with ``repr`` so it reads back bit for bit),
  ``result.json`` (``judged eval --format json``) and ``holes.json`` (``judged holes --format
  json``'s report without the estimate, on the first measure whose holes judged bounds: Judged@k,
  holes, exact bounds, the pairs that could flip).

MLflow keys hold letters, digits and ``_ - . / :`` and spaces only: a measure's key is its
string with every other character as ``_`` (:func:`metric_key`: ``nDCG@10`` -> ``nDCG_10``,
the rule by which transformers' ``MLflowCallback`` renames the metrics a Trainer logs); the
measure string itself is in the ``convention.<key>`` param's value. The Sentence Transformers
evaluator logs through :func:`log_result` with ``mlflow=True``
(:class:`judged.integrations.sentence_transformers.GradedIREvaluator`). Install with
``pip install 'judged[mlflow]'``.
"""

from __future__ import annotations

import json
import re
from .. import __version__
from ..core.runnames import display_names
from ..analyses.holes.unjudged import result_holes
from ..core.jsonsafe import json_safe

try:
    import mlflow
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ModuleNotFoundError("judged.integrations.mlflow needs mlflow (pip install 'judged[mlflow]')",
                              name=exc.name) from exc

ARTIFACT_PATH = "judged"
_REFUSED = re.compile(r"[^0-9A-Za-z_\-. /:]")  # transformers' MLflowCallback sanitizes metric names so too


def metric_key(name: str) -> str:
    """``name`` as an MLflow key: every character MLflow refuses becomes ``_`` (``nDCG@10`` ->
    ``nDCG_10``, ``nDCG(gain=exp)@10`` -> ``nDCG_gain_exp__10``)."""
    return _REFUSED.sub("_", str(name))


def keys_of(names) -> dict:
    """name -> :func:`metric_key`, refusing two names that would share a key."""
    out, seen = {}, {}
    for name in names:
        key = metric_key(name)
        if key in seen and seen[key] != name:
            raise ValueError(f"{seen[key]!r} and {name!r} would both be logged as {key!r}: rename one")
        out[name], seen[key] = key, name
    return out


def result_params(result, prefix: str = "") -> dict:
    """The params :func:`log_result` logs: what every number of ``result`` means."""
    q = result.qrels
    params = {"judged.version": __version__, "judged.qrels": str(q.source or "<in memory>"),
              "judged.qrels_sha256": str(q.sha256), "judged.qrels_queries": int(len(q.query_ids)),
              "judged.qrels_judgments": int(len(q)), "judged.settings": result.settings.canonical(),
              "judged.query_set": result.query_set.describe()}
    keys = keys_of(result.measures)
    params.update({f"{prefix}convention.{keys[given]}": conv for given, conv in result.conventions.items()})
    return params


def result_metrics(result, prefix: str = "", run_keys: bool | None = None) -> dict:
    """The metrics :func:`log_result` logs: each run's aggregate of each measure. ``run_keys``:
    key them ``<run>/<measure>`` (default: only when the result holds several runs)."""
    keys = keys_of(result.measures)
    several = len(result.runs) > 1 if run_keys is None else run_keys
    shown = display_names(list(result.runs))  # runs as every command shows them
    run_key = keys_of(shown.values())
    out = {}
    for name in result.runs:
        for given in result.measures:
            key = f"{prefix}{run_key[shown[name]]}/{keys[given]}" if several else f"{prefix}{keys[given]}"
            out[key] = float(result.aggregate(name, given))
    return out


def per_query_tsv(result) -> str:
    """Every per-query value: ``run qid measure value`` lines after a header, values as ``repr``."""
    lines = ["run\tqid\tmeasure\tvalue"]
    for name, rr in result.runs.items():
        qids = [str(q) for q in rr.qids.tolist()]
        for given in result.measures:
            lines += [f"{name}\t{q}\t{given}\t{v!r}" for q, v in zip(qids, rr.values[given].tolist())]
    return "\n".join(lines) + "\n"


def holes_report(result, k: int | None = None) -> dict | None:
    """``judged holes``' report (no estimate) of the first measure of ``result`` whose holes
    judged bounds, at ``k`` (default: its cutoff, else 10); None when no measure is bounded."""
    given = next((g for g, m in result.measures.items() if m.family.boundable), None)
    if given is None:
        return None
    return json_safe(result_holes(result, given, k or result.measures[given].cutoff or 10).to_dict())


def log_result(result, *, prefix: str = "", step: int | None = None, artifacts: bool = True, holes: bool = True,
               k: int | None = None, artifact_path: str = ARTIFACT_PATH, run_keys: bool | None = None) -> dict:
    """Log ``result`` (a :class:`judged.Result`) to the active MLflow run: its conventions as
    params, its aggregates as metrics (at ``step``), its per-query table, its JSON and its holes
    report as artifacts under ``artifact_path`` (``holes=False``: no holes report; ``k``: its
    top k). ``prefix`` goes before every metric and convention key (an evaluator's name, say).
    Returns ``{"params": ..., "metrics": ..., "artifacts": [...]}``, what was logged::

        with mlflow.start_run():
            log_result(judged.evaluate("qrels.txt", "run.txt", ["nDCG@10", "AP"]))
    """
    params, metrics = result_params(result, prefix), result_metrics(result, prefix, run_keys)
    mlflow.log_params(params)
    mlflow.log_metrics(metrics, step=step)
    logged = []
    if artifacts:
        mlflow.log_text(per_query_tsv(result), f"{artifact_path}/per_query.tsv")
        mlflow.log_text(json.dumps(json_safe(result.to_dict()), indent=2), f"{artifact_path}/result.json")
        logged += [f"{artifact_path}/per_query.tsv", f"{artifact_path}/result.json"]
        report = holes_report(result, k) if holes else None
        if report is not None:
            mlflow.log_text(json.dumps(report, indent=2), f"{artifact_path}/holes.json")
            logged.append(f"{artifact_path}/holes.json")
    return {"params": params, "metrics": metrics, "artifacts": logged}
