"""Answer checks: pair a ranking score with whether the final answer was accepted.

The seed: "pair ranking scores with answer checks"; "use nDCG to prioritize ranking
investigations; require accepted answers ... before treating the ranking improvement as
a useful application improvement". An answers file holds one verdict per run and query::

    # run   qid  accepted  [note]
    bm25    q1   false     the answer missed the EU exception
    dense   q1   true

``accepted`` is true/false (also yes/no, 1/0); the note is the rest of the line. A run
label matches a run evaluated under that name, or under a path whose file name (or file
name without its extension) is the label. :func:`pair_answers` reports, per run, the
acceptance rate, the mean score among accepted and among failed answers, and the two
disagreement lists: a high score (>= ``high``) with a failed answer, a low score
(< ``high``) with an accepted one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import ConventionError, ParseError
from ..core.checks.evidence import HIGH_SCORE
from ..core.checks.sidefiles import parse_bool, read_records


@dataclass(frozen=True)
class Verdict:
    run: str
    qid: str
    accepted: bool
    note: str = ""


def read_answers(source) -> list[Verdict]:
    """Read ``run qid accepted [note]`` lines (or a DataFrame with those columns)."""
    cols, name, lines = read_records(source, ["run", "qid", "accepted"], ["note"], rest=True, what="answers file")
    out, seen = [], {}
    for i, line in enumerate(lines):
        v = Verdict(cols["run"][i], cols["qid"][i], parse_bool(cols["accepted"][i], name, line, "accepted"),
                    cols["note"][i] or "")
        key = (v.run, v.qid)
        if key in seen:
            raise ParseError(name, line, f"run {v.run!r} query {v.qid!r} already has a verdict on line {seen[key]}")
        seen[key] = line
        out.append(v)
    return out


@dataclass
class AnswerPairing:
    """One run's scores paired with its answer verdicts."""

    run: str
    measure: str
    high: float
    accepted: list = field(default_factory=list)  # (qid, score, note)
    failed: list = field(default_factory=list)
    unscored: list = field(default_factory=list)  # verdicts for queries the run was not scored on

    @property
    def checked(self) -> int:
        return len(self.accepted) + len(self.failed)

    @property
    def acceptance_rate(self) -> float | None:
        return len(self.accepted) / self.checked if self.checked else None

    @staticmethod
    def _mean(rows) -> float | None:
        return float(np.mean([s for _, s, _ in rows])) if rows else None

    @property
    def mean_accepted(self) -> float | None:
        return self._mean(self.accepted)

    @property
    def mean_failed(self) -> float | None:
        return self._mean(self.failed)

    @property
    def high_score_failed(self) -> list:
        """High score, failed answer: the ranking looked good and the answer was not."""
        return sorted((r for r in self.failed if r[1] >= self.high), key=lambda r: (-r[1], r[0]))

    @property
    def low_score_accepted(self) -> list:
        """Low score, accepted answer: the answer was fine although the ranking scored low."""
        return sorted((r for r in self.accepted if r[1] < self.high), key=lambda r: (r[1], r[0]))

    def to_dict(self) -> dict:
        def rows(rs):
            return [{"qid": q, self.measure: s, "note": n} for q, s, n in rs]

        return {"measure": self.measure, "high": self.high, "checked": self.checked,
                "accepted": len(self.accepted), "failed": len(self.failed),
                "acceptance_rate": self.acceptance_rate, "mean_score_accepted": self.mean_accepted,
                "mean_score_failed": self.mean_failed,
                "high_score_failed": rows(self.high_score_failed),
                "low_score_accepted": rows(self.low_score_accepted),
                "unscored": self.unscored}


def run_label_matches(label: str, name: str) -> bool:
    base = os.path.basename(name)
    return label in (name, base, base.split(".")[0], os.path.splitext(base)[0])


def pair_answers(result, answers, measure: str | None = None, high: float = HIGH_SCORE) -> dict[str, AnswerPairing]:
    """Run name -> :class:`AnswerPairing` of ``measure`` (default: the first nDCG measure,
    else the first measure) with the verdicts of ``answers`` (a path or Verdict list)."""
    verdicts = answers if isinstance(answers, list) else read_answers(answers)
    if measure is None:
        measure = next((g for g, m in result.measures.items() if m.family.headline), next(iter(result.measures)))
    if measure not in result.measures:
        raise ConventionError(f"measure {measure!r} was not evaluated (evaluated: {', '.join(result.measures)})")
    labels = sorted({v.run for v in verdicts})
    owner = {}
    for label in labels:
        hits = [name for name in result.runs if run_label_matches(label, name)]
        if len(hits) > 1:
            raise ConventionError(f"answers run label {label!r} matches several runs: {', '.join(hits)}")
        if hits:
            owner[label] = hits[0]
    unknown = [lb for lb in labels if lb not in owner]
    if unknown:
        raise ConventionError(f"answers name run(s) {', '.join(map(repr, unknown))} that were not evaluated "
                              f"(runs: {', '.join(result.runs)})")
    out = {name: AnswerPairing(name, measure, high) for name in result.runs}
    for name, rr in result.runs.items():
        index = {q: i for i, q in enumerate(rr.qids.tolist())}
        values = rr.values[measure]
        for v in verdicts:
            if owner[v.run] != name:
                continue
            if v.qid not in index:
                out[name].unscored.append(v.qid)
                continue
            row = (v.qid, float(values[index[v.qid]]), v.note)
            (out[name].accepted if v.accepted else out[name].failed).append(row)
    return out
