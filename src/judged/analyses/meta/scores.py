"""Score matrices shared by the meta-evaluation tools: one row per run, one column per query.

Paired comparisons need every run scored on the same queries: runs are scored over every
qrels query (``complete=True``, the query-set rule of every command comparing runs, see
:mod:`judged.core.querysets`). With ``complete=False`` passed on purpose, the matrix keeps the
queries every run was evaluated on and says how many it dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import JudgedError
from ...core.querysets import refuse_disjoint_runs
from ...core.conventions import Settings
from ...core.evaluation import evaluate
from ...core.measures import Measure


@dataclass
class ScoreMatrix:
    """Per-query scores of several runs under several measures, on common queries.

    ``values[measure]`` is a ``(len(runs), len(qids))`` array; ``conventions[measure]``
    the measure's canonical convention string.
    """

    runs: list
    qids: list
    values: dict
    conventions: dict
    dropped_queries: int = 0
    query_set: object = None  # judged.core.querysets.QuerySet of the evaluation, when known

    def means(self, measure: str) -> np.ndarray:
        """Each run's number on ``measure``: its registered aggregate (mean; sum for counts;
        geometric mean for GMAP) over the common queries."""
        m = Measure.parse(measure)
        return np.array([m.aggregate_of(row) for row in self.values[measure]])


def score_matrix(qrels, runs, measures, settings=None) -> ScoreMatrix:
    """Evaluate ``runs`` once (see :func:`judged.evaluate`; ``settings`` default
    ``Settings(complete=True)``) and stack per-query values on the queries every run was
    evaluated on."""
    result = evaluate(qrels, runs, list(measures), settings=Settings(complete=True) if settings is None else settings)
    refuse_disjoint_runs(result)
    return matrix_from_result(result)


def matrix_from_result(result, measures=None) -> ScoreMatrix:
    """The score matrix of an evaluated Result; ``measures`` not in it are computed on its
    runs' aligned data (nothing is aligned twice)."""
    names = list(result.runs)
    if not names:
        raise JudgedError("no runs given")
    sets = [set(result.runs[n].qids.tolist()) for n in names]
    union = set().union(*sets)
    common = sorted(set.intersection(*sets))
    if not common:
        raise JudgedError("the runs share no evaluated query")
    measures = list(result.measures) if measures is None else [str(m) for m in measures]
    parsed = {g: result.measures.get(g) or Measure.parse(g) for g in measures}
    values = {}
    for given, m in parsed.items():
        rows = []
        for n in names:
            rr = result.runs[n]
            at = {q: i for i, q in enumerate(rr.qids.tolist())}
            v = rr.values[given] if given in rr.values else m.compute(rr.aligned)
            rows.append(v[[at[q] for q in common]])
        values[given] = np.vstack(rows).astype(np.float64)
    conventions = {g: m.convention(result.settings) for g, m in parsed.items()}
    return ScoreMatrix(names, common, values, conventions, len(union) - len(common), result.query_set)


def run_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j), i < j, of every unordered pair of n runs."""
    i, j = np.triu_indices(n, k=1)
    return i, j
