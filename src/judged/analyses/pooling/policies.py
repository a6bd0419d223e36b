"""Pooling policies: which pair to judge next, given the labels so far.

A policy sees the :class:`~judged.analyses.pooling.candidates.Candidates` (every pair in the runs'
top depth, where each run ranks it, the labels already known) and the labels as they
arrive. ``select()`` proposes the next pair (never one labelled or already handed out);
``observe(pair, grade)`` takes a label. The same object drives an offline replay
(``judged meta pooling``), a pool file (``judged pool``: the labels known from the qrels,
then the order the policy follows while no new label arrives) and the judging app's
``/api/next`` (the campaign's labels so far).

A pair is *relevant* when its grade is at least ``rel`` (default 1). Static strategies
(``depth``, ``impact``) ignore labels; adaptive ones learn from them:

* run-based strategies (``mtf``, the bandits, ``hedge``) work query by query, the
  queries served in turn: the next judgment goes to the query with the fewest labels so
  far (known, handed out or received), ties by query order, so every query gets an equal
  share of the budget until its candidates run out. Inside a query each run is walked
  down its list; a document already labelled when a run reaches it counts as that run's
  outcome without costing a judgment (every pair is judged once);
* ``bounds`` ranks every hole of every query by what its label is expected to change.
"""

from __future__ import annotations

import heapq

import numpy as np

from ...core.errors import ConventionError
from ...core.kernels import packed_key
from ...core.measures.bounds import ndcg_extreme
from .candidates import Candidates
from .replay_kernels import (best_hole, bounds_hi, bounds_lo, bounds_picks, hedge_picks, ideal_dcg, multisets,
                             ts_picks, turn_picks)


class PoolingPolicy:
    """Base class: labels, pairs handed out and not yet labelled (pending), proposals."""

    name = ""
    adaptive = True
    score_meaning = ""

    def __init__(self, candidates: Candidates, *, rel: int = 1, seed: int = 0):
        self.c = candidates
        self.rel = rel
        self.seed = seed
        self.label = np.full(candidates.n_pairs, np.nan)
        self.pending = np.zeros(candidates.n_pairs, bool)
        self.last_score = float("nan")

    # -- labels ----------------------------------------------------------------------
    def start(self) -> "PoolingPolicy":
        """Take the labels already known (the candidates' ``known``), in pair order."""
        for pid in np.flatnonzero(~np.isnan(self.c.known)).tolist():
            self.observe(pid, float(self.c.known[pid]))
        return self

    def labelled(self, pid: int) -> bool:
        return self.label[pid] == self.label[pid]

    def free(self, pid: int) -> bool:
        """Neither labelled nor handed out."""
        return not self.pending[pid] and self.label[pid] != self.label[pid]

    def observe(self, pid: int, grade: float) -> None:
        """A label arrives (a known one, or one for a pair handed out). A second label for
        the same pair replaces the first in what the policy sees next, not in its past."""
        first = not self.labelled(pid)
        self.label[pid] = grade
        was_pending = bool(self.pending[pid])
        self.pending[pid] = False
        if first:
            self._observed(pid, grade, was_pending)

    def _observed(self, pid: int, grade: float, was_pending: bool) -> None:
        pass

    def relevant(self, grade: float) -> bool:
        return grade >= self.rel

    # -- proposals -------------------------------------------------------------------
    def select(self) -> int | None:
        """The next pair to judge (handed out: pending until its label arrives), or None."""
        pid = self._select()
        if pid is not None:
            self.pending[pid] = True
            self._taken(pid)
        return pid

    def _select(self) -> int | None:
        raise NotImplementedError

    def _taken(self, pid: int) -> None:
        pass

    def replay(self, truth: np.ndarray, limit: int | None = None) -> np.ndarray:
        """The pairs in the order the policy has them judged when each label arrives as soon
        as its pair is handed out, ``truth[pair]`` (the offline replay of ``judged meta
        pooling``), at most ``limit`` of them: ``select()`` then ``observe()``, pair after
        pair. Subclasses give the same order faster; the policy is spent afterwards."""
        out = []
        while limit is None or len(out) < limit:
            pid = self.select()
            if pid is None:
                break
            self.observe(pid, float(truth[pid]))
            out.append(pid)
        return np.asarray(out, np.int64)

    def propose(self, n: int | None = None) -> list[tuple[int, float]]:
        """Up to ``n`` (all, if None) next pairs and the policy's score for each, while no
        label arrives."""
        out = []
        while n is None or len(out) < n:
            pid = self.select()
            if pid is None:
                break
            out.append((pid, self.last_score))
        return out


# ---------------------------------------------------------------------------------------
# static orders


class StaticOrder(PoolingPolicy):
    """A fixed order computed once (labels only remove pairs from it)."""

    adaptive = False

    def __init__(self, candidates, order, scores=None, **kw):
        super().__init__(candidates, **kw)
        self.order = np.asarray(order, np.int64)
        self.scores = None if scores is None else np.asarray(scores, np.float64)
        self._at = 0

    def replay(self, truth, limit=None):
        """The order's pairs not yet labelled nor handed out, each at its first place."""
        if self.pending.any():
            return super().replay(truth, limit)
        rest = self.order[self._at:]
        rest = rest[np.isnan(self.label[rest])]
        first = np.unique(rest, return_index=True)[1]
        if len(first) < len(rest):
            rest = rest[np.sort(first)]
        rest = rest[:limit] if limit is not None else rest
        self._at = len(self.order)
        self.label[rest] = truth[rest]
        return rest.astype(np.int64)

    def _select(self):
        while self._at < len(self.order):
            pid = int(self.order[self._at])
            self._at += 1
            if self.free(pid):
                self.last_score = float("nan") if self.scores is None else float(self.scores[pid])
                return pid
        return None


def query_views(flat: np.ndarray, offsets, rows: int | None = None) -> list:
    """Each query's part of a layout cut by ``offsets`` (query after query): views, not
    copies; with ``rows``, its part is ``rows`` x its length, row-major (runs x pairs)."""
    cut = np.asarray(offsets, np.int64).tolist()
    if rows is None:
        return [flat[a:b] for a, b in zip(cut, cut[1:])]
    return [flat[rows * a:rows * b].reshape(rows, b - a) for a, b in zip(cut, cut[1:])]


def depth_order(c: Candidates) -> np.ndarray:
    """Shallowest best rank first, then retrieved by more runs, then qid, then docid."""
    if not c.n_pairs:
        return np.zeros(0, np.int64)
    keys = depth_keys(c)
    return (np.argsort(keys[0], kind="stable") if len(keys) == 1 else np.lexsort(keys)).astype(np.int64)


def depth_keys(c: Candidates) -> tuple:
    """The keys of the depth order, for np.lexsort (last key first): best rank, fewer runs,
    qid, docid (the strings by their rank in Python's order; a pair is one docid of one
    query, so no two pairs tie). All small non-negative integers: as one int64 key when
    it fits in 62 bits (its sort is theirs), else the four."""
    off, _, _ = c.pair_runs()
    qrank, drank = c.string_order()
    keys = (c.best_rank(), c.n_runs - np.diff(off), qrank[c.pair_query], drank)  # ascending, the first decides
    key = packed_key(*(np.asarray(k, np.int64) for k in keys))
    return keys[::-1] if key is None else (key,)


class Depth(StaticOrder):
    name = "depth"
    score_meaning = "-"

    def __init__(self, candidates, **kw):
        super().__init__(candidates, depth_order(candidates), **kw)


# ---------------------------------------------------------------------------------------
# run-based, query by query


class QueryTurns(PoolingPolicy):
    """Queries served in turn (fewest labels first, then query order); each query's own
    choice is ``_select_in(q)``. Runs are walked with ``_head(q, r)``."""

    def __init__(self, candidates, **kw):
        super().__init__(candidates, **kw)
        c = candidates
        self.spent = np.zeros(c.n_queries, np.int64)
        self.ptr = np.zeros((c.n_queries, c.n_runs), np.int64)  # per query and run: where its walk stands
        self.pulled_by = {}  # pid -> run that drew it
        self._heap = []
        self._done = np.zeros(c.n_queries, bool)
        self._head_cache = [None] * c.n_queries
        self._started = False

    def start(self):
        super().start()
        self._heap = list(zip(self.spent.tolist(), range(self.c.n_queries)))
        heapq.heapify(self._heap)
        self._started = True
        return self

    def _observed(self, pid, grade, was_pending):
        q = int(self.c.pair_query[pid])
        if not was_pending:
            self.spent[q] += 1
            if self._started:
                heapq.heappush(self._heap, (int(self.spent[q]), q))
        r = self.pulled_by.pop(pid, None)
        if r is not None:
            self._outcome(q, r, self.relevant(grade))

    def _taken(self, pid):
        q = int(self.c.pair_query[pid])
        self.spent[q] += 1
        heapq.heappush(self._heap, (int(self.spent[q]), q))

    def _head(self, q: int, r: int) -> int:
        """Run r's next free pair in query q (-1: none left); labelled pairs passed on the
        way count as r's outcomes, pairs handed out are passed over."""
        lst = self.c.run_lists[q][r]
        p = int(self.ptr[q][r])
        while p < len(lst):
            pid = int(lst[p])
            if self.labelled(pid):
                self._outcome(q, r, self.relevant(self.label[pid]))
            elif not self.pending[pid]:
                self.ptr[q][r] = p
                return pid
            p += 1
        self.ptr[q][r] = p
        return -1

    def _heads(self, q: int) -> np.ndarray:
        """Every run's next free pair in query q (-1: none left); only the runs whose
        cached head was labelled or handed out meanwhile walk on."""
        heads = self._head_cache[q]
        if heads is None:
            heads = self._head_cache[q] = np.array([self._head(q, r) for r in range(self.c.n_runs)], np.int64)
            return heads
        ok = heads >= 0
        stale = np.zeros(len(heads), bool)
        stale[ok] = ~(np.isnan(self.label[heads[ok]]) & ~self.pending[heads[ok]])
        for r in np.flatnonzero(stale).tolist():
            heads[r] = self._head(q, r)
        return heads

    def _draw(self, q: int, r: int, pid: int) -> int:
        self.ptr[q][r] += 1
        self.pulled_by[pid] = r
        if self._head_cache[q] is not None:
            self._head_cache[q][r] = self._head(q, r)
        return pid

    def _select(self):
        if not self._started:
            self.start()
        while self._heap:
            s, q = self._heap[0]
            if self._done[q] or s != self.spent[q]:
                heapq.heappop(self._heap)
                continue
            pid = self._select_in(q)
            if pid is None:
                self._done[q] = True
                heapq.heappop(self._heap)
                continue
            heapq.heappop(self._heap)
            return pid
        return None

    def _select_in(self, q: int) -> int | None:
        raise NotImplementedError

    def _outcome(self, q: int, r: int, relevant: bool) -> None:
        pass

    def _fresh(self) -> bool:
        """Started and nothing drawn yet (no run walked, nothing handed out)."""
        return not self.pulled_by and not self.pending.any() and all(h is None for h in self._head_cache)

    def _turn_rule(self) -> tuple[str, float] | None:
        """(rule, discount) of :func:`judged.analyses.pooling.replay_kernels.turn_picks` when it draws
        as this policy does (None: it does not)."""
        return None

    def _draws(self, truth) -> tuple[np.ndarray, np.ndarray] | None:
        """(picks, counts): each query's draws in order, stored from its first pair, by a
        kernel (None: none draws as this policy does)."""
        rule = self._turn_rule()
        if rule is None:
            return None
        list_offsets, lists = self.c.list_csr()
        return turn_picks(self.c.query_offsets, list_offsets, lists, self.label, truth, self.rel, *rule)

    def replay(self, truth, limit=None):
        """Each query's draws by the compiled kernel (the queries share no state), then the
        queries' turns: the k-th draw of query q comes at turn (labels q had at the start)
        + k, the turns in order, queries by index inside a turn."""
        if not self._started:
            self.start()
        drawn = self._draws(truth) if self._fresh() and not np.isnan(truth).any() else None
        if drawn is None:
            return super().replay(truth, limit)
        picks, counts = drawn
        c = self.c
        q = np.repeat(np.arange(c.n_queries), counts)
        k = np.arange(len(q)) - np.repeat(np.cumsum(counts) - counts, counts)
        order = picks[c.query_offsets[q] + k][np.lexsort((q, self.spent[q] + k))]
        order = order[:limit] if limit is not None else order
        self.label[order] = truth[order]
        self._done[:] = True
        return order


class MoveToFront(QueryTurns):
    """Move-to-front pooling (Cormack, Palmer & Clarke, SIGIR 1998): per query every run
    has a priority, all equal at first; the next document comes from the run of highest
    priority (ties: the runs' order), and that run keeps being drawn from while its
    documents are relevant; a non-relevant one lowers its priority by one."""

    name = "mtf"
    score_meaning = "priority of the run drawn from (0 = never failed, -n = n non-relevant)"

    def __init__(self, candidates, **kw):
        super().__init__(candidates, **kw)
        self.priority = np.zeros((candidates.n_queries, candidates.n_runs), np.int64)

    def _outcome(self, q, r, relevant):
        if not relevant:
            self.priority[q, r] -= 1

    def _turn_rule(self):
        return "mtf", 1.0

    def _select_in(self, q):
        heads = self._heads(q)
        live = np.flatnonzero(heads >= 0)
        if not len(live):
            return None
        arm = int(live[np.argmax(self.priority[q, live])])  # first of the highest: the runs' order
        self.last_score = float(self.priority[q, arm])
        return self._draw(q, arm, int(heads[arm]))


class BayesianBandit(QueryTurns):
    """Runs as arms of a Bernoulli bandit per query (Losada, Parapar & Barreiro, SAC 2016;
    IP&M 2017): drawing from a run judges its next unjudged document, the reward is its
    relevance. Each run's relevance rate has a Beta(1 + a, 1 + b) posterior, a and b its
    relevant and non-relevant outcomes. ``rule='mm'``: the run of highest posterior mean
    (ties: the runs' order); ``rule='ts'``: Thompson sampling, the highest draw from the
    posteriors (seeded). ``discount`` < 1 makes the bandit non-stationary (the -NS
    variants): a run's evidence is multiplied by ``discount`` before each new outcome of
    that run is added, so its recent (deeper) documents weigh more, as a run's
    relevance rate falls with depth."""

    score_meaning = "posterior mean (mm) or posterior draw (ts) of the run drawn from"

    def __init__(self, candidates, rule: str = "mm", discount: float = 1.0, **kw):
        super().__init__(candidates, **kw)
        if rule not in ("mm", "ts"):
            raise ConventionError(f"unknown bandit rule {rule!r} (mm or ts)")
        if not 0.0 < discount <= 1.0:
            raise ConventionError(f"the bandit's discount must lie in (0, 1], got {discount}")
        self.rule, self.discount = rule, float(discount)
        self.a = np.zeros((candidates.n_queries, candidates.n_runs))
        self.b = np.zeros((candidates.n_queries, candidates.n_runs))
        self.rng = np.random.default_rng(self.seed)

    def _turn_rule(self):
        return ("mm", self.discount) if self.rule == "mm" else None

    def _outcome(self, q, r, relevant):
        self.a[q, r] = self.discount * self.a[q, r] + (1.0 if relevant else 0.0)
        self.b[q, r] = self.discount * self.b[q, r] + (0.0 if relevant else 1.0)

    def replay(self, truth, limit=None):
        """MM by the compiled kernel; Thompson sampling by
        :func:`judged.analyses.pooling.replay_kernels.ts_picks` (a turn of every query at a time, the
        generator's stream as query after query), from the policy's own generator."""
        if self.rule != "ts":
            return super().replay(truth, limit)
        if not self._started:
            self.start()
        if not self._fresh() or np.isnan(truth).any():
            return super().replay(truth, limit)
        c = self.c
        offsets, lists = c.list_csr()
        order, label, a, b, state = ts_picks(offsets, lists, self.label, np.asarray(truth, np.float64),
                                             self.a.reshape(-1), self.b.reshape(-1), self.spent, self.rel,
                                             self.discount, c.n_runs, self.rng.bit_generator.state,
                                             -1 if limit is None else int(limit))
        self.label[:] = label
        self.a[:], self.b[:] = a.reshape(self.a.shape), b.reshape(self.b.shape)
        self.rng.bit_generator.state = state
        return order

    def _select_in(self, q):
        heads = self._heads(q)
        arms = np.flatnonzero(heads >= 0)
        if not len(arms):
            return None
        alpha, beta = 1.0 + self.a[q, arms], 1.0 + self.b[q, arms]
        value = alpha / (alpha + beta) if self.rule == "mm" else self.rng.beta(alpha, beta)
        k = int(np.argmax(value))
        self.last_score = float(value[k])
        return self._draw(q, int(arms[k]), int(heads[arms[k]]))


class Hedge(QueryTurns):
    """Hedge (Aslam, Pavlu & Savell, CIKM 2003; Freund & Schapire's Hedge(beta), 1997):
    per query every run is an expert with weight w_r (1 at first). A document at rank i
    of a run of depth N is worth v = (H_N - H_{i-1}) / H_N to it (H the harmonic numbers:
    1 at rank 1, falling like log(N/i); 0 if the run does not have it); the next
    document is the unjudged one of highest mixture value sum_r w_r v_r / sum_r w_r
    (ties: best rank, then candidate order). Its label costs each run the loss
    (1 - v_r)/2 if relevant, (1 + v_r)/2 if not, and w_r <- w_r * beta^loss."""

    name = "hedge"
    score_meaning = "mixture value of the document (0..1)"

    def __init__(self, candidates, beta: float = 0.1, **kw):
        super().__init__(candidates, **kw)
        if not 0.0 < beta < 1.0:
            raise ConventionError(f"Hedge's beta must lie in (0, 1), got {beta}")
        self.beta = float(beta)
        c = candidates
        H = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, c.depth + 1))))
        # every query's runs x pairs values, query after query, row-major (the replay kernel's layout)
        R = c.n_runs
        _, _, rank, place = c.pair_run_cells()
        flat = np.zeros(R * c.n_pairs)
        flat[place] = (H[c.depth] - H[rank - 1]) / H[c.depth]
        # a label's factor w_r <- w_r * beta^loss per run and pair, relevant or not (computed once, so the
        # replay's kernel multiplies by the same bits)
        self._flat = (flat, self.beta ** ((1.0 - flat) / 2.0), self.beta ** ((1.0 + flat) / 2.0))
        self.w = np.ones((c.n_queries, c.n_runs))
        self._queries = None  # per query: views of the values and factors, open pairs (a whole replay reads none)

    def _per_query(self) -> tuple:
        """(values, factors, open) of every query: runs x pairs views of the flat layout, and
        which of its pairs are still open; made on first use (label by label)."""
        if self._queries is None:
            c, R = self.c, self.c.n_runs
            flat, rel, non = self._flat
            self._queries = (query_views(flat, c.query_offsets, R),
                             list(zip(query_views(rel, c.query_offsets, R), query_views(non, c.query_offsets, R))),
                             [np.ones(n, bool) for n in np.diff(c.query_offsets).tolist()])
        return self._queries

    @property
    def values(self) -> list:
        """Per query: its runs x pairs values."""
        return self._per_query()[0]

    def _observed(self, pid, grade, was_pending):
        super()._observed(pid, grade, was_pending)
        _, factors, open_ = self._per_query()
        q = int(self.c.pair_query[pid])
        j = pid - int(self.c.query_offsets[q])
        open_[q][j] = False
        w = self.w[q] * factors[q][0 if self.relevant(grade) else 1][:, j]
        self.w[q] = w / w.max()  # rescaled: only the ratios matter, and they must not underflow

    def _taken(self, pid):
        super()._taken(pid)
        q = int(self.c.pair_query[pid])
        self._per_query()[2][q][pid - int(self.c.query_offsets[q])] = False

    def _draws(self, truth):
        """Each query's draws by :func:`judged.analyses.pooling.replay_kernels.hedge_picks` (from no label)."""
        if not np.isnan(self.label).all() or not self.c.n_runs:
            return None
        values, factor_rel, factor_non = self._flat
        return hedge_picks(self.c.query_offsets, values, factor_rel, factor_non, truth, self.rel, self.c.n_runs)

    def _select_in(self, q):
        values, _, open_ = self._per_query()
        open_ = open_[q]
        if not open_.any():
            return None
        w = self.w[q]
        mix = (w[:, None] * values[q]).sum(axis=0) / w.sum()  # runs in turn, as the replay's kernel sums
        mix = np.where(open_, mix, -1.0)
        j = int(np.argmax(mix))  # first of the maximal: candidate order (best rank first)
        self.last_score = float(mix[j])
        return int(self.c.query_offsets[q]) + j


# ---------------------------------------------------------------------------------------
# judged's own: the exact bounds


class Bounds(PoolingPolicy):
    """Judge first the hole whose label can move the still undecided orders of the runs
    the most, weighted by how likely it is relevant (judged's own strategy).

    Per query every run's nDCG@k has exact bounds over the grades of the unlabelled
    candidates in any run's top k (its own move its DCG and the ideal, the others' only
    the ideal; :func:`judged.core.measures.bounds.ndcg_extreme`, the ideal recomputed), and so does its
    mean over the queries; two runs are *undecided* while their intervals of the mean
    overlap (the conservative pair interval of :func:`judged.analyses.holes.unjudged.pair_flip`). A label of
    grade g for hole h moves run r's nDCG@k on h's query by

        d_r(h, g) = (DCG_r + g * w_r(h)) / IDCG'(g) - DCG_r / IDCG

    (w_r(h) the run's discount at h's rank, 0 outside its top k; IDCG'(g) the ideal with
    one more document of grade g), so it moves the difference of r and s by
    d_r - d_s. The priority of h is

        P(h relevant) * sum_g pi_g * ( sum over undecided r < s |d_r - d_s| + mean_r |d_r| )

    with pi the share of each relevant grade among the relevant labels so far (add-one)
    and P(h relevant) the highest, over the runs that have h in their top depth, of the
    run's relevant share among its labelled candidates in that query ((1 + relevant) /
    (2 + labelled)). The hole of highest priority over all queries goes next. When no
    pair is undecided, the mean term still sends judgments where scores can move (a
    relevant document found anywhere can raise the ideal). Linear gain, log2 discount.
    """

    name = "bounds"
    score_meaning = "expected change of the undecided pairwise differences of nDCG@k (plus the mean change)"

    def __init__(self, candidates, k: int = 10, maxgrade: int = 1, **kw):
        super().__init__(candidates, **kw)
        c = candidates
        self.k = min(int(k), c.depth) if c.depth else int(k)
        self.maxgrade = max(int(maxgrade), 1)
        self.disc = 1.0 / np.log2(np.arange(2, self.k + 2))
        R, Q, P = c.n_runs, c.n_queries, c.n_pairs
        pid, run, rank, place = c.pair_run_cells()
        # per query, row-major, query after query (the replay kernel's layout), each query's a view:
        # runs x pairs, True where the run has the pair (member); the pairs in some run's top k and runs x
        # those, the discount where the run ranks the pair there, else 0 (top); the pairs in no run's top k
        off = np.asarray(c.query_offsets, np.int64)
        member = np.zeros(R * P, np.uint8)
        member[place] = 1
        top = rank <= self.k
        in_top = np.zeros(P, bool)
        in_top[pid[top]] = True
        top_ids, deep_ids = np.flatnonzero(in_top), np.flatnonzero(~in_top)
        top_off = np.zeros(Q + 1, np.int64)
        np.cumsum(np.bincount(c.pair_query[top_ids], minlength=Q), out=top_off[1:])
        local = np.zeros(P, np.int64)  # each top pair's place among its query's top pairs
        local[top_ids] = np.arange(len(top_ids)) - top_off[c.pair_query[top_ids]]
        tq = c.pair_query[pid[top]]
        ts = top_off[tq]
        top_w = np.zeros(R * len(top_ids))
        top_w[R * ts + run[top] * (top_off[tq + 1] - ts) + local[pid[top]]] = 1.0 / np.log2(rank[top] + 1.0)
        deep_off = off - top_off
        self._flat = (member, top_off, top_ids, top_w, deep_off, deep_ids)
        self._queries = None  # per query: views of them, made on first use (a whole replay reads none)
        self.gains = [[] for _ in range(Q)]  # labelled positive gains per query
        self.dcg = np.zeros((Q, R))
        self.n_lab = np.zeros((Q, R))
        self.n_rel = np.zeros((Q, R))
        self.lo = np.zeros((Q, R))
        self.hi = np.zeros((Q, R))

        self.grade_counts = np.zeros(self.maxgrade + 1)
        self._dirty = set(range(Q))
        self._bounds_dirty = set(range(Q))
        self._heap: list = []
        self._version = np.zeros(Q, np.int64)
        self._undecided = None
        self._hi_stale: dict = {}  # query -> runs whose own holes changed since their maximum was computed
        self._hi_gains: dict = {}  # query -> the k largest judged gains when the maxima were computed
        self._ideals: dict = {}  # query -> {None or one more gain: the ideal}, until q's gains change
        self._terms: dict = {}  # query -> {gain: the priorities' terms for a label of that gain}

    # labels ------------------------------------------------------------------------

    def _per_query(self) -> tuple:
        """(member, top, deep) of every query: runs x pairs flags, (top pair ids, runs x them
        discounts), deep pair ids, as views of the flat layout; made on first use."""
        if self._queries is None:
            member, top_off, top_ids, top_w, deep_off, deep_ids = self._flat
            R = self.c.n_runs
            self._queries = ([v.view(bool) for v in query_views(member, self.c.query_offsets, R)],
                             list(zip(query_views(top_ids, top_off), query_views(top_w, top_off, R))),
                             query_views(deep_ids, deep_off))
        return self._queries

    @property
    def _member(self) -> list:
        return self._per_query()[0]

    @property
    def _top(self) -> list:
        return self._per_query()[1]

    @property
    def _deep(self) -> list:
        return self._per_query()[2]
    def _observed(self, pid, grade, was_pending):
        c = self.c
        q = int(c.pair_query[pid])
        s = int(c.query_offsets[q])
        g = max(float(grade), 0.0)
        grew = int(g) >= len(self.grade_counts)
        if grew:
            self.grade_counts = np.concatenate((self.grade_counts, np.zeros(int(g) + 1 - len(self.grade_counts))))
            self.maxgrade = int(g)
        self.grade_counts[int(g)] += 1
        runs = self._member[q][:, pid - s]
        self.n_lab[q, runs] += 1
        if self.relevant(grade):
            self.n_rel[q, runs] += 1
        ids, W = self._top[q]
        j = np.searchsorted(ids, pid)
        in_top = j < len(ids) and ids[j] == pid
        if in_top:  # a hole of these runs' top k is closed
            self._hi_stale.setdefault(q, set()).update(np.flatnonzero(W[:, j] > 0).tolist())
            if g > 0:
                self.dcg[q] += g * W[:, j]
        if g > 0:
            self.gains[q].append(g)
            self._ideals.pop(q, None)
            self._terms.pop(q, None)
        self._dirty.add(q)
        if in_top or g > 0 or grew:  # else the bounds of q read nothing that changed: kept
            self._bounds_dirty.add(q)

    def _taken(self, pid):
        self._dirty.add(int(self.c.pair_query[pid]))

    def replay(self, truth, limit=None):
        """From no label at all, the order of :func:`judged.analyses.pooling.replay_kernels.bounds_picks`
        (compiled: the same steps in C); else label by label."""
        c = self.c
        truth = np.asarray(truth, np.float64)
        fresh = not self._undecided_seen() and np.isnan(self.label).all() and not self.pending.any()
        if not fresh or not len(truth) or np.isnan(truth).any() or (truth != np.floor(truth)).any() \
                or truth.max() > self.maxgrade or self.rel < 0 or self.rel != int(self.rel) \
                or (c.n_runs > 1 and multisets(self.k, self.maxgrade) is None):
            return super().replay(truth, limit)
        member, top_offsets, top_ids, top_w, deep_offsets, deep_ids = self._flat
        order = bounds_picks(np.asarray(c.query_offsets, np.int64), top_offsets, top_ids, top_w, deep_offsets,
                             deep_ids, member, truth, self.disc, c.n_runs, self.maxgrade, int(self.rel),
                             -1 if limit is None else int(limit))
        self.label[order] = truth[order]
        return order

    def _undecided_seen(self) -> bool:
        """Some step was taken already (a proposal made)."""
        return self._undecided is not None

    # bounds ------------------------------------------------------------------------
    def _query_ideal(self, q: int, more: float | None = None) -> float:
        """The ideal of query q's labelled gains (with one more document of gain ``more``),
        kept until a relevant label arrives in q."""
        memo = self._ideals.setdefault(q, {})
        if more not in memo:
            memo[more] = self._ideal(self.gains[q] if more is None else self.gains[q] + [more])
        return memo[more]

    def _ideal(self, gains) -> float:
        return ideal_dcg(gains, self.disc)

    def _query_bounds(self, q):
        """Exact min and max of every run's nDCG@k on query q over the grades of the open
        holes in any run's top k. For any grades of its own holes, a run's score is lowest
        with the other runs' holes at the top grade (they only raise the ideal) and highest
        with them at 0, so only its own holes (at most k) are searched: the maximum by
        :func:`judged.core.measures.bounds.ndcg_extreme`, the minimum over s own holes at the top grade on
        the s smallest discounts, the others at 0 (the minimum needs only the extreme
        grades, docs/holes.md; the rearrangement inequality places them)."""
        ids, W = self._top[q]
        open_ = np.isnan(self.label[ids])
        jg = np.asarray(self.gains[q], np.float64)
        ideal = self._query_ideal(q)
        n_open = int(open_.sum())
        if not n_open:
            self.lo[q] = self.hi[q] = self.dcg[q] / ideal if ideal > 0 else 0.0
            return
        self.lo[q], Wo, n_own = bounds_lo(W, open_, self.dcg[q], jg, self.disc, float(self.maxgrade))
        # the maximum: only for runs whose own holes or the judged gains changed
        stale = self._hi_stale.pop(q, None)
        ideal_key = tuple(np.sort(jg)[::-1][: self.k].tolist())  # only the k largest judged gains reach an ideal
        if stale is None or self._hi_gains.get(q) != ideal_key:
            stale = range(self.c.n_runs)
        self._hi_gains[q] = ideal_key
        left = bounds_hi(self.hi[q], np.asarray(sorted(stale), np.int64), Wo, n_own, self.dcg[q], jg, self.disc,
                         self.maxgrade, ideal)
        if left:  # too many grade multisets: the DP

            disc = np.zeros(len(jg) + Wo.shape[1])  # the ideal's discounts, 0 past k
            disc[: self.k] = self.disc[: len(disc)]
            values = np.arange(self.maxgrade + 1, dtype=np.float64)
            for r in left:
                self.hi[q, r] = ndcg_extreme(Wo[r][Wo[r] > 0], self.dcg[q, r], jg, disc, values, "max")

    def undecided(self) -> np.ndarray:
        """runs x runs: True where the intervals of the two runs' mean nDCG@k overlap."""
        if self.c.n_runs == 1:
            return np.zeros((1, 1), bool)
        LO, HI = self.lo.mean(axis=0), self.hi.mean(axis=0)
        U = (LO[:, None] < HI[None, :] - 1e-12) & (LO[None, :] < HI[:, None] - 1e-12)
        np.fill_diagonal(U, False)
        return np.triu(U)

    # priorities --------------------------------------------------------------------
    def _grade_weights(self):
        grades = np.arange(self.rel, len(self.grade_counts))
        if not len(grades):
            grades = np.array([self.rel])
        counts = np.array([self.grade_counts[g] if g < len(self.grade_counts) else 0 for g in grades]) + 1.0
        return grades.astype(np.float64), counts / counts.sum()

    def _update(self, q, U, grades, weights):
        self._version[q] += 1
        c = self.c
        s = int(c.query_offsets[q])
        I0 = self._query_ideal(q)
        D = self.dcg[q]
        base = D / I0 if I0 > 0 else np.zeros_like(D)
        ri, si = np.nonzero(U)
        ids, W = self._top[q]
        move_top = np.zeros(len(ids))
        move_deep = 0.0
        R = max(c.n_runs, 1)
        terms = self._terms.setdefault(q, {})  # per grade, until q's gains or the undecided pairs change
        for g, pg in zip(grades, weights):
            if g not in terms:
                I1 = self._query_ideal(q, g)
                d = (D[:, None] + g * W) / I1 - base[:, None]  # runs x top holes
                dd = D / I1 - base  # runs: a relevant document in no run's top k
                terms[g] = (np.abs(d[ri] - d[si]).sum(axis=0) + np.abs(d).sum(axis=0) / R,
                            float(np.abs(dd[ri] - dd[si]).sum()) + float(np.abs(dd).sum()) / R)
            top_term, deep_term = terms[g]
            move_top += pg * top_term
            move_deep += pg * deep_term
        share = (1.0 + self.n_rel[q]) / (2.0 + self.n_lab[q])  # per run
        M = self._member[q]
        p_rel = np.where(M, share[:, None], 0.0).max(axis=0)  # per pair of the query
        deep = self._deep[q]
        best, arg = best_hole(ids, np.isnan(self.label[ids]) & ~self.pending[ids], move_top, deep,
                              np.isnan(self.label[deep]) & ~self.pending[deep], move_deep, p_rel, s)
        if arg >= 0:
            heapq.heappush(self._heap, (-best, arg, q, int(self._version[q])))

    def _select(self):
        for q in self._bounds_dirty:
            self._query_bounds(q)
        self._bounds_dirty.clear()
        U = self.undecided()
        if self._undecided is None or not np.array_equal(U, self._undecided):
            self._undecided = U
            self._dirty = set(range(self.c.n_queries))
            self._terms.clear()
            self._heap = []
        grades, weights = self._grade_weights()
        for q in self._dirty:
            self._update(q, U, grades, weights)
        self._dirty.clear()
        while self._heap:
            neg, pid, q, v = heapq.heappop(self._heap)
            if v != self._version[q] or not self.free(pid):
                continue
            self.last_score = -neg
            return pid
        return None
