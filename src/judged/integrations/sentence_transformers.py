"""Sentence Transformers (Reimers & Gurevych, EMNLP 2019): an evaluator with graded qrels.

``GradedIREvaluator`` retrieves with the model as Sentence Transformers'
``InformationRetrievalEvaluator`` does (queries and corpus embedded with the model's
``encode_query`` / ``encode_document``, scored with the model's own similarity, the
corpus in chunks, the top ``depth`` per query kept) and scores the retrieved lists with
:func:`judged.evaluate`: graded nDCG and any other judged measure, each with its declared
convention, Judged@k and the exact bounds of nDCG@k over the unjudged documents in the
top k. It is a ``SentenceEvaluator``: pass it to ``model.fit(evaluator=...)`` or
``SentenceTransformerTrainer(evaluator=...)`` and its numbers are logged with the
training metrics (the trainer prefixes them ``eval_``).

Where it differs from the built-in evaluator, and why:

* relevance is graded: ``relevant_docs`` as sets makes every listed document equally
  relevant (a grade-0 "judged not relevant" entry becomes relevant too), so two rankings
  that put a grade-2 and a grade-1 document in opposite order score the same there;
* ties: the built-in evaluator orders equal scores by corpus id ascending; judged by
  trec_eval's rule (docid descending) unless ``ties="input"``; a document tied with the
  last one retrieved is resolved by that same rule (not by ``torch.topk``);
* ``AP@k``: the built-in ``MAP@k`` divides by min(k, number relevant), trec_eval's
  ``map_cut`` (judged's ``AP@k``) by the number relevant;
* ``RR@k``, ``P@k``, ``R@k``, ``Success@k`` (the built-in ``Accuracy@k``) and, on binary
  qrels, ``nDCG@k`` (its ideal is the relevant documents, as trec_eval's) agree with the
  built-in evaluator when no scores tie.
"""

from __future__ import annotations

import csv
import logging
import os

import numpy as np
import pyarrow as pa
from ..core.conventions import Settings
from ..core.io import read_qrels
from ..core.measures import Measure
from ..core.data import Run
from ..core.evaluation import evaluate
from ..core.io.output import open_replacing

try:
    import torch
    try:  # sentence-transformers 6
        from sentence_transformers.base.evaluation.evaluator import BaseEvaluator as SentenceEvaluator
    except ImportError:  # 3.x - 5.x
        from sentence_transformers.evaluation import SentenceEvaluator
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ModuleNotFoundError("judged.integrations.sentence_transformers needs sentence-transformers "
                      "(pip install torch==2.13.0, then pip install 'judged[st]')", name=exc.name) from exc

logger = logging.getLogger(__name__)

DEFAULT_MEASURES = ("nDCG@10", "AP@100", "RR@10", "R@10", "P@10")


def qrels_from_relevant_docs(relevant_docs: dict) -> dict:
    """Sentence Transformers' ``{qid: set(docids)}`` as binary qrels ``{qid: {docid: 1}}``;
    graded ``{qid: {docid: grade}}`` is returned as it is."""
    out = {}
    for q, docs in relevant_docs.items():
        out[str(q)] = dict(docs) if isinstance(docs, dict) else {str(d): 1 for d in docs}
    return out


def _top_with_ties(sim, top: int):
    """(rows, columns, values) of each row's ``top`` largest values of the matrix ``sim``
    and of every value tied with the last of them: ``torch.topk`` of ``top + 1`` sorted
    tells the rows with such a tie (their next value equals the last), whose values at or
    above it are then found in those rows alone; the others keep their top ``top``."""
    n_rows, n_cols = sim.shape
    if top == 0 or n_rows == 0:
        return
    values, cols = torch.topk(sim, min(top + 1, n_cols), dim=1, largest=True, sorted=True)
    last = values[:, top - 1]
    tied = values[:, top] == last if n_cols > top else torch.zeros(n_rows, dtype=torch.bool, device=sim.device)
    plain = torch.nonzero(~tied, as_tuple=True)[0]
    yield plain.repeat_interleave(top), cols[plain, :top].reshape(-1), values[plain, :top].reshape(-1)
    if bool(tied.any()):
        which = torch.nonzero(tied, as_tuple=True)[0]
        sub = sim[which]
        rows, at = torch.nonzero(sub >= last[which].unsqueeze(1), as_tuple=True)
        yield which[rows], at, sub[rows, at]


def _as_dict(run) -> dict:
    """A run's rows as ``{qid: {docid: score}}``, in row order."""
    out: dict = {}
    for q, d, v in zip(run.qid.to_pylist(), run.docid.to_pylist(), run.score.tolist()):
        out.setdefault(q, {})[d] = v
    return out


def document_text(doc) -> str:
    """A corpus entry as the model reads it: a string as it is; a ``{"title", "text"}``
    record (what :func:`judged.core.io.texts.read_docs` gives) as its title and text joined by a
    space and stripped, the text alone when the title is empty (BEIR's and MTEB's rule)."""
    if isinstance(doc, str):
        return doc
    if isinstance(doc, dict) and "text" in doc:
        title, text = doc.get("title") or "", doc.get("text") or ""
        return (title + " " + text).strip() if title else text.strip()
    raise TypeError(f"a corpus entry must be a text or a {{'title', 'text'}} record, not {type(doc).__name__}")


class GradedIREvaluator(SentenceEvaluator):
    """Retrieve with the model, score with judged: graded measures, conventions, holes.

    Parameters
    ----------
    queries, corpus : ``{id: text}``; corpus entries may also be ``{"title", "text"}`` records, as
        :func:`judged.core.io.texts.read_docs` returns them (read as :func:`document_text` says)
    qrels : graded judgments: ``{qid: {docid: grade}}`` or anything :func:`judged.read_qrels`
        reads (a TREC qrels file, a BEIR or Hugging Face datasets folder, a DataFrame);
        ``{qid: set(docids)}`` is read as binary
    measures : judged measure strings (default nDCG@10, AP@100, RR@10, R@10, P@10);
        ``main_measure`` (default the first) is the ``primary_metric``
    k : the cutoff of Judged@k and of the nDCG@k bounds over the holes (``holes=False``: none)
    depth : documents retrieved per query (default: the largest cutoff among the measures and k)
    ties, complete, no_relevant, ignore_identical_ids : judged's conventions
        (:class:`judged.core.conventions.Settings`)
    name, batch_size, corpus_chunk_size, show_progress_bar, truncate_dim, query_prompt,
        query_prompt_name, corpus_prompt, corpus_prompt_name, write_csv : as the built-in evaluator
    write_run : also write each call's retrieved lists as a TREC run file in ``output_path``
    mlflow : also log each call's result to the active MLflow run with
        :func:`judged.integrations.mlflow.log_result` (extra ``mlflow``): the conventions as params,
        the metrics at the step (keyed ``name_nDCG_10``: the returned keys as transformers'
        ``MLflowCallback`` renames them, without the trainer's ``eval_``), and the per-query values,
        the JSON and the holes report as artifacts under ``judged/<name or eval>/epoch<E>-steps<S>``

    After a call, ``last_run`` holds the retrieved lists and ``last_result`` the
    :class:`judged.Result` (per-query values, conventions).

    The returned metrics are keyed by the measure strings (``nDCG@10``, ``Judged@10``,
    ``nDCG(unjudged=min)@10``, ...), prefixed with ``name_`` when a name is given.
    """

    def __init__(self, queries: dict, corpus: dict, qrels, measures=DEFAULT_MEASURES, *, k: int = 10,
                 holes: bool = True, depth: int | None = None, main_measure: str | None = None,
                 ties: str = "trec", complete: bool = False, no_relevant: str = "zero",
                 ignore_identical_ids: bool = False, name: str = "", batch_size: int = 32,
                 corpus_chunk_size: int = 50000, show_progress_bar: bool = False, truncate_dim: int | None = None,
                 query_prompt: str | None = None, query_prompt_name: str | None = None,
                 corpus_prompt: str | None = None, corpus_prompt_name: str | None = None,
                 write_csv: bool = True, write_run: bool = False, mlflow: bool = False):
        super().__init__()
        if isinstance(qrels, dict) and any(not isinstance(v, dict) for v in qrels.values()):
            qrels = qrels_from_relevant_docs(qrels)
        self.qrels = read_qrels(qrels)
        self.settings = Settings(ties=ties, complete=complete, no_relevant=no_relevant,
                                 ignore_identical_ids=ignore_identical_ids)
        measures = [measures] if isinstance(measures, str) else list(measures)
        if holes:
            measures += [m for m in (f"Judged@{k}", f"nDCG(unjudged=min)@{k}", f"nDCG(unjudged=max)@{k}")
                         if m not in measures]
        self.measures = {str(m): Measure.parse(m) for m in measures}
        self.main_measure = str(main_measure or measures[0])
        if self.main_measure not in self.measures:
            raise ValueError(f"main_measure {self.main_measure!r} is not among the measures {list(self.measures)}")
        cutoffs = [m.cutoff for m in self.measures.values() if m.cutoff] + [k]
        self.depth = int(depth or max(cutoffs))
        judged_qids = set(self.qrels.query_ids.tolist())
        self.query_ids = [str(q) for q in queries if str(q) in judged_qids]
        self.queries = [queries[q] for q in queries if str(q) in judged_qids]
        self.corpus_ids = [str(c) for c in corpus]
        self.corpus = [document_text(doc) for doc in corpus.values()]
        # each corpus entry's place in docid order: ties are broken by docid as judged's `ties` says
        order = sorted(range(len(self.corpus_ids)), key=self.corpus_ids.__getitem__)
        self._docid_rank = np.empty(len(order), dtype=np.int64)
        self._docid_rank[order] = np.arange(len(order))
        self.name, self.batch_size, self.corpus_chunk_size = name, batch_size, corpus_chunk_size
        self.show_progress_bar, self.truncate_dim = show_progress_bar, truncate_dim
        self.query_prompt, self.query_prompt_name = query_prompt, query_prompt_name
        self.corpus_prompt, self.corpus_prompt_name = corpus_prompt, corpus_prompt_name
        self.write_csv, self.write_run, self.mlflow = write_csv, write_run, mlflow
        self.k = k if holes else None
        if mlflow:  # mlflow missing: said now, not after the first epoch
            from .mlflow import log_result  # noqa: F401
        self.primary_metric = self.main_measure
        self.csv_file = "Judged-IR_evaluation" + (f"_{name}" if name else "") + "_results.csv"
        self._query_id_array = pa.array(self.query_ids, pa.string())
        self._corpus_id_array = pa.array(self.corpus_ids, pa.string())
        self._last_run = self._last_run_dict = None  # the last call's Run; last_run: as a dict
        self.last_result = None

    @property
    def conventions(self) -> dict:
        """Measure -> its canonical convention string (what every number means)."""
        return {given: m.convention(self.settings) for given, m in self.measures.items()}

    # -- retrieval -------------------------------------------------------------
    def _embed(self, model, texts, which: str):
        encode = getattr(model, f"encode_{which}", None) or model.encode
        prompt, prompt_name = ((self.query_prompt, self.query_prompt_name) if which == "query"
                               else (self.corpus_prompt, self.corpus_prompt_name))
        return encode(texts, prompt=prompt, prompt_name=prompt_name, batch_size=self.batch_size,
                      show_progress_bar=self.show_progress_bar, convert_to_tensor=True,
                      truncate_dim=self.truncate_dim)

    def retrieve(self, model) -> dict:
        """``{qid: {docid: score}}``: each query's top ``depth`` documents by the model's
        similarity (scores as the model computes them, float32 for most models)."""
        return _as_dict(self.retrieved(model))

    def retrieved(self, model):
        """The lists :meth:`retrieve` gives as a :class:`judged.core.data.Run` (``model``):
        built from the similarity tensors' columns, no Python object per retrieved document.
        Each chunk of the corpus keeps its top ``depth`` per query and every document tied
        with the last of them; the lists are then ordered by score descending, ties by docid
        as ``ties`` says (descending for trec), and cut at ``depth``."""
        queries, docs, scores = [], [], []
        q_emb = self._embed(model, self.queries, "query") if self.query_ids else None
        for start in range(0, len(self.corpus), self.corpus_chunk_size) if self.query_ids else ():
            c_emb = self._embed(model, self.corpus[start:start + self.corpus_chunk_size], "document")
            sim = model.similarity(q_emb, c_emb)
            for rows, cols, values in _top_with_ties(sim, min(self.depth, sim.shape[1])):
                queries.append(rows.cpu().numpy().astype(np.int64))
                docs.append(cols.cpu().numpy().astype(np.int64) + start)
                scores.append(values.to(torch.float64).cpu().numpy())
        q = np.concatenate(queries) if queries else np.zeros(0, np.int64)
        idx = np.concatenate(docs) if docs else np.zeros(0, np.int64)
        sc = np.concatenate(scores) if scores else np.zeros(0, np.float64)
        key = -self._docid_rank[idx] if self.settings.ties == "trec" else self._docid_rank[idx]
        order = np.lexsort((key, -sc, q))  # by query, score descending, then the docid rule
        counts = np.bincount(q, minlength=len(self.query_ids))
        before = np.concatenate(([0], np.cumsum(counts)[:-1]))
        keep = order[np.arange(len(order)) - np.repeat(before, counts) < self.depth]
        return Run(self._query_id_array.take(pa.array(q[keep])), self._corpus_id_array.take(pa.array(idx[keep])),
                   sc[keep], name="model", source="<retrieved>")

    # -- evaluation ------------------------------------------------------------
    def score(self, run, run_name: str = "model"):
        """:func:`judged.evaluate` of retrieved lists (``{qid: {docid: score}}`` or a
        :class:`judged.core.data.Run`) with this evaluator's qrels, measures and conventions."""
        return evaluate(self.qrels, {run_name: run}, list(self.measures), settings=self.settings)

    @property
    def last_run(self) -> dict | None:
        """The last call's retrieved lists, ``{qid: {docid: score}}`` (made on first use)."""
        if self._last_run_dict is None and self._last_run is not None:
            self._last_run_dict = _as_dict(self._last_run)
        return self._last_run_dict

    def __call__(self, model, output_path: str | None = None, epoch: int = -1, steps: int = -1) -> dict[str, float]:
        where = f" after epoch {epoch}" if epoch != -1 else ""
        where += f" after {steps} steps" if steps != -1 else ""
        logger.info(f"judged graded IR evaluation of the model on {self.name or 'the'} data{where}")
        run = self.retrieved(model)
        self._last_run, self._last_run_dict = run, None
        if not len(run):
            raise ValueError("no query of `queries` has judgments in the qrels: nothing to evaluate")
        result = self.score(run)
        self.last_result = result
        values = {given: result.aggregate("model", given) for given in self.measures}
        for given, conv in self.conventions.items():
            logger.info(f"{given:>28}: {values[given]:.4f}   [{conv}]")
        if output_path is not None:
            self._write(output_path, epoch, steps, values, run)
        if self.mlflow:
            from .mlflow import log_result

            log_result(result, prefix=f"{self.name}_" if self.name else "", step=None if steps == -1 else steps,
                       k=self.k, holes=self.k is not None,
                       artifact_path=f"judged/{self.name or 'eval'}/epoch{epoch}-steps{steps}")
        metrics = self.prefix_name_to_metrics(values, self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics

    def _write(self, output_path: str, epoch: int, steps: int, values: dict, run: dict) -> None:
        os.makedirs(output_path, exist_ok=True)
        if self.write_csv:
            path = os.path.join(output_path, self.csv_file)
            new = not os.path.isfile(path)
            with open(path, "a", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh)
                if new:
                    w.writerow(["epoch", "steps", *self.measures])
                w.writerow([epoch, steps, *[repr(values[g]) for g in self.measures]])
        if self.write_run:
            stem = self.csv_file.replace("_results.csv", f"_run_epoch{epoch}_steps{steps}.txt")
            with open_replacing(os.path.join(output_path, stem)) as fh:
                for q, docs in _as_dict(run).items():
                    for r, (d, s) in enumerate(docs.items(), start=1):
                        fh.write(f"{q} Q0 {d} {r} {s!r} judged\n")

    def get_config_dict(self) -> dict:
        return {"measures": list(self.measures), "depth": self.depth, "conventions": self.settings.canonical()}
