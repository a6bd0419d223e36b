"""The hole estimate: what judging the holes will probably show, learnt from the
collection's own leave-one-run-out evidence, with a calibrated interval. An estimate,
never a bound: the exact bounds stay in :mod:`judged.analyses.holes`. docs/holes.md ("Estimating
what judging will show") states the method in full and measures it.

A run's (or group's: a *unit*'s) **pseudo-holes** are the judged documents it alone
contributed to a depth-D pool of the given runs: remove it and they would be holes
(Zobel, SIGIR 1998; Buttcher et al., SIGIR 2007). Method ``loro-logit``:

1. **Model**: each pseudo-hole's grade from :data:`FEATURES`, read without its own unit's
   judgments, by a continuation-ratio logistic regression (Agresti, *Categorical Data
   Analysis*, 8.3.5): one ridge-penalised logistic regression per grade level, Newton's
   method on standardised features.
2. **Point estimate**: the median over seeded draws of the holes' grades (ideal and R
   recomputed per draw) of the mean over queries; holes below the hole depth count 0.
3. **Interval**: split-conformal with a per-run scale (Vovk et al. 2005; Lei et al., JASA
   2018) over the other units' leave-one-out residuals (one Newton step, Rad & Maleki,
   JRSS-B 2020; units of several runs weigh as one, Dunn, Wasserman & Ramdas, JASA 2022),
   clipped to the exact bounds, with its coverage on the collection itself.

**Fallback** (stated as such): with fewer than two units or fewer than
:data:`MIN_PSEUDO_HOLES` judged pseudo-holes, the score with holes as not relevant
(trec_eval's reading) and the exact bounds as the interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa

from ..core.align import Aligned, Judgments, Ranked, block_offsets
from ..core.data import QrelsIndex, as_numpy, grades_of_rows, pair_keys, strings_equal, take_strings
from ..core.errors import ConventionError, MeasureError
from ..core.kernels.draws import drawn_sums
from ..core.measures import BOUNDED, Measure
from ..core.measures.bounds import bounds as exact_bounds
from ..core.measures.bounds import list_depth, sorted_distinct
from ..core.measures.dcg import dcg, ideal_dcg_of_counts
from ..core.words import counted
from .stats import median

METHOD = "loro-logit"
SOURCE = ("continuation-ratio logistic model of hole grades fitted on leave-one-run-out pseudo-holes "
          "(Zobel, SIGIR 1998; Buttcher et al., SIGIR 2007) with a split-conformal interval "
          "(Vovk et al. 2005; Lei et al., JASA 2018)")
FALLBACK = "holes-as-zero"
FEATURES = ("log2 rank", "share of other units' runs retrieving the document",
            "log2 best rank among other units' runs", "logit relevant share of the run's judged top k",
            "logit relevant share of the query's judgments", "logit relevant share of the run's judged top k "
            "for this query")
DEFAULT_LEVEL = 0.9
CALIBRATION_DRAWS = 64  # draws per leave-one-out residual (the target runs take ``samples``)
MIN_PSEUDO_HOLES = 20
RIDGE = 1.0
LARGE_GROUP = 0.05  # leave-out fits of a group above this share of the pseudo-holes are iterated to convergence
NOT_RETRIEVED_RANK = 2000.0  # "best rank among other runs" of a document none of them retrieved


# ---------------------------------------------------------------------------
# The collection: every run's ranking keyed by (query, document)


@dataclass
class HolePool:
    """The given runs aligned with one qrels: for every ranked row above the zone depth
    (holes and pseudo-holes live there), who else retrieved the (query, document) pair
    and how high, which unit alone contributed it to the depth-``depth`` pool, and the
    judgments per query and grade level.

    Rows are run by run, each run in (query, rank) order; ``rrow`` is the row's index in
    its run's ``aligned.ranked``.
    """

    names: list
    aligned: list
    unit: np.ndarray  # unit index per run
    unit_names: list
    k: int  # hole depth: holes and the runs' judged shares are read in the top k
    depth: int  # pool depth: a unit contributes its runs' top `depth`
    zone: int | None  # rows kept: ranked above `zone` (None: all)
    levels: np.ndarray  # grade values modelled, ascending, starting at 0
    starts: np.ndarray  # first pool row of each run (len = runs + 1)
    run: np.ndarray
    rrow: np.ndarray
    qcode: np.ndarray  # qrels query code
    pos: np.ndarray  # 0-based rank
    level: np.ndarray  # grade level index in the full qrels, -1 unjudged
    pid: np.ndarray  # (query, document) id
    owner: np.ndarray  # per pid: the unit that alone has it in its top `depth`, else -1
    pid_q: np.ndarray
    pid_level: np.ndarray  # per pid, -1 unjudged
    votes: np.ndarray  # per row: other units' runs retrieving the document (at any rank)
    best_other: np.ndarray  # per row: best 1-based rank among other units' runs (NOT_RETRIEVED_RANK if none)
    other_runs: np.ndarray  # per row: runs outside its unit
    jcount: np.ndarray  # (qrels queries, levels) judgments per grade level
    matches: tuple = field(repr=False, default=())  # (run, pid, row in its ranking) of every row of a zone pair
    _memo: dict = field(default_factory=dict, repr=False)

    @property
    def n_runs(self) -> int:
        return len(self.names)

    @property
    def n_units(self) -> int:
        return len(self.unit_names)

    @property
    def n_pids(self) -> int:
        return len(self.owner)

    def rows_of(self, i: int) -> np.ndarray:
        return np.arange(self.starts[i], self.starts[i + 1])

    def list_rows(self, i: int, depth: int | None) -> np.ndarray:
        """Pool rows of run ``i`` ranked above ``depth`` (all rows for None), in (query, rank) order."""
        if depth is not None and self.zone is not None and depth > self.zone or depth is None and self.zone is not None:
            raise ConventionError(f"the hole pool keeps the top {self.zone} of each run; a list to "
                                  f"{depth or 'every rank'} needs a deeper pool")
        key = ("rows", i, depth)
        if key not in self._memo:
            r = self.rows_of(i)
            self._memo[key] = r if depth is None else r[self.pos[r] < depth]
        return self._memo[key]


def build_pool(named: list, k: int, depth: int | None = None, units=None, unit_names=None,
               zone: int | None = -1) -> HolePool:
    """The :class:`HolePool` of ``named`` [(name, Aligned)], all aligned with one qrels.

    ``units``: unit index per run (default: every run its own unit); ``depth``: the pool
    depth (default ``k``); ``zone``: rows kept (default max(k, depth); None: every rank)."""
    if not named:
        raise ConventionError("the hole estimate needs at least one run")
    depth = k if depth is None else int(depth)
    if k < 1 or depth < 1:
        raise ConventionError(f"hole depth and pool depth must be positive, got k={k}, depth={depth}")
    if zone == -1:
        zone = max(k, depth)
    elif zone is not None:
        zone = max(int(zone), k, depth)
    names = [n for n, _ in named]
    aligned = [a for _, a in named]
    n = len(names)
    unit = np.arange(n) if units is None else np.asarray(units, np.int64)
    if unit_names is None:
        unit_names = list(names) if units is None else [str(u) for u in range(int(unit.max()) + 1)]
    nu = len(unit_names)
    nq = len(aligned[0].qrels.index.query_ids)
    levels = _levels(aligned)

    # the zone's rows, run by run
    parts = {"run": [], "rrow": [], "qcode": [], "pos": [], "level": [], "hash": []}
    for i, a in enumerate(aligned):
        r = a.ranked
        at = np.arange(len(r.q)) if zone is None else np.flatnonzero(r.pos < zone)
        codes = np.asarray(a.qid_codes, np.int64)[r.q[at]]
        parts["run"].append(np.full(len(at), i, np.int32))
        parts["rrow"].append(at)
        parts["qcode"].append(codes)
        parts["pos"].append(r.pos[at].astype(np.int64))
        parts["level"].append(level_of(r.grade[at], levels))
        parts["hash"].append(a.run.docid_hash[r.row[at]])
    starts = np.zeros(n + 1, np.int64)
    np.cumsum([len(p) for p in parts["run"]], out=starts[1:])
    run, rrow, qcode, pos, level, hashes = (np.concatenate(parts[c]) for c in ("run", "rrow", "qcode", "pos", "level",
                                                                                "hash"))
    pid, first, zone_docid = _pair_ids(pair_keys(qcode, hashes), qcode, aligned, run, rrow)
    npid = len(first)
    pid_q = qcode[first]
    pid_level = np.full(npid, -1, np.int64)
    judged = level >= 0
    pid_level[pid[judged]] = level[judged]
    u = unit[run]

    # units having the pair in their top `depth`: who alone contributed it to the pool
    top = pos < depth
    pu = sorted_distinct(pid[top] * nu + u[top])
    per_pid = np.bincount(pu // nu, minlength=npid)
    owner = np.full(npid, -1, np.int64)
    alone = per_pid[pu // nu] == 1
    owner[(pu // nu)[alone]] = (pu % nu)[alone]

    # every run's rows (any rank) of the zone's pairs: other units' votes and best rank
    m_run, m_pid, m_pos, m_rrow = _matches(aligned, pid, first, run, rrow, zone, zone_docid, pid_q,
                                          hashes[first])
    m_unit = unit[m_run]
    retrieved = np.bincount(m_pid, minlength=npid)
    same_key, same_count = np.unique(m_pid * nu + m_unit, return_counts=True)
    own = same_count[np.searchsorted(same_key, pid * nu + u)]
    votes = retrieved[pid] - own
    runs_per_unit = np.bincount(unit, minlength=nu)
    other_runs = n - runs_per_unit[u]
    best_other = _best_other_rank(m_pid, m_unit, m_pos, npid, pid, u)

    jcount = np.zeros((nq, len(levels)), np.int64)
    for a in aligned:
        j = a.judgments
        lv = level_of(j.grade.astype(np.float64), levels)
        c = np.bincount(j.q * len(levels) + lv, minlength=a.n_queries * len(levels)).reshape(a.n_queries, len(levels))
        jcount[np.asarray(a.qid_codes, np.int64)] = c
    return HolePool(names, aligned, unit, list(unit_names), int(k), depth, zone, levels, starts, run, rrow, qcode, pos,
                    level, pid, owner, pid_q, pid_level, votes, best_other, other_runs, jcount,
                    (m_run, m_pid, m_rrow))


def _levels(aligned) -> np.ndarray:
    """The grade values a hole may get: 0 and every positive grade in the qrels."""
    g = np.asarray(aligned[0].qrels.grade, np.int64)
    return sorted_distinct(np.concatenate(([0], g[g > 0]))).astype(np.int64)


def level_of(grade: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Level index of each grade (negative grades: level 0, judged not relevant); -1 for NaN."""
    out = np.full(len(grade), -1, np.int64)
    ok = ~np.isnan(grade)
    out[ok] = np.searchsorted(levels, np.maximum(grade[ok], 0).astype(np.int64))
    return out


def _docids(aligned, run, rrow) -> pa.Array:
    """The docids of pool rows (run index, row in the run's ranking), in the given order."""
    run = np.asarray(run)
    if not len(run):
        return pa.array([], pa.string())
    order = np.argsort(run, kind="stable")
    chunks = []
    for i in sorted_distinct(run).tolist():
        at = rrow[order[run[order] == i]]
        chunks.append(take_strings(aligned[i].run.docid, aligned[i].ranked.row[at]))
    docid = pa.concat_arrays(chunks) if len(chunks) > 1 else chunks[0]
    if (run[1:] >= run[:-1]).all():  # rows run by run already (build_pool's): no reordering
        return docid
    back = np.empty(len(order), np.int64)
    back[order] = np.arange(len(order))
    return take_strings(docid, back)


def _pair_ids(keys, qcode, aligned, run, rrow):
    """A dense id per distinct (query, docid) of the zone's rows and each id's first row.
    Pairs are found by a 64-bit key of (query, docid hash) and confirmed on the strings;
    a collision (two docids of one query with one hash) falls back to the strings."""
    _, first, pid = np.unique(keys, return_index=True, return_inverse=True)
    pid = pid.ravel().astype(np.int64)
    docid = _docids(aligned, run, rrow)
    if not strings_equal(docid, np.arange(len(pid)), docid, first[pid]).all():
        import pyarrow.compute as pc

        codes = as_numpy(pc.dictionary_encode(docid).indices).astype(np.int64)
        _, first, pid = np.unique(qcode * (int(codes.max()) + 1) + codes, return_index=True, return_inverse=True)
        pid = pid.ravel().astype(np.int64)
    return pid, first, docid


def _matches(aligned, pid, first, run, rrow, zone, zone_docid, pid_q, pid_hash):
    """(run, pid, 0-based rank, row in its ranking) of every ranked row, at any rank, of a
    pair in the zone: the zone's pairs (query codes ``pid_q``, docid hashes ``pid_hash``)
    indexed as a qrels whose grade is the pid, and every run's rows looked up in it by
    :func:`judged.core.data.grades_of_rows` (one small hash table per query, every match
    confirmed on the docid; two docids of one query with one hash are both found)."""
    if zone is None:  # every row is in the zone already
        pos = np.concatenate([aligned[i].ranked.pos[rrow[run == i]] for i in range(len(aligned))])
        return run.astype(np.int64), pid, pos.astype(np.int64), rrow
    qrels = aligned[0].qrels.index
    by_query = np.argsort(pid_q, kind="stable")
    offsets = np.zeros(len(qrels.query_ids) + 1, np.int64)
    np.cumsum(np.bincount(pid_q, minlength=len(qrels.query_ids)), out=offsets[1:])
    index = QrelsIndex(qrels.query_ids, qrels.query_vocab, offsets, by_query.astype(np.int64),
                       take_strings(zone_docid, first[by_query]), pid_hash[by_query])
    out_run, out_pid, out_pos, out_rrow = [], [], [], []
    for i, a in enumerate(aligned):
        r = a.ranked
        # the query code of every run row, as grades_of_rows reads them: each block of one
        # qid's lines (as read) looked up once, as align does (the blocks given: Arrow's
        # run_end_encode would find them again, and cost 8 MB more for good)
        starts, qids = a.run.qid_blocks
        qcode = np.repeat(qrels.query_codes(qids, (np.arange(len(qids)), qids)), np.diff(np.append(starts, len(a.run))))
        for s in range(0, len(r.q), MATCH_ROWS):  # a block of rows at a time: a few MB, not the whole run's
            found = grades_of_rows(index, r.row[s:s + MATCH_ROWS], qcode, a.run.docid, a.run.docid_hash)
            hit = np.flatnonzero(~np.isnan(found))
            out_run.append(np.full(len(hit), i, np.int64))
            out_pid.append(found[hit].astype(np.int64))
            out_pos.append(r.pos[s + hit].astype(np.int64))
            out_rrow.append(s + hit)
        del qcode
    if not out_run:
        return tuple(np.zeros(0, np.int64) for _ in range(4))
    return tuple(np.concatenate(x) for x in (out_run, out_pid, out_pos, out_rrow))


MATCH_ROWS = 1 << 17  # ranked rows a run's pairs are looked up by, at a time


def _best_other_rank(m_pid, m_unit, m_pos, npid, pid, u) -> np.ndarray:
    """Per zone row (``pid``, unit ``u``): the best 1-based rank of its pair among runs of
    other units (from every run's matching rows ``m_*``)."""
    span = int(m_pos.max()) + 1 if len(m_pos) else 1
    order = np.argsort(m_pid * span + m_pos, kind="stable")  # = lexsort((m_pos, m_pid)), one key
    p, uu, rr = m_pid[order], m_unit[order], m_pos[order] + 1.0
    head = np.r_[True, p[1:] != p[:-1]] if len(p) else np.zeros(0, bool)
    best = np.full(npid, np.inf)
    best_unit = np.full(npid, -1, np.int64)
    best[p[head]] = rr[head]
    best_unit[p[head]] = uu[head]
    second = np.full(npid, np.inf)  # best rank among units other than the best's
    other = uu != best_unit[p]
    po, ro = p[other], rr[other]
    if len(po):
        h2 = np.r_[True, po[1:] != po[:-1]]
        second[po[h2]] = ro[h2]
    out = np.where(best_unit[pid] != u, best[pid], second[pid])
    return np.minimum(out, NOT_RETRIEVED_RANK)


# ---------------------------------------------------------------------------
# Worlds: which judgments are missing


@dataclass
class World:
    """The collection with the judgments of some pairs removed (``removed`` per pid)."""

    removed: np.ndarray
    row_level: np.ndarray  # per pool row: grade level, -1 unjudged here
    jcount: np.ndarray  # (queries, levels) judgments here
    unit_removed: np.ndarray  # (units, queries, levels): judgments only each unit contributed, still judged here


def make_world(pool: HolePool, removed=None) -> World:
    """The world where the pids in ``removed`` (a bool mask, default none) are unjudged."""
    npid, L, nq = pool.n_pids, len(pool.levels), pool.jcount.shape[0]
    removed = np.zeros(npid, bool) if removed is None else np.asarray(removed, bool)
    row_level = np.where(removed[pool.pid], -1, pool.level)
    gone = removed & (pool.pid_level >= 0)
    jcount = pool.jcount - _counts(pool.pid_q[gone], pool.pid_level[gone], nq, L)
    own = (pool.owner >= 0) & (pool.pid_level >= 0) & ~removed
    flat = np.bincount((pool.owner[own] * nq + pool.pid_q[own]) * L + pool.pid_level[own],
                       minlength=pool.n_units * nq * L)
    return World(removed, row_level, jcount, flat.reshape(pool.n_units, nq, L))


def _counts(q, lv, nq, L) -> np.ndarray:
    return np.bincount(q * L + lv, minlength=nq * L).reshape(nq, L)


def unit_removal(pool: HolePool, units) -> np.ndarray:
    """Pids whose judgment only the given units contributed (their leave-out)."""
    return np.isin(pool.owner, np.asarray(list(units), np.int64)) & (pool.pid_level >= 0)


# ---------------------------------------------------------------------------
# Features


def features(pool: HolePool, world: World, rows: np.ndarray, minus: np.ndarray) -> np.ndarray:
    """The feature matrix (:data:`FEATURES`) of pool ``rows`` as holes, each read in
    ``world`` without the judgments its unit ``minus[i]`` alone contributed (-1: none)."""
    rows = np.asarray(rows, np.int64)
    minus = np.asarray(minus, np.int64)
    stats = _world_stats(pool, world)
    run = pool.run[rows]
    q = pool.qcode[rows]
    off = minus >= 0
    # the run's judged top k, over all queries and in this query, without its unit's contributions
    jr, rr = stats["run_judged"][run], stats["run_rel"][run]
    key = _run_query_key(pool, run, q)
    jq, rq = stats["rq_judged"][key], stats["rq_rel"][key]
    jr = jr - np.where(off, stats["own_judged"][run], 0)
    rr = rr - np.where(off, stats["own_rel"][run], 0)
    jq = jq - np.where(off, stats["own_rq_judged"][key], 0)
    rq = rq - np.where(off, stats["own_rq_rel"][key], 0)
    run_share = (rr + 1.0) / (jr + 2.0)
    run_query_share = (rq + 2.0 * run_share) / (jq + 2.0)
    # the query's judgments, without the unit's contributions
    qj, qr = stats["q_judged"][q].astype(np.float64), stats["q_rel"][q].astype(np.float64)
    if off.any():
        ur = world.unit_removed[minus[off], q[off]]
        qj[off] -= ur.sum(axis=1)
        qr[off] -= ur[:, 1:].sum(axis=1)
    query_share = (qr + 1.0) / (qj + 2.0)
    return np.column_stack([
        np.log2(pool.pos[rows] + 1.0),
        pool.votes[rows] / np.maximum(pool.other_runs[rows], 1),
        np.log2(pool.best_other[rows] + 1.0),
        _logit(run_share), _logit(query_share), _logit(run_query_share)])


def _run_query_key(pool, run, q):
    return run.astype(np.int64) * pool.jcount.shape[0] + q


def _world_stats(pool: HolePool, world: World) -> dict:
    held = pool._memo.get("stats")
    if held is not None and held[0] is world:
        return held[1]
    n, nq = pool.n_runs, pool.jcount.shape[0]
    top = pool.pos < pool.k
    judged = top & (world.row_level >= 0)
    rel = judged & (world.row_level >= 1)
    own = (pool.owner[pool.pid] == pool.unit[pool.run])
    rk = _run_query_key(pool, pool.run, pool.qcode)
    size = n * nq
    st = {
        "run_judged": np.bincount(pool.run[judged], minlength=n), "run_rel": np.bincount(pool.run[rel], minlength=n),
        "own_judged": np.bincount(pool.run[judged & own], minlength=n),
        "own_rel": np.bincount(pool.run[rel & own], minlength=n),
        "rq_judged": np.bincount(rk[judged], minlength=size), "rq_rel": np.bincount(rk[rel], minlength=size),
        "own_rq_judged": np.bincount(rk[judged & own], minlength=size),
        "own_rq_rel": np.bincount(rk[rel & own], minlength=size),
        "q_judged": world.jcount.sum(axis=1), "q_rel": world.jcount[:, 1:].sum(axis=1),
    }
    pool._memo["stats"] = (world, st)
    return st


def _logit(p):
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


# ---------------------------------------------------------------------------
# The grade model


@dataclass
class HoleModel:
    """P(grade level) of a hole from its features: a continuation-ratio logistic model,
    one ridge-penalised logistic regression per level l for P(level >= l | level >= l-1)."""

    levels: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # (levels - 1, 1 + features)

    def probabilities(self, X: np.ndarray) -> np.ndarray:
        """(holes, levels) grade distribution of each hole."""
        Z = self._design(X)
        out = np.zeros((len(X), len(self.levels)))
        reach = np.ones(len(X))
        for l in range(1, len(self.levels)):
            p = _sigmoid(Z @ self.coef[l - 1])
            out[:, l - 1] = reach * (1 - p)
            reach = reach * p
        out[:, -1] = reach
        return out

    def grade_probabilities(self, pool: "HolePool", world: "World", rows: np.ndarray, minus: np.ndarray) -> np.ndarray:
        """:meth:`probabilities` of pool ``rows`` as holes (their :func:`features` in ``world``
        without the judgments of units ``minus``): a grade source of :func:`score_cases`."""
        return self.probabilities(features(pool, world, rows, minus))

    def _design(self, X):
        return np.column_stack([np.ones(len(X)), (X - self.center) / self.scale])

    def to_dict(self) -> dict:
        """The fitted coefficients, per level, on features standardised by ``center`` and ``scale``."""
        return {"features": list(FEATURES), "levels": [int(v) for v in self.levels],
                "center": self.center.tolist(), "scale": self.scale.tolist(),
                "coefficients": {f"P(grade>={int(self.levels[l])} | grade>={int(self.levels[l - 1])})":
                                 dict(zip(["intercept", *FEATURES], self.coef[l - 1].tolist()))
                                 for l in range(1, len(self.levels))}}


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def fit_model(X: np.ndarray, y: np.ndarray, levels: np.ndarray, ridge: float | None = None) -> HoleModel:
    """Fit :class:`HoleModel` to features ``X`` and level indices ``y`` (Newton's method,
    to convergence, on standardised features)."""
    return GradeDesign(X, y, levels, ridge).fit()


class GradeDesign:
    """The standardised design of one set of pseudo-holes: fitted whole (:meth:`fit`,
    Newton's method to convergence) and without one group of them (:meth:`fit_without`:
    the calibration's leave-one-unit-out fits). A leave-out fit is one Newton step from
    the whole fit, with the group's gradient and Hessian taken out (the approximate
    leave-one-out of Rad & Maleki, JRSS-B 2020), continued to convergence when the group
    holds more than :data:`LARGE_GROUP` of the pseudo-holes."""

    def __init__(self, X: np.ndarray, y: np.ndarray, levels: np.ndarray, groups: np.ndarray | None = None,
                 ridge: float | None = None):
        self.levels = levels
        self.ridge = RIDGE if ridge is None else ridge
        n = len(X)
        self.center = X.mean(axis=0) if n else np.zeros(X.shape[1])
        scale = X.std(axis=0) if n else np.ones(X.shape[1])
        self.scale = np.where(scale > 1e-9, scale, 1.0)
        Z = np.column_stack([np.ones(n), (X - self.center) / self.scale])
        self.groups = np.zeros(n, np.int64) if groups is None else np.asarray(groups, np.int64)
        # level l: the pseudo-holes that reached level l-1, and whether they reached l
        self.parts = []
        for l in range(1, len(levels)):
            at = np.flatnonzero(y >= l - 1)
            self.parts.append((at, np.ascontiguousarray(Z[at]), (y[at] >= l).astype(np.float64)))
        self.whole = None
        self._by_group = None

    def fit(self) -> HoleModel:
        """The fit on every pseudo-hole."""
        if self.whole is None:
            coef = np.zeros((len(self.parts), len(self.center) + 1))
            for l, (_, Z, t) in enumerate(self.parts):
                coef[l] = _newton(Z, t, np.ones(len(t)), self.ridge)
            self.whole = HoleModel(self.levels, self.center, self.scale, coef)
        return self.whole

    def fit_without(self, group: int) -> HoleModel:
        """The fit without the pseudo-holes of ``group``."""
        whole = self.fit()
        if self._by_group is None:
            self._by_group = [self._group_parts(l) for l in range(len(self.parts))]
        coef = whole.coef.copy()
        for l, (labels, n_g, pos_g, grad, hess, H, n, pos) in enumerate(self._by_group):
            at = np.searchsorted(labels, group)
            if at >= len(labels) or labels[at] != group:
                continue  # the group never reached this level: the whole fit stands
            n_keep, pos_keep = n - n_g[at], pos - pos_g[at]
            if n_keep == 0 or pos_keep == 0 or pos_keep == n_keep or pos == 0 or pos == n:
                coef[l] = 0.0  # nothing to separate: the smoothed base rate, as _newton gives it
                coef[l, 0] = math.log((pos_keep + 0.5) / (n_keep - pos_keep + 0.5))
                continue
            coef[l] = whole.coef[l] - np.linalg.solve(H - hess[at], grad[at])
            if n_g[at] > LARGE_GROUP * n:  # a large share moves the fit far: Newton's method on from there
                rows, Z, t = self.parts[l]
                coef[l] = _newton(Z, t, (self.groups[rows] != group).astype(np.float64), self.ridge, coef[l])
        return HoleModel(self.levels, self.center, self.scale, coef)

    def _group_parts(self, l: int):
        """Per group (sorted labels): its count, positives, gradient and Hessian of the
        log-likelihood at the whole fit; the whole penalised Hessian; the totals."""
        at, Z, t = self.parts[l]
        b = self.whole.coef[l]
        p = _sigmoid(Z @ b)
        W = p * (1 - p)
        d = Z.shape[1]
        penalty = np.full(d, self.ridge)
        penalty[0] = 0.0
        H = (Z * W[:, None]).T @ Z + np.diag(penalty) + 1e-9 * np.eye(d)
        g = self.groups[at]
        order = np.argsort(g, kind="stable")
        gs = g[order]
        if not len(gs):
            empty = np.zeros(0)
            return (np.zeros(0, np.int64), empty, empty, np.zeros((0, d)), np.zeros((0, d, d)), H, 0.0, 0.0)
        starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
        Zs, ts, ps, Ws = Z[order], t[order], p[order], W[order]
        grad = np.add.reduceat(Zs * (ts - ps)[:, None], starts, axis=0)
        # the Hessians' upper triangles, mirrored: z_i z_j = z_j z_i, so the same bits as the whole
        iu, ju = np.triu_indices(d)
        upper = np.add.reduceat(Zs[:, iu] * Zs[:, ju] * Ws[:, None], starts, axis=0)
        hess = np.empty((len(starts), d, d))
        hess[:, iu, ju] = upper
        hess[:, ju, iu] = upper
        n_g = np.add.reduceat(np.ones(len(gs)), starts)
        pos_g = np.add.reduceat(ts, starts)
        return gs[starts], n_g, pos_g, grad, hess, H, float(len(t)), float(t.sum())


def _newton(Z, t, w, ridge, start=None, iterations: int = 50, tolerance: float = 1e-8) -> np.ndarray:
    """Ridge-penalised logistic regression with row weights ``w`` (intercept not penalised)."""
    d = Z.shape[1]
    n = float(w.sum())
    pos = float((w * t).sum())
    b = np.zeros(d)
    b[0] = math.log((pos + 0.5) / (n - pos + 0.5))
    if n == 0 or pos == 0 or pos == n:  # nothing to separate: the smoothed base rate
        return b
    if start is not None:
        b = start.copy()
    penalty = np.full(d, ridge)
    penalty[0] = 0.0
    penalty_matrix = np.diag(penalty) + 1e-9 * np.eye(d)
    wt = w * t
    for _ in range(iterations):
        p = _sigmoid(Z @ b)
        H = (Z * (w * p * (1 - p))[:, None]).T @ Z + penalty_matrix
        step = np.linalg.solve(H, Z.T @ (wt - w * p) - penalty * b)
        b = b + step
        if np.abs(step).max() < tolerance:
            break
    return b


# ---------------------------------------------------------------------------
# Scoring with holes filled by draws


@dataclass
class Case:
    """Run ``run`` scored in a world without unit ``minus``'s own judgments (-1: none),
    its holes drawn ``draws`` times from ``model`` (None: holes count as not relevant)."""

    run: int
    minus: int = -1
    model: HoleModel | None = None
    draws: int = 1
    measure: Measure | None = None  # None: the call's measure
    # pool rows of the other runs' holes (one per document) the run lacks in its list: drawn with
    # its own (from the same model), they enter only its ideal and R (judging the pool)
    ideal_rows: np.ndarray | None = None


@dataclass
class CaseScore:
    per_query: np.ndarray  # mean over draws, per evaluated query of the run
    mean: float  # mean over queries
    sd: float  # standard deviation of the mean over queries under the model (0 without draws)
    holes: int  # holes filled
    median: float = 0.0  # median over draws of the mean over queries
    ideal_holes: int = 0  # the pool's other holes drawn into the ideal and R


MAX_STACKED_ROWS = 8_000_000  # rows scored at once (draws are split to stay below)


def fill_depth(measure: Measure, pool: HolePool) -> int:
    """Holes estimated: those ranked above min(cutoff, max(k, depth)); deeper ones count as not relevant."""
    d = max(pool.k, pool.depth)
    return d if measure.cutoff is None else min(measure.cutoff, d)


def score_cases(measure, pool: HolePool, world: World, cases: list, seed: int = 0,
                maxgrade: int | None = None) -> list:
    """Score every case; cases are stacked as pseudo-queries and scored by one call of
    the measure's kernel per group of at most :data:`MAX_STACKED_ROWS` rows. Only the
    queries with holes to fill are drawn more than once."""
    measure = Measure.parse(measure)
    preps = [_prepare(measure, pool, world, case, seed, maxgrade) for case in cases]
    batch, rows_in_batch = [], 0
    for prep in preps:
        for part in prep["parts"]:
            size = part["draws"] * len(part["q"])
            if batch and rows_in_batch + size > MAX_STACKED_ROWS:
                _score_batch(pool, batch)
                batch, rows_in_batch = [], 0
            batch.append((prep, part))
            rows_in_batch += size
    if batch:
        _score_batch(pool, batch)
    return [_finish(p) for p in preps]


def _prepare(measure, pool, world, case: Case, seed, maxgrade) -> dict:
    """A case's rows, grades in its world, judgments per query and level, the holes to
    fill and their grade distributions, split into parts: queries without holes to fill
    (scored once) and queries with some (scored once per draw, in chunks)."""
    m = _zero(case.measure or measure)
    i = case.run
    a = pool.aligned[i]
    rows = pool.list_rows(i, list_depth(m))
    lv = world.row_level[rows]
    if case.minus >= 0:
        lv = np.where(pool.owner[pool.pid[rows]] == case.minus, -1, lv)
    grade = np.where(lv >= 0, a.ranked.grade[pool.rrow[rows]], np.nan)
    local_q = a.ranked.q[pool.rrow[rows]]
    codes = np.asarray(a.qid_codes, np.int64)
    jc = world.jcount[codes]
    if case.minus >= 0:
        jc = jc - world.unit_removed[case.minus][codes]
    nq = a.n_queries
    prep = {"measure": m, "a": a, "nq": nq, "sum": np.zeros(nq), "sumsq": np.zeros(nq), "draws": 1, "holes": 0,
            "parts": [], "fixed": 0.0}
    fill = np.isnan(grade) & (pool.pos[rows] < fill_depth(m, pool))
    extra = np.zeros(0, np.int64) if case.ideal_rows is None or case.model is None or m.name == "DCG" \
        else np.asarray(case.ideal_rows, np.int64)
    local = np.full(pool.jcount.shape[0], -1, np.int64)
    local[codes] = np.arange(len(codes))
    extra = extra[local[pool.qcode[extra]] >= 0]
    extra_q = local[pool.qcode[extra]]
    draws = max(1, int(case.draws)) if case.model is not None and (fill.any() or len(extra)) else 1
    with_holes = np.zeros(nq, bool)
    if draws > 1:
        with_holes[local_q[fill]] = True
        with_holes[extra_q] = True
    values = pool.levels.astype(np.float64)
    if maxgrade is not None:
        values = np.minimum(values, maxgrade)
    for drawn in (False, True):
        queries = np.flatnonzero(with_holes == drawn)
        if not len(queries):
            continue
        sel = np.flatnonzero(with_holes[local_q] == drawn)
        remap = np.full(nq, -1, np.int64)
        remap[queries] = np.arange(len(queries))
        part = {"queries": queries, "q": remap[local_q[sel]], "pos": pool.pos[rows[sel]], "grade": grade[sel],
                "jc": jc[queries], "draws": 1, "fill": None, "probs": None, "values": values,
                "extra_q": np.zeros(0, np.int64)}
        if drawn:
            f = np.flatnonzero(fill[sel])
            probs = case.model.grade_probabilities(pool, world, np.concatenate((rows[sel][f], extra)),
                                                   np.full(len(f) + len(extra), case.minus))
            part.update(fill=f, probs=probs, draws=draws, extra_q=remap[extra_q],
                        rng=np.random.default_rng([seed, i, case.minus + 1, draws]))
            prep.update(draws=draws, holes=len(f), per_draw=np.zeros(draws), ideal_holes=len(extra))
        per_chunk = max(1, MAX_STACKED_ROWS // max(len(sel), 1))
        done = 0
        while done < part["draws"]:
            c = min(per_chunk, part["draws"] - done)
            prep["parts"].append({**part, "draws": c, "first": done})
            done += c
    return prep


def _needed_counts(m: Measure, jc: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Judgments per query and level the measure reads: for nDCG (ideal=judged) the
    cutoff largest positive gains (nERR's ideal: the cutoff largest positive grades), for AP
    and R every level >= rel, for Compat every level > 0, else none."""
    if m.name == "nDCG" and m.ideal == "judged" or m.name == "nERR":
        gains = m.gain(levels.astype(np.float64)) if m.name == "nDCG" else levels.astype(np.float64)
        order = np.argsort(-gains, kind="stable")
        c = jc[:, order] * (gains[order] > 0)
        if m.cutoff is not None:
            before = np.cumsum(c, axis=1) - c
            c = np.clip(m.cutoff - before, 0, c)
        out = np.zeros_like(jc)
        out[:, order] = c
        return out
    if m.name in ("AP", "R"):
        return jc * (levels >= m.rel)[None, :]
    if m.name == "Compat":  # its ideal: every relevant judgment (grade > 0)
        return jc * (levels > 0)[None, :]
    return np.zeros_like(jc)


def _score_batch(pool: HolePool, batch: list) -> None:
    groups = {}
    for prep, part in batch:
        groups.setdefault(prep["measure"], []).append((prep, part))
    for m, items in groups.items():
        _score_group(m, pool, items)


def _score_group(m: Measure, pool: HolePool, items: list) -> None:
    """One measure's parts, stacked as pseudo-queries (part, draw, query) and scored by
    the measure's kernel; nDCG's ideal comes from the judgments' counts per grade.

    nDCG (ideal=judged) and DCG without condensing are sums over ranks: a drawn part's
    rows are scored once with its holes unjudged, and each draw adds its holes' gains
    times their discounts (the drawn grades change nothing else but nDCG's ideal, which
    comes from counts). Other measures score every draw's whole ranking."""
    L = len(pool.levels)
    by_counts = m.name == "nDCG" and m.ideal == "judged"
    additive = (by_counts or m.name == "DCG") and m.unjudged != "condensed"
    table = _ideal_table(m, pool, items) if by_counts and additive else None
    q_parts, pos_parts, g_parts, jq_parts, jg_parts, count_parts = [], [], [], [], [], []
    base, ibase, spans = 0, 0, []
    for prep, part in items:
        d, nq, n = part["draws"], len(part["queries"]), len(part["q"])
        drawn = added = drawn_keys = None
        if part["probs"] is not None and additive and (table is not None or not by_counts):
            # the draws only summed: the holes' gains per draw (and the ideal's keys), drawn
            # and summed in one pass
            added, drawn_keys = _drawn_sums(m, part, table)
        elif part["probs"] is not None:
            drawn = _draw(part["probs"], d, part["rng"])
        if additive and drawn is not None:  # the ranking once, the holes' gains per draw
            f = part["fill"]
            fpos, fq = part["pos"][f], part["q"][f]
            gain = m.gain(part["values"].astype(np.float64))
            inside = np.ones(len(f), bool) if m.cutoff is None else fpos < m.cutoff
            drawn_in, rank = drawn[:, :len(f)][:, inside], (fpos[inside] + 1)[None, :]
            added = _per_draw_sums(d, nq, fq[inside], lambda s, e: m.discount.divide(gain[drawn_in[s:e]], rank))
        rank_d = 1 if added is not None else d
        shift = base + np.arange(rank_d, dtype=np.int64)[:, None] * nq
        q = (shift + part["q"][None, :]).ravel()
        grade = np.tile(part["grade"], rank_d) if rank_d > 1 else part["grade"].copy()
        needed = _needed_counts(m, part["jc"], pool.levels)
        if table is not None:  # the ideal's key: the judgments' and the drawn holes' counts in radix
            key = np.tile(needed @ table[1], d)
            if drawn_keys is not None:
                key += drawn_keys.ravel().astype(np.int64)
            need = table[0][key]
        else:
            need = np.tile(needed, (d, 1))
        if drawn is not None:
            if by_counts and table is None:  # the run's holes and the pool's others alike enter the ideal
                hole_q = np.arange(d, dtype=np.int64)[:, None] * nq + np.concatenate(
                    (part["q"][part["fill"]], part["extra_q"]))[None, :]
                need += np.bincount((hole_q.ravel() * L + _capped_level(pool, part["values"])[drawn].ravel()),
                                    minlength=d * nq * L).reshape(d * nq, L)
            if not additive:
                nf = len(part["fill"])
                at = (np.arange(d, dtype=np.int64)[:, None] * n + part["fill"][None, :]).ravel()
                grade[at] = part["values"][drawn[:, :nf]].ravel()
                if not by_counts:  # judgments: the run's drawn holes, and the pool's others (R)
                    jq_parts.append(q[at])
                    jg_parts.append(part["values"][drawn[:, :nf]].ravel().astype(np.int64))
                    if len(part["extra_q"]):
                        jq_parts.append((base + np.arange(d, dtype=np.int64)[:, None] * nq
                                         + part["extra_q"][None, :]).ravel())
                        jg_parts.append(part["values"][drawn[:, nf:]].ravel().astype(np.int64))
        if by_counts:
            count_parts.append(need)
        elif not additive:
            cnt = need.ravel()
            jq_parts.append(np.repeat(np.repeat(base + np.arange(d * nq, dtype=np.int64), L), cnt))
            jg_parts.append(np.repeat(np.tile(pool.levels, d * nq), cnt))
        q_parts.append(q)
        pos_parts.append(np.tile(part["pos"], rank_d) if rank_d > 1 else part["pos"])
        g_parts.append(grade)
        spans.append((prep, part, base, ibase, d, nq, rank_d, added))
        base += rank_d * nq
        ibase += d * nq
    q = np.concatenate(q_parts)
    ranked = Ranked(base, q, np.concatenate(pos_parts), np.concatenate(g_parts), np.zeros(len(q), np.int64),
                    block_offsets(q, base))
    ideal = None
    if additive:
        numerator = dcg(m, ranked, base)
        if table is not None:
            ideal = np.concatenate(count_parts)
        elif by_counts:
            ideal = ideal_dcg_of_counts(m, np.concatenate(count_parts), pool.levels)
        values = numerator
    elif by_counts:
        numerator = dcg(m, ranked, base, condensed=m.unjudged == "condensed")
        ideal = ideal_dcg_of_counts(m, np.concatenate(count_parts), pool.levels)
        values = np.zeros(base)
        np.divide(numerator, ideal, out=values, where=ideal > 0)
    else:
        jq, jg = np.concatenate(jq_parts), np.concatenate(jg_parts)
        order = np.argsort(jq, kind="stable")
        jq, jg = jq[order], jg[order]
        judgments = Judgments(base, jq, jg, block_offsets(jq, base))
        stacked = replace(items[0][0]["a"], qids=np.arange(base), ranked=ranked, judgments=judgments)
        values = m.compute(stacked)
    for prep, part, start, istart, d, nq, rank_d, added in spans:
        v = values[start:start + rank_d * nq].reshape(rank_d, nq)
        if additive:
            if added is not None:
                v = v + added
            if ideal is not None:
                i = ideal[istart:istart + d * nq].reshape(d, nq)
                out = np.zeros(np.broadcast_shapes(v.shape, i.shape))
                np.divide(v, i, out=out, where=i > 0)
                v = out
        if part["probs"] is None:  # scored once: as if every draw gave this value
            prep["sum"][part["queries"]] += v[0] * prep["draws"]
            prep["sumsq"][part["queries"]] += v[0] * v[0] * prep["draws"]
            prep["fixed"] += float(v[0].sum())
        else:
            prep["sum"][part["queries"]] += v.sum(axis=0)
            prep["sumsq"][part["queries"]] += (v * v).sum(axis=0)
            prep["per_draw"][part["first"]:part["first"] + d] += v.sum(axis=1)


def _capped_level(pool: HolePool, values: np.ndarray) -> np.ndarray:
    """Per drawn level, the level its grade counts as in the ideal: the level of its value
    after ``maxgrade`` caps it (itself when uncapped; when a capped value is no grade of
    the qrels, the drawn level, as the counts have no column for it)."""
    at = np.minimum(np.searchsorted(pool.levels, values), len(pool.levels) - 1)
    return np.where(pool.levels[at] == values, at, np.arange(len(values)))


MAX_IDEAL_TABLE = 1 << 20  # count combinations tabulated at most


def _ideal_table(m: Measure, pool: HolePool, items: list):
    """(IDCG per key, radix per level) when nDCG's ideal can be read from a table: a
    query's counts per grade level, judged (at most the cutoff, :func:`_needed_counts`)
    plus drawn holes (at most the cutoff too: holes are filled above it), written in
    radix 2 x cutoff + 1 over the levels of positive gain, index every combination's
    IDCG, computed once by :func:`ideal_dcg_of_counts` (the same bits). None when the
    measure has no cutoff or the table would be large."""
    if m.cutoff is None:
        return None
    if any(not np.array_equal(p["values"], pool.levels) for _, p in items):
        return None  # maxgrade caps the drawn grades: the counts path decides
    for _, p in items:  # more holes to draw in a query than the cutoff (the pool's others): the counts path
        if p["probs"] is not None and len(p["probs"]) and np.bincount(
                np.concatenate((p["q"][p["fill"]], p["extra_q"]))).max() > m.cutoff:
            return None
    positive = np.flatnonzero(m.gain(pool.levels.astype(np.float64)) > 0)
    radix = 2 * m.cutoff + 1
    size = radix ** len(positive)
    if size > MAX_IDEAL_TABLE:
        return None
    memo_key = ("ideal-table", str(m))
    if memo_key not in pool._memo:
        L = len(pool.levels)
        place = np.zeros(L, np.int64)
        place[positive] = radix ** np.arange(len(positive), dtype=np.int64)
        keys = np.arange(size, dtype=np.int64)
        counts = np.zeros((size, L), np.int64)
        for j, lv in enumerate(positive):
            counts[:, lv] = keys // radix ** j % radix
        pool._memo[memo_key] = (ideal_dcg_of_counts(m, counts, pool.levels), place)
    return pool._memo[memo_key]


DRAW_CHUNK = 1 << 18  # (draw, hole) cells drawn or summed at once: a few MB, not (draws x holes) x 8 bytes


def _draw(probs: np.ndarray, draws: int, rng) -> np.ndarray:
    """(draws, holes) level indices drawn from each hole's distribution (bytes up to 256
    levels: indices for numpy, not numbers to add). Uniforms drawn a few draws at a time
    (:data:`DRAW_CHUNK`): the generator fills them in order, so the same numbers."""
    cum = np.cumsum(probs, axis=1)
    cum[:, -1] = 1.0
    n = len(probs)
    # the levels each draw passes, counted in bytes (up to 256 levels) through one buffer of
    # flags: the same integers as int64 sums of the comparisons, in half the time
    count = np.zeros((draws, n), np.uint8 if probs.shape[1] <= 256 else np.int64)
    step = max(1, DRAW_CHUNK // max(n, 1))
    above = np.empty((min(step, draws), n), bool)
    for s in range(0, draws, step):
        u = rng.random((min(draws, s + step) - s, n))
        for l in range(probs.shape[1] - 1):
            count[s:s + len(u)] += np.greater(u, cum[:, l], out=above[:len(u)])
    return count


def _drawn_sums(m: Measure, part: dict, table) -> tuple:
    """(d, nq) per draw and query of a drawn part: the sum of its holes' gains times their
    discounts (holes ranked below the cutoff add 0.0); with nDCG's ideal ``table``, also the
    sum of the drawn levels' radix places (the ideal's key; else None). The holes' levels
    drawn as :func:`_draw` draws them (the same uniforms, a few draws at a time) and summed
    as :func:`_per_draw_sums` sums them, in one pass (:func:`judged.core.kernels.draws.drawn_sums`)."""
    d, nq, f, probs = part["draws"], len(part["queries"]), part["fill"], part["probs"]
    fpos = part["pos"][f]
    gain = m.gain(part["values"].astype(np.float64))
    inside = np.zeros(len(probs), bool)  # the pool's other holes (after the run's own) enter no DCG
    inside[:len(f)] = True if m.cutoff is None else fpos < m.cutoff
    weights = np.zeros((1 if table is None else 2, len(probs), len(gain)))
    weights[0][inside] = m.discount.divide(gain[None, :], (fpos[inside[:len(f)]] + 1)[:, None])
    if table is not None:
        weights[1] = table[1][None, :]
    cum = np.cumsum(probs, axis=1)
    cum[:, -1] = 1.0
    out = np.empty((d, len(weights), nq))
    step = max(1, DRAW_CHUNK // max(len(probs), 1))
    hole_q = np.concatenate((part["q"][f], part["extra_q"]))
    for s in range(0, d, step):
        u = part["rng"].random((min(d, s + step) - s, len(probs)))
        out[s:s + len(u)] = drawn_sums(u, cum, hole_q, weights, nq)
    return out[:, 0], (out[:, 1] if table is not None else None)


def _per_draw_sums(d: int, nq: int, q: np.ndarray, weights_of) -> np.ndarray:
    """(d, nq): per draw and query, the sum of ``weights_of(s, e)`` ((e - s, len(q)): draws
    s..e-1 of the holes of queries ``q``), a few draws at a time (:data:`DRAW_CHUNK`); each
    sum adds its terms in np.bincount's order, so the same bits as all draws at once."""
    out = np.empty((d, nq))
    step = max(1, DRAW_CHUNK // max(len(q), 1))
    for s in range(0, d, step):
        e = min(d, s + step)
        at = (np.arange(e - s, dtype=np.int64)[:, None] * nq + q[None, :]).ravel()
        out[s:e] = np.bincount(at, weights=weights_of(s, e).ravel(), minlength=(e - s) * nq).reshape(e - s, nq)
    return out


def _finish(prep) -> CaseScore:
    d, nq = prep["draws"], prep["nq"]
    mean_q = prep["sum"] / d
    sd = 0.0
    if d > 1 and nq:
        var_q = np.maximum(prep["sumsq"] - d * mean_q * mean_q, 0.0) / (d - 1)
        sd = float(math.sqrt(var_q.sum())) / nq
    mean = float(mean_q.mean()) if nq else 0.0
    middle = median((prep["per_draw"] + prep["fixed"]) / nq) if d > 1 and nq else mean
    return CaseScore(mean_q, mean, sd, prep["holes"], middle, prep.get("ideal_holes", 0))


def _zero(measure: Measure) -> Measure:
    if measure.name not in BOUNDED:
        raise MeasureError(f"the hole estimate is defined for {', '.join(BOUNDED)}, not {measure.name}")
    return replace(measure, unjudged="zero" if measure.unjudged in ("min", "max") else measure.unjudged,
                   maxgrade=None)


# ---------------------------------------------------------------------------
# The estimate with its interval


@dataclass
class RunEstimate:
    """One run's estimate: per-query values, their mean, the model's standard deviation of
    that mean, and the interval (``interval``: 'conformal', 'bounds' or 'exact')."""

    per_query: np.ndarray
    mean: float
    sd: float
    low: float
    high: float
    interval: str
    holes: int


@dataclass
class HoleEstimates:
    """The estimates of a set of runs and how they were made (:meth:`describe`)."""

    method: str  # METHOD or FALLBACK
    measure: Measure
    level: float
    runs: dict  # run index -> RunEstimate
    info: dict  # fit, calibration, coverage, fallback reason
    model: HoleModel | None = None

    def describe(self) -> dict:
        """The method, its source, what it was fitted on, the interval's nominal level and
        its measured coverage (the JSON ``estimate`` object)."""
        source = (SOURCE if self.method == METHOD else self.info["prior"]["source"] if "prior" in self.info else
                  f"holes counted as not relevant (trec_eval); interval = the {self.bounds} bounds")
        return {"method": self.method, "source": source,
                "level": self.level, **self.info,
                "model": self.model.to_dict() if self.model is not None else None}

    @property
    def bounds(self) -> str:
        """What the interval falls back to: the measure's 'exact' or 'conservative' bounds."""
        return self.measure.family.bounds

    def sentence(self) -> str:
        """One line: the method, what it was fitted on, the interval and its coverage."""
        i = self.info
        if self.method == FALLBACK:
            return (f"estimate: fallback ({FALLBACK}: holes counted as not relevant; interval = the {self.bounds} "
                    f"bounds): {i['fallback']}")
        fit = i["fit"]
        refs = f", {fit['reference_runs']} of them reference runs" if fit.get("reference_runs") else ""
        if "prior" in i:
            text = f"estimate: {self.method}, {i['prior']['source']}"
            if i.get("uncalibrated"):
                return text + f"; interval = the {self.bounds} bounds, not an estimate interval: {i['uncalibrated']}"
        else:
            text = (f"estimate: {METHOD}, a grade model of holes fitted on {fit['pseudo_holes']} leave-one-run-out "
                    f"pseudo-holes from {fit['units_with_pseudo_holes']} of {fit['units']} {fit['unit']}s{refs} "
                    f"({fit['relevant_share']:.1%} relevant; pool depth {fit['depth']})")
        cal = i["calibration"]
        if cal["coverage"] is None:
            text += (f"; interval = the {self.bounds} bounds, not an estimate interval ({cal['units']} {fit['unit']}s "
                     f"with leave-one-out residuals, a {self.level:.0%} conformal interval needs {cal['units_needed']})")
        else:
            text += (f"; {self.level:.0%} conformal interval, measured coverage {cal['coverage']:.1%} "
                     f"({cal['covered']}/{cal['runs']} runs, leave-one-{fit['unit']}-out on this collection)")
            lo = i.get("loro")
            if lo and lo["mae_zero"] is not None:
                text += (f"; leave-one-{fit['unit']}-out MAE {lo['mae_estimate']:.4f} (holes as zero "
                         f"{lo['mae_zero']:.4f})")
        return text


def pseudo_holes(pool: HolePool, world: World) -> np.ndarray:
    """Pool rows that are pseudo-holes in ``world``: judged there, in the run's top
    ``depth``, and contributed by the run's unit alone."""
    return np.flatnonzero((pool.pos < pool.depth) & (world.row_level >= 0)
                          & (pool.owner[pool.pid] == pool.unit[pool.run]))


def conformal_quantile(scores, level: float, groups=None) -> float:
    """The split-conformal quantile (Lei et al., JASA 2018): the ceil((n+1) level)-th
    smallest of n scores, inf when that exceeds n. With ``groups`` (runs held out
    together are exchangeable as groups, not as runs) each of the G groups weighs 1,
    shared by its scores, and the quantile is the smallest score whose cumulative weight
    reaches (G+1) level (the pooled-CDF method of Dunn, Wasserman & Ramdas, JASA 2022);
    with one score per group the two agree."""
    s = np.asarray(scores, np.float64)
    if groups is None:
        s = np.sort(s)
        k = int(math.ceil((len(s) + 1) * level - 1e-12))
        return float(s[k - 1]) if 1 <= k <= len(s) else math.inf
    groups = np.asarray(groups)
    labels, inverse, sizes = np.unique(groups, return_inverse=True, return_counts=True)
    weight = 1.0 / sizes[inverse.ravel()]
    order = np.argsort(s, kind="stable")
    need = (len(labels) + 1) * level - 1e-9
    reached = np.flatnonzero(np.cumsum(weight[order]) >= need)
    return float(s[order[reached[0]]]) if len(reached) else math.inf


def units_needed(level: float) -> int:
    """Fewest leave-one-out residuals giving a finite conformal quantile at ``level``."""
    n = 1
    while math.ceil((n + 1) * level - 1e-12) > n:
        n += 1
    return n


def estimate_runs(measure, pool: HolePool, world: World | None = None, *, targets=None, samples: int = 200,
                  seed: int = 0, level: float = DEFAULT_LEVEL, calibration_draws: int | None = None,
                  bounds: dict | None = None, maxgrade: int | None = None, report_loro: bool = True,
                  source=None, pool_ideal: bool = True) -> HoleEstimates:
    """Estimate ``measure`` for the runs ``targets`` (indices, default all) of ``pool`` in
    ``world`` (default: the qrels as given), with intervals at ``level``.

    ``source``: where the holes' grades come from: None, the grade model fitted on the
    pseudo-holes (``loro-logit``); or a grade source with ``grade_probabilities`` and
    ``fit_without`` (:class:`judged.analyses.hole_priors.RunPrior`), which needs no
    pseudo-holes to estimate, only to calibrate its interval on the same residuals.
    ``pool_ideal`` (default): what judging the targets' pool gives, each target's estimate
    drawing the other targets' holes into its ideal and R too (:func:`pool_hole_rows`).

    ``bounds[i]`` = (mean min, mean max) of run i's exact bounds clips its interval and
    is the interval when it cannot be calibrated (computed when not given).
    ``report_loro``: also score the leave-one-out runs with holes as zero, for the MAE
    comparison :meth:`HoleEstimates.sentence` gives."""
    measure = _zero(Measure.parse(measure))
    calibration_draws = CALIBRATION_DRAWS if calibration_draws is None else calibration_draws
    if not 0 < level < 1:
        raise ConventionError(f"the interval's level must be between 0 and 1, got {level}")
    if samples < 1:
        raise ConventionError(f"the estimate needs at least one sample, got samples={samples}")
    world = make_world(pool) if world is None else world
    targets = list(range(pool.n_runs)) if targets is None else list(targets)
    rows = pseudo_holes(pool, world)
    # learn from the ranks whose holes are estimated: below them, a pool deeper than the
    # judging was (--pool-depth 100 over depth-10 qrels) keeps only the deep documents some
    # other process chose to judge (DL 2019: 0.2% of the top-10 pseudo-holes relevant, 21% of all)
    rows = rows[pool.pos[rows] < fill_depth(measure, pool)]
    y = world.row_level[rows]
    units_with = sorted_distinct(pool.unit[pool.run[rows]])
    unit_word = "run" if pool.n_units == pool.n_runs and (pool.unit == np.arange(pool.n_runs)).all() else "group"
    fit = {"unit": unit_word, "units": pool.n_units, "units_with_pseudo_holes": int(len(units_with)),
           "pseudo_holes": int(len(rows)), "relevant_share": float((y >= 1).mean()) if len(y) else 0.0,
           "depth": pool.depth, "k": pool.k, "holes_estimated_to_rank": fill_depth(measure, pool),
           "features": list(FEATURES)}
    reason = None
    if len(units_with) < 2:
        reason = (f"{counted(len(units_with), unit_word)} contributed judged documents no other {unit_word} has in its "
                  f"top {pool.depth}; leave-one-{unit_word}-out needs at least 2")
    elif len(rows) < MIN_PSEUDO_HOLES:
        reason = (f"{len(rows)} leave-one-{unit_word}-out pseudo-holes (judged documents only one {unit_word} has "
                  f"in its top {pool.depth}); the model needs at least {MIN_PSEUDO_HOLES}")
    if reason is not None and source is not None:  # it estimates; its interval cannot be calibrated
        return _uncalibrated(measure, pool, world, targets, source, samples, seed, level, bounds, maxgrade,
                             {"fit": fit, "fallback": None, "uncalibrated": reason}, pool_ideal)
    if reason is not None:
        zero = score_cases(measure, pool, world, [Case(i) for i in targets], seed, maxgrade)
        bounds = _bounds_for(measure, pool, world, targets, bounds, maxgrade)
        runs = {i: RunEstimate(z.per_query, z.mean, 0.0, *bounds[i], "bounds", 0) for i, z in zip(targets, zero)}
        return HoleEstimates(FALLBACK, measure, level, runs, {"fit": fit, "fallback": reason})

    if source is None:
        X = features(pool, world, rows, pool.unit[pool.run[rows]])
        owner_unit = pool.unit[pool.run[rows]]
        design = GradeDesign(X, y, pool.levels, owner_unit)
        model = design.fit()
    else:
        design = model = source
    # leave-one-unit-out residuals: each unit's runs with its pseudo-holes made holes,
    # estimated by a model fitted without it, against their score with them judged
    cases, meta = [], []
    for u in units_with.tolist():
        m_u = design.fit_without(u)
        for i in np.flatnonzero(pool.unit == u).tolist():
            cases += [Case(i, u, m_u, calibration_draws), Case(i)] + ([Case(i, u)] if report_loro else [])
            meta.append((i, u))
    ideal = pool_hole_rows(measure, pool, world, targets) if pool_ideal else {}
    cases += [Case(i, -1, model, samples, ideal_rows=ideal.get(i)) for i in targets] + [Case(i) for i in targets]
    scored = score_cases(measure, pool, world, cases, seed, maxgrade)
    residuals = []
    per = 3 if report_loro else 2
    for j, (i, u) in enumerate(meta):
        est, truth, *zero = scored[per * j: per * j + per]
        residuals.append((i, u, _point(est) - truth.mean, est.sd, zero[0].mean - truth.mean if zero else math.nan,
                          est.holes))
    target_scores = scored[per * len(meta):]
    est_t, zero_t = target_scores[:len(targets)], target_scores[len(targets):]

    # the conformal scale: residual / the run's own standard deviation under the model
    res = np.array([r[2] for r in residuals])
    sds = np.array([r[3] for r in residuals])
    res_unit = np.array([r[1] for r in residuals], np.int64)
    informative = sds > 0
    ratio = np.abs(res[informative]) / sds[informative]
    ratio_unit = res_unit[informative]
    need = units_needed(level)

    def quantile_without(unit: int) -> float:
        others = ratio_unit != unit
        return conformal_quantile(ratio[others], level, ratio_unit[others])

    covered = [bool(r <= quantile_without(u)) for r, u in zip(ratio, ratio_unit)]
    cal_units = len(sorted_distinct(ratio_unit))
    finite = [math.isfinite(quantile_without(u)) for u in ratio_unit]
    calibration = {"units": int(cal_units), "units_needed": need, "runs": int(len(ratio)),
                   "covered": int(sum(c for c, f in zip(covered, finite) if f)),
                   "coverage": (float(np.mean(covered)) if len(ratio) and all(finite) else None),
                   "draws": calibration_draws,
                   "scale": "the run's standard deviation of the mean over queries under the model's draws"}
    loro = {"runs": len(residuals), "mae_estimate": float(np.mean(np.abs(res))) if len(res) else None,
            "mae_zero": float(np.mean(np.abs([r[4] for r in residuals]))) if residuals and report_loro else None,
            "bias_estimate": float(np.mean(res)) if len(res) else None}
    bounds = _bounds_for(measure, pool, world, targets, bounds, maxgrade)
    runs = {}
    for i, e, z in zip(targets, est_t, zero_t):
        lo, hi = bounds[i]
        if e.holes == 0 and e.ideal_holes == 0:  # exact unless the bounds range over others' holes too
            exact = hi - lo <= 1e-12
            runs[i] = RunEstimate(z.per_query, z.mean, 0.0, z.mean if exact else lo, z.mean if exact else hi,
                                  "exact" if exact else "bounds", 0)
            continue
        qv = quantile_without(int(pool.unit[i]))
        if math.isfinite(qv):
            low, high, kind = max(lo, _point(e) - qv * e.sd), min(hi, _point(e) + qv * e.sd), "conformal"
        else:
            low, high, kind = lo, hi, "bounds"
        runs[i] = RunEstimate(e.per_query, _point(e), e.sd, min(low, _point(e)), max(high, _point(e)), kind, e.holes)
    info = {"fit": fit, "fallback": None, "calibration": calibration, "loro": loro}
    if source is not None:
        info["prior"] = source.describe()
        return HoleEstimates(source.method, measure, level, runs, info, None)
    return HoleEstimates(METHOD, measure, level, runs, info, model)


def _uncalibrated(measure, pool, world, targets, source, samples, seed, level, bounds, maxgrade, info, pool_ideal):
    """The estimates of ``source`` with no leave-one-out residuals to calibrate an interval:
    the interval is the bounds (labelled so: 'bounds', not an estimate interval)."""
    ideal = pool_hole_rows(measure, pool, world, targets) if pool_ideal else {}
    cases = [Case(i, -1, source, samples, ideal_rows=ideal.get(i)) for i in targets] + [Case(i) for i in targets]
    scored = score_cases(measure, pool, world, cases, seed, maxgrade)
    bounds = _bounds_for(measure, pool, world, targets, bounds, maxgrade)
    runs = {}
    for i, e, z in zip(targets, scored[:len(targets)], scored[len(targets):]):
        lo, hi = bounds[i]
        if e.holes == 0 and e.ideal_holes == 0:
            runs[i] = RunEstimate(z.per_query, z.mean, 0.0, z.mean, z.mean, "exact", 0)
        else:
            runs[i] = RunEstimate(e.per_query, _point(e), e.sd, min(lo, _point(e)), max(hi, _point(e)), "bounds",
                                  e.holes)
    info["prior"] = source.describe()
    return HoleEstimates(source.method, measure, level, runs, info, None)


def pool_hole_rows(measure, pool: HolePool, world: World, targets: list) -> dict:
    """Per target run: one pool row for each hole of the other targets' lists (ranked above
    :func:`fill_depth`, unjudged in ``world``) whose document the run does not rank in the
    pool's zone -- the row of its best rank. Drawn beside the run's own holes, they enter its
    ideal and R only: the estimate of what judging the pool of the targets gives."""
    depth = fill_depth(measure, pool)
    rows = np.concatenate([pool.list_rows(i, depth) for i in targets]) if targets else np.zeros(0, np.int64)
    holes = rows[world.row_level[rows] < 0]
    order = np.lexsort((pool.pos[holes], pool.pid[holes]))
    holes = holes[order]
    first = np.concatenate(([True], pool.pid[holes][1:] != pool.pid[holes][:-1])) if len(holes) else np.zeros(0, bool)
    best = holes[first]
    out = {}
    for i in targets:
        mine = np.isin(pool.pid[best], pool.pid[pool.rows_of(i)])
        out[i] = best[~mine]
    return out


def _point(score: CaseScore) -> float:
    """The point estimate: the median over draws of the mean over queries (it minimises
    the expected absolute error; with few likely-relevant holes the mean overshoots more
    often than not)."""
    return score.median


def _bounds_for(measure, pool, world, targets, given, maxgrade) -> dict:
    if given is not None:
        return given
    m = measure if maxgrade is None else replace(measure, maxgrade=int(maxgrade))
    out = {}
    for i in targets:
        lo, hi = exact_bounds(m, world_aligned(pool, world, i))
        out[i] = (float(lo.mean()) if len(lo) else 0.0, float(hi.mean()) if len(hi) else 0.0)
    return out


def world_aligned(pool: HolePool, world: World, i: int) -> Aligned:
    """Run ``i`` aligned as if the qrels lacked the judgments ``world`` removed: those
    pairs unjudged in its ranking and gone from its judgments (scores of it are those of
    the reduced qrels file)."""
    a = pool.aligned[i]
    if not world.removed.any():
        return a
    r = a.ranked
    grade = r.grade.copy()
    m_run, m_pid, m_rrow = pool.matches
    mine = m_run == i
    grade[m_rrow[mine][world.removed[m_pid[mine]]]] = np.nan
    gone = world.removed & (pool.pid_level >= 0)
    # remove one judgment of each gone pair of the run's queries: matched on (query, grade)
    codes = np.asarray(a.qid_codes, np.int64)
    local = np.full(pool.jcount.shape[0], -1, np.int64)
    local[codes] = np.arange(len(codes))
    gq = local[pool.pid_q[gone]]
    ok = gq >= 0
    gq = gq[ok]
    ggrade = _pid_grades(pool)[gone][ok]
    j = a.judgments
    keep = _remove_occurrences(j.q, j.grade, gq, ggrade)
    jq = j.q[keep]
    judgments = Judgments(j.n_queries, jq, j.grade[keep], block_offsets(jq, j.n_queries))
    ranked = Ranked(r.n_queries, r.q, r.pos, grade, r.row, r.offsets)
    return replace(a, ranked=ranked, judgments=judgments)


def _pid_grades(pool: HolePool) -> np.ndarray:
    """Per pid its grade in the qrels as given (NaN unjudged)."""
    if "pid_grade" not in pool._memo:
        g = np.full(pool.n_pids, np.nan)
        for i, a in enumerate(pool.aligned):
            rows = pool.rows_of(i)
            g[pool.pid[rows]] = a.ranked.grade[pool.rrow[rows]]
        pool._memo["pid_grade"] = g
    return pool._memo["pid_grade"]


def _remove_occurrences(q, grade, rq, rgrade) -> np.ndarray:
    """Mask over (q, grade) rows keeping all but, per (query, grade), as many rows as
    (rq, rgrade) lists."""
    keep = np.ones(len(q), bool)
    if not len(rq):
        return keep
    g = grade.astype(np.int64)
    lo = min(int(g.min()), int(rgrade.min()))
    span = max(int(g.max()), int(rgrade.max())) - lo + 1
    key = q.astype(np.int64) * span + (g - lo)
    rkey = rq.astype(np.int64) * span + (rgrade.astype(np.int64) - lo)
    order = np.argsort(key, kind="stable")
    sk = key[order]
    first = np.searchsorted(sk, sk, side="left")
    occurrence = np.arange(len(sk)) - first
    uk, uc = np.unique(rkey, return_counts=True)
    at = np.searchsorted(uk, sk)
    at_c = np.minimum(at, len(uk) - 1)
    n_remove = np.where((at < len(uk)) & (uk[at_c] == sk), uc[at_c], 0)
    keep[order[occurrence < n_remove]] = False
    return keep
