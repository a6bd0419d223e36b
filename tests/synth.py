"""Synthetic test collections for the oracle and property tests.

A collection is a qrels dict {qid: {docid: grade}} and a run dict {qid: {docid: score}},
drawn from a numpy generator with a fixed seed, deliberately full of the cases where
evaluators disagree: tied scores, docids whose string order differs from their numeric
order ("9" > "10"), negative grades, queries only in the run or only in the qrels,
queries with nothing relevant. Scores are float32-exact (see ``float32_exact``).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(eq=False)
class Collection:
    qrels: dict  # {qid: {docid: int grade}}
    run: dict  # {qid: {docid: float score}}
    seed: int

    def write(self, directory: Path, sci_share: float = 0.3) -> tuple[Path, Path]:
        """Write TREC qrels and run files; a share of the scores in scientific notation."""
        qrels_path = directory / f"qrels-{self.seed}.txt"
        run_path = directory / f"run-{self.seed}.txt"
        qrels_path.write_text(trec_qrels_text(self.qrels))
        run_path.write_text(trec_run_text(self.run, sci_share=sci_share, rng=np.random.default_rng(self.seed + 1)))
        return qrels_path, run_path


def trec_qrels_text(qrels: dict) -> str:
    return "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())


def trec_run_text(run: dict, tag: str = "synth", sci_share: float = 0.0, rng=None) -> str:
    """TREC run lines, ranks by descending score; a share of scores written as %.17e."""
    out = []
    for q, docs in run.items():
        for rank, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), start=1):
            sci = sci_share > 0 and rng.random() < sci_share
            out.append(f"{q} Q0 {d} {rank} {format_score(s, sci)} {tag}\n")
    return "".join(out)


def format_score(score: float, sci: bool = False) -> str:
    """The score as text that reads back to the same double: repr, or %.17e when ``sci``."""
    return f"{score:.17e}" if sci else repr(float(score))


def float32_exact(values: np.ndarray) -> np.ndarray:
    """Doubles that are exactly representable as float32.

    pytrec_eval stores run scores as float32 before sorting while trec_eval 10 reads them
    as doubles; two scores that differ only beyond float32 precision tie in pytrec_eval
    but not in trec_eval (or judged). Float32-exact scores make both orders the same.
    """
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def make_collection(seed: int, max_queries: int = 8, max_docs: int = 40, max_ranked: int = 25,
                    negative: bool = True) -> Collection:
    """A collection drawn from ``seed``; ``negative=False`` draws no negative grade (grades 0..3)."""
    rng = np.random.default_rng(seed)
    qids, docs = _ids(rng, max_queries, max_docs)
    n_docs = len(docs)

    qrels, run = {}, {}
    only_run, only_qrels = qids[-2], qids[-1]
    for q in qids[:-2] + [only_qrels]:
        judged = rng.choice(docs, size=int(rng.integers(1, n_docs + 1)), replace=False)
        kind = rng.random()
        if kind < 0.15:  # nothing relevant
            grades = rng.choice([0, -1], size=len(judged), p=[0.8, 0.2])
        else:
            grades = rng.choice([-1, 0, 1, 2, 3], size=len(judged), p=[0.1, 0.4, 0.25, 0.15, 0.1])
        if not negative:
            grades = np.maximum(grades, 0)
        if not (grades >= 0).any():  # trec_eval crashes/hangs on all-negative queries
            grades[0] = 0
        qrels[q] = {str(d): int(g) for d, g in zip(judged, grades)}
    for q in qids[:-2] + [only_run]:
        if q != only_run and rng.random() < 0.1:
            continue  # a qrels query missing from the run
        ranked = rng.choice(docs, size=int(rng.integers(1, min(max_ranked, n_docs) + 1)), replace=False)
        scores = _scores(rng, len(ranked))
        run[q] = {str(d): float(s) for d, s in zip(ranked, scores)}
    if rng.random() < 0.5:
        del run[only_run]
    if rng.random() < 0.3:
        del qrels[only_qrels]
    if not run:  # keep at least one query in the run
        run[only_run] = {docs[0]: 1.0}
    return Collection(qrels, run, seed)


def _ids(rng, max_queries: int, max_docs: int) -> tuple[list, list]:
    """(query ids, docids): 1..n queries plus two (one only in the run, one only in the
    qrels), their string order unlike their numeric order once n >= 10; docids drawn from
    0..3n, so "9" sorts after "10" as strings (the trec_eval tie-break order)."""
    n_q = int(rng.integers(1, max_queries + 1))
    qids = [str(i) for i in rng.choice(np.arange(1, 3 * max_queries + 1), size=n_q + 2, replace=False)]
    n_docs = int(rng.integers(2, max_docs + 1))
    prefix = "" if rng.random() < 0.7 else "d"
    return qids, [f"{prefix}{i}" for i in rng.choice(np.arange(3 * n_docs), size=n_docs, replace=False)]


def random_collection(seed: int, n_queries: int = 12, n_docs: int = 60) -> tuple[dict, dict]:
    """(qrels, run) dicts of :func:`make_collection` with grades 0..3 (no negative grade)."""
    c = make_collection(seed, max_queries=n_queries, max_docs=n_docs, negative=False)
    return c.qrels, c.run


def _scores(rng, n: int) -> np.ndarray:
    """Float32-exact scores with many ties, of one of several scales and signs."""
    style = rng.integers(0, 4)
    if style == 0:  # few distinct values: ties everywhere
        s = rng.integers(0, 4, size=n) / 4.0
    elif style == 1:  # small floats, some negative
        s = rng.normal(0, 1e-3, size=n)
    elif style == 2:  # large magnitudes
        s = rng.normal(0, 1e5, size=n)
        s[rng.random(n) < 0.3] = 1e5
    else:  # all tied
        s = np.full(n, float(rng.normal()))
    return float32_exact(s)


def write_qrels(path, qrels: dict) -> str:
    """TREC qrels lines of {qid: {docid: grade}} written to ``path``; the path as a string."""
    Path(path).write_text(trec_qrels_text(qrels))
    return str(path)


def write_run(path, run: dict, tag: str = "r") -> str:
    """TREC run lines of {qid: {docid: score}} (ranks by descending score) written to ``path``."""
    Path(path).write_text(trec_run_text(run, tag))
    return str(path)


def write_gz(path: Path, text: "str | bytes") -> Path:
    path.write_bytes(gzip.compress(text.encode() if isinstance(text, str) else text))
    return path


@dataclass(eq=False)
class SubtopicCollection:
    """Subtopic qrels (ndeval's ``qid subtopic docid grade`` rows, file order) and a run
    {qid: {docid: score}} with distinct scores (ndeval's readers break ties their own ways)."""

    qrels: list  # [(qid, subtopic, docid, grade)]
    run: dict
    seed: int

    def write(self, directory: Path) -> tuple[Path, Path]:
        qrels_path, run_path = directory / f"subtopic-qrels-{self.seed}.txt", directory / f"run-{self.seed}.txt"
        qrels_path.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in self.qrels))
        run_path.write_text(trec_run_text(self.run))
        return qrels_path, run_path


def make_subtopic_collection(seed: int, max_queries: int = 8, max_docs: int = 40, max_ranked: int = 30,
                             max_subtopics: int = 6) -> SubtopicCollection:
    """Subtopic qrels drawn from ``seed``, full of what the diversity measures' references
    are particular about: documents covering several subtopics (the greedy ideal's ties
    are broken by docid, and "9" > "10"), documents judged 0 for every subtopic, subtopics
    with nothing relevant, queries with no relevant subtopic, queries only in the run or
    only in the qrels, grades above 1 and negative ones (relevant at rel=1 / not)."""
    rng = np.random.default_rng(seed)
    qids, docs = _ids(rng, max_queries, max_docs)
    n_docs = len(docs)
    only_run, only_qrels = qids[-2], qids[-1]
    qrels, run = [], {}
    for q in qids[:-2] + [only_qrels]:
        n_sub = int(rng.integers(1, max_subtopics + 1))
        judged = rng.choice(docs, size=int(rng.integers(1, n_docs + 1)), replace=False)
        nothing = rng.random() < 0.1
        for d in judged:
            for s in range(1, n_sub + 1):
                if rng.random() < 0.5:
                    continue  # not judged for this subtopic
                g = 0 if nothing else int(rng.choice([-1, 0, 1, 2], p=[0.05, 0.55, 0.3, 0.1]))
                qrels.append((q, str(s), str(d), g))
    order = rng.permutation(len(qrels))
    qrels = [qrels[i] for i in order] if rng.random() < 0.3 else qrels  # sometimes not grouped by query
    for q in qids[:-2] + [only_run]:
        if q != only_run and rng.random() < 0.1:
            continue
        ranked = rng.choice(docs, size=int(rng.integers(1, min(max_ranked, n_docs) + 1)), replace=False)
        run[q] = {str(d): float(s) for d, s in zip(ranked, rng.permutation(len(ranked)) + 1.0)}
    return SubtopicCollection(qrels, run, seed)
