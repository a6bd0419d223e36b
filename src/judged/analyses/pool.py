"""Pooling: the unjudged (query, document) pairs in the runs' top k, in the order to judge them.

Strategies (:data:`STRATEGIES`, a registry: each takes the candidate pairs and returns
the pairs to judge, in order; ``--budget N`` bounds how many):

* ``depth``: shallowest best rank first (then: retrieved by more runs, qid, docid), the
  classic TREC depth-k pool walked rank by rank.
* ``impact``: the pairs whose label can move the scores and the pairwise orders most, in
  the spirit of Carterette, Allan & Sitaraman's minimal test collections (SIGIR 2006).
  For a pair p of query q, labelled with the top grade, each run r's mean nDCG@depth
  moves by delta_r(p) = [(DCG_r + g_max * w_r(p)) / IDCG'_q - DCG_r / IDCG_q] / |Q_r|
  (w_r(p) the run's discount at p's rank, 0 if not in its top depth; IDCG'_q the ideal
  with one more top-grade document). impact(p) = sum_r |delta_r| + sum_{r<s}
  |delta_r - delta_s|: what p can do to each score plus to each pairwise difference.
* ``sample``: a stratified random sample of ``--budget`` pairs with recorded inclusion
  probabilities (:mod:`judged.sampling`), for estimates by inference
  (:mod:`judged.inference`).
* the pooling policies of :mod:`judged.pooling.policies` (move-to-front, the bandits,
  Hedge): adaptive strategies that learn from the labels the qrels hold for the runs'
  top depth; the file holds the order they follow while no new label arrives (the
  judging app serves them label by label: ``judged judge init --order``). Their
  ``score`` column is the policy's value for the pair when it drew it.

Output: a :class:`~judged.analyses.pooling.poolfile.Pool`, written and read back as
:mod:`judged.analyses.pooling.poolfile` describes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core.conventions import Settings, validate
from ..core.data import take_strings
from ..core.errors import ConventionError
from .pooling.replay_kernels import pair_gaps
from ..core.measures import Measure
from ..core.measures.bounds import check_maxgrade, fill, max_grade
from ..core.measures.dcg import dcg, idcg
from ..core.progress import progress
from .holes import negative_as
from .pooling.poolfile import Pool, PoolPair
from .pooling.strategies import STRATEGIES, PoolContext, Selection, register_strategy
from .pooling.candidates import candidates_from_aligned
from .pooling.policies import POLICIES, make_policy
from .sampling import draw

DEFAULT_STRATEGY = "depth"  # without a budget: the whole depth-k pool, rank by rank
# with a budget: depth too, by the rule of judged.analyses.pooling.choice (mm from 2026-12-01, chosen on
# two collections, needed 37.5% more judgments than depth pooling on the next one)
BUDGET_STRATEGY = "depth"
BUDGET_STRATEGY_WHY = ("no other strategy recovered the full-qrels nDCG@10 ranking with fewer judgments than depth "
                       "pooling at every tolerance (0.005, 0.01, 0.02) on robust03, TREC DL 2019 and CLEF TAR 2017, "
                       "leave-one-run-out and from scratch (docs/pooling.md)")
HOW_TO_CHOOSE = ("judged meta pooling PAST_QRELS PAST_RUN... --budget N replays every strategy on judgments you "
                 "already have and recommends the one that beat depth pooling there at every tolerance (else depth); "
                 "give it to judged pool with --strategy")


def default_strategy(budget: int | None) -> str:
    """The strategy ``judged pool`` uses when none is named: :data:`BUDGET_STRATEGY` with a
    budget (why: :data:`BUDGET_STRATEGY_WHY`; how to choose another: :data:`HOW_TO_CHOOSE`),
    :data:`DEFAULT_STRATEGY` without one (every unjudged pair of the top depth)."""
    return DEFAULT_STRATEGY if budget is None else BUDGET_STRATEGY


def pool(qrels, runs, depth: int = 10, *, budget: int | None = None, strategy: str | None = None,
         maxgrade: int | None = None, negative: str = "nonrelevant", ties: str = "trec",
         on_duplicate: str = "error", seed: int | None = None, settings: Settings | None = None, **options) -> Pool:
    """The unjudged pairs in the runs' top ``depth``, chosen and ordered by ``strategy``
    (a name in :data:`STRATEGIES`; default :func:`default_strategy`), at most ``budget``
    of them (a run sharing no query id with the qrels is refused: nothing to pool). ``seed``
    (random strategies; default 0) and ``options`` go to the strategy (``sample``:
    ``strata``, the best-rank bin starts)."""
    from ..core.evaluation import aligned_runs
    from ..core.io import read_qrels

    validate(negative=negative)
    settings = Settings.of(settings, pool, ties=ties, on_duplicate=on_duplicate)
    if strategy is None:
        strategy = default_strategy(budget)
    if strategy not in STRATEGIES:
        raise ConventionError(f"unknown pooling strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    if depth < 1:
        raise ConventionError(f"--depth must be a positive integer, got {depth}")
    check_maxgrade(maxgrade)
    if budget is not None and budget < 0:
        raise ConventionError(f"--budget must be 0 or more, got {budget}")
    qrels = read_qrels(qrels, on_duplicate=settings.on_duplicate)
    # every strategy reads the runs' top depth and the docids there, nothing deeper; no run's sha256 is written
    aligned = {name: negative_as(a, negative) for name, a in
               aligned_runs(qrels, runs, settings, docids_only=True, keep_ranks=depth, digest=False).items()}
    with progress(None, f"pooling: the unjudged pairs of the top {depth}, strategy {strategy}"):
        pairs = candidates(aligned, depth)
        ctx = PoolContext(qrels, aligned, depth, budget, maxgrade, seed, dict(options))
        chosen = STRATEGIES[strategy].select(pairs, ctx)
    for p in chosen.pairs:
        p.strategy = p.strategy or strategy
    return Pool(chosen.pairs, depth, strategy, budget, len(pairs), list(aligned), chosen.label,
                tuple(chosen.columns), chosen.design, dict(chosen.meta), STRATEGIES[strategy].source)


def candidates(aligned: dict, depth: int) -> list:
    """Every unjudged pair in the runs' top ``depth``, once, with its best rank and the
    runs that retrieved it (in the order met)."""
    found: dict = {}
    for name, a in aligned.items():
        top = a.ranked.top(depth)
        h = ~top.judged
        docids = take_strings(a.run.docid, top.row[h]).to_pylist()  # Arrow's take imports pyarrow.compute
        for qid, rank, docid in zip(a.qids[top.q[h]].tolist(), (top.pos[h] + 1).tolist(), docids):
            p = found.get((qid, docid))
            if p is None:
                found[(qid, docid)] = PoolPair(qid, docid, rank, [name], ranks=[rank])
            else:
                p.best_rank = min(p.best_rank, rank)
                p.runs.append(name)
                p.ranks.append(rank)
    return list(found.values())


def _cut(pairs: list, budget: int | None) -> list:
    return pairs if budget is None else pairs[:budget]


def _policy_strategy(name: str):
    """``select`` for a policy of :mod:`judged.pooling.policies`: it learns from the labels
    the qrels hold for the runs' top depth and proposes the unjudged pairs in order."""
    info = POLICIES[name]

    def select(pairs, ctx):
        cands = candidates_from_aligned(ctx.aligned, ctx.depth)
        seed = 0 if ctx.seed is None else ctx.seed
        top = ctx.maxgrade if ctx.maxgrade is not None else (int(max(ctx.qrels.grade.max(), 1))
                                                            if len(ctx.qrels.grade) else 1)
        policy = make_policy(name, cands, seed=seed, maxgrade=top).start()
        by_key = {(p.qid, p.docid): p for p in pairs}
        chosen = []
        for pid, score in policy.propose(ctx.budget):
            p = by_key[(cands.qids[int(cands.pair_query[pid])], cands.docids[pid])]
            if info.score != "-":
                p.fields["score"] = None if score != score else float(score)
            p.inclusion = None if info.randomised else 1.0
            chosen.append(p)
        return Selection(chosen, columns=() if info.score == "-" else ("score",),
                         meta={"seed": seed} if info.randomised else {})

    return select


def _register_policies(names) -> None:
    for name in names:
        info = POLICIES[name]
        source = info.source + ("" if info.score == "-" else f"; score: {info.score}")
        if info.adaptive:
            source += ("; adaptive: it learnt from the qrels' labels in the runs' top depth, and the order assumes "
                       f"no new label arrives (serve it label by label: judged judge init --order {name})")
        register_strategy(name, info.source, source)(_policy_strategy(name))


_register_policies(["depth"])


def _depth(pairs, ctx):
    """The depth policy's proposals (:func:`judged.pooling.policies.depth_order`: shallowest
    best rank first, then retrieved by more runs, then qid, then docid; every unjudged pair,
    at most the budget) sorted here in one call: the policy builds its candidates from every
    run's top depth and walks them one pair at a time (0.3 of pool's 0.5 CPU-s beyond
    reading on 2 x 1M-line runs). The same pairs in the same order (tests/analyses/pooling)."""
    chosen = _cut(sorted(pairs, key=lambda p: (p.best_rank, -len(p.runs), p.qid, p.docid)), ctx.budget)
    for p in chosen:
        p.inclusion = 1.0
    return Selection(chosen)


STRATEGIES["depth"] = replace(STRATEGIES["depth"], select=_depth)


@register_strategy("impact", "the pairs whose labels can move the runs' nDCG@DEPTH and their differences most "
                             "(after Carterette et al.'s minimal test collections)",
                   "minimal test collections in the spirit of Carterette, Allan & Sitaraman (SIGIR 2006); impact: "
                   "sum of |change| of every run's mean nDCG@depth and of every pairwise difference, label at the top "
                   "grade")
def _impact(pairs, ctx):
    if not pairs:
        return Selection([], columns=("impact",))
    m = Measure.parse(f"nDCG@{ctx.depth}")
    if ctx.maxgrade is not None:
        m = replace(m, maxgrade=int(ctx.maxgrade))
    label = f"impact(nDCG@{ctx.depth},maxgrade={max_grade(m, next(iter(ctx.aligned.values())))})"
    score_impact(pairs, ctx.aligned, m, ctx.depth)
    pairs.sort(key=lambda p: (-p.impact, p.best_rank, -len(p.runs), p.qid, p.docid))
    return Selection(_cut(pairs, ctx.budget), label=label, columns=("impact",))


def _adaptive_names():
    return [n for n, info in POLICIES.items() if info.adaptive]


_register_policies(_adaptive_names())


@register_strategy("sample", "a stratified random sample of --budget pairs (seed --seed), inclusion "
                             "probabilities recorded for estimates by inference (judged infer)")
def _sample(pairs, ctx):
    seed = 0 if ctx.seed is None else ctx.seed
    drawn, design = draw(pairs, ctx.budget, seed, ctx.depth, ctx.options.get("strata"))
    return Selection(drawn, design=design, meta={"seed": seed})


def score_impact(pairs, aligned, measure, depth) -> None:
    """Each pair's ``impact`` (the module's formula), by :func:`impact_scores`."""
    impact = impact_scores([p.qid for p in pairs], [p.docid for p in pairs], aligned, measure, depth)
    for p, v in zip(pairs, impact.tolist()):
        p.impact = v


def impact_scores(qids: list, docids: list, aligned, measure, depth, memo: dict | None = None,
                  ranks: dict | None = None) -> np.ndarray:
    """impact of the pairs (``qids[i]``, ``docids[i]``): sum_r |delta_r| + sum_{r<s}
    |delta_r - delta_s| (the module's formula), whole columns at a time; the second sum
    adds the run pairs in order, one at a time, as a loop over them would (``pair_gaps``,
    :mod:`judged.analyses.pooling.replay_kernels`). ``memo``: what
    each run contributes whatever the pairs (its scores, ideals), kept by run name for
    later calls with the same runs. ``ranks``: by run name, each pair's query index in the
    run (-1: none) and its rank in the run's top ``depth`` (0: not there), when the caller
    has them (else looked up by qid and docid)."""
    P = len(qids)
    columns = np.zeros((len(aligned), P))  # each run's deltas, contiguous
    memo = {} if memo is None else memo
    table = np.zeros(1)
    for j, (name, a) in enumerate(aligned.items()):
        if a.n_queries == 0:
            continue
        if name not in memo:
            memo[name] = _impact_run(a, measure, depth)
        n, g_top, d, i1, before = memo[name]
        if ranks is not None and name in ranks:
            q, r = ranks[name]
        else:
            qindex, rank = _impact_lookups(a, depth)
            q = np.fromiter((qindex.get(x, -1) for x in qids), np.int64, P)
            r = np.fromiter((rank.get(key, 0) for key in zip(qids, docids)), np.int64, P)
        # the discount at each rank a pair has (0 for rank 0: not there), elementwise as one rank at a
        # time: one table of the ranks up to the deepest yet, for every run
        deepest = int(r.max()) if P else 0
        if deepest >= len(table):
            table = np.zeros(deepest + 1)
            table[1:] = measure.discount.divide(np.ones(deepest), np.arange(1, deepest + 1, dtype=np.float64))
        w = table[r]
        ok = slice(None) if (q >= 0).all() else np.flatnonzero(q >= 0)
        qq = q[ok]
        after = np.zeros(len(qq))
        np.divide(d[qq] + g_top * w[ok], i1[qq], out=after, where=i1[qq] > 0)
        columns[j, ok] = (after - before[qq]) / n
    deltas = np.ascontiguousarray(columns.T)  # pairs x runs
    return np.abs(deltas).sum(axis=1) + pair_gaps(deltas)  # row sums of the C-ordered deltas, as numpy sums a row


def _impact_run(a, measure, depth) -> tuple:
    """One run's part of the impact: (queries, top gain, DCG, ideal with one more document of
    the top grade, nDCG)."""
    n = a.n_queries
    M = max_grade(measure, a)
    g_top = float(measure.gain(np.array([float(M)]))[0])
    base = replace(measure, maxgrade=None)
    d = dcg(base, a.ranked, n)
    i0 = idcg(base, a, a.ranked)
    plus = fill(a, a.ranked, np.full(len(a.ranked.q), np.nan), np.arange(n), np.full(n, M))
    i1 = idcg(base, plus, plus.ranked)
    before = np.divide(d, i0, out=np.zeros(n), where=i0 > 0)
    return n, g_top, d, i1, before


def _impact_lookups(a, depth) -> tuple:
    """A run's query index by qid and rank by (qid, docid) in its top ``depth``."""
    qindex = {q: i for i, q in enumerate(a.qids.tolist())}
    top = a.ranked.top(depth)
    rank = dict(zip(zip(a.qids[top.q].tolist(), a.docids(top.row)), (top.pos + 1).tolist()))
    return qindex, rank


from . import machine_pool  # noqa: E402,F401  registers machine, disagreement and sample-queries (after ours)
