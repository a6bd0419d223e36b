"""Built-in example data: the seeds' worked examples, as qrels and runs.

* ``graded``: six results graded 3, 2, 3, 0, 1, 2 (seed 1): DCG 6.861, IDCG 7.141,
  nDCG 0.961 with linear gain and 0.949 with exponential gain.
* ``three``: three results graded 2, 0, 1 (seed 2): with gain 2^g - 1, DCG 3.5,
  IDCG 3.631, nDCG 0.964.
* ``single-at-R``: one relevant document at rank R = 1, 2, 3, 10, 11: nDCG@10 is
  1/log2(1 + R) = 1.000, 0.631, 0.500, 0.289, and 0 below rank 10.
* ``holes_story``: a lexical and a dense system on 30 generated queries, judged only from
  the lexical system's top 10, with the hidden full answer key a simulated assessor reads.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from .core.io.output import open_replacing


def _ranked(docids):
    """A run dict ranking docids in the given order (descending scores)."""
    n = len(docids)
    return {d: float(n - i) for i, d in enumerate(docids)}


def worked_examples() -> tuple[dict, dict]:
    """(qrels, run) as dicts {qid: {docid: value}} holding every worked example."""
    qrels, run = {}, {}
    grades = [3, 2, 3, 0, 1, 2]
    qrels["graded"] = {f"d{i + 1}": g for i, g in enumerate(grades)}
    run["graded"] = _ranked([f"d{i + 1}" for i in range(6)])
    qrels["three"] = {"p1": 2, "p2": 0, "p3": 1}
    run["three"] = _ranked(["p1", "p2", "p3"])
    for r in (1, 2, 3, 10, 11):
        q = f"single-at-{r}"
        docs = [f"{q}-d{i + 1}" for i in range(12)]
        qrels[q] = {d: (1 if i == r - 1 else 0) for i, d in enumerate(docs)}
        run[q] = _ranked(docs)
    return qrels, run


# ---------------------------------------------------------------------------
# The holes story (seed 1: BEIR's TREC-COVID): generated deterministically.

HOLES_QUERIES = 30
HOLES_DOCS = 60
POOL_DEPTH = 20  # the original pool: the lexical run's top 20


@dataclass
class HolesStory:
    """A hidden full answer key, a lexical and a dense run, and the qrels judged from the
    lexical run's top ``POOL_DEPTH`` only (so the dense run's new finds are holes)."""

    answer_key: dict  # {qid: {docid: grade}}: every document, known only to the assessor
    qrels: dict  # the judged subset: the lexical run's top POOL_DEPTH
    runs: dict  # {"lexical": run, "dense": run}

    def write(self, directory) -> None:
        """qrels.txt, answer-key.txt (TREC qrels), lexical.run, dense.run (TREC runs) in ``directory``."""
        import os

        os.makedirs(directory, exist_ok=True)
        for name, qrels in (("qrels.txt", self.qrels), ("answer-key.txt", self.answer_key)):
            write_qrels(os.path.join(directory, name), qrels)
        for tag, run in self.runs.items():
            with open_replacing(os.path.join(directory, f"{tag}.run")) as fh:
                for q in run:
                    ranked = sorted(run[q].items(), key=lambda x: (-x[1], x[0]))
                    fh.writelines(f"{q} Q0 {d} {i} {s} {tag}\n" for i, (d, s) in enumerate(ranked, 1))

    def assessor(self, pairs) -> dict:
        """Labels for (qid, docid) pairs, read from the hidden answer key."""
        out: dict = {}
        for qid, docid in pairs:
            out.setdefault(qid, {})[docid] = self.answer_key[qid][docid]
        return out


def write_qrels(path, qrels: dict) -> None:
    """``{qid: {docid: grade}}`` as TREC qrels lines (``qid 0 docid grade``) at ``path``."""
    with open_replacing(path) as fh:
        fh.writelines(f"{q} 0 {d} {g}\n" for q in qrels for d, g in qrels[q].items())


def holes_story(seed: int = 2023) -> HolesStory:
    """Documents are either *established* (both systems can match them) or *recent* (the
    lexical system misses their vocabulary; the dense one does not). Grades 0..3."""
    rng = random.Random(seed)
    key, lexical, dense = {}, {}, {}
    for i in range(HOLES_QUERIES):
        qid = f"c{i + 1:02d}"
        key[qid], lexical[qid], dense[qid] = {}, {}, {}
        for j in range(HOLES_DOCS):
            docid = f"{qid}-d{j:02d}"
            recent = j % 4 == 0
            grade = rng.choices([0, 1, 2, 3], weights=[40, 25, 20, 15] if recent else [50, 25, 15, 10])[0]
            key[qid][docid] = grade
            signal = grade + rng.gauss(0.0, 1.1)
            lexical[qid][docid] = round(signal - (1.0 if recent else 0.0) + rng.gauss(0.0, 0.8), 4)
            dense[qid][docid] = round(signal + rng.gauss(0.0, 0.6), 4)
    qrels = {q: {d: key[q][d] for d in sorted(lexical[q], key=lambda d: (-lexical[q][d], d))[:POOL_DEPTH]}
             for q in key}
    return HolesStory(key, qrels, {"lexical": lexical, "dense": dense})
