"""Every run's ranked (query, document) pairs once, and each pool's candidates from them by
whole-array steps (:class:`PoolRows`): what a replay (``judged meta pooling``) builds its
pools from, one per left-out run, without a pass over the pairs in Python per pool."""

from __future__ import annotations

import numpy as np
import pyarrow as pa


class PoolRows:
    """Every run's ranked (query, document) pairs once, as arrays, and each pool's
    :class:`~judged.analyses.pooling.candidates.Candidates` from them by whole-array steps: the same
    candidates as :func:`build_candidates` (tested), pair ids in its order (per query by
    best rank over the pool's runs, then the first run that ranks the pair, then that
    run's rank), without a pass over the pairs in Python per pool."""

    def __init__(self, names: list, qids: list, run: np.ndarray, query: np.ndarray, rank: np.ndarray, docids,
                 grade: np.ndarray):
        """Every run's ranked rows, run by run, each run's queries in turn, in rank order:
        the run's index in ``names``, the query's in ``qids``, the 1-based rank, the docid
        (Arrow strings, or a list of str) and the pair's grade in the qrels (NaN: not there,
        a truth of 0)."""
        from ...core.data import arrow_strings, string_codes
        from .candidates import TakenStrings

        self.names, self.qids = list(names), list(qids)
        self.run, self.query, self.rank = (np.asarray(x, np.int64) for x in (run, query, rank))
        self.docids = docids if isinstance(docids, pa.Array) else arrow_strings(list(docids))
        # pair codes numbered by query, then docid in Python's string order (exact: the strings compared
        # whole), so that within a query they are the docids' order, the policies' last tie-break
        self.pair, self.first = string_codes(self.query, self.docids)  # and the first row of each code
        self.code_query = self.query[self.first]
        truth = np.asarray(grade, np.float64)[self.first]
        self.truth = np.where(np.isnan(truth), 0.0, truth)
        self.docs = TakenStrings(self.docids, self.first)  # docid of each code, made str when read
        self.qpos = {q: i for i, q in enumerate(self.qids)}
        self._code = None
        self._qid_ranks = None

    @classmethod
    def of(cls, aligned: dict, depth: int) -> "PoolRows":
        """The top ``depth`` rows of every query of the aligned runs ({name: Aligned}), the
        queries in order of first appearance."""
        from ...core.data import take_strings

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
        from ...core.data import string_codes, take_strings

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

    def candidates(self, pool: list, depth: int):
        """(candidates, truth per pair, {(qid, docid): pair id}-like index) of the pool's runs."""
        from .candidates import Candidates, CellLists, TakenStrings, string_ranks

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
                           run_lists, run_ranks, np.full(len(codes), np.nan), depth,
                           _pair_runs=(pair_offsets, r[runs_of_pair], k[runs_of_pair]),
                           _string_order=(self._qid_ranks, codes), _list_csr=(cells, pids))
        return cands, self.truth[codes], _PairIndex(self, pid_of)


def _order(*keys) -> np.ndarray:
    """``np.lexsort``'s order of rows by ``keys`` (non-negative integers, the first decides;
    rows equal on all in row order): when the keys and the row number fit in one int64 key
    (62 bits), a sort of that key, whose values are distinct (quicksort then gives the stable
    order, faster than a stable sort of int64 or a lexsort)."""
    from ...core.kernels import packed_key

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
