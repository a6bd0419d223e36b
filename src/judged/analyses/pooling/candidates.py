"""The candidates of a pool: every (query, document) pair in the runs' top ``depth``,
with where each run ranks it and the labels already known.

Pairs are numbered 0..P-1 grouped by query (``query_offsets``, CSR style); inside a
query in order of best rank over the runs (then first run that retrieved it), so the
numbering is the depth-pooling order of that query. Every run's candidate list for a
query is the pair ids of its top ``depth`` in rank order. A pair's known label comes from
the qrels given (NaN: unjudged); policies see the candidates and the labels only.

One builder, :class:`PoolRows`: every run's ranked rows once, as arrays, and any pool's
candidates from them by whole-array steps. Its rows come from aligned runs
(:meth:`PoolRows.of`: ``judged pool``, the replay), from rankings given by hand
(:meth:`PoolRows.of_rankings`, :func:`build_candidates`) or from a pool file's pairs
(:meth:`PoolRows.of_pairs`: the judging app's ``--order``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ...core.data import arrow_strings, string_codes, take_strings
from ...core.kernels import packed_key


@dataclass
class Candidates:
    qids: list  # query of each query index
    docids: Sequence  # docid of each pair (a list, or TakenStrings)
    pair_query: np.ndarray  # query index of each pair
    query_offsets: np.ndarray  # pairs of query q: query_offsets[q]:query_offsets[q + 1]
    runs: list  # run names
    run_lists: list  # [q][r] -> np.ndarray of pair ids in run r's rank order (its top depth)
    run_ranks: list  # [q][r] -> np.ndarray of the 1-based ranks of those pairs in run r
    known: np.ndarray  # float64 per pair: the label already known (NaN: unjudged)
    depth: int
    _pair_runs: tuple | None = field(default=None, repr=False)
    _string_order: tuple | None = field(default=None, repr=False)
    _list_csr: tuple | None = field(default=None, repr=False)

    @property
    def n_pairs(self) -> int:
        return len(self.docids)

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    def pairs_of(self, q: int) -> range:
        return range(int(self.query_offsets[q]), int(self.query_offsets[q + 1]))

    def pair_runs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR over pairs: (offsets, run index, 1-based rank), the runs in run order."""
        if self._pair_runs is None:
            P = self.n_pairs
            pid = [self.run_lists[q][r] for q in range(self.n_queries) for r in range(self.n_runs)]
            run = [np.full(len(self.run_lists[q][r]), r) for q in range(self.n_queries) for r in range(self.n_runs)]
            rank = [self.run_ranks[q][r] for q in range(self.n_queries) for r in range(self.n_runs)]
            pid = np.concatenate(pid) if pid else np.zeros(0, np.int64)
            run = np.concatenate(run) if run else np.zeros(0, np.int64)
            rank = np.concatenate(rank) if rank else np.zeros(0, np.int64)
            order = np.lexsort((run, pid))
            offsets = np.zeros(P + 1, np.int64)
            np.cumsum(np.bincount(pid, minlength=P), out=offsets[1:])
            self._pair_runs = (offsets, run[order].astype(np.int64), rank[order].astype(np.int64))
        return self._pair_runs

    def pair_run_cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each (pair, run) of :meth:`pair_runs` as (pair id, run, rank, place): ``place`` its
        position in every query's runs x pairs, row-major, query after query (the layout the
        replay kernels read: ``n_runs * query_offsets[q] + run * n_q + pair - query_offsets[q]``)."""
        off, run, rank = self.pair_runs()
        pid = np.repeat(np.arange(self.n_pairs), np.diff(off))
        q_off = np.asarray(self.query_offsets, np.int64)
        q = self.pair_query[pid]
        place = self.n_runs * q_off[q] + run * (q_off[q + 1] - q_off[q]) + pid - q_off[q]
        return pid, run, rank, place

    def string_order(self) -> tuple[np.ndarray, np.ndarray]:
        """(each query's rank among the qids, each pair's docid's rank among the docids), in
        Python's string order: the policies' last tie-breaks (qid, then docid among the
        query's pairs). Any numbers in the same order will do: ranks among a larger set of
        strings, or numbers that order each query's docids only (the qid decides first)."""
        if self._string_order is None:
            self._string_order = (string_ranks(self.qids), string_ranks(self.docids))
        return self._string_order

    def list_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """Every run's list of every query as one CSR: (offsets over queries x runs, query-major,
        pair ids)."""
        if self._list_csr is None:
            lists = [self.run_lists[q][r] for q in range(self.n_queries) for r in range(self.n_runs)]
            offsets = np.zeros(len(lists) + 1, np.int64)
            np.cumsum([len(x) for x in lists], out=offsets[1:])
            self._list_csr = (offsets, np.concatenate(lists).astype(np.int64) if lists else np.zeros(0, np.int64))
        return self._list_csr

    def best_rank(self) -> np.ndarray:
        off, _, rank = self.pair_runs()
        return np.minimum.reduceat(rank, off[:-1]) if len(rank) else np.zeros(0, np.int64)

    def ranks_of(self, pid: int) -> list[tuple[str, int]]:
        """(run name, rank) for every run that has the pair in its top depth, in run order."""
        off, run, rank = self.pair_runs()
        s, e = off[pid], off[pid + 1]
        return [(self.runs[r], int(k)) for r, k in zip(run[s:e].tolist(), rank[s:e].tolist())]

    def index(self) -> dict:
        """(qid, docid) -> pair id."""
        return {(self.qids[q], self.docids[p]): p for q in range(self.n_queries) for p in self.pairs_of(q)}


class TakenStrings(Sequence):
    """The strings of an Arrow string array at ``rows``, as a sequence of ``str`` made Python
    strings when first read (a replay's candidates are only counted)."""

    def __init__(self, values, rows: np.ndarray):
        self.values, self.rows, self._list = values, rows, None

    def tolist(self) -> list:
        if self._list is None:
            self._list = take_strings(self.values, self.rows).to_pylist()
        return self._list

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):
        return self.tolist()[i]

    def __iter__(self):
        return iter(self.tolist())

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and self.tolist() == list(other)

    __hash__ = None


class CellLists:
    """``[q][r]``: run r's list of query q (``run_lists``, ``run_ranks``) as views of one CSR
    (``offsets`` over queries x runs, query-major), without an array per cell."""

    def __init__(self, offsets: np.ndarray, values: np.ndarray, n_queries: int, n_runs: int):
        self.offsets, self.values, self.n_queries, self.n_runs = offsets, values, n_queries, n_runs

    def __len__(self) -> int:
        return self.n_queries

    def __getitem__(self, q: int) -> list:
        if not 0 <= q < len(self):
            raise IndexError(q)
        o, v, R = self.offsets, self.values, self.n_runs
        return [v[o[q * R + r]:o[q * R + r + 1]] for r in range(R)]

    def __iter__(self):
        return (self[q] for q in range(len(self)))


def string_ranks(strings: list) -> np.ndarray:
    """Each string's rank among the distinct strings, in Python's order: code point order,
    which is the order of their UTF-8 bytes (:func:`judged.core.data.string_codes`, the
    strings compared whole, NULs included)."""
    strings = list(strings)
    try:
        values = arrow_strings(strings)
    except UnicodeEncodeError:  # a lone surrogate (no UTF-8): Python's sort
        rank = {v: i for i, v in enumerate(sorted(set(strings)))}
        return np.fromiter((rank[v] for v in strings), np.int64, len(strings))
    return string_codes(np.zeros(len(strings), np.int64), values)[0]


def build_candidates(rankings, depth: int, known: dict | None = None, qids=None, ranks=None) -> Candidates:
    """Candidates from ``rankings``: {run name: {qid: [docid, ...] best first}}, by
    :class:`PoolRows` (:meth:`PoolRows.of_rankings`).

    ``known``: {(qid, docid): grade} labels already known; ``qids``: the queries to pool,
    in order (default: every query any run lists, in order of first appearance);
    ``ranks``: {run: {qid: [rank, ...]}} parallel to ``rankings`` when the lists have
    gaps (a pool file's pairs: the judged documents are not in it), else 1, 2, 3, ...
    A run's list is cut to the ranks up to ``depth``."""
    return PoolRows.of_rankings(rankings, known, qids, ranks).candidates(None, depth, known=True)[0]


class PoolRows:
    """Every run's ranked (query, document) pairs once, as arrays, and each pool's
    :class:`Candidates` from them by whole-array steps, pair ids in its order (per query by
    best rank over the pool's runs, then the first run that ranks the pair, then that
    run's rank), without a pass over the pairs in Python per pool."""

    def __init__(self, names: list, qids: list, run: np.ndarray, query: np.ndarray, rank: np.ndarray, docids,
                 grade: np.ndarray):
        """Every run's ranked rows, run by run, each run's queries in turn, in rank order:
        the run's index in ``names``, the query's in ``qids``, the 1-based rank, the docid
        (Arrow strings, or a list of str) and the pair's grade in the qrels (NaN: not there,
        a truth of 0)."""
        self.names, self.qids = list(names), list(qids)
        self.run, self.query, self.rank = (np.asarray(x, np.int64) for x in (run, query, rank))
        self.docids = docids if isinstance(docids, pa.Array) else arrow_strings(list(docids))
        # pair codes numbered by query, then docid in Python's string order (exact: the strings compared
        # whole), so that within a query they are the docids' order, the policies' last tie-break
        self.pair, self.first = string_codes(self.query, self.docids)  # and the first row of each code
        self.code_query = self.query[self.first]
        self.known = np.asarray(grade, np.float64)[self.first]  # each code's grade (NaN: unjudged)
        self.truth = np.where(np.isnan(self.known), 0.0, self.known)
        self.docs = TakenStrings(self.docids, self.first)  # docid of each code, made str when read
        self.qpos = {q: i for i, q in enumerate(self.qids)}
        self._code = None
        self._qid_ranks = None

    @classmethod
    def of(cls, aligned: dict, depth: int) -> "PoolRows":
        """The top ``depth`` rows of every query of the aligned runs ({name: Aligned}), the
        queries in order of first appearance."""
        qids = list(dict.fromkeys(q for a in aligned.values() for q in a.qids.tolist()))
        qpos = {q: i for i, q in enumerate(qids)}
        parts = []
        for i, a in enumerate(aligned.values()):  # each query's top `depth` rows, queries in the run's order
            top = a.ranked.top(depth)
            counts = np.diff(top.offsets)
            query = np.repeat(np.fromiter((qpos[q] for q in a.qids.tolist()), np.int64, a.n_queries), counts)
            rank = np.arange(1, len(top.row) + 1, dtype=np.int64) - np.repeat(top.offsets[:-1], counts)
            parts.append((np.full(len(top.row), i, np.int64), query, rank, take_strings(a.run.docid, top.row),
                          top.grade))
        run, query, rank, grade = (np.concatenate([p[j] for p in parts]) for j in (0, 1, 2, 4))
        return cls(list(aligned), qids, run, query, rank, pa.concat_arrays([p[3] for p in parts]), grade)

    @classmethod
    def of_rankings(cls, rankings: dict, known: dict | None = None, qids=None, ranks: dict | None = None) -> "PoolRows":
        """The rows of ``rankings`` ({run: {qid: [docid, ...] best first}}), queries in the
        order of ``qids`` (default: as the runs first list them; others left out), ranks
        1, 2, 3, ... or ``ranks`` ({run: {qid: [rank, ...]}}, parallel: lists with gaps),
        grades from ``known`` ({(qid, docid): grade}; NaN: unjudged)."""
        names = list(rankings)
        if qids is None:
            qids = list(dict.fromkeys(q for r in names for q in rankings[r]))
        qpos = {q: i for i, q in enumerate(qids)}
        known = known or {}
        run, query, rank, docids, grade = [], [], [], [], []
        for i, r in enumerate(names):
            for q, docs in rankings[r].items():
                if q not in qpos:
                    continue
                rk = list(ranks[r].get(q, ())) if ranks is not None else range(1, len(docs) + 1)
                docs = list(docs)[:len(rk)]
                run += [i] * len(docs)
                query += [qpos[q]] * len(docs)
                rank += rk
                docids += docs
                grade += [known.get((q, d), np.nan) for d in docs]
        return cls(names, qids, run, query, rank, docids, np.asarray(grade, np.float64))

    @classmethod
    def of_pairs(cls, pairs) -> "PoolRows":
        """The rows of a pool file's pairs (:class:`~.poolfile.PoolPair` with ``runs`` and
        ``ranks``): each run's list is the pairs it ranked; runs and queries in the order they
        first appear; no label known."""
        names = list(dict.fromkeys(r for p in pairs for r in p.runs))
        qids = list(dict.fromkeys(p.qid for p in pairs))
        npos, qpos = {n: i for i, n in enumerate(names)}, {q: i for i, q in enumerate(qids)}
        cells = [(npos[r], qpos[p.qid], k, p.docid) for p in pairs for r, k in zip(p.runs, p.ranks)]
        run, query, rank, docids = (list(x) for x in zip(*cells)) if cells else ([], [], [], [])
        return cls(names, qids, run, query, rank, docids, np.full(len(cells), np.nan))

    @property
    def code(self) -> dict:
        """(query index, docid) -> pair code, built when first asked."""
        if self._code is None:
            self._code = dict(zip(zip(self.code_query.tolist(), self.docs), range(len(self.docs))))
        return self._code

    def codes_of(self, aligned, top) -> np.ndarray:
        """The pair code of each of the ranked rows ``top`` of the aligned run (-1: a pair no
        row here has): the codes' docids and the rows' numbered together by
        :func:`~judged.core.data.string_codes` (exact)."""
        qi = np.array([self.qpos.get(q, -1) for q in aligned.qids.tolist()], np.int64)[top.q]
        rows = np.flatnonzero(qi >= 0)
        C = len(self.first)
        docids = [take_strings(self.docids, self.first), take_strings(aligned.run.docid, top.row[rows])]
        joint, distinct = string_codes(np.concatenate([self.code_query, qi[rows]]), pa.concat_arrays(docids))
        code_of = np.full(len(distinct), -1, np.int64)
        code_of[joint[:C]] = np.arange(C)  # the codes' pairs are distinct
        out = np.full(len(qi), -1, np.int64)
        out[rows] = code_of[joint[C:]]
        return out

    def run_codes(self, name: str, k: int) -> np.ndarray:
        """The pair code of each of run ``name``'s top ``k`` rows (k at most the rankings'
        depth), in its aligned order: by query, then rank."""
        return self.pair[(self.run == self.names.index(name)) & (self.rank <= k)]

    def _rows(self, pool: list, depth: int):
        local = np.full(len(self.names), -1, np.int64)
        local[[self.names.index(n) for n in pool]] = np.arange(len(pool))
        return local, np.flatnonzero((local[self.run] >= 0) & (self.rank <= depth))

    def size(self, pool: list, depth: int) -> int:
        """The pool's candidate pairs, counted without building them."""
        return int(np.count_nonzero(np.bincount(self.pair[self._rows(pool, depth)[1]], minlength=len(self.first))))

    def candidates(self, pool: list | None = None, depth: int | None = None, known: bool = False):
        """(candidates, truth per pair, {(qid, docid): pair id}-like index) of the pool's runs
        (default: every run) cut to their top ``depth`` (default: every row; the deepest rank,
        at least 1, as the candidates' depth); ``known``: the candidates know the rows' grades
        (else no label is known)."""
        pool = self.names if pool is None else pool
        if depth is None:
            depth = max(1, int(self.rank.max()) if len(self.rank) else 1)
        R, Q, C = len(pool), len(self.qids), len(self.first)
        local, rows = self._rows(pool, depth)
        r, q, k, c = local[self.run[rows]], self.query[rows], self.rank[rows], self.pair[rows]
        # each pair's best rank over the pool's runs, the first of them ranking it and its best rank there
        none = np.iinfo(np.int64).max
        best, first_run, first_rank = np.full(C, none), np.full(C, R, np.int64), np.full(C, none)
        np.minimum.at(best, c, k)
        np.minimum.at(first_run, c, r)
        mine = r == first_run[c]
        np.minimum.at(first_rank, c[mine], k[mine])
        codes = np.flatnonzero(best < none)
        codes = codes[_order(self.code_query[codes], best[codes], first_run[codes], first_rank[codes])]
        pair_query = self.code_query[codes]
        pid_of = np.full(C, -1, np.int64)
        pid_of[codes] = np.arange(len(codes))
        offsets = np.zeros(Q + 1, np.int64)
        np.cumsum(np.bincount(pair_query, minlength=Q), out=offsets[1:])
        in_lists = _order(q, r, k)
        pids, ranks = pid_of[c[in_lists]], k[in_lists]
        cells = np.zeros(Q * R + 1, np.int64)
        np.cumsum(np.bincount(q * R + r, minlength=Q * R), out=cells[1:])
        # the runs' lists per query and run as views of one CSR, and each pair's runs and ranks (in run order)
        run_lists, run_ranks = CellLists(cells, pids, Q, R), CellLists(cells, ranks, Q, R)
        pair_pid = pid_of[c]
        runs_of_pair = _order(pair_pid, r)
        pair_offsets = np.zeros(len(codes) + 1, np.int64)
        np.cumsum(np.bincount(pair_pid, minlength=len(codes)), out=pair_offsets[1:])
        if self._qid_ranks is None:
            self._qid_ranks = string_ranks(self.qids)
        # the codes, numbered by query then docid, order each query's docids as their strings
        cands = Candidates(self.qids, TakenStrings(self.docids, self.first[codes]), pair_query, offsets, list(pool),
                           run_lists, run_ranks, self.known[codes] if known else np.full(len(codes), np.nan), depth,
                           _pair_runs=(pair_offsets, r[runs_of_pair], k[runs_of_pair]),
                           _string_order=(self._qid_ranks, codes), _list_csr=(cells, pids))
        return cands, self.truth[codes], _PairIndex(self, pid_of)


def _order(*keys) -> np.ndarray:
    """``np.lexsort``'s order of rows by ``keys`` (non-negative integers, the first decides;
    rows equal on all in row order): when the keys and the row number fit in one int64 key
    (62 bits), a sort of that key, whose values are distinct (quicksort then gives the stable
    order, faster than a stable sort of int64 or a lexsort)."""
    keys = (*keys, np.arange(len(keys[0]), dtype=np.int64))
    key = packed_key(*keys)
    return np.lexsort(keys[::-1]) if key is None else np.argsort(key)


class _PairIndex:
    """(qid, docid) -> pair id of one pool (``get`` as a dict's), through the pair codes."""

    def __init__(self, rows: PoolRows, pid_of: np.ndarray):
        self.rows, self.pid_of = rows, pid_of

    def of_rows(self, aligned, top) -> np.ndarray:
        """The pair id of each of the ranked rows ``top`` of the aligned run (-1: none)."""
        code = self.rows.codes_of(aligned, top)
        return np.where(code >= 0, self.pid_of[code], -1)

    def get(self, key, default=None):
        qi = self.rows.qpos.get(key[0])
        c = None if qi is None else self.rows.code.get((qi, key[1]))
        return default if c is None or self.pid_of[c] < 0 else int(self.pid_of[c])
