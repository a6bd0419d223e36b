"""Replaying pooling strategies on a judged collection: what does a judging budget buy?

The collection's judgments act as the assessors: a strategy proposes a pair, the replay
answers with the qrels' grade (0 for a pair the qrels do not hold, as scoring reads it),
and after every ``step`` judgments each run is scored on the labels gathered so far and
compared with its score on the full qrels.

Protocols:

* ``leave-one-run-out`` (default; Zobel, SIGIR 1998): for every run, the pool is built
  from the *other* runs' top ``depth`` and the left-out run is scored on what was
  judged, as a new system would be. Each budget's figures are over the left-out runs.
* ``from-scratch``: one pool from every run; every run is scored on it.

Every run is scored on the full qrels' queries (a query with no relevant label yet
scores 0, the no-relevant convention) with the given measure and conventions, by the
same kernels as ``judged eval``: the replay's qrels hold exactly the labels gathered.

Per budget: the mean and the largest absolute error of the measure over the runs,
Kendall's tau (tau-b) and the share of run pairs in the same order as under the full
qrels. The judgments a strategy needed to recover the full ranking: the smallest
checkpoint from which, at every later checkpoint of the replay (which runs until every
candidate is judged, or until ``max_judgments`` for a slow strategy: then "recovered"
holds up to that many), Kendall's tau is 1 or every run is within ``tolerance`` of its
full-qrels score; at each of several tolerances (default 0.005, 0.01 and 0.02), and the
strategy :func:`judged.analyses.pooling.choice.choose` picks from those figures: one that
beat depth pooling at every tolerance, else depth pooling.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace

import numpy as np

from ...core.align import Judgments, Ranked, block_offsets
from ...core.conventions import Settings
from ...core.data import arrow_strings
from ...core.errors import ConventionError, JudgedError
from ...core.kernels import block_rows
from ...core.measures import Measure
from ...core.measures.bounds import list_depth
from ...core.querysets import query_set as of_counts, result_counts
from ..meta.plot import pyplot, save
from ..meta.stability import kendall_tau, kendall_taus
from .candidates import PoolRows, TakenStrings
from .choice import RULE_TOLERANCES, choose
from .policies import StaticOrder, depth_keys
from .replay_kernels import replay_dcg
from .strategies import BUDGET_STRATEGY, STRATEGIES, impact_scores, make_policy
from ...core.evaluation import ALIGNMENT, Scorer, Top, scoring_threads

PROTOCOLS = ("leave-one-run-out", "from-scratch")
DEFAULT_DEPTH = 100
DEFAULT_TOLERANCE = 0.01  # the tolerance of the top-level recovery figures when it is measured
DEFAULT_MEASURE = "nDCG@10"
CHECKPOINTS = 200  # the default step: about this many checkpoints per replay


def _read_runs(qrels, runs, m, settings: Settings, keep: int | None) -> tuple:
    """(the qrels read, name -> each run's alignment, cut to its top ``keep`` ranks (None:
    whole), name -> its query counts, its full-qrels score per run). A run file grouped by
    query is streamed by query blocks, as judged eval reads it, only its top ranks kept
    (:class:`judged.core.evaluation.Scorer` with ``Top(keep)``)."""
    scored = Scorer(qrels, {str(m): m}, settings).runs(runs, ALIGNMENT if keep is None else Top(keep))
    counts = {name: result_counts(name, rr, scored.qrels) for name, rr in scored.runs.items()}
    full = [m.aggregate_of(rr.values[str(m)]) for rr in scored.runs.values()]
    return scored.qrels, scored.alignments(), counts, full


def nice_step(n: int, checkpoints: int = CHECKPOINTS) -> int:
    """1, 2 or 5 times a power of ten, near n / checkpoints (at least 1)."""
    raw = max(1.0, n / checkpoints)
    power = 10 ** int(np.floor(np.log10(raw)))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return int(m * power)
    return int(10 * power)


class LabelScorer:
    """One run's measure on the full qrels' queries when only some candidate pairs are
    labelled: the run aligned once against the full qrels; per call, every ranked row
    whose pair is labelled gets its grade, every other row is a hole (zero-filled), and
    the judgments are the labelled pairs'. A query's value depends on its own rows and
    judgments only (every measure is a function of one query, as the block engine has
    it), so along a replay only the queries that gained a label are scored again, and
    several checkpoints' queries in one call."""

    def __init__(self, measure, aligned, index, truth: np.ndarray, candidate_qids: list, pair_query,
                 pid: np.ndarray | None = None):
        self.m, self.a, self.truth = measure, aligned, truth
        top = aligned.ranked.top(list_depth(measure))  # the ranks the measure reads
        self.top = top
        if pid is None:  # each row's pair id (-1: not a candidate), found unless given
            pid = index.of_rows(aligned, top)
        self.pid = pid
        position = {q: i for i, q in enumerate(aligned.qids.tolist())}
        cq = np.array([position.get(q, -1) for q in candidate_qids], np.int64)
        self.pair_aq = cq[pair_query] if len(pair_query) else np.zeros(0, np.int64)
        # a label of gain 0 moves no DCG-family value with holes counted as 0: it adds nothing to the
        # DCG (a hole there gains 0 too) nor to the ideal (positive gains only, dcg.ideal_gains); such
        # labels are left out of the judgments and change no query's value
        self.silent = gains = None
        if measure.family.label_worth == "gain" and measure.unjudged == "zero" and len(truth):
            gains = measure.gain(np.asarray(truth, np.float64))  # each pair's (elementwise: computed once)
            self.silent = gains == 0
        # the judgments' rows, sorted once: the pairs of the run's queries by (query, pair)
        has = np.flatnonzero((self.pair_aq >= 0) if self.silent is None else (self.pair_aq >= 0) & ~self.silent)
        if self.silent is None:
            self.jpid = has[np.argsort(self.pair_aq[has], kind="stable")]
        else:  # read by the ideal only, which sorts them by gain: given so sorted, its sort has less to do
            self.jpid = has[np.lexsort((-gains[has], self.pair_aq[has]))]
        self.jq = self.pair_aq[self.jpid]
        self.jgrade = truth[self.jpid].astype(np.int64)
        self.joffsets = block_offsets(self.jq, aligned.n_queries)
        # DCG@k and nDCG@k over the judgments with holes at 0 (the default): the compiled replay
        # kernel, which scores every checkpoint's changed queries with the same sums
        self.gain = None
        if self.silent is not None and measure.ideal == "judged":  # DCG (no ideal), nDCG with ideal=judged
            self.gain = gains

    def means(self, order: np.ndarray, at: np.ndarray) -> np.ndarray:
        """The run's number once the first ``k`` pairs of ``order`` are labelled, for each
        ``k`` of ``at`` (ascending): each step scores only the queries that gained a label.
        Several checkpoints' queries are scored by one call of the measure, each (checkpoint,
        query) a query of its own with the labels of its checkpoint (a query's value reads
        its own rows and judgments only: the same bits as one call per checkpoint)."""
        if self.gain is not None:
            return self._dcg_means(order, at)
        n, P = self.a.n_queries, len(self.pair_aq)
        done = int(at[-1]) if len(at) else 0
        when = np.full(P, np.iinfo(np.int64).max)  # the place in the order at which each pair is labelled
        when[order[:done][::-1]] = np.arange(done)[::-1]
        values, prev, out = None, 0, np.zeros(len(at))
        pending: list = []  # (checkpoint index, its queries to score or None)
        rows = 0
        for i, k in enumerate(at.tolist()):
            new = order[prev:k]
            prev = k
            queries = None
            if i == 0:
                queries = np.arange(n)
            elif len(new):
                changed = self.pair_aq[new if self.silent is None else new[~self.silent[new]]]
                changed = np.flatnonzero(np.bincount(changed[changed >= 0], minlength=n))
                if len(changed):
                    queries = np.arange(n) if len(changed) == n else changed
            pending.append((i, k, queries))
            if queries is not None:
                rows += self._rows(queries)
            if rows >= BATCH_ROWS:
                values = self._flush(pending, when, values, out)
                pending, rows = [], 0
        if pending:
            self._flush(pending, when, values, out)
        return out

    def _dcg_means(self, order: np.ndarray, at: np.ndarray) -> np.ndarray:
        """:meth:`means` by :func:`judged.analyses.pooling.replay_kernels.replay_dcg`, a few checkpoints'
        values at a time (no label yet: every query's value is 0)."""
        m, top, n = self.m, self.top, self.a.n_queries
        deepest = int(np.diff(self.joffsets).max()) if n else 0
        depth = max(int(top.pos.max()) + 1 if len(top.pos) else 0, deepest)
        if m.cutoff is not None:
            depth = min(depth, m.cutoff)
        denominators = m.discount.denominator(np.arange(1, depth + 1))
        order = np.asarray(order, np.int64)
        values, start, out = np.zeros(n), 0, np.zeros(len(at))
        step = max(1, SNAPSHOT_VALUES // max(n, 1))
        for lo in range(0, len(at), step):
            part = np.asarray(at[lo:lo + step], np.int64)
            snap = replay_dcg(m.cutoff, m.family.normaliser is not None, top.offsets, top.pos, self.pid, self.joffsets,
                              self.jpid, self.pair_aq, self.gain, denominators, order, start, part, values)
            if m.aggregate == "mean":  # each row's mean as aggregate_of takes it (numpy's pairwise sum per row)
                out[lo:lo + len(part)] = snap.mean(axis=1) if n else 0.0
            else:
                out[lo:lo + len(part)] = [m.aggregate_of(row) for row in snap]
            values, start = snap[-1].copy(), int(part[-1])
        return out

    def _rows(self, queries: np.ndarray) -> int:
        t, j = self.top.offsets, self.joffsets
        return int((t[queries + 1] - t[queries]).sum() + (j[queries + 1] - j[queries]).sum())

    def _flush(self, pending: list, when: np.ndarray, values, out: np.ndarray):
        """Score the pending checkpoints' queries in one call, then each checkpoint's number in turn."""
        parts = [(k, q) for _, k, q in pending if q is not None]
        if parts:
            pq = np.concatenate([q for _, q in parts])
            pk = np.repeat(np.array([k for k, _ in parts], np.int64), [len(q) for _, q in parts])
            N = len(pq)
            top, a = self.top, self.a
            idx, counts = block_rows(top.offsets, pq), top.offsets[pq + 1] - top.offsets[pq]
            pid = self.pid[idx]
            ok = pid >= 0
            hit = np.zeros(len(pid), bool)
            hit[ok] = when[pid[ok]] < np.repeat(pk, counts)[ok]
            grade = np.full(len(pid), np.nan)
            grade[hit] = self.truth[pid[hit]]
            tq = np.repeat(np.arange(N), counts)
            ranked = Ranked(N, tq, top.pos[idx], grade, top.row[idx], block_offsets(tq, N))
            jidx, jcounts = block_rows(self.joffsets, pq), self.joffsets[pq + 1] - self.joffsets[pq]
            jpid = self.jpid[jidx]
            keep = when[jpid] < np.repeat(pk, jcounts)
            jq = np.repeat(np.arange(N), jcounts)[keep]
            judgments = Judgments(N, jq, self.jgrade[jidx][keep], block_offsets(jq, N))
            stacked = replace(a, qids=a.qids[pq], qid_codes=None if a.qid_codes is None else a.qid_codes[pq],
                              ranked=ranked, judgments=judgments)
            scored = self.m.compute(stacked)
        at = 0
        for i, _, q in pending:
            if q is not None:
                part = scored[at:at + len(q)]
                at += len(q)
                if values is None or len(q) == len(values):
                    values = part.copy()
                else:
                    values[q] = part
            out[i] = self.m.aggregate_of(values)
        return values


BATCH_ROWS = 1 << 16  # about the rows (ranked and judged) scored by one call of the measure
SNAPSHOT_VALUES = 1 << 20  # about the query values of the checkpoints one call of replay_dcg gives


@dataclass
class Replay:
    """One strategy's replay: the scores of the scored runs at each checkpoint."""

    judgments: np.ndarray  # checkpoints (number of judgments)
    scores: np.ndarray  # checkpoints x scored runs
    relevant: np.ndarray  # relevant labels found at each checkpoint
    candidates: int


def replay(policy, truth: np.ndarray, scorers: list, checkpoints, rel: int = 1, limit: int | None = None) -> Replay:
    """Run ``policy`` (started) until every candidate is labelled (or ``limit`` judgments),
    answering with ``truth``; score with every scorer at each checkpoint (judgment counts)
    passed, and at the end. The policy gives its whole order at once
    (:meth:`judged.analyses.pooling.policies.PoolingPolicy.replay`); the scorers then read it."""
    order = policy.replay(truth, limit)
    done = len(order)
    at = np.asarray(sorted({0, done} | {int(k) for k in checkpoints if 0 < k <= done}), np.int64)
    found = np.concatenate(([0], np.cumsum(truth[order] >= rel)))[at]
    scores = np.zeros((len(at), len(scorers)))
    for j, s in enumerate(scorers):
        scores[:, j] = s.means(order, at)
    return Replay(at, scores, found.astype(np.int64), len(truth))


def pairwise_agreement(x, y) -> float:
    """Share of run pairs ordered the same way by two score vectors (a pair tied under
    one and not the other disagrees)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    i, j = np.triu_indices(len(x), k=1)
    if not len(i):
        return float("nan")
    return float((np.sign(x[i] - x[j]) == np.sign(y[i] - y[j])).mean())


@dataclass
class StrategyReplay:
    name: str
    source: str
    adaptive: bool
    judgments: np.ndarray  # the common checkpoints
    scores: np.ndarray  # checkpoints x runs (each run's own replay in leave-one-run-out)
    relevant: np.ndarray  # checkpoints x replays: relevant labels found
    candidates: list  # candidates per replay
    full: np.ndarray
    tolerance: float
    budgets: list
    limit: int | None = None  # the replays stopped after this many judgments (None: every candidate)
    _taus: np.ndarray | None = field(default=None, repr=False, compare=False)

    def errors(self) -> np.ndarray:
        return np.abs(self.scores - self.full[None, :])

    def taus(self) -> np.ndarray:
        """Kendall's tau-b of each checkpoint's scores against the full qrels' (computed once:
        recovered(), at_budget() and versus() read it again)."""
        if self._taus is None:
            self._taus = kendall_taus(self.scores, self.full)
        return self._taus

    def recovered(self, tolerance: float | None = None) -> tuple[int | None, str | None]:
        """(judgments, how) from which tau = 1 or every error <= ``tolerance`` (default the
        replay's) holds at every later checkpoint; (None, None) if not even at the end."""
        tolerance = self.tolerance if tolerance is None else tolerance
        err_ok = self.errors().max(axis=1) <= tolerance + 1e-12
        tau_ok = self.taus() >= 1.0 - 1e-12
        ok = err_ok | tau_ok
        bad = np.flatnonzero(~ok)
        first = 0 if not len(bad) else int(bad[-1]) + 1
        if first >= len(ok):
            return None, None
        if self.limit is not None and int(self.judgments[-1]) >= self.limit and first == len(ok) - 1:
            return None, None  # only the last checkpoint of a stopped replay: not shown to hold
        how = "tau = 1" if tau_ok[first] and not err_ok[first] else (
            f"every run within {tolerance:g}" if not tau_ok[first] else
            f"tau = 1 and every run within {tolerance:g}")
        if self.limit is not None and int(self.judgments[-1]) >= self.limit:
            how += f" (up to {self.limit:,}, where the replay stopped)"
        return int(self.judgments[first]), how

    def at_budget(self, budget: int) -> dict:
        i = int(np.searchsorted(self.judgments, budget, side="right")) - 1
        i = max(i, 0)
        s = self.scores[i]
        err = np.abs(s - self.full)
        judged = float(np.mean([min(budget, c) for c in self.candidates]))
        return {"budget": int(budget), "judged": judged, "mean_abs_error": float(err.mean()),
                "max_abs_error": float(err.max()), "tau": kendall_tau(s, self.full),
                "pairwise_agreement": pairwise_agreement(s, self.full),
                "relevant_found": float(self.relevant[i].mean())}

    def to_dict(self, curve: bool = False) -> dict:
        at, how = self.recovered()
        out = {"source": self.source, "adaptive": self.adaptive, "recovered_at": at, "recovered_by": how,
               "budgets": [self.at_budget(b) for b in self.budgets], "candidates": list(self.candidates)}
        if curve:
            err = self.errors()
            out["curve"] = {"judgments": self.judgments.tolist(), "mean_abs_error": err.mean(axis=1).tolist(),
                            "max_abs_error": err.max(axis=1).tolist(), "tau": self.taus().tolist()}
        return out


@dataclass
class PoolingReplay:
    qrels: object
    runs: list
    measure: object
    convention: str
    protocol: str
    depth: int
    step: int
    tolerance: float
    seed: int
    budgets: list
    full: np.ndarray
    max_judgments: int | None = None
    strategies: dict = field(default_factory=dict)  # name -> StrategyReplay
    query_set: object = None  # judged.core.querysets.QuerySet: every run over every qrels query
    tolerances: tuple = ()  # every tolerance recovery is measured at (``tolerance`` among them)

    @property
    def warnings(self) -> list:
        return self.query_set.warnings() if self.query_set is not None else []

    def versus(self, name: str, baseline: str = "depth", tolerance: float | None = None) -> float | None:
        """Relative change in the judgments needed to recover the ranking against ``baseline``
        (at ``tolerance``; default the replay's)."""
        a = self.strategies[name].recovered(tolerance)[0]
        b = self.strategies.get(baseline)
        b = None if b is None else b.recovered(tolerance)[0]
        if a is None or not b:
            return None
        return (a - b) / b

    def recovery(self, name: str) -> list[dict]:
        """The strategy's judgments to recover the ranking at each tolerance, how, and the
        change against depth pooling's."""
        s = self.strategies[name]
        return [dict(zip(("tolerance", "recovered_at", "recovered_by", "versus_depth"),
                         (t, *s.recovered(t), self.versus(name, tolerance=t))))
                for t in self.tolerances or (self.tolerance,)]

    def choice(self):
        """The strategy to pool with on collections like this one
        (:func:`judged.analyses.pooling.choice.choose` over every tolerance measured)."""
        tolerances = self.tolerances or (self.tolerance,)
        return choose({n: {t: s.recovered(t)[0] for t in tolerances} for n, s in self.strategies.items()},
                      tolerances)

    def to_dict(self, curve: bool = False) -> dict:
        return {"qrels": {"path": self.qrels.source, "sha256": self.qrels.sha256}, "runs": self.runs,
                "measure": str(self.measure), "convention": self.convention, "protocol": self.protocol,
                "depth": self.depth, "step": self.step, "tolerance": self.tolerance,
                "tolerances": list(self.tolerances or (self.tolerance,)), "seed": self.seed,
                "max_judgments": self.max_judgments,
                "budgets": self.budgets, "full": dict(zip(self.runs, self.full.tolist())),
                "method": METHOD, "default_strategy": budget_default(),
                "strategies": {n: {**s.to_dict(curve), "versus_depth": self.versus(n), "recovery": self.recovery(n)}
                               for n, s in self.strategies.items()},
                "recommended": self.choice().to_dict(),
                **({"query_set": self.query_set.to_dict()} if self.query_set is not None else {}),
                "warnings": self.warnings}


METHOD = ("the qrels act as the assessors (a pair they do not hold is answered 0); runs scored on the full "
          "qrels' queries with only the labels gathered; recovered: from that checkpoint on, at every later one, "
          "Kendall's tau is 1 or every run is within the tolerance of its full-qrels score")


def pooling_replay(qrels, runs, budgets, strategies=None, *, measure: str = DEFAULT_MEASURE,
                   protocol: str = "leave-one-run-out", depth: int = DEFAULT_DEPTH, step: int | None = None,
                   tolerance=None, seed: int = 0, rel: int = 1, max_judgments: int | None = None,
                   progress=None, settings: Settings | None = None) -> PoolingReplay:
    """Replay pooling ``strategies`` (default: every one) on a judged collection; see the
    module docstring for the protocols and the figures. ``tolerance``: one, or several to
    measure recovery at each (default :data:`judged.analyses.pooling.choice.RULE_TOLERANCES`);
    the top-level figures are at :data:`DEFAULT_TOLERANCE` when it is one of them, else at
    the first. Runs are scored over every qrels
    query (``complete=True``, the query-set rule of every command comparing runs,
    :mod:`judged.core.querysets`; ``settings`` default ``Settings(complete=True)``); a run sharing
    no query id with the qrels is refused."""
    if protocol not in PROTOCOLS:
        raise ConventionError(f"unknown protocol {protocol!r} (choose from {', '.join(PROTOCOLS)})")
    if depth < 1:
        raise ConventionError(f"--depth must be a positive integer, got {depth}")
    budgets = [int(b) for b in budgets]
    if not budgets:
        raise ConventionError("give at least one --budget")
    if any(b < 0 for b in budgets):
        raise ConventionError(f"--budget must be 0 or more, got {min(budgets)}")
    if step is not None and step < 1:
        raise ConventionError(f"--step must be a positive integer, got {step}")
    if max_judgments is not None and max_judgments < 1:
        raise ConventionError(f"--max-judgments must be a positive integer, got {max_judgments}")
    tolerances, tolerance = measured_tolerances(tolerance)
    m = Measure.parse(measure)
    # each run, once aligned and scored on the full qrels, keeps only what the replay reads: its top
    # `depth` and the measure's cutoff (the whole ranking when the measure reads it), so one run is
    # held whole at a time; the first run file is tokenized in a second thread meanwhile, as judged eval starts
    keep = list_depth(m)
    names = replayable() if not strategies else list(dict.fromkeys(strategies))
    for s in names:
        if s not in replayable():
            raise ConventionError(f"cannot replay pooling strategy {s!r} (choose from {', '.join(replayable())})")
    settings = Settings(complete=True) if settings is None else settings
    qrels, aligned, counts, full = _read_runs(qrels, runs, m, settings, None if keep is None else max(keep, depth))
    query_set = of_counts(settings, len(qrels.query_ids), counts, measures=[m])
    run_names = list(aligned)
    if len(run_names) < 2:
        raise JudgedError("a pooling replay needs at least two runs")
    full = np.array(full)
    maxgrade = int(max(qrels.grade.max(), 1)) if len(qrels.grade) else 1  # the scale, known before any label
    rows = PoolRows.of(aligned, depth)

    def setting(pool_runs, scored):
        cands, truth, index = rows.candidates(pool_runs, depth)
        # the rows the measure reads are among the pooled ranks: their pair ids through the codes
        pid = (lambda n: None) if keep is None or keep > depth else (lambda n: index.pid_of[rows.run_codes(n, keep)])
        scorers = [LabelScorer(m, aligned[n], index, truth, cands.qids, cands.pair_query, pid(n)) for n in scored]
        return cands, truth, scorers

    if protocol == "leave-one-run-out":
        settings_list = [([n for n in run_names if n != left], [left]) for left in run_names]
    else:
        settings_list = [(run_names, run_names)]
    most = max(rows.size(p, depth) for p, _ in settings_list)
    if step is None:
        step = nice_step(most if max_judgments is None else min(most, max_judgments))
    marks = sorted(set(range(0, most + step, step)) | set(budgets))
    out = PoolingReplay(qrels, run_names, m, m.convention(settings), protocol, depth, step, tolerance,
                        seed, budgets, full, max_judgments, query_set=query_set, tolerances=tolerances)
    impact_memo: dict = {}
    reps: dict = {name: [] for name in names}

    def one(name, cands, truth, scorers, pool_runs) -> Replay:
        policy = _policy(name, cands, prepared_runs=pool_runs, aligned=aligned, seed=seed, rel=rel, depth=depth,
                         maxgrade=maxgrade, memo=impact_memo).start()
        return replay(policy, truth, scorers, marks, rel, max_judgments)

    def take(k, results) -> None:
        for name, got in results:
            reps[name].append(got)
            if progress is not None:
                progress(name, k + 1, len(settings_list))

    # pool after pool, every strategy on it. In one thread, one pool's candidates are held at a
    # time. With `workers` threads, a pool's replays (each its own policy's, reading the pool's
    # candidates and scorers only; the kernels release the GIL) run in them, the longest first,
    # while this thread sets up the next pool: two pools are held at a time
    workers = min(scoring_threads(), len(names))
    with _threads(workers) as pool:
        behind = None
        try:
            for k, (pool_runs, scored) in enumerate(settings_list):
                cands, truth, scorers = setting(pool_runs, scored)
                started = (k, _start(pool, lambda name, c=(cands, truth, scorers, pool_runs): one(name, *c), names))
                del cands, truth, scorers
                if pool is None:
                    take(*started)
                    continue
                if behind is not None:
                    take(*behind)
                behind = started
            if behind is not None:
                take(*behind)
        except BaseException:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            raise
    for name in names:
        out.strategies[name] = _combine(name, reps[name], marks, full, tolerance, budgets, max_judgments)
    return out


def measured_tolerances(tolerance) -> tuple[tuple, float]:
    """(every tolerance to measure recovery at, in the order given, the one of the top-level
    figures) from one tolerance, several, or None (the rule's three)."""
    given = RULE_TOLERANCES if tolerance is None else (
        (tolerance,) if isinstance(tolerance, (int, float)) else tuple(tolerance))
    if not given:
        raise ConventionError("give at least one --tolerance")
    for t in given:
        if not t >= 0:
            raise ConventionError(f"--tolerance must be 0 or more, got {t}")
    tolerances = tuple(dict.fromkeys(float(t) for t in given))
    return tolerances, DEFAULT_TOLERANCE if DEFAULT_TOLERANCE in tolerances else tolerances[0]


# the strategies' replays by decreasing cost (on the workflow benchmark and robust03), started in
# that order so that the longest do not end a pool alone in one thread
COST_ORDER = ("bounds", "hedge", "impact", "ts", "ts-ns", "mm", "mm-ns", "mtf", "depth")


def _threads(workers: int):
    """A pool of ``workers`` threads, or none for one (concurrent.futures: 0.01 s to import)."""
    if workers < 2:
        return contextlib.nullcontext()
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(workers, thread_name_prefix="judged-replay")


def _start(pool, work, names: list):
    """(name, ``work(name)``) for every name, in order: without a pool, computed in this
    thread as they are taken; else all submitted to it at once, the costliest first
    (:data:`COST_ORDER`), and taken as they end, in order."""
    if pool is None:
        return ((name, work(name)) for name in names)
    rank = {n: i for i, n in enumerate(COST_ORDER)}
    return _in_order({n: pool.submit(work, n) for n in sorted(names, key=lambda n: rank.get(n, -1))}, names)


def _in_order(futures: dict, names: list):
    try:
        for name in names:
            yield name, futures.pop(name).result()
    finally:
        for f in futures.values():  # one failed: the others not started are not
            f.cancel()


def _policy(name, cands, *, prepared_runs, aligned, seed, rel, depth, maxgrade, memo=None):
    """The strategy's policy for a replay (impact: scored from the replay's empty start;
    ``memo`` keeps each run's part of it from one replay to the next)."""
    if name != "impact":
        return make_policy(name, cands, seed=seed, rel=rel, maxgrade=maxgrade)
    return _impact_policy(cands, {n: aligned[n] for n in prepared_runs}, depth, memo)


def _impact_policy(cands, aligned, depth, memo=None):
    """``impact`` as ``judged pool`` computes it, on the replay's start: no label yet."""
    empty = {}
    for n, a in aligned.items():
        r = a.ranked
        ranked = Ranked(r.n_queries, r.q, r.pos, np.full(len(r.q), np.nan), r.row, r.offsets)
        jq = np.zeros(0, np.int64)
        empty[n] = replace(a, ranked=ranked, judgments=Judgments(a.n_queries, jq, jq.copy(), block_offsets(jq, a.n_queries)))
    P = cands.n_pairs
    qids = TakenStrings(arrow_strings(cands.qids), cands.pair_query)  # each pair's qid (counted only: ranks given)
    # each pair's query and rank in each run, from the candidates' pair runs (the same top `depth`), run by run
    off, run, rank = cands.pair_runs()  # by pair, then run: a stable sort by run (radix, as int16) is by run, pair
    by_run = np.argsort(run.astype(np.int16) if len(aligned) < 1 << 15 else run, kind="stable")
    pid, rank = np.repeat(np.arange(P), np.diff(off))[by_run], rank[by_run]
    at = np.zeros(len(aligned) + 1, np.int64)
    np.cumsum(np.bincount(run, minlength=len(aligned)), out=at[1:])
    ranks = {}
    for j, (n, a) in enumerate(aligned.items()):
        position = {q: i for i, q in enumerate(a.qids.tolist())}
        q = np.array([position.get(x, -1) for x in cands.qids], np.int64)[cands.pair_query]
        r = np.zeros(P, np.int64)
        r[pid[at[j]:at[j + 1]]] = rank[at[j]:at[j + 1]]
        ranks[n] = (q, r)
    scores = (impact_scores(qids, cands.docids, empty, Measure.parse(f"nDCG@{depth}"), depth, memo, ranks) if P
              else np.zeros(0))
    # highest impact first, then best rank, retrieved by more runs, qid, docid
    order = np.lexsort((*depth_keys(cands), -scores)) if P else np.zeros(0, np.int64)
    return StaticOrder(cands, np.asarray(order, np.int64), scores)


def budget_default() -> str:
    """The strategy ``judged pool --budget N`` uses when none is named."""
    return BUDGET_STRATEGY


NOT_REPLAYED = ("sample", "sample-queries", "machine", "disagreement")


def replayable() -> list[str]:
    """The strategies of ``judged pool`` a replay can run: all but the random samples
    (``sample``, ``sample-queries``: drawn for estimates by inference, measured by their own
    tests, not orders) and those ordered by a machine judge's labels, which a replay of
    the qrels alone does not have."""
    return [n for n in STRATEGIES if n not in NOT_REPLAYED]


def _combine(name, reps: list, marks, full, tolerance, budgets, limit=None) -> StrategyReplay:
    """Every replay's scored runs at the common checkpoints (a replay that ended early
    keeps its final scores)."""
    at = np.asarray(sorted(set(marks) | {0}), np.int64)
    end = max(int(r.judgments[-1]) for r in reps)
    at = at[at <= end]
    if at[-1] != end:
        at = np.append(at, end)
    cols, rel = [], []
    for r in reps:
        idx = np.searchsorted(r.judgments, at, side="right") - 1
        cols.append(r.scores[idx])
        rel.append(r.relevant[idx])
    scores = np.concatenate(cols, axis=1)

    return StrategyReplay(name, STRATEGIES[name].summary, STRATEGIES[name].adaptive, at, scores,
                          np.stack(rel, axis=1),
                          [r.candidates for r in reps], full, tolerance, budgets, limit)


def plot_pooling(result: PoolingReplay, path) -> None:
    """Mean absolute error and Kendall's tau against judgments, one line per strategy."""
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    draw_pooling(result, ax1, ax2)
    fig.tight_layout()
    save(fig, path)


def draw_pooling(result: PoolingReplay, ax_error, ax_tau) -> None:
    for name, s in result.strategies.items():
        err = s.errors()
        at, _ = s.recovered()
        label = name + ("" if at is None else f" (recovered at {at:,})")
        line, = ax_error.plot(s.judgments, err.mean(axis=1), label=label)
        ax_error.plot(s.judgments, err.max(axis=1), color=line.get_color(), linestyle=":", linewidth=1)
        ax_tau.plot(s.judgments, s.taus(), color=line.get_color(), label=name)
    ax_error.axhline(result.tolerance, color="grey", linestyle="--", linewidth=1)
    ax_error.set_yscale("log")
    ax_error.set_xlabel("judgments")
    ax_error.set_ylabel(f"|{result.measure} - full qrels| (solid: mean, dotted: max)")
    ax_error.set_title(f"{result.protocol}, {len(result.runs)} runs, pool depth {result.depth}")
    ax_error.legend(fontsize="small")
    ax_tau.set_xlabel("judgments")
    ax_tau.set_ylabel("Kendall's tau against the full qrels")
    ax_tau.set_ylim(min(0.0, float(np.nanmin([np.nanmin(s.taus()) for s in result.strategies.values()]))), 1.02)
    ax_tau.set_title(f"system ranking by {result.measure}")
