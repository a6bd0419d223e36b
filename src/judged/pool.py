"""Pooling: the unjudged (query, document) pairs in the runs' top k, in the order to judge them.

Strategies (``--budget N`` keeps the first N):

* ``depth``: shallowest best rank first (then: retrieved by more runs, qid, docid), the
  classic TREC depth-k pool walked rank by rank.
* ``impact``: the pairs whose label can move the scores and the pairwise orders most, in
  the spirit of Carterette, Allan & Sitaraman's minimal test collections (SIGIR 2006).
  For a pair p of query q, labelled with the top grade, each run r's mean nDCG@depth
  moves by delta_r(p) = [(DCG_r + g_max * w_r(p)) / IDCG'_q - DCG_r / IDCG_q] / |Q_r|
  (w_r(p) the run's discount at p's rank, 0 if not in its top depth; IDCG'_q the ideal
  with one more top-grade document). impact(p) = sum_r |delta_r| + sum_{r<s}
  |delta_r - delta_s|: what p can do to each score plus to each pairwise difference.

Output (``Pool.write``): one pair per line, ``qid docid priority best_rank runs [impact]``
(priority 1 = judge first), after ``#`` header lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np

from .align import align
from .conventions import Settings
from .errors import ConventionError, ParseError
from .holes import check_maxgrade, fill, max_grade, negative_as
from .measures import Measure
from .measures.dcg import dcg, idcg

STRATEGIES = ("depth", "impact")


@dataclass
class PoolPair:
    qid: str
    docid: str
    best_rank: int
    runs: list
    impact: float | None = None


@dataclass
class Pool:
    pairs: list  # PoolPair, in judging order
    depth: int
    strategy: str
    budget: int | None
    unjudged: int  # unjudged pairs in the runs' top depth, before the budget
    runs: list = field(default_factory=list)
    impact_measure: str | None = None

    def __len__(self) -> int:
        return len(self.pairs)

    def header(self) -> list[str]:
        strategy = self.strategy if self.impact_measure is None else f"impact({self.impact_measure})"
        budget = "all" if self.budget is None else str(self.budget)
        cols = "qid docid priority best_rank runs" + (" impact" if self.impact_measure else "")
        return [f"# judged pool: depth={self.depth} strategy={strategy} budget={budget}: "
                f"{len(self.pairs)} of {self.unjudged} unjudged pairs; runs: {' '.join(self.runs)}",
                f"# {cols}   (priority 1 = judge first)"]

    def lines(self) -> list[str]:
        out = []
        for i, p in enumerate(self.pairs, 1):
            fields = [p.qid, p.docid, str(i), str(p.best_rank), ",".join(p.runs)]
            if p.impact is not None:
                fields.append(f"{p.impact:.6g}")
            out.append(" ".join(fields))
        return out

    def write(self, path) -> None:
        """Write the pool to ``path``, replacing it only once complete."""
        from .io.output import open_replacing

        with open_replacing(path) as fh:
            fh.write("\n".join(self.header() + self.lines()) + "\n")

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame({"qid": [p.qid for p in self.pairs], "docid": [p.docid for p in self.pairs],
                             "priority": np.arange(1, len(self.pairs) + 1),
                             "best_rank": [p.best_rank for p in self.pairs],
                             "runs": [",".join(p.runs) for p in self.pairs],
                             "impact": [p.impact for p in self.pairs]})


def pool(qrels, runs, depth: int = 10, *, budget: int | None = None, strategy: str = "depth",
         maxgrade: int | None = None, negative: str = "nonrelevant", ties: str = "trec",
         on_duplicate: str = "error") -> Pool:
    """The unjudged pairs in the runs' top ``depth``, ordered by ``strategy``, cut to ``budget``."""
    from .evaluation import _named_runs
    from .io import read_qrels

    if strategy not in STRATEGIES:
        raise ConventionError(f"unknown pooling strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    if depth < 1:
        raise ConventionError(f"--depth must be a positive integer, got {depth}")
    check_maxgrade(maxgrade)
    if budget is not None and budget < 0:
        raise ConventionError(f"--budget must be 0 or more, got {budget}")
    qrels = read_qrels(qrels, on_duplicate=on_duplicate)
    settings = Settings(ties=ties)
    aligned = {name: negative_as(align(qrels, run, settings), negative) for name, run in _named_runs(runs, on_duplicate)}
    found: dict = {}
    for name, a in aligned.items():
        top = a.ranked.top(depth)
        h = ~top.judged
        for qid, rank, docid in zip(a.qids[top.q[h]].tolist(), (top.pos[h] + 1).tolist(), a.docids(top.row[h])):
            p = found.get((qid, docid))
            if p is None:
                found[(qid, docid)] = PoolPair(qid, docid, rank, [name])
            else:
                p.best_rank = min(p.best_rank, rank)
                p.runs.append(name)
    pairs = list(found.values())
    impact_measure = None
    if strategy == "impact" and pairs:
        m = Measure.parse(f"nDCG@{depth}")
        if maxgrade is not None:
            m = replace(m, maxgrade=int(maxgrade))
        impact_measure = f"nDCG@{depth},maxgrade={max_grade(m, next(iter(aligned.values())))}"
        _score_impact(pairs, aligned, m, depth)
        pairs.sort(key=lambda p: (-p.impact, p.best_rank, -len(p.runs), p.qid, p.docid))
    else:
        pairs.sort(key=lambda p: (p.best_rank, -len(p.runs), p.qid, p.docid))
    total = len(pairs)
    if budget is not None:
        pairs = pairs[:budget]
    return Pool(pairs, depth, strategy, budget, total, list(aligned), impact_measure)


def _score_impact(pairs, aligned, measure, depth) -> None:
    deltas = np.zeros((len(pairs), len(aligned)))
    for j, (name, a) in enumerate(aligned.items()):
        M = max_grade(measure, a)
        g_top = float(measure.gain(np.array([float(M)]))[0])
        n = a.n_queries
        if n == 0:
            continue
        base = replace(measure, maxgrade=None)
        d = dcg(base, a.ranked, n)
        i0 = idcg(base, a, a.ranked)
        plus = fill(a, a.ranked, np.full(len(a.ranked.q), np.nan), np.arange(n), np.full(n, M))
        i1 = idcg(base, plus, plus.ranked)
        before = np.divide(d, i0, out=np.zeros(n), where=i0 > 0)
        qindex = {q: i for i, q in enumerate(a.qids.tolist())}
        top = a.ranked.top(depth)
        rank = dict(zip(zip(a.qids[top.q].tolist(), a.docids(top.row)), (top.pos + 1).tolist()))
        for i, p in enumerate(pairs):
            q = qindex.get(p.qid)
            if q is None:
                continue
            r = rank.get((p.qid, p.docid))
            w = 0.0 if r is None else float(measure.discount.divide(np.ones(1), np.array([float(r)]))[0])
            after = (d[q] + g_top * w) / i1[q] if i1[q] > 0 else 0.0
            deltas[i, j] = (after - before[q]) / n
    for i, p in enumerate(pairs):
        row = deltas[i]
        p.impact = float(np.abs(row).sum() + sum(abs(row[x] - row[y]) for x, y in combinations(range(len(row)), 2)))


def read_pool(path) -> list[tuple[str, str]]:
    """(qid, docid) pairs of a pool file: the first two fields of each non-``#`` line."""
    from .io.text import iter_lines, read_raw

    raw = read_raw(path)
    out = []
    for lineno, f in iter_lines(raw):
        if len(f) < 2:
            raise ParseError(raw.name, lineno, "a pool line needs at least qid and docid")
        out.append((f[0], f[1]))
    return out
