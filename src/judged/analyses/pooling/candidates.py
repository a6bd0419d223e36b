"""The candidates of a pool: every (query, document) pair in the runs' top ``depth``,
with where each run ranks it and the labels already known.

Pairs are numbered 0..P-1 grouped by query (``query_offsets``, CSR style); inside a
query in order of best rank over the runs (then first run that retrieved it), so the
numbering is the depth-pooling order of that query. Every run's candidate list for a
query is the pair ids of its top ``depth`` in rank order. A pair's known label comes from
the qrels given (NaN: unjudged); policies see the candidates and the labels only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


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
            from ...core.data import take_strings

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
    from ...core.data import arrow_strings, string_codes

    strings = list(strings)
    try:
        values = arrow_strings(strings)
    except UnicodeEncodeError:  # a lone surrogate (no UTF-8): Python's sort
        rank = {v: i for i, v in enumerate(sorted(set(strings)))}
        return np.fromiter((rank[v] for v in strings), np.int64, len(strings))
    return string_codes(np.zeros(len(strings), np.int64), values)[0]


def build_candidates(rankings, depth: int, known: dict | None = None, qids=None, ranks=None) -> Candidates:
    """Candidates from ``rankings``: {run name: {qid: [docid, ...] best first}}.

    ``known``: {(qid, docid): grade} labels already known; ``qids``: the queries to pool,
    in order (default: every query any run lists, in order of first appearance);
    ``ranks``: {run: {qid: [rank, ...]}} parallel to ``rankings`` when the lists have
    gaps (a pool file's pairs: the judged documents are not in it), else 1, 2, 3, ...
    A run's list is cut to the ranks up to ``depth``."""
    runs = list(rankings)
    if qids is None:
        seen: dict = {}
        for r in runs:
            for q in rankings[r]:
                seen.setdefault(q, None)
        qids = list(seen)
    qids = list(qids)
    known = known or {}
    docids, pair_query, offsets, run_lists, run_ranks, labels = [], [], [0], [], [], []
    for qi, qid in enumerate(qids):
        first: dict = {}  # docid -> (best rank, first run)
        per_run = []
        for ri, r in enumerate(runs):
            docs = list(rankings[r].get(qid, ()))
            rk = list(ranks[r].get(qid, ())) if ranks is not None else list(range(1, len(docs) + 1))
            keep = [i for i, k in enumerate(rk) if k <= depth]
            docs, rk = [docs[i] for i in keep], [rk[i] for i in keep]
            per_run.append((docs, rk))
            for d, k in zip(docs, rk):
                b = first.get(d)
                if b is None or k < b[0]:
                    first[d] = (k, ri if b is None else b[1])
        order = sorted(first, key=lambda d: (first[d][0], first[d][1]))
        base = len(docids)
        local = {d: base + i for i, d in enumerate(order)}
        docids.extend(order)
        pair_query.extend([qi] * len(order))
        labels.extend(known.get((qid, d), np.nan) for d in order)
        offsets.append(len(docids))
        run_lists.append([np.fromiter((local[d] for d in docs), np.int64, len(docs)) for docs, _ in per_run])
        run_ranks.append([np.asarray(rk, np.int64) for _, rk in per_run])
    return Candidates(qids, docids, np.asarray(pair_query, np.int64), np.asarray(offsets, np.int64), runs,
                      run_lists, run_ranks, np.asarray(labels, np.float64), depth)


def candidates_from_pool(pairs, depth: int | None = None) -> Candidates:
    """Candidates from a pool file's pairs (:class:`~.poolfile.PoolPair` with ``runs`` and
    ``ranks``): each run's list is the pairs it ranked, by rank; ``depth`` defaults to the
    deepest rank. Queries in the order they first appear."""
    rankings: dict = {}
    ranks: dict = {}
    for p in pairs:
        for r, k in zip(p.runs, p.ranks):
            rankings.setdefault(r, {}).setdefault(p.qid, []).append((k, p.docid))
    deepest = 1
    for r, per in rankings.items():
        for q, lst in per.items():
            lst.sort()
            ranks.setdefault(r, {})[q] = [k for k, _ in lst]
            per[q] = [d for _, d in lst]
            deepest = max(deepest, ranks[r][q][-1])
    qids = list(dict.fromkeys(p.qid for p in pairs))
    return build_candidates(rankings, depth or deepest, None, qids, ranks)


def candidates_from_aligned(aligned: dict, depth: int, qids=None) -> Candidates:
    """Candidates from judged-aligned runs ({name: Aligned}, the tie order applied): each
    run's top ``depth`` per evaluated query; known labels are the aligned grades."""
    rankings, known = {}, {}
    for name, a in aligned.items():
        top = a.ranked.top(depth)
        q = a.qids[top.q].tolist()
        docs = a.docids(top.row)
        per: dict = {}
        for qid, d, g in zip(q, docs, top.grade.tolist()):
            per.setdefault(qid, []).append(d)
            if g == g:
                known[(qid, d)] = g
        rankings[name] = per
    if qids is None:
        seen: dict = {}
        for a in aligned.values():
            for qid in a.qids.tolist():
                seen.setdefault(qid, None)
        qids = list(seen)
    return build_candidates(rankings, depth, known, qids)
