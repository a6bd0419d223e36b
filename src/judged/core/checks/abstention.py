"""Abstention: did a run decline to answer exactly the queries nothing answers?

A run abstains on a query when it returns no results for it, or when its top-ranked
result (under the declared tie order) is the marker docid (``__ABSTAIN__`` by
default; ``abstain_marker=`` / ``--abstain-marker``). Over the queries of the answer
key (qrels queries and declared unanswerable ones), with A the queries the run abstains
on and U the unanswerable ones:

    abstention precision = |A & U| / |A|     (None when the run never abstains)
    abstention recall    = |A & U| / |U|     (None when nothing is unanswerable)

The marker is left in the ranking of answerable queries as an unjudged document (gain 0),
so an abstention there scores 0 rather than disappearing from the mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from ..words import counted
from ..data import Run
from .sidefiles import run_in_rank_order

ABSTAIN_MARKER = "__ABSTAIN__"  # a run docid: "I decline to answer this query"


@dataclass
class Abstention:
    marker: str
    queries: int  # |answer key queries|
    unanswerable: int  # |U|
    abstained: int  # |A|
    correct: int  # |A & U|
    wrong_abstentions: list = field(default_factory=list)  # A - U: abstained on an answerable query
    missed_abstentions: list = field(default_factory=list)  # U - A: answered an unanswerable query

    @property
    def precision(self) -> float | None:
        return self.correct / self.abstained if self.abstained else None

    @property
    def recall(self) -> float | None:
        return self.correct / self.unanswerable if self.unanswerable else None

    def to_dict(self) -> dict:
        return {"marker": self.marker, "queries": self.queries, "unanswerable": self.unanswerable,
                "abstained": self.abstained, "abstained_unanswerable": self.correct,
                "precision": self.precision, "recall": self.recall,
                "abstained_on_answerable": self.wrong_abstentions,
                "answered_unanswerable": self.missed_abstentions}

    def summary(self) -> str:
        def f(x):
            return "n/a" if x is None else f"{x:.3f}"

        return (f"abstained on {self.abstained} of {counted(self.queries, 'query')} ({self.correct} of {self.unanswerable} "
                f"unanswerable): abstention precision {f(self.precision)}, recall {f(self.recall)}")


def abstained_queries(run: Run, qids: list[str], marker: str = ABSTAIN_MARKER, ties: str = "trec") -> set[str]:
    """The queries of ``qids`` on which ``run`` returns nothing or ranks ``marker`` first."""
    rows, q, pos, vocab = run_in_rank_order(run, ties, qids)
    first = rows[pos == 0]
    top_doc = run.docid.take(pa.array(first, type=pa.int64())).to_pylist()
    answered = {vocab[int(c)].as_py() for c, d in zip(q[pos == 0].tolist(), top_doc) if d != marker}
    return set(vocab.to_pylist()) - answered


def evaluate_abstention(run: Run, answerable: list[str], unanswerable: list[str], marker: str = ABSTAIN_MARKER,
                        ties: str = "trec") -> Abstention:
    """Abstention precision and recall of one run over answerable + unanswerable queries."""
    universe = sorted(set(answerable) | set(unanswerable))
    a = abstained_queries(run, universe, marker, ties)
    u = set(unanswerable)
    return Abstention(marker, len(universe), len(u), len(a), len(a & u), sorted(a - u), sorted(u - a))
