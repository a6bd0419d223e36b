"""Evidence completeness: does the top k hold every piece of evidence the answer needs?

A requirements file lists, per query, groups of interchangeable documents::

    # qid  group      docid
    q1     rule       doc-12
    q1     rule       doc-40      # either doc-12 or doc-40 states the rule
    q1     exception  doc-77      # and the answer also needs the exception

The question needs at least one document from every group. ``Complete@k`` is 1 when
every group of the query has a document in the top k, else 0; ``Coverage@k`` is the
share of the query's groups covered (kernels in :mod:`judged.core.measures.completeness`). A
query without requirements needs nothing: both are 1 there (declared in the convention
as ``no-requirements=1``, and counted). "A high nDCG can coexist with a missing required
exception": :func:`evidence_gaps` lists those queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from .eligibility import ineligible_rows
from ..errors import ParseError
from .sidefiles import match_pairs, ranked_pairs, read_records

HIGH_SCORE = 0.5  # "high nDCG" in the gap lists: score >= this (declared in every report)


@dataclass(eq=False)
class Requirements:
    """Rows (qid, group, docid); ``group_code`` numbers the distinct (qid, group) pairs."""

    qid: pa.Array
    group: pa.Array
    docid: pa.Array
    source: str = "<memory>"
    group_code: np.ndarray = field(init=False)
    group_qid: list = field(init=False)  # qid of each group code
    group_name: list = field(init=False)

    def __post_init__(self):
        keys = pa.table({"q": self.qid, "g": self.group}).group_by(["q", "g"], use_threads=False).aggregate([])
        self.group_qid, self.group_name = keys["q"].to_pylist(), keys["g"].to_pylist()
        li, ri = match_pairs(self.qid, self.group, keys["q"], keys["g"])  # each row matches one group
        code = np.empty(len(self.qid), np.int64)
        code[li] = ri
        self.group_code = code

    @property
    def query_ids(self) -> list[str]:
        return sorted(set(self.group_qid))

    def groups_needed(self, qids) -> np.ndarray:
        """Number of groups required by each query of ``qids`` (0 when it has none)."""
        per = {}
        for q in self.group_qid:
            per[q] = per.get(q, 0) + 1
        return np.array([per.get(q, 0) for q in qids], dtype=np.int64)


def read_requirements(source) -> Requirements:
    """Read ``qid group docid`` lines (or a DataFrame with those columns, or a dict
    {qid: {group: [docid, ...]}})."""
    if isinstance(source, Requirements):
        return source
    if isinstance(source, dict):
        rows = [(str(q), str(g), str(d)) for q, groups in source.items() for g, docs in groups.items() for d in docs]
        if not rows:
            raise ParseError("<requirements>", None, "no requirements")
        q, g, d = zip(*rows)
        return Requirements(pa.array(q), pa.array(g), pa.array(d), "<requirements>")
    cols, name, _ = read_records(source, ["qid", "group", "docid"], what="requirements file")
    return Requirements(pa.array(cols["qid"], pa.string()), pa.array(cols["group"], pa.string()),
                        pa.array(cols["docid"], pa.string()), name)


@dataclass
class Coverage:
    """Per evaluated query: groups needed and covered in the top k; covered group codes."""

    needed: np.ndarray
    covered: np.ndarray
    covered_q: np.ndarray  # (query index, group code) of each covered group
    covered_group: np.ndarray

    @property
    def complete(self) -> np.ndarray:
        return (self.covered >= self.needed).astype(np.float64)

    @property
    def share(self) -> np.ndarray:
        out = np.ones(len(self.needed))
        np.divide(self.covered, self.needed, out=out, where=self.needed > 0)
        return out


def coverage(aligned, requirements: Requirements, k: int | None) -> Coverage:
    """Which required groups the top k of each evaluated query covers."""
    top = aligned.ranked.top(k)
    qids, docids = ranked_pairs(aligned, top)
    li, ri = match_pairs(qids, docids, requirements.qid, requirements.docid)
    seen = ~ineligible_rows(aligned, top)[li]  # evidence the reader may not see is no evidence
    li, ri = li[seen], ri[seen]
    pairs = np.unique(np.stack([top.q[li], requirements.group_code[ri]], axis=1), axis=0) if len(li) else \
        np.zeros((0, 2), np.int64)
    n = aligned.n_queries
    covered = np.bincount(pairs[:, 0], minlength=n) if len(pairs) else np.zeros(n, np.int64)
    return Coverage(requirements.groups_needed(aligned.qids.tolist()), covered, pairs[:, 0], pairs[:, 1])


@dataclass
class EvidenceGap:
    qid: str
    score: float  # the ranking measure's value (e.g. nDCG@10)
    covered: int
    needed: int
    missing: list  # names of the groups with no document in the top k

    def to_dict(self, measure: str) -> dict:
        return {"qid": self.qid, measure: self.score, "groups_covered": self.covered,
                "groups_needed": self.needed, "missing_groups": self.missing}


def evidence_gaps(aligned, scores: np.ndarray, requirements: Requirements, k: int | None,
                  high: float = HIGH_SCORE) -> list[EvidenceGap]:
    """Queries scoring >= ``high`` whose top k misses a required group, highest score first."""
    cov = coverage(aligned, requirements, k)
    gaps = []
    for i in np.flatnonzero((scores >= high) & (cov.covered < cov.needed)):
        qid = str(aligned.qids[i])
        have = set(cov.covered_group[cov.covered_q == i].tolist())
        missing = [requirements.group_name[c] for c, q in enumerate(requirements.group_qid) if q == qid and c not in have]
        gaps.append(EvidenceGap(qid, float(scores[i]), int(cov.covered[i]), int(cov.needed[i]), sorted(missing)))
    return sorted(gaps, key=lambda g: (-g.score, g.qid))


def unknown_queries(requirements: Requirements, qrels_qids) -> list[str]:
    """Queries in the requirements but not in the qrels (probably a typo)."""
    known = set(qrels_qids)
    return [q for q in requirements.query_ids if q not in known]
