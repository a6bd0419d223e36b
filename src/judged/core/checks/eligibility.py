"""Permission eligibility: a document the reader may not see never earns gain.

An eligibility file says which (query, document) pairs a reader may be shown::

    # qid  docid        eligible  [principal]
    q1     hr-salaries  false                 # nobody, for q1
    *      board-minutes false                # nobody, for any query ('*')
    *      board-minutes true     cfo         # ... except the principal 'cfo'

Unlisted pairs are eligible. A row with a 4th column applies only to that principal
(a user or role), chosen with ``--as PRINCIPAL`` / ``principal=``; without one, only
the rows for everyone apply (a reader with no special role). The most specific row wins: a principal's row over a
row for everyone, then a row for the query over a ``*`` row; two rows equally specific
that disagree are a ParseError.

Convention (the seed: "an ineligible but highly informative document must never become
a ranking success"): an ineligible document is treated as judged not relevant (grade
0) in every measure, so it earns no gain and leaves the ideal ranking, however
relevant; retrieving one is a leak, counted by ``Leak@k`` (:mod:`judged.core.measures.leak`)
and listed by :func:`leaks`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..data import Qrels
from ..errors import ConventionError, ParseError
from ..lazy import lazy
from .sidefiles import match_pairs, parse_bool, ranked_pairs, read_records, run_in_rank_order

pc = lazy("pyarrow.compute")  # imported on first use (judged.core.lazy)

ANY_QUERY = "*"


@dataclass(eq=False)
class Eligibility:
    """Rows (qid or '*', docid, eligible, principal or None), resolved for one principal."""

    qid: pa.Array
    docid: pa.Array
    eligible: np.ndarray  # bool
    specificity: np.ndarray  # 2 * (principal row) + (qid row, not '*')
    principal: str | None = None
    source: str = "<memory>"

    def ineligible(self, qids: pa.Array, docids: pa.Array) -> np.ndarray:
        """Per (qid, docid) pair: True when the most specific applicable row says not eligible."""
        wild = pc.equal(self.qid, ANY_QUERY).to_numpy(zero_copy_only=False)
        li, spec, val = [], [], []
        for rows, by_query in ((np.flatnonzero(~wild), True), (np.flatnonzero(wild), False)):
            if len(rows) == 0:
                continue
            take = pa.array(rows, type=pa.int64())
            lq, rr = match_pairs(qids, docids, self.qid.take(take) if by_query else None, self.docid.take(take))
            li.append(lq); spec.append(self.specificity[rows[rr]]); val.append(self.eligible[rows[rr]])
        out = np.zeros(len(docids), dtype=bool)
        if not li:
            return out
        li, spec, val = np.concatenate(li), np.concatenate(spec), np.concatenate(val)
        order = np.lexsort((spec, li))  # last row of each pair: the most specific
        li, val = li[order], val[order]
        last = np.r_[li[1:] != li[:-1], True] if len(li) else np.zeros(0, bool)
        out[li[last]] = ~val[last]
        return out


def read_eligibility(source, principal: str | None = None) -> Eligibility:
    """Read ``qid docid eligible [principal]`` (path or DataFrame) for ``principal``."""
    if isinstance(source, Eligibility):
        return source
    cols, name, lines = read_records(source, ["qid", "docid", "eligible"], ["principal"], what="eligibility file")
    values = np.array([parse_bool(v, name, ln, "eligible") for v, ln in zip(cols["eligible"], lines)], dtype=bool)
    principals = cols["principal"]
    named = sorted({p for p in principals if p})
    if principal is not None and principal not in named:
        raise ConventionError(f"principal {principal!r} does not appear in the eligibility file {name}"
                              + (f" (it names {', '.join(named[:5])})" if named else " (it names no principals)"))
    keep = np.array([p is None or p == "" or p == principal for p in principals], dtype=bool)
    seen = {}
    for i in np.flatnonzero(keep):
        key = (cols["qid"][i], cols["docid"][i], principals[i] or None)
        if key in seen and values[seen[key]] != values[i]:
            raise ParseError(name, lines[i], f"query {key[0]!r} docid {key[1]!r} is also given the opposite "
                                             f"eligibility on line {lines[seen[key]]}")
        seen.setdefault(key, i)
    rows = np.flatnonzero(keep)
    qid = [cols["qid"][i] for i in rows]
    spec = np.array([2 * bool(principals[i]) + (cols["qid"][i] != ANY_QUERY) for i in rows], dtype=np.int64)
    return Eligibility(pa.array(qid, pa.string()), pa.array([cols["docid"][i] for i in rows], pa.string()),
                       values[rows], spec, principal, name)


def restrict_qrels(qrels: Qrels, eligibility: Eligibility) -> tuple[Qrels, int]:
    """The qrels with every ineligible pair graded 0 (judged not relevant), and how many
    relevant judgments that took away. Source and sha256 stay those of the file read."""
    off = eligibility.ineligible(qrels.qid, qrels.docid) & (qrels.grade > 0)
    if not off.any():
        return qrels, 0
    grade = qrels.grade.copy()
    grade[off] = 0
    meta = dict(qrels.meta, eligibility=eligibility.source, principal=eligibility.principal)
    return Qrels(qrels.qid, qrels.docid, grade, source=qrels.source, sha256=qrels.sha256, meta=meta), int(off.sum())


def ineligible_rows(aligned, ranked) -> np.ndarray:
    """Per row of ``ranked``: True when the document is ineligible (False without data)."""
    eligibility = getattr(aligned, "annotations", {}).get("eligibility")
    if eligibility is None:
        return np.zeros(len(ranked.q), dtype=bool)
    return eligibility.ineligible(*ranked_pairs(aligned, ranked))


@dataclass(frozen=True)
class Leak:
    qid: str
    rank: int  # 1-based
    docid: str

    def to_dict(self) -> dict:
        return {"qid": self.qid, "rank": self.rank, "docid": self.docid}


def leaks_in_run(run, eligibility: Eligibility, k: int | None, ties: str = "trec") -> list[Leak]:
    """Ineligible documents in the top k of every query the run answers (judged or not),
    ranked under the declared tie order, in query order then rank."""
    rows, q, pos, vocab = run_in_rank_order(run, ties)
    top = pos < k if k is not None else np.ones(len(rows), bool)
    rows, q, pos = rows[top], q[top], pos[top]
    take = pa.array(rows, type=pa.int64())
    hit = np.flatnonzero(eligibility.ineligible(run.qid.take(take), run.docid.take(take)))
    docids = run.docid.take(pa.array(rows[hit], type=pa.int64())).to_pylist()
    return [Leak(vocab[int(q[i])].as_py(), int(pos[i]) + 1, d) for i, d in zip(hit.tolist(), docids)]


def leaks(result, k: int | None = 10) -> dict[str, list[Leak]]:
    """Run name -> its leaks in the top k of every query it answers (runs without leaks
    map to []), for a Result evaluated with ``eligibility=``. Compare and report flag
    every run with leaks. (``Leak@k``, a measure, counts over the evaluated queries.)"""
    checks = result.checks
    if checks is None or checks.eligibility is None:
        raise ConventionError("no eligibility data: evaluate with eligibility= (--eligibility FILE)")
    return {name: leaks_in_run(checks.runs.get(name, rr.aligned.run), checks.eligibility, k, result.settings.ties)
            for name, rr in result.runs.items()}
