"""Pooling strategies that use a machine judge's labels, and the query sample that lets
prediction-powered inference estimate any measure (registered in :data:`judged.pool.STRATEGIES`).

* ``machine`` (needs ``--machine``): judge first where the machine says relevant: by the
  machine's grade, highest first; pairs it did not label come after those it calls
  relevant and before those it calls not relevant; then shallowest best rank, most runs.
* ``disagreement`` (needs ``--machine``): judge first where a person is most likely to
  disagree with the machine, weighted by how much the pair's rank matters. From the pairs
  both labelled, per machine grade g the expected error ``e(g) = E[|gain(human) - gain(g)|
  | machine says g]`` (linear gains: the grades), shrunk towards the mean error by
  :data:`PRIOR_LABELS` pseudo-labels; a pair's score is ``e(g) * w(r)`` with
  ``w`` statAP's weight at its best rank r (Aslam, Pavlu & Yilmaz 2006); pairs the machine
  did not label get the largest e. Labels go where the machine is least reliable, as in
  active inference (Zrnic & Candès, ICML 2024), here as a deterministic order.
* ``sample-queries`` (``--queries N``, ``--seed S``): a simple random sample of N of the
  queries that have holes, every hole of a drawn query in the pool: the design of
  :mod:`judged.ppi` for measures that are not linear in the labels (nDCG, AP, RR, ...).
  The file records it: one ``# stratum`` line (``unit=query``, the numbers of queries and
  pairs, inclusion probability N/Q), the drawn pairs, the others as ``#~`` lines.

``machine`` and ``disagreement`` choose pairs (inclusion probability 1): they order the
judging, they are not samples, and estimates need a random sample (``sample``,
``sample-queries``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import ConventionError
from .pooling.strategies import Selection, register_strategy
from .sampling import DesignUnit, SampleDesign, Stratum, ap_prior

QUERY_METHOD = ("simple random sampling without replacement of the queries that have holes in the runs' top depth; "
                "every hole of a drawn query judged (cluster sampling); inclusion probability n/N per query")


def _machine(ctx):
    from .machine import read_machine

    labels = ctx.options.get("machine")
    if labels is None:
        raise ConventionError("this strategy orders the pairs by a machine judge's labels: give --machine LABELS")
    return read_machine(labels)


def machine_grades(pairs, machine) -> np.ndarray:
    """The machine's grade of each pair (NaN: not labelled)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..core.data import as_numpy
    from .machine import pair_key

    if not pairs:
        return np.zeros(0)
    keys = pair_key(pa.array([p.qid for p in pairs], type=pa.string()),
                    pa.array([p.docid for p in pairs], type=pa.string()))
    m = machine.qrels
    at = as_numpy(pc.index_in(keys, value_set=pair_key(m.qid, m.docid)), null=-1)
    return np.where(at >= 0, m.grade[np.maximum(at, 0)], np.nan).astype(float)


def _cut(pairs, budget):
    return pairs if budget is None else pairs[:budget]


@register_strategy("machine", "judge first where the machine judge (--machine) says relevant, highest grade first",
                   "machine judge's grade, highest first (unlabelled between relevant and not); column machine: its "
                   "grade ('-': none); a deterministic order, not a sample")
def _by_machine(pairs, ctx):
    machine = _machine(ctx)
    g = machine_grades(pairs, machine)
    for p, grade in zip(pairs, g.tolist()):
        p.fields["machine"] = None if np.isnan(grade) else int(grade)
    # relevant by the machine (grade >= 1) first, highest first; then unlabelled; then grade <= 0
    key = np.where(np.isnan(g), 0.5, g)
    order = sorted(range(len(pairs)), key=lambda i: (-key[i], pairs[i].best_rank, -len(pairs[i].runs),
                                                     pairs[i].qid, pairs[i].docid))
    return Selection(_cut([pairs[i] for i in order], ctx.budget), label=f"machine({machine.source})",
                     columns=("machine",))


PRIOR_LABELS = 2  # pseudo-labels at the overlap's mean error added to every machine grade


def expected_error(qrels, machine, prior: float = PRIOR_LABELS) -> dict:
    """Machine grade -> E|human grade - machine grade| over the pairs both labelled, shrunk
    towards the overlap's mean error ``m`` by ``prior`` pseudo-labels: ``(sum_g |h - g| +
    prior m) / (n_g + prior)`` (additive smoothing, the Bayes estimate under a prior worth
    ``prior`` labels): a grade seen a few times without error does not get e = 0, which would
    leave all its pairs to the end of the pool."""
    import pyarrow.compute as pc

    from ..core.data import as_numpy
    from .machine import pair_key

    m = machine.qrels
    at = as_numpy(pc.index_in(pair_key(m.qid, m.docid), value_set=pair_key(qrels.qid, qrels.docid)), null=-1)
    both = at >= 0
    human, mach = qrels.grade[at[both]].astype(float), m.grade[both].astype(float)
    if not len(mach):
        return {}
    err = np.abs(human - mach)
    mean = float(err.mean())
    return {int(g): float((err[mach == g].sum() + prior * mean) / ((mach == g).sum() + prior)) for g in np.unique(mach)}


@register_strategy("disagreement", "judge first where people are most likely to disagree with the machine judge "
                                   "(--machine; its errors on the pairs both labelled), weighted by rank",
                   "score = E|human grade - machine grade| given the machine's grade (from the pairs both labelled, shrunk "
                   "to their mean error by 2 pseudo-labels) x "
                   "statAP's prior at the best rank (Aslam, Pavlu & Yilmaz 2006); labels where the machine is least "
                   "reliable, as in active inference (Zrnic & Candes, ICML 2024); a deterministic order, not a sample")
def _by_disagreement(pairs, ctx):
    machine = _machine(ctx)
    errors = expected_error(ctx.qrels, machine)
    if not errors:
        raise ConventionError("--strategy disagreement learns where the machine errs from the pairs both the people "
                              f"and the machine labelled: {ctx.qrels.source} and {machine.source} share none")
    g = machine_grades(pairs, machine)
    worst = max(errors.values())
    e = np.array([worst if np.isnan(x) else errors.get(int(x), worst) for x in g.tolist()])
    w = ap_prior([p.best_rank for p in pairs], ctx.depth) if pairs else np.zeros(0)
    score = e * w
    for p, grade, s in zip(pairs, g.tolist(), score.tolist()):
        p.fields["machine"] = None if np.isnan(grade) else int(grade)
        p.fields["disagreement"] = s
    order = sorted(range(len(pairs)), key=lambda i: (-score[i], pairs[i].best_rank, -len(pairs[i].runs),
                                                     pairs[i].qid, pairs[i].docid))
    label = "disagreement(" + ",".join(f"e{g}={v:.3g}" for g, v in sorted(errors.items())) + ")"
    return Selection(_cut([pairs[i] for i in order], ctx.budget), label=label, columns=("machine", "disagreement"))


@dataclass
class QueryStratum(Stratum):
    """The one stratum of a query sample: ``population`` and ``sampled`` count pairs (as
    every stratum line does); the unit is the query, drawn with probability n/N."""

    query_population: int = 0
    query_sampled: int = 0

    @property
    def inclusion(self) -> float:
        return self.query_sampled / self.query_population if self.query_population else 0.0

    def line(self) -> str:
        return (f"# stratum id={self.id} best_rank={self.ranks[0]}-{self.ranks[1]} queries={self.queries} "
                f"population={self.population} sampled={self.sampled} inclusion={self.inclusion:.10g} unit=query "
                f"query_population={self.query_population} query_sampled={self.query_sampled}")


@register_strategy("sample-queries", "a simple random sample of --queries N queries (seed --seed), every hole of a "
                                     "drawn query judged: prediction-powered estimates of any measure",
                   "simple random sample of queries (cluster sampling of the holes); inclusion = n/N per query; "
                   "estimates: judged.ppi (Angelopoulos et al., Science 2023)")
def _sample_queries(pairs, ctx):
    n = ctx.options.get("queries")
    if n is None or isinstance(n, bool) or int(n) != n or n < 2:
        raise ConventionError("--strategy sample-queries needs --queries N, at least 2 (queries to judge in full)")
    if ctx.budget is not None:
        raise ConventionError("--strategy sample-queries draws whole queries: give --queries N, not --budget")
    seed = 0 if ctx.seed is None else int(ctx.seed)
    if seed < 0:
        raise ConventionError(f"--seed must be a non-negative integer, got {seed}")
    frame = sorted({p.qid for p in pairs})
    n = min(int(n), len(frame))
    rng = np.random.default_rng(seed)
    drawn_q = [frame[i] for i in rng.choice(len(frame), size=n, replace=False)] if n else []
    chosen = set(drawn_q)
    rank_of = {q: i for i, q in enumerate(drawn_q)}  # judging order: the drawn order, query by query
    drawn = sorted((p for p in pairs if p.qid in chosen),
                   key=lambda p: (rank_of[p.qid], p.best_rank, -len(p.runs), p.docid))
    stratum = QueryStratum(1, (1, ctx.depth), f"{n}-of-{len(frame)}", len(pairs), len(drawn), len(frame), n)
    for p in drawn:
        p.strategy, p.stratum, p.inclusion = "sample-queries", "1", stratum.inclusion
    units = sorted((DesignUnit(p.qid, p.docid, p.best_rank, list(p.runs), 1, p.qid in chosen) for p in pairs),
                   key=lambda u: (u.qid, u.docid))
    design = SampleDesign({1: stratum}, units, seed, method=QUERY_METHOD)
    return Selection(drawn, design=design, meta={"seed": seed, "queries": f"{n}/{len(frame)}"})
