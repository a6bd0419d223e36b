"""Built-in example data: the seeds' worked examples, as qrels and runs.

* ``graded``: six results graded 3, 2, 3, 0, 1, 2 (seed 1): DCG 6.861, IDCG 7.141,
  nDCG 0.961 with linear gain and 0.949 with exponential gain.
* ``three``: three results graded 2, 0, 1 (seed 2): with gain 2^g - 1, DCG 3.5,
  IDCG 3.631, nDCG 0.964.
* ``single-at-R``: one relevant document at rank R = 1, 2, 3, 10, 11: nDCG@10 is
  1/log2(1 + R) = 1.000, 0.631, 0.500, 0.289, and 0 below rank 10.
"""

from __future__ import annotations


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
