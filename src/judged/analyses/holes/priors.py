"""A run-based prior of hole grades: what the run's own judged documents say about its holes.

Method ``run-prior`` (the run-based prior with a pool-based one, after Fröbe, Gienapp,
Potthast & Hagen, "Bootstrapped nDCG Estimation in the Presence of Unjudged Documents",
ECIR 2023): a hole of run r for query q gets the grade distribution of r's judged
documents for q among its top ``window`` ranks, shrunk towards the query's judgments
(the pool's distribution for q; ``center='run'``: r's own over every query):

    P(grade = g) = (n_rq(g) + alpha * p_q(g)) / (n_rq + alpha),
    p_q(g) = (j_q(g) + 1/L) / (j_q + 1)        (L grade levels)

n_rq(g): r's judged documents of grade g for q in its top ``window``; j_q(g) the query's
judgments of grade g. Measured on robust03 (shift, the weaker half pooled): the query's
judgments as the centre 0.0237 MAE, the run's own 0.0431 (holes as zero 0.0357). The estimate then draws every hole's grade from it, as for the grade model
(:mod:`judged.analyses.holes.estimate`: the measure's mean over draws, the ideal recomputed).

It reads nothing but the run and the judgments, so it applies to a run unlike the ones a
grade model was calibrated on (a new kind of system scored on an old pool), where the
model's leave-one-run-out pseudo-holes -- judged documents one pooled run alone found --
are far more often relevant than the new run's holes. Its own bias: a run's judged
documents are those some pooled system found, more often relevant than the ones none did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .collection import HolePool, World, level_of

METHOD = "run-prior"
SOURCE = ("each hole's grade drawn from the distribution of the run's own judged documents for the query in its top "
          "{window}, shrunk to the {center}'s (alpha {alpha:g}): the run- and pool-based priors of Fröbe et al., "
          "ECIR 2023")
DEFAULT_WINDOW = 100  # ranks of the run whose judged documents make its prior
DEFAULT_ALPHA = 2.0  # pseudo-documents of the run's overall distribution in a query's


@dataclass
class RunPrior:
    """A grade source for :func:`judged.analyses.holes.drawn_scores.score_cases` (``Case.model``)."""

    window: int = DEFAULT_WINDOW
    alpha: float = DEFAULT_ALPHA
    center: str = "query"  # what a query's counts are shrunk to: the query's judgments (the pool's prior) or the run's
    _memo: dict = field(default_factory=dict, repr=False)

    method = METHOD

    def describe(self) -> dict:
        return {"method": METHOD, "window": self.window, "alpha": self.alpha,
                "center": self.center,
                "source": SOURCE.format(window=self.window, alpha=self.alpha,
                                        center="query's judgments" if self.center == "query" else "run's over every query")}

    def fit_without(self, unit: int) -> "RunPrior":
        """The same prior: a leave-out is read at scoring time (``minus``)."""
        return self

    def grade_probabilities(self, pool: HolePool, world: World, rows: np.ndarray, minus: np.ndarray) -> np.ndarray:
        """(rows, levels): each pool row's grade distribution as a hole of its run, read in
        ``world`` without the judgments its unit ``minus[i]`` alone contributed (-1: none)."""
        rows = np.asarray(rows, np.int64)
        minus = np.asarray(minus, np.int64)
        L = len(pool.levels)
        out = np.zeros((len(rows), L))
        if not len(rows):
            return out
        run, q = pool.run[rows], pool.qcode[rows]
        key = run.astype(np.int64) * (pool.n_units + 1) + (minus + 1)
        for k in np.unique(key).tolist():
            at = np.flatnonzero(key == k)
            r, u = k // (pool.n_units + 1), k % (pool.n_units + 1) - 1
            per_query, overall = self._counts(pool, world, int(r), int(u))
            n = per_query[q[at]]
            if self.center == "query":  # the query's judgments in the world (the pool's prior)
                jc = world.jcount[q[at]].astype(np.float64)
                prior = (jc + 1.0 / L) / (jc.sum(axis=1) + 1.0)[:, None]
            else:
                prior = ((overall + 1.0 / L) / (overall.sum() + 1.0))[None, :]
            out[at] = (n + self.alpha * prior) / (n.sum(axis=1) + self.alpha)[:, None]
        return out

    def _counts(self, pool: HolePool, world: World, r: int, u: int):
        """Run r's judged documents per (qrels query code, level) in its top ``window``, in
        ``world`` without unit u's own judgments; and their total per level."""
        memo = (id(world), r, u)  # the world is kept beside its counts: an id is reused once its world is gone
        if memo not in self._memo or self._memo[memo][0] is not world:
            a = pool.aligned[r]
            ranked = a.ranked
            grade = ranked.grade.copy()
            removed = world.removed if u < 0 else world.removed | ((pool.owner == u) & (pool.pid_level >= 0))
            m_run, m_pid, m_rrow = pool.matches
            mine = m_run == r
            grade[m_rrow[mine][removed[m_pid[mine]]]] = np.nan
            top = ranked.pos < self.window
            level = level_of(grade[top], pool.levels)
            judged = level >= 0
            codes = np.asarray(a.qid_codes, np.int64)[ranked.q[top][judged]]
            nq, L = pool.jcount.shape
            per_query = np.bincount(codes * L + level[judged], minlength=nq * L).reshape(nq, L).astype(np.float64)
            self._memo[memo] = (world, per_query, per_query.sum(axis=0))
        return self._memo[memo][1:]
