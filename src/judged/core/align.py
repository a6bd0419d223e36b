"""Align a run with the qrels once; every measure kernel reads the aligned columns.

The result is CSR-style: the evaluated queries in qid order (strcmp, as trec_eval),
each owning a block of ranked rows (``offsets``), each row carrying its 0-based rank
``pos`` and its grade (NaN when the pair is unjudged), plus the same queries' judgments
as blocks of grades for the ideal ranking and the relevant counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import pyarrow as pa

from .conventions import Settings
from .data import Qrels, Run, arrow_indices, as_numpy, grades_of_rows, string_buffers, take_strings
from .errors import ConventionError
from .kernels import FALLBACK, kernel
from .lazy import lazy

pc = lazy("pyarrow.compute")  # imported on first use (judged.core.lazy)


def block_offsets(q: np.ndarray, n: int) -> np.ndarray:
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(q, minlength=n), out=offsets[1:])
    return offsets


@dataclass
class Ranked:
    """Ranked rows of the evaluated queries, sorted by (query, rank)."""

    n_queries: int
    q: np.ndarray  # query index per row
    pos: np.ndarray  # 0-based rank within the query
    grade: np.ndarray  # float64, NaN = unjudged
    row: np.ndarray  # row in the original Run (docid, score)
    offsets: np.ndarray
    _tops: dict = field(default_factory=dict, repr=False, compare=False)  # k -> top(k), shared by measures
    _memo: dict = field(default_factory=dict, repr=False, compare=False)  # per-level flags and counts

    def relevant(self, level: int) -> np.ndarray:
        """Per row: grade >= level (unjudged NaN is not), computed once per level for all measures."""
        key = ("relevant", level)
        if key not in self._memo:
            self._memo[key] = self.grade >= level
        return self._memo[key]

    def relevant_count(self, level: int) -> np.ndarray:
        """Per query: rows with grade >= level (float)."""
        key = ("count", level)
        if key not in self._memo:
            self._memo[key] = np.bincount(self.q[self.relevant(level)], minlength=self.n_queries).astype(np.float64)
        return self._memo[key]

    @cached_property
    def judged(self) -> np.ndarray:
        return ~np.isnan(self.grade)

    @cached_property
    def count(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def columns(self) -> tuple:
        """(offsets, pos, grade) as contiguous int64, int64, float64 arrays: what the
        compiled measure kernels read."""
        return (np.ascontiguousarray(self.offsets, np.int64), np.ascontiguousarray(self.pos, np.int64),
                np.ascontiguousarray(self.grade, np.float64))

    @cached_property
    def top_grade(self) -> int:
        """The highest grade ranked (0 when none is positive; unjudged NaN left out)."""
        g = self.grade
        return int(g[g > 0].max()) if (g > 0).any() else 0

    def take(self, mask: np.ndarray) -> "Ranked":
        """The ranking with rows removed and ranks closed up (ties keep their order)."""
        q = self.q[mask]
        offsets = block_offsets(q, self.n_queries)
        pos = np.arange(len(q), dtype=np.int64) - offsets[q]
        return Ranked(self.n_queries, q, pos, self.grade[mask], self.row[mask], offsets)

    def top(self, k: int | None) -> "Ranked":
        """The first k ranks of every query, computed once per k for all measures."""
        if k is None or len(self.count) == 0 or self.count.max() <= k:
            return self
        if k not in self._tops:
            self._tops[k] = self.take(self.pos < k)
        return self._tops[k]

    @cached_property
    def condensed(self) -> "Ranked":
        """Unjudged documents removed before scoring (Sakai 2007; trec_eval -J): both
        absent pairs and negative grades (trec_eval's pooled-but-unjudged) go."""
        return self.take(self.grade >= 0)


@dataclass
class Judgments:
    """Judgments of the evaluated queries, as per-query blocks of grades."""

    n_queries: int
    q: np.ndarray
    grade: np.ndarray  # int64
    offsets: np.ndarray
    # where they come from unchanged: the qrels index and each query's code in it (None
    # for judgments made up elsewhere, such as judged.analyses.holes.unjudged's filled-in ones)
    index: object = field(default=None, repr=False, compare=False)
    codes: np.ndarray | None = field(default=None, repr=False, compare=False)

    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    def count_at_least(self, level: int) -> np.ndarray:
        """Per query: judgments with grade >= level (trec_eval's num_rel at -l level);
        computed once per level for all measures."""
        if level not in self._memo:
            self._memo[level] = self._count(level, None)
        return self._memo[level]

    def count_nonrelevant(self, level: int) -> np.ndarray:
        """Per query: judged not relevant, 0 <= grade < level (Bpref's N)."""
        return self._count(0, level)

    def _count(self, low: int, high: int | None) -> np.ndarray:
        """Per query: judgments with low <= grade (< high); read from the qrels index's
        counts of every query when the judgments are its own."""
        if self.index is not None:
            return self.index.count_grades(low, high)[self.codes]
        m = self.grade >= low if high is None else (self.grade >= low) & (self.grade < high)
        return np.bincount(self.q[m], minlength=self.n_queries)


@dataclass
class Aligned:
    run: Run
    qrels: Qrels
    settings: Settings
    qids: np.ndarray  # evaluated query ids, in output order
    ranked: Ranked
    judgments: Judgments
    counts: dict = field(default_factory=dict)
    # side data for kernels beyond the grades, by name ('requirements', 'eligibility'); set by evaluate()
    annotations: dict = field(default_factory=dict)
    run_queries: np.ndarray | None = None  # qrels query codes of the queries the run lists
    qid_codes: np.ndarray | None = None  # qrels query code of each of ``qids``

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    def docids(self, rows: np.ndarray) -> list[str]:
        """The run's docids at ``rows`` (:func:`~judged.core.data.take_strings`: a few
        without importing ``pyarrow.compute``, 0.04 s of ``judged holes``' start)."""
        return take_strings(self.run.docid, rows).to_pylist()


def top_run(aligned: Aligned, k: int) -> Run:
    """The aligned run's rows among each evaluated query's top ``k`` ranks, in (query,
    rank) order, the rest let go: :func:`align` ranks them again as they were under every
    tie order (trec_eval's sorts a query's rows by their own score and docid; ``rank`` and
    ``input`` keep rows of equal keys in row order, which rank order is)."""
    run, top = aligned.run, aligned.ranked.top(k)
    rows = top.row
    small = replace(run, qid=take_strings(run.qid, rows), docid=take_strings(run.docid, rows), score=run.score[rows],
                    rank=None if run.rank is None else run.rank[rows], rank_text=None, reread=None)
    known = run.__dict__.get("docid_hash")
    starts = top.offsets[:-1][np.diff(top.offsets) > 0]  # one block of rows per query
    return small.known(docid_hash=None if known is None else known[rows],
                       qid_blocks=(starts, take_strings(small.qid, starts)))


def top_rows(aligned: Aligned, k: int) -> Aligned:
    """The alignment with each query's top ``k`` ranks only, its run holding those rows only
    (:func:`top_run`, renumbered): the rest of a long run is let go."""
    top = aligned.ranked.top(k)
    ranked = Ranked(top.n_queries, top.q, top.pos, top.grade, np.arange(len(top.row), dtype=np.int64), top.offsets)
    return replace(aligned, run=top_run(aligned, k), ranked=ranked)


def no_relevant_error(no_rel_qids: list) -> ConventionError:
    """The refusal of ``no_relevant='error'`` (qids in qrels order)."""
    n = len(no_rel_qids)
    return ConventionError(f"{n} quer{'y' if n == 1 else 'ies'} with nothing relevant in the qrels "
                           f"(first: {no_rel_qids[0]!r}); choose --no-relevant zero or skip")


def align(qrels: Qrels, run: Run, settings: Settings | None = None) -> Aligned:
    """Match every ranked document with its grade, in the declared tie order."""
    settings = settings or Settings()
    index = qrels.index
    nq_all = len(index.query_ids)

    # query codes of run rows in the qrels' query vocabulary (-1 = only in the run), found
    # once per block of equal qids; the queries are handled as sorted codes, so a block of
    # a streamed file costs its own queries, not the whole qrels'
    rq = index.query_codes(run.qid, run.qid_blocks)
    starts, block_qids = run.qid_blocks
    block_codes = rq[starts]
    absent = block_codes < 0
    only_in_run = len(pc.unique(block_qids.filter(pa.array(absent)))) if absent.any() else 0
    run_queries = _distinct(block_codes[~absent], nq_all)

    relevant = index.has_relevant
    candidates = np.arange(nq_all) if settings.complete else run_queries
    no_rel = candidates[~relevant[candidates]]
    if len(no_rel) and settings.no_relevant == "error":
        raise no_relevant_error(index.query_ids[no_rel].tolist())
    evaluated = candidates[relevant[candidates]] if settings.no_relevant == "skip" else candidates
    n = len(evaluated)

    # ranked rows of evaluated queries, in the declared tie order
    per_row = len(starts) * 2 > len(rq)  # hardly any runs of equal qids (a shuffled run)
    codes = rq if per_row else block_codes
    at = np.searchsorted(evaluated, codes)
    hit = at < n
    hit[hit] = evaluated[at[hit]] == codes[hit]
    rq_eval = np.where(hit, at, -1)
    if not per_row:
        rq_eval = np.repeat(rq_eval, np.diff(np.append(starts, len(rq))))
    if settings.ignore_identical_ids:  # BEIR's ignore_identical_ids: drop docid == qid
        rq_eval[pc.equal(run.qid, run.docid).to_numpy(zero_copy_only=False)] = -1
    ranked = ranked_rows(run, rq_eval, n, settings.ties)
    del rq_eval  # 8 bytes a row, not held while the grades are looked up
    ranked.grade = grades_of_rows(index, ranked.row, rq, run.docid, run.docid_hash)
    del rq
    cut = settings.depth_cut
    if cut is not None and len(ranked.count) and ranked.count.max() > cut:  # trec_eval -M: the top N only
        ranked = ranked.take(ranked.pos < cut)

    judgments = index.judgments_of(evaluated, lambda: _judgments(index, evaluated))

    counts = {
        "evaluated": n,
        "skipped": len(no_rel) if settings.no_relevant == "skip" else 0,
        "missing_from_run": nq_all - len(run_queries),
        "only_in_run": int(only_in_run),
        "no_relevant": len(no_rel),
    }
    return Aligned(run, qrels, settings, index.query_ids[evaluated], ranked, judgments, counts,
                   run_queries=run_queries, qid_codes=evaluated)


def _distinct(codes: np.ndarray, n: int) -> np.ndarray:
    """The distinct values of ``codes`` (each in 0..n-1), sorted."""
    if len(codes) * 8 < n:  # sorted and deduplicated (np.unique would import numpy.ma: 30-50 ms once)
        codes = np.sort(codes)
        return codes[np.concatenate(([True], codes[1:] != codes[:-1]))] if len(codes) else codes
    seen = np.zeros(n, dtype=bool)
    seen[codes] = True
    return np.flatnonzero(seen)


@kernel
def ranked_rows(run: Run, rq_eval: np.ndarray, n: int, ties: str) -> Ranked:
    """The rows of the evaluated queries (``rq_eval`` >= 0: their query index 0..n-1) in
    (query, rank) order under the tie convention, grades still to fill."""
    keep = np.flatnonzero(rq_eval >= 0)
    rows = keep[tie_order(run, keep, rq_eval[keep], ties)]
    q = rq_eval[rows]
    offsets = block_offsets(q, n)
    pos = np.arange(len(rows), dtype=np.int64) - offsets[q]
    return Ranked(n, q, pos, None, rows, offsets)


@ranked_rows.binding
def _(native, run, rq_eval, n, ties):
    """trec_eval's order in one compiled pass (``trec_rank``); not for other tie orders, nor
    when a score is NaN."""
    if ties != "trec":
        return FALLBACK
    out = native.trec_rank(np.ascontiguousarray(rq_eval, np.int64), n, np.ascontiguousarray(run.score, np.float64),
                           *string_buffers(run.docid))
    if out is None:
        return FALLBACK
    rows, q, pos, offsets = (np.frombuffer(b, dtype=np.int64) for b in out)
    return Ranked(n, q, pos, None, rows, offsets)


def _judgments(index, evaluated: np.ndarray) -> Judgments:
    """The judgments of the ``evaluated`` query codes (sorted), as blocks 0..n-1."""
    n = len(evaluated)
    lengths = index.offsets[evaluated + 1] - index.offsets[evaluated]
    jrows = index.rows_of(evaluated)
    jq = np.repeat(np.arange(n, dtype=np.int64), lengths)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Judgments(n, jq, index.grade[jrows], offsets, index, evaluated)


def tie_order(run: Run, rows: np.ndarray, q: np.ndarray, ties: str) -> np.ndarray:
    """Permutation of ``rows`` into (query, rank) order under the tie convention."""
    if ties == "input":
        return np.argsort(q, kind="stable")
    if ties == "rank":
        from .io.trec_files import rank_column

        rank = rank_column(run)[rows]
        return np.lexsort((rank, q))
    # trec_eval 10: score descending, then docid descending (strcmp); the numeric
    # sort settles all but exact score ties, which are then ordered by docid.
    score = run.score[rows]
    order = _grouped_order(q, score)
    if order is None:
        order = np.lexsort((-score, q))
    qs, ss = q[order], score[order]
    tied = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    if not tied.any():
        return order
    # only rows inside a run of equal (query, score) move: sort those by docid descending
    member = np.zeros(len(order), dtype=bool)
    member[1:] |= tied
    member[:-1] |= tied
    at = np.flatnonzero(member)
    segment = np.cumsum(np.concatenate(([True], ~tied)))[at]
    docid = run.docid.take(arrow_indices(rows[order[at]]))
    by_docid = as_numpy(pc.sort_indices(pa.table({"s": arrow_indices(segment), "d": docid}),
                                        sort_keys=[("s", "ascending"), ("d", "descending")]))
    order[at] = order[at][by_docid]
    return order


def _grouped_order(q: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """The (query, score descending) order without sorting, when the run file lists each
    query in one block with scores already descending (as run files do); None otherwise."""
    n = len(q)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    new = np.flatnonzero(q[1:] != q[:-1]) + 1
    starts = np.concatenate(([0], new))
    block_q = q[starts]
    if len(starts) > 1 and not (np.diff(block_q) > 0).all():
        distinct = np.sort(block_q)  # (np.unique would import numpy.ma: 30-50 ms on a first call)
        if (distinct[1:] == distinct[:-1]).any():
            return None  # a query in more than one block
        lengths = np.diff(np.append(starts, n))
        by_q = np.argsort(block_q)
        order = np.repeat(starts[by_q] - np.cumsum(np.concatenate(([0], lengths[by_q][:-1]))), lengths[by_q])
        order += np.arange(n)
        q, score = q[order], score[order]
        new = np.flatnonzero(q[1:] != q[:-1]) + 1  # the blocks' boundaries in their new order
    else:
        order = np.arange(n)
    rises = ~(score[1:] <= score[:-1])  # also NaN
    rises[new - 1] = False  # a new query may start at any score
    return None if rises.any() else order
