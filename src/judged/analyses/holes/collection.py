"""The collection the hole estimate reads: every run's ranking keyed by (query, document)
(:class:`HolePool`), worlds with some judgments removed (:class:`World`), the pseudo-holes
and the features a hole's grade is predicted from (:data:`FEATURES`). The estimate is
:mod:`judged.analyses.holes.estimate`; docs/holes.md states the method."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa

from ...core.align import Aligned, Judgments, Ranked, block_offsets
from ...core.data import QrelsIndex, as_numpy, grades_of_rows, pair_keys, strings_equal, take_strings
from ...core.errors import ConventionError
from ...core.measures.bounds import sorted_distinct

FEATURES = ("log2 rank", "share of other units' runs retrieving the document",
            "log2 best rank among other units' runs", "logit relevant share of the run's judged top k",
            "logit relevant share of the query's judgments", "logit relevant share of the run's judged top k "
            "for this query")
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
    same_lists: list = field(default_factory=list)  # [[run names]] of units of runs with one top k (same_top_k)

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

    ``units``: unit index per run (default: every run its own unit, runs with the same top k
    one unit, :func:`same_top_k`); ``depth``: the pool
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
    same_lists = []
    if units is None:
        unit, members = same_top_k(aligned, k)
        unit_names = ["+".join(names[i] for i in m) for m in members]
        same_lists = [[names[i] for i in m] for m in members if len(m) > 1]
    else:
        unit = np.asarray(units, np.int64)
    if unit_names is None:
        unit_names = [str(u) for u in range(int(unit.max()) + 1)]
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
                    (m_run, m_pid, m_rrow), same_lists=same_lists)


def same_top_k(aligned: list, k: int) -> tuple:
    """(unit per run, the runs of each unit): runs whose top k is the same list for every
    query share a unit. Two runs that rank the same k documents in the same order are one
    system to the pool: counted as two, each would read the other's documents as a second
    vote, and the holes they share as ranked high by another system (CLEF TAR 2017:
    Waterloo's rank and threshold runs share their top ten; pooled from a random half of the
    runs, their holes were read as relevant far more often than they were)."""
    keys, members = {}, []
    unit = np.zeros(len(aligned), np.int64)
    for i, a in enumerate(aligned):
        r = a.ranked
        at = np.flatnonzero(r.pos < k)
        codes = np.asarray(a.qid_codes, np.int64)[r.q[at]]
        sig = np.stack([codes, r.pos[at].astype(np.int64), a.run.docid_hash[r.row[at]].astype(np.int64)], axis=1)
        key = sig[np.lexsort((sig[:, 1], sig[:, 0]))].tobytes()
        if key not in keys:
            keys[key] = len(members)
            members.append([])
        unit[i] = keys[key]
        members[keys[key]].append(i)
    return unit, members


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


def judged_relevant_share(pool: HolePool, world: World, without_own: bool = False) -> np.ndarray:
    """Per run: the share of the judged documents in its top k (in ``world``) that are relevant;
    ``without_own``: without the judgments its unit alone contributed (as when it is held out)."""
    st = _world_stats(pool, world)
    rel, judged = st["run_rel"], st["run_judged"]
    if without_own:
        rel, judged = rel - st["own_rel"], judged - st["own_judged"]
    return rel / np.maximum(judged, 1)


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




def pseudo_holes(pool: HolePool, world: World, above: int | None = None) -> np.ndarray:
    """Pool rows that are pseudo-holes in ``world``: judged there, in the run's top
    ``depth`` (and ranked above ``above``, when given), and contributed by the run's unit alone."""
    top = pool.depth if above is None else min(pool.depth, above)
    return np.flatnonzero((pool.pos < top) & (world.row_level >= 0)
                          & (pool.owner[pool.pid] == pool.unit[pool.run]))




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

