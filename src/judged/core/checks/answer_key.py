"""What the answer key holds per query, and when a score means less than its name.

Three kinds of query that have nothing relevant are kept apart:

* **not judged**: absent from the qrels (a query only in the run; never scored);
* **judged, nothing relevant**: in the qrels, every judgment below grade 1 (scored by
  the ``no_relevant`` convention: ``zero``, ``skip`` or ``error``);
* **unanswerable**: declared so, by the marker line ``qid 0 __UNANSWERABLE__ 0`` in the
  qrels or by a file listing one qid per line. Nothing in the corpus answers it: it
  gets an abstention evaluation (:mod:`judged.core.checks.abstention`) and is kept out of the
  ranking measures by default (``score_unanswerable=False``), counted.

Thin answer keys: when the queries with something relevant average 1.5 relevant
documents or fewer, nDCG@k has become a rank measure, 1/log2(1 + rank of the hit) for a
single relevant document; :func:`thin_key_warning` says so and shows the distribution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa

from ..data import Qrels, Run, arrow_strings, as_numpy, string_hash, strings_equal
from ..errors import ParseError
from ..lazy import lazy
from ..words import counted
from .sidefiles import read_records

pc = lazy("pyarrow.compute")  # imported on first use (judged.core.lazy)

UNANSWERABLE_MARKER = "__UNANSWERABLE__"  # a qrels docid: "judged: nothing in the corpus answers this"
THIN_KEY_MEAN = 1.5  # relevant documents per query (among queries with any) at or below which we warn


def read_query_list(source) -> list[str]:
    """Query ids, one per line (first field; '#' comments), or any iterable of ids."""
    if isinstance(source, (list, tuple, set, frozenset)):
        return sorted(str(q) for q in source)
    cols, _, _ = read_records(source, ["qid"], ["note"], rest=True, what="query list")
    return sorted(set(cols["qid"]))


def split_marker(qrels: Qrels, keep_rows: bool = False) -> tuple[Qrels, list[str]]:
    """(qrels without the marker lines, the marked qids). With ``keep_rows`` the marker
    lines stay (grade 0) so the query remains in the qrels, judged with nothing relevant."""
    marker = arrow_strings([UNANSWERABLE_MARKER])
    maybe = np.flatnonzero(qrels.docid_hash == string_hash(marker)[0])  # the hashes the reader computed
    if not len(maybe) or not strings_equal(qrels.docid, maybe, marker, np.zeros(len(maybe), np.int64)).any():
        return qrels, []
    is_marker = as_numpy(pc.is_in(qrels.docid, value_set=marker))
    marked = sorted(set(qrels.qid.filter(pa.array(is_marker)).to_pylist()))
    bad = is_marker & (qrels.grade > 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParseError(qrels.source, None, f"query {qrels.qid[i].as_py()!r}: the {UNANSWERABLE_MARKER} marker "
                                             f"must carry grade 0, not {int(qrels.grade[i])}")
    if keep_rows:
        return qrels, marked
    keep = pa.array(~is_marker)
    return Qrels(qrels.qid.filter(keep), qrels.docid.filter(keep), qrels.grade[~is_marker], source=qrels.source,
                 sha256=qrels.sha256, meta=qrels.meta), marked


def relevant_per_query(qrels: Qrels, level: int = 1) -> dict[str, int]:
    """qid -> number of judgments with grade >= level, for every query in the qrels."""
    idx = qrels.index
    counts = np.bincount(idx.row_query[idx.grade >= level], minlength=len(idx.query_ids))
    return dict(zip(idx.query_ids.tolist(), counts.tolist()))


def check_unanswerable(relevant: dict[str, int], unanswerable, source: str) -> None:
    """An unanswerable query with relevant judgments is a contradiction: ParseError."""
    clash = [q for q in unanswerable if relevant.get(q, 0) > 0]
    if clash:
        raise ParseError(source, None, f"query {clash[0]!r} is declared unanswerable but the qrels judge "
                                       f"{counted(relevant[clash[0]], 'document')} relevant"
                                       + (f" ({len(clash) - 1} more such queries)" if len(clash) > 1 else ""))


def drop_queries(data, qids) -> "Qrels | Run":
    """The Qrels or Run without the rows of ``qids``."""
    if not qids:
        return data
    keep = pc.invert(pc.is_in(data.qid, value_set=pa.array(sorted(qids), pa.string())))
    mask = keep.to_numpy(zero_copy_only=False)
    if mask.all():
        return data
    if isinstance(data, Qrels):
        return Qrels(data.qid.filter(keep), data.docid.filter(keep), data.grade[mask], source=data.source,
                     sha256=data.sha256, meta=data.meta)
    run = Run(data.qid.filter(keep), data.docid.filter(keep), data.score[mask], name=data.name,
              rank=None if data.rank is None else data.rank[mask], source=data.source, sha256=data.sha256)
    return run


@dataclass
class AnswerKey:
    """Per-query contents of the answer key (after eligibility, without unanswerable queries)."""

    qrels: Qrels = field(repr=False)  # the judgments evaluated against
    unanswerable: list  # declared unanswerable qids
    scored_unanswerable: bool = False

    @cached_property
    def relevant(self) -> dict:
        """qid -> relevant documents (grade >= 1), counted on first use."""
        return relevant_per_query(self.qrels)

    @property
    def nothing_relevant(self) -> list[str]:
        """Judged queries with nothing relevant that are not declared unanswerable."""
        un = set(self.unanswerable)
        return sorted(q for q, n in self.relevant.items() if n == 0 and q not in un)

    def distribution(self) -> dict[int, int]:
        """Number of relevant documents -> number of queries with that many."""
        un = set(self.unanswerable)
        per_query = [n for q, n in self.relevant.items() if q not in un]
        if not per_query:
            return {}
        values, counts = np.unique(per_query, return_counts=True)
        return {int(v): int(c) for v, c in zip(values, counts)}

    def mean_relevant(self) -> float:
        """Mean relevant documents over the queries with at least one."""
        with_any = [n for n in self.relevant.values() if n > 0]
        return float(np.mean(with_any)) if with_any else 0.0

    def to_dict(self) -> dict:
        un = set(self.unanswerable)
        return {
            "queries_with_relevant": sum(1 for n in self.relevant.values() if n > 0),
            "judged_nothing_relevant": len(self.nothing_relevant),
            "judged_nothing_relevant_qids": self.nothing_relevant,
            "unanswerable": len(un),
            "unanswerable_qids": sorted(un),
            "unanswerable_in_ranking_measures": self.scored_unanswerable,
            "relevant_per_query": {str(k): v for k, v in self.distribution().items()},
            "mean_relevant_per_query": self.mean_relevant(),
        }


def thin_key_warning(key: AnswerKey, measure: str = "nDCG@k", others: tuple = ()) -> str | None:
    """The thin-answer-key warning, or None when queries average more than 1.5 relevant.
    ``measure``: the nDCG measure given; ``others``: the measures given when none is nDCG
    (each then depends on the rank of the hit alone, P@k on whether it is in the top k)."""
    mean = key.mean_relevant()
    if not key.relevant or mean == 0 or mean > THIN_KEY_MEAN:
        return None
    dist = ", ".join(f"{k}: {v}" for k, v in key.distribution().items())
    what = (f"{', '.join(others)} {'depends' if len(others) == 1 else 'each depend'} on the rank of the hit "
            "alone for a single relevant document" if others else
            f"{measure} has become a rank measure, 1/log2(1 + rank of the hit) for a single relevant document")
    return (f"thin answer key: queries with something relevant average {mean:.2f} relevant documents "
            f"(<= {THIN_KEY_MEAN}); {what}. Relevant documents per query -> queries: {dist}")
