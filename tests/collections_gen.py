"""Random test collections shared by the compat tests (float32-exact scores, ties included)."""

import numpy as np


def random_collection(seed: int, n_queries: int = 12, n_docs: int = 60):
    """qrels {qid: {docid: grade}} and run {qid: {docid: score}} with every awkward case:
    queries only in the run, only in the qrels, with nothing relevant, tied scores,
    unjudged documents, a document equal to its query id."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i:03d}" for i in range(n_docs)]
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        if q != 0:  # q0: only in the run
            judged = rng.choice(docs, size=int(rng.integers(1, 25)), replace=False)
            grades = rng.integers(0, 4, size=len(judged))
            if q == 1:
                grades[:] = 0  # nothing relevant
            qrels[qid] = {str(d): int(g) for d, g in zip(judged, grades)}
        if q != n_queries - 1:  # the last query: only in the qrels
            ranked = rng.choice(docs, size=int(rng.integers(1, 40)), replace=False)
            # float32-exact scores from a small set, so that ties are common
            scores = rng.integers(0, 12, size=len(ranked)) / 8.0 + rng.integers(0, 2, size=len(ranked)) * 0.25
            run[qid] = {str(d): float(np.float32(s)) for d, s in zip(ranked, scores)}
            if q == 2:
                run[qid][qid] = 0.5  # a document whose id is the query id
                qrels[qid][qid] = 1
    return qrels, run
