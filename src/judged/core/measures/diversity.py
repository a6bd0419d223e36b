"""Diversity measures over subtopic qrels (``qid subtopic docid grade``; the qrels' second
column, :mod:`judged.core.io.subtopics`), as ndeval (TREC Web track 2009-2012) computes them.
Their records (formula, convention, source) are in :mod:`judged.core.measures.registry`.

* ``alpha-nDCG@k``, ``alpha-DCG@k``  Clarke et al., SIGIR 2008;
* ``ERR-IA@k``, ``nERR-IA@k``  intent-aware ERR (Chapelle et al., CIKM 2009; Agrawal et al., WSDM 2009);
* ``NRBP``, ``nNRBP``  novelty- and rank-biased precision (Clarke, Kolla & Vechtomova, ICTIR 2009);
* ``P-IA@k``, ``AP-IA``  intent-aware precision and average precision (Agrawal et al., WSDM 2009);
* ``StRecall@k``  subtopic recall (Zhai, Cohen & Lafferty, SIGIR 2003).

ndeval's conventions, kept: relevance per subtopic is binary (grade >= rel, default 1);
a query's subtopics are those with at least one relevant judgment (S; a query with none
scores 0); the n-th document covering a subtopic gains (1 - alpha)^(n-1) for it; the
ideal ranking is ndeval's greedy one over the query's judged documents (at each rank the
largest gain, ties to the largest docid by strcmp). Sums run in ndeval's order (per rank
over the subtopics in order of first appearance in the qrels, then down the ranks), so
the values equal ndeval's (through pyndeval) to the last bit on the tests' collections.

A document with a grade >= rel in the flat qrels but no subtopic judgment (only the holes
``unjudged=max`` fills, :mod:`judged.analyses.holes.unjudged`) counts as relevant to every subtopic of its query;
one the evaluated qrels grade below rel (``--eligibility`` grades an ineligible pair 0) counts
for none, in the ranking, the ideal and S.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from ..data import arrow_indices
from ..errors import MeasureError
from ..kernels.bound_kernels import ap_extremes
from .dcg import ranking_for
from ..lazy import lazy

pc = lazy("pyarrow.compute")  # imported on first use (judged.core.lazy)


def compute(measure, aligned) -> np.ndarray:
    table = _table(measure, aligned)
    name, n = measure.name, aligned.n_queries
    S = table.subtopic_count(aligned.qids)
    whole = ranking_for(measure, aligned)
    key = ("subtopic hits", id(table))
    if key not in whole._memo:  # found once per ranking for every measure and cutoff
        whole._memo[key] = (table, _hits(table, aligned, whole, S))
    hits = whole._memo[key][1]
    ranked = whole.top(measure.cutoff)
    if ranked is not whole:  # the hits in the top k, numbered in it
        row, sub, c = hits
        inside = whole.pos < measure.cutoff
        keep = inside[row]
        hits = ((np.cumsum(inside) - 1)[row[keep]], sub[keep], c[keep])
    alpha = measure.option("alpha") if "alpha" in measure.family.params else 0.5
    score = _scores(hits, len(ranked.q), alpha)
    out = np.zeros(n)
    has = S > 0
    k = measure.cutoff
    if name in ("alpha-DCG", "alpha-nDCG"):
        raw = np.bincount(ranked.q, weights=score * _discounts(len(score) and int(ranked.pos.max()) + 1)[ranked.pos],
                          minlength=n)
        if name == "alpha-DCG":
            return _divide(raw, _ideal_ideal(S, k, alpha, "dcg"), has)
        ideal = _ideal_raw(table, aligned, measure, alpha, "dcg")
        return _normalised(raw, ideal, S, k, alpha, "dcg")
    if name in ("ERR-IA", "nERR-IA"):
        raw = np.bincount(ranked.q, weights=score / (ranked.pos + 1.0), minlength=n)
        if name == "ERR-IA":
            return _divide(raw, _ideal_ideal(S, k, alpha, "err"), has)
        return _normalised(raw, _ideal_raw(table, aligned, measure, alpha, "err"), S, k, alpha, "err")
    if name in ("NRBP", "nNRBP"):
        beta = measure.option("patience")
        raw = np.bincount(ranked.q, weights=score * _decay(beta, len(score) and int(ranked.pos.max()) + 1)[ranked.pos],
                          minlength=n)
        value = _nrbp(raw, S, alpha, beta)
        if name == "NRBP":
            return value
        ideal = _nrbp(_ideal_raw(table, aligned, measure, alpha, "nrbp"), S, alpha, beta)
        np.divide(value, ideal, out=out, where=ideal > 0)
        return out
    q_hit = ranked.q[hits[0]]
    if name == "P-IA":  # (document, subtopic) pairs relevant in the top k / (k * S)
        count = np.bincount(q_hit, minlength=n).astype(np.float64)
        return _divide(count, (k * S).astype(np.float64), has)
    if name == "StRecall":  # subtopics covered in the top k / S
        count = np.bincount(q_hit[hits[2] == 0], minlength=n).astype(np.float64)
        return _divide(count, S.astype(np.float64), has)
    if name == "AP-IA":  # mean over the subtopics of each one's AP (its relevant documents as R)
        row, sub, c = hits
        order = np.lexsort((ranked.pos[row], sub, q_hit))
        qs, ss = q_hit[order], sub[order]
        first = np.ones(len(qs), bool)
        first[1:] = (qs[1:] != qs[:-1]) | (ss[1:] != ss[:-1])
        group = np.cumsum(first) - 1
        total = np.bincount(group, weights=(c[order] + 1.0) / (ranked.pos[row][order] + 1.0))
        nrel = table.relevant_count(aligned.qids[qs[first]], ss[first])
        per_sub = total / nrel
        raw = np.bincount(qs[first], weights=per_sub, minlength=n)
        return _divide(raw, S.astype(np.float64), has)
    raise KeyError(name)


# ---------------------------------------------------------------------------
# The subtopic judgments of a qrels, indexed once per relevance level


class _Table:
    """The relevant (grade >= rel) subtopic judgments: per row its qid, docid and subtopic
    code (0.. in order of first appearance in the qrels, as pyndeval numbers them), and
    per query S, its subtopics with a relevant judgment."""

    def __init__(self, sub, rel: int, flat=None):
        self.sub, self.rel, self.flat = sub, rel, flat
        keep = np.flatnonzero(sub.grade >= rel)
        if flat is not None and len(keep):  # a pair the flat qrels grade lower (eligibility) is not relevant
            left = pa.table({"q": sub.qid.take(arrow_indices(keep)), "d": sub.docid.take(arrow_indices(keep)),
                             "i": arrow_indices(np.arange(len(keep), dtype=np.int64))})
            right = pa.table({"q": flat.qid, "d": flat.docid, "g": pa.array(flat.grade)})
            joined = left.join(right, keys=["q", "d"], join_type="inner", use_threads=False)
            ok = np.zeros(len(keep), bool)
            ok[np.asarray(joined["i"].to_numpy(), np.int64)[np.asarray(joined["g"].to_numpy()) >= rel]] = True
            keep = keep[ok]
        idx = arrow_indices(keep)
        self.qid, self.docid = sub.qid.take(idx), sub.docid.take(idx)
        order_of = pc.unique(sub.subtopic)  # first appearance order
        self.code = np.asarray(pc.index_in(sub.subtopic.take(idx), value_set=order_of).to_numpy(
            zero_copy_only=False), np.int64)
        self.vocab = pc.unique(self.qid)
        self.q = np.asarray(pc.index_in(self.qid, value_set=self.vocab).to_numpy(zero_copy_only=False), np.int64)
        # dense subtopic numbers per query: 0..S-1 in code order
        self.base = int(self.code.max(initial=0)) + 1
        key = self.q * self.base + self.code
        pairs = np.unique(key)
        self.S = np.bincount(pairs // self.base, minlength=len(self.vocab))
        starts = np.searchsorted(pairs // self.base, np.arange(len(self.vocab)))
        self.dense = np.searchsorted(pairs, key) - starts[self.q]
        self.nrel = dict(zip(*np.unique(self.q * self.base + self.dense, return_counts=True)))
        self.ideals: dict = {}

    def codes(self, qids) -> np.ndarray:
        """Each of ``qids``' number in this table (-1: nothing relevant)."""
        found = pc.index_in(pa.array(list(qids), pa.string()), value_set=self.vocab)
        return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), np.int64)

    def subtopic_count(self, qids) -> np.ndarray:
        """S of each of ``qids`` (0: nothing relevant)."""
        code = self.codes(qids)
        S = self.S[np.maximum(code, 0)] if len(self.S) else np.zeros(len(code), np.int64)
        return np.where(code >= 0, S, 0).astype(np.int64)

    def relevant_count(self, qids, dense) -> np.ndarray:
        """Relevant judgments of each (query, dense subtopic)."""
        code = self.codes(qids)
        return np.array([self.nrel[c * self.base + d] for c, d in zip(code.tolist(), np.asarray(dense).tolist())],
                        np.float64)

    def ideal(self, qid: str, alpha: float) -> np.ndarray:
        """ndeval's greedy ideal ranking of a query: the gain of each rank (its documents
        with a relevant subtopic; at each rank the largest gain, ties to the largest docid)."""
        key = (qid, alpha)
        if key not in self.ideals:
            code = self.codes([qid])[0]
            if code < 0:
                self.ideals[key] = np.zeros(0)
                return self.ideals[key]
            rows = np.flatnonzero(self.q == code)
            cover = {}  # docid -> its subtopics
            for d, j in zip(self.docid.take(arrow_indices(rows)).to_pylist(), self.dense[rows].tolist()):
                cover.setdefault(d, set()).add(j)
            # documents covering the same subtopics always tie: one queue each, largest docid first
            groups = {}
            for d, subs in cover.items():
                groups.setdefault(tuple(sorted(subs)), []).append(d)
            sigs = list(groups)
            queues = [sorted(groups[g], reverse=True) for g in sigs]
            at = [0] * len(sigs)
            live = list(range(len(sigs)))
            gain = [1.0] * int(self.S[code])
            out = np.zeros(len(cover))
            for r in range(len(cover)):
                best, top = -1, 0.0
                for i in live:
                    score = 0.0
                    for j in sigs[i]:  # summed over the subtopics in order, as ndeval
                        score += gain[j]
                    if best < 0 or score > top or (score == top and queues[i][at[i]] > queues[best][at[best]]):
                        best, top = i, score
                out[r] = top
                at[best] += 1
                if at[best] == len(queues[best]):
                    live.remove(best)
                for j in sigs[best]:
                    gain[j] *= 1.0 - alpha
            self.ideals[key] = out
        return self.ideals[key]


def _table(measure, aligned) -> _Table:
    sub = aligned.qrels.meta.get("subtopics")
    if sub is None:
        raise MeasureError(f"{measure} needs subtopic qrels (qid subtopic docid grade, the second column the "
                           "subtopic): judged reads them so when a diversity measure is asked for; these qrels were "
                           "read without (a dict, or a Qrels read before)")
    key = ("table", measure.rel, id(aligned.qrels))
    if key not in sub._memo or sub._memo[key].flat is not aligned.qrels:
        # a pair the qrels being evaluated grade below rel (eligibility grades an ineligible pair 0)
        # leaves the ranking's gains, the ideal and S, as it leaves nDCG's ideal
        sub._memo[key] = _Table(sub, measure.rel, aligned.qrels)
    return sub._memo[key]


def _hits(table: _Table, aligned, ranked, S: np.ndarray):
    """(ranked row, dense subtopic, earlier hits of that subtopic in the query) of every
    relevant (document, subtopic) pair of ``ranked``, in (rank, subtopic) order."""
    n_rows = len(ranked.q)
    qids = pa.array(aligned.qids[ranked.q].tolist(), pa.string()) if n_rows else pa.array([], pa.string())
    docids = aligned.run.docid.take(arrow_indices(ranked.row))
    left = pa.table({"q": qids, "d": docids, "li": arrow_indices(np.arange(n_rows, dtype=np.int64))})
    right = pa.table({"q": table.qid, "d": table.docid, "s": arrow_indices(table.dense)})
    joined = left.join(right, keys=["q", "d"], join_type="inner", use_threads=False)
    row = np.asarray(joined["li"].to_numpy(), np.int64)
    sub = np.asarray(joined["s"].to_numpy(), np.int64)
    grade = ranked.grade
    ok = grade[row] >= table.rel  # a pair whose flat grade was taken away (eligibility) does not count
    row, sub = row[ok], sub[ok]
    # documents graded relevant in the flat qrels without a subtopic judgment: filled holes
    covered = np.zeros(n_rows, bool)
    covered[row] = True
    filled = np.flatnonzero((grade >= table.rel) & ~covered)
    if len(filled):
        per = S[ranked.q[filled]]
        row = np.concatenate([row, np.repeat(filled, per)])
        sub = np.concatenate([sub, np.concatenate([np.arange(p) for p in per]) if per.sum() else np.zeros(0, np.int64)])
    return _counted(ranked, row, sub)


def _counted(ranked, row: np.ndarray, sub: np.ndarray):
    """(row, sub, c) of the hits (ranked row, dense subtopic) in (rank, subtopic) order, c the
    number of earlier hits of the same subtopic in the same query."""
    order = np.lexsort((sub, row))
    row, sub = row[order], sub[order]
    q = ranked.q[row]
    by = np.lexsort((row, sub, q))
    qs, ss = q[by], sub[by]
    start = np.ones(len(by), bool)
    start[1:] = (qs[1:] != qs[:-1]) | (ss[1:] != ss[:-1])
    idx = np.arange(len(by))
    c = np.empty(len(by), np.int64)
    c[by] = idx - np.maximum.accumulate(np.where(start, idx, 0))
    return row, sub, c


def _gains(alpha: float, n: int) -> np.ndarray:
    """(1 - alpha)^c for c = 0..n-1 by repeated multiplication, as ndeval."""
    g = np.empty(max(n, 1))
    g[0] = 1.0
    for i in range(1, n):
        g[i] = g[i - 1] * (1.0 - alpha)
    return g


def _scores(hits, n_rows: int, alpha: float) -> np.ndarray:
    """Per ranked row: sum over the subtopics it covers, in order, of (1 - alpha)^c."""
    row, _, c = hits
    g = _gains(alpha, int(c.max(initial=0)) + 1)
    return np.bincount(row, weights=g[c], minlength=n_rows) if n_rows else np.zeros(0)


_DISCOUNTS = [np.ones(1)]  # the longest table yet: replaced whole, never appended to (bounds run in threads)


def _discounts(n: int) -> np.ndarray:
    """ndeval's discount of 0-based rank i: 1 at rank 0, log(2) / log(i + 2) after (C's log)."""
    table = _DISCOUNTS[0]
    if len(table) < n:
        table = np.array([1.0] + [math.log(2.0) / math.log(i + 2.0) for i in range(1, max(n, 2 * len(table)))])
        _DISCOUNTS[0] = table
    return table[:max(n, 1)].copy()


def _decay(beta: float, n: int) -> np.ndarray:
    d = np.empty(max(n, 1))
    d[0] = 1.0
    for i in range(1, n):
        d[i] = d[i - 1] * beta
    return d


def _ideal_ideal(S: np.ndarray, k: int, alpha: float, kind: str) -> np.ndarray:
    """ndeval's collection-independent normaliser: the value at k of a ranking whose every
    document covers all S subtopics (S(1 - alpha)^i at 0-based rank i, summed down the ranks)."""
    out = np.zeros(len(S))
    for s in np.unique(S):
        if s == 0:
            continue
        gain, total = float(s), 0.0
        disc = _discounts(k)
        for i in range(k):
            total += gain * disc[i] if kind == "dcg" else gain / (i + 1.0)
            gain *= 1.0 - alpha
        out[S == s] = total
    return out


def _ideal_raw(table: _Table, aligned, measure, alpha: float, kind: str) -> np.ndarray:
    """The raw (unnormalised) value of each query's greedy ideal ranking."""
    out = np.zeros(aligned.n_queries)
    k = measure.cutoff
    beta = measure.option("patience") if kind == "nrbp" else None
    for i, qid in enumerate(aligned.qids.tolist()):
        g = table.ideal(qid, alpha)
        g = g[:k] if k is not None else g
        if kind == "dcg":
            terms = g * _discounts(len(g))[:len(g)]
        elif kind == "err":
            terms = g / (np.arange(len(g)) + 1.0)
        else:
            terms = g * _decay(beta, len(g))[:len(g)]
        total = 0.0
        for t in terms.tolist():  # down the ranks, as ndeval
            total += t
        out[i] = total
    return out


def _normalised(raw, ideal, S, k, alpha, kind) -> np.ndarray:
    """raw / ideal as ndeval divides: each first by the ideal-ideal value (from k = 2 on)."""
    out = np.zeros(len(raw))
    if k is not None and k >= 2:
        ii = _ideal_ideal(S, k, alpha, kind)
        raw, ideal = _divide(raw, ii, S > 0), _divide(ideal, ii, S > 0)
    np.divide(raw, ideal, out=out, where=(raw != 0) & (ideal != 0))
    return out


def _nrbp(raw, S, alpha, beta) -> np.ndarray:
    out = np.zeros(len(raw))
    has = S > 0
    out[has] = raw[has] * ((1.0 - (1.0 - alpha) * beta) / S[has])
    return out


def _divide(a, b, where) -> np.ndarray:
    out = np.zeros(len(a))
    np.divide(a, b, out=out, where=where & (b != 0))
    return out


# ---------------------------------------------------------------------------
# Bounds over the holes (judged.core.measures.bounds has the proofs)

GREEDY_NORMALISED = {"alpha-nDCG": "dcg", "nERR-IA": "err", "nNRBP": "nrbp"}


def hole_bounds(measure, aligned, extras: np.ndarray, can_relevant: bool) -> tuple[np.ndarray, np.ndarray]:
    """(min, max) per query of AP-IA (exact) or alpha-nDCG, nERR-IA, nNRBP (conservative)
    over every way the holes of the measure's list, and ``extras[q]`` further holes outside
    it (another run's: they move only the ideal and R), could cover the query's S subtopics
    (each any subset; S fixed). ``can_relevant``: maxgrade >= rel (else no hole covers any).
    The method and its proof: :mod:`judged.core.measures.bounds`."""
    table = _table(measure, aligned)
    n = aligned.n_queries
    S = table.subtopic_count(aligned.qids)
    ranked = ranking_for(measure, aligned).top(measure.cutoff)
    hits = _hits(table, aligned, ranked, S)
    hole = np.isnan(ranked.grade)
    extras = np.asarray(extras, np.int64)
    if measure.name == "AP-IA":
        return _ap_ia_extremes(table, aligned, ranked, hits, S, hole, extras, can_relevant)
    kind = GREEDY_NORMALISED[measure.name]
    alpha = measure.option("alpha") if "alpha" in measure.family.params else 0.5
    k = measure.cutoff
    beta = measure.option("patience") if kind == "nrbp" else None

    def weight(length: int) -> np.ndarray:  # the discount of 0-based ranks 0..length-1
        if kind == "dcg":
            return _discounts(length)[:length]
        if kind == "err":
            return 1.0 / (np.arange(length) + 1.0)
        return _decay(beta, length)[:length]

    n_rows = len(ranked.q)
    gain0 = _scores(hits, n_rows, alpha)  # every hole covering nothing (the zero-filled run)
    full = np.flatnonzero(hole)
    per = S[ranked.q[full]]
    row = np.concatenate([hits[0], np.repeat(full, per)])
    sub = np.concatenate([hits[1], _ranges(per)])
    gainf = _scores(_counted(ranked, row, sub), n_rows, alpha)  # every hole covering all S
    longest = int(ranked.pos.max()) + 1 if n_rows else 0
    w_rank = weight(longest)[ranked.pos] if n_rows else np.zeros(0)
    raw0 = np.bincount(ranked.q, weights=gain0 * w_rank, minlength=n)
    rawf = np.bincount(ranked.q, weights=gainf * w_rank, minlength=n)
    holes = np.bincount(ranked.q[full], minlength=n)
    lo, hi = np.zeros(n), np.zeros(n)
    for i, qid in enumerate(aligned.qids.tolist()):
        if S[i] == 0:  # S fixed: no subtopic, 0 whatever the holes
            continue
        ideal = table.ideal(qid, alpha)
        run0 = gain0[ranked.offsets[i]:ranked.offsets[i + 1]]
        N = k if k is not None else max(len(ideal), len(run0), 1)
        # the greedy ideal's and the zero-filled run's prefix sums F_m, m = 1..N
        F = np.maximum(_prefix(ideal, N), _prefix(run0, N))
        m = np.arange(1, N + 1, dtype=np.float64)
        c = 1.0 - (1.0 - 1.0 / m) ** m  # greedy's share of the best m-set (Nemhauser et al. 1978)
        w = np.concatenate((weight(N), [0.0 if k is not None else weight(N + 1)[N]]))
        low_ideal = float(np.sum((w[:-1] - w[1:]) * c * F))
        if k is None:  # m > N: the prefix sums stay >= F_N and c_m >= 1 - 1/e
            low_ideal += float(w[N] * (1.0 - math.exp(-1.0)) * F[-1])
        cap = 1.0 / (c[-1] if k is not None else 1.0 - math.exp(-1.0))
        hi[i] = min(cap, rawf[i] / low_ideal) if low_ideal > 0 else (cap if rawf[i] > 0 else 0.0)
        # the most any ranking can gain: per subtopic, its n_s covering documents at the top
        covering = table.relevant_count([qid] * int(S[i]), np.arange(S[i]))
        covering = covering + (holes[i] + extras[i] if can_relevant else 0)
        depth = int(covering.max()) if k is None else min(k, int(covering.max()))
        per_rank = weight(depth) * _gains(alpha, depth)[:depth]
        top = np.concatenate(([0.0], np.cumsum(per_rank)))
        high_ideal = float(top[np.minimum(covering.astype(np.int64), depth)].sum())
        lo[i] = raw0[i] / high_ideal if high_ideal > 0 else 0.0
    return lo, hi


def _ranges(per: np.ndarray) -> np.ndarray:
    """0..p-1 for each p of ``per``, concatenated."""
    per = np.asarray(per, np.int64)
    total = int(per.sum())
    if not total:
        return np.zeros(0, np.int64)
    return np.arange(total) - np.repeat(np.cumsum(per) - per, per)


def _prefix(gains: np.ndarray, N: int) -> np.ndarray:
    """Prefix sums F_1..F_N of ``gains`` (constant past its end)."""
    F = np.cumsum(np.asarray(gains, np.float64)[:N])
    return np.concatenate((F, np.full(N - len(F), F[-1] if len(F) else 0.0)))


def _ap_ia_extremes(table, aligned, ranked, hits, S, hole, extras, can_relevant):
    """AP-IA's exact extremes: each subtopic's AP reads only its own labels, and a hole may
    cover any subset, so min and max of the mean are the means of each AP's extremes
    (:func:`judged.core.kernels.bound_kernels.ap_extremes`, one block per query and subtopic)."""
    n = aligned.n_queries
    block_q = np.repeat(np.arange(n), S)
    first = np.concatenate(([0], np.cumsum(S)))
    block_s = np.arange(len(block_q)) - first[block_q]
    length = np.diff(ranked.offsets)[block_q]
    offsets = np.concatenate(([0], np.cumsum(length))).astype(np.int64)
    at = np.repeat(ranked.offsets[block_q] - offsets[:-1], length) + np.arange(offsets[-1])
    grade = np.where(hole[at], np.nan, 0.0)
    row, sub, _ = hits
    hq = ranked.q[row]
    grade[offsets[first[hq] + sub] + row - ranked.offsets[hq]] = 1.0
    R = table.relevant_count(aligned.qids[block_q], block_s) if len(block_q) else np.zeros(0)
    lo_b, hi_b = ap_extremes(offsets, grade, 1.0, R, extras[block_q], can_relevant, True)
    has = S > 0
    return (_divide(np.bincount(block_q, weights=lo_b, minlength=n), S.astype(np.float64), has),
            _divide(np.bincount(block_q, weights=hi_b, minlength=n), S.astype(np.float64), has))
