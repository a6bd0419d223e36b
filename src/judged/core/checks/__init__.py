"""Checks beyond the ranking score, wired into :func:`judged.evaluate`.

The seed: "require accepted answers and adequate evidence coverage before treating the
ranking improvement as a useful application improvement". One :class:`Checks` holds the
side data of an evaluation and applies it at fixed points:

1. ``load``: reads the grade scale (and checks every qrels grade is on it), removes the
   unanswerable queries (marker lines or a list) unless they are scored, grades every
   ineligible pair 0 (so no measure can reward it, and the ideal ranking leaves it out);
2. ``prepare_run`` / ``attach``: per run, the abstention evaluation, the run without the
   unanswerable queries, and the requirements and eligibility attached to the
   :class:`~judged.core.align.Aligned` (``aligned.annotations``) for the kernels that need them;
3. ``to_dict`` / ``warnings``: the keys added to ``judged eval --format json`` (``scale``,
   ``answer_key``, ``warnings``; per run ``leaks``, ``evidence_gaps``, ``abstention``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .abstention import ABSTAIN_MARKER, Abstention, evaluate_abstention
from .answer_key import (AnswerKey, check_unanswerable, drop_queries, read_query_list, relevant_per_query,
                         split_marker, thin_key_warning)
from .eligibility import Eligibility, leaks_in_run, read_eligibility, restrict_qrels
from .evidence import HIGH_SCORE, Requirements, evidence_gaps, read_requirements, unknown_queries
from .scale import GradeScale, read_scale
from ..words import counted

DEFAULT_DEPTH = 10  # k of the leak and evidence-gap lists when no nDCG@k is measured


@dataclass(frozen=True, eq=False)
class SideFiles:
    """The side files of an evaluation, as one value (paths, DataFrames or dicts; see
    ``docs/beyond-ndcg.md``): a grade ``scale`` (TOML; every qrels grade must be on it),
    evidence ``requirements`` (``qid group docid``, for Complete@k / Coverage@k),
    ``eligibility`` for a ``principal`` (ineligible documents graded 0, counted by Leak@k),
    declared ``unanswerable`` queries (also the qrels marker ``__UNANSWERABLE__``), the
    ``abstain_marker`` a run abstains with, and ``score_unanswerable`` (keep those queries
    in the ranking measures)."""

    scale: object = None
    requirements: object = None
    eligibility: object = None
    principal: str | None = None
    unanswerable: object = None
    abstain_marker: str = ABSTAIN_MARKER
    score_unanswerable: bool = False


@dataclass
class Checks:
    scale: GradeScale | None = None
    requirements: Requirements | None = None
    eligibility: Eligibility | None = None
    answer_key: AnswerKey | None = None
    abstain_marker: str = ABSTAIN_MARKER
    ineligible_relevant: int = 0  # relevant judgments taken away by eligibility
    abstention: dict = field(default_factory=dict)  # run name -> Abstention
    runs: dict = field(default_factory=dict, repr=False)  # run name -> the whole run, when queries were left out
    depth: int | None = None  # k of the leak and gap lists (None: the first nDCG@k's k, else 10)
    high: float = HIGH_SCORE  # "high nDCG" in the gap lists
    notes: list = field(default_factory=list)  # remarks on the side data (unknown queries...)
    _cache: dict = field(default_factory=dict, repr=False)

    @staticmethod
    def load(qrels, side: SideFiles):
        """(Checks, the qrels to evaluate against)."""
        checks = Checks(abstain_marker=side.abstain_marker)
        if side.scale is not None:
            checks.scale = read_scale(side.scale)
            checks.scale.check_qrels(qrels)
        qrels, marked = split_marker(qrels, keep_rows=side.score_unanswerable)
        listed = read_query_list(side.unanswerable) if side.unanswerable is not None else []
        declared = sorted(set(marked) | set(listed))
        if side.eligibility is not None:
            checks.eligibility = read_eligibility(side.eligibility, side.principal)
            qrels, checks.ineligible_relevant = restrict_qrels(qrels, checks.eligibility)
        if declared:
            check_unanswerable(relevant_per_query(qrels), declared, qrels.source)
        if declared and not side.score_unanswerable:
            qrels = drop_queries(qrels, declared)
        checks.answer_key = AnswerKey(qrels, declared, side.score_unanswerable)
        if side.requirements is not None:
            checks.requirements = read_requirements(side.requirements)
            stray = unknown_queries(checks.requirements, qrels.query_ids.tolist() + declared)
            if stray:
                checks.notes.append(f"{len(stray)} quer{'y' if len(stray) == 1 else 'ies'} in the requirements "
                                    f"{checks.requirements.source} not in the qrels (first: {stray[0]!r})")
        return checks, qrels

    # -- per run -------------------------------------------------------------
    def prepare_run(self, name: str, run, settings):
        """Evaluate abstention on the whole run; return it without unanswerable queries
        (unless they are scored)."""
        key = self.answer_key
        if key.unanswerable:
            answerable = [q for q in key.relevant if q not in set(key.unanswerable)]
            self.abstention[name] = evaluate_abstention(run, answerable, key.unanswerable, self.abstain_marker,
                                                        settings.ties)
        scored = run if key.scored_unanswerable else drop_queries(run, key.unanswerable)
        if scored is not run:
            self.runs[name] = run  # leaks count on every query the run answers
        return scored

    @property
    def needs_whole_run(self) -> bool:
        """True when a check reads side data per run (eligibility, requirements, unanswerable
        queries): the run is then read whole rather than streamed by query blocks."""
        key = self.answer_key
        return bool(self.eligibility is not None or self.requirements is not None or (key and key.unanswerable))

    def attach(self, aligned) -> None:
        aligned.annotations["requirements"] = self.requirements
        aligned.annotations["eligibility"] = self.eligibility

    # -- reporting -----------------------------------------------------------
    def ranking_measure(self, result) -> str | None:
        """The measure the gap and answer lists pair with: the first nDCG measure given."""
        return next((g for g, m in result.measures.items() if m.family.headline), None)

    def k(self, result) -> int | None:
        if self.depth is not None:
            return self.depth
        given = self.ranking_measure(result)
        return result.measures[given].cutoff if given else DEFAULT_DEPTH

    def leaks(self, result) -> dict:
        """Run name -> its leaks in the top k of every query it answers (empty without eligibility data)."""
        if self.eligibility is None:
            return {}
        return self._per_run(result, "leaks", lambda rr: leaks_in_run(self.runs.get(rr.name, rr.aligned.run),
                                                                      self.eligibility, self.k(result),
                                                                      result.settings.ties))

    def gaps(self, result) -> dict:
        """Run name -> queries with a high nDCG@k but incomplete evidence in the top k."""
        given = self.ranking_measure(result)
        if self.requirements is None or given is None:
            return {}
        return self._per_run(result, "gaps", lambda rr: evidence_gaps(rr.aligned, rr.values[given], self.requirements,
                                                                      self.k(result), self.high))

    def _per_run(self, result, what, compute) -> dict:
        key = (what, id(result), self.depth, self.high)
        if key not in self._cache:
            self._cache[key] = {name: compute(rr) for name, rr in result.runs.items()}
        return self._cache[key]

    def warnings(self, result) -> list[str]:
        out = []
        given = self.ranking_measure(result)
        thin = thin_key_warning(self.answer_key, given or "nDCG@k", () if given else tuple(result.measures))
        if thin:
            out.append(thin)
        out += result.query_set.warnings()  # runs missing queries, different query sets or depths
        for name, found in self.leaks(result).items():
            if found:
                out.append(f"run {name} retrieved {counted(len(found), 'ineligible document')} in the top {self.k(result)} "
                           f"(leaks; first: query {found[0].qid!r} rank {found[0].rank} docid {found[0].docid!r})")
        return out + list(self.notes)

    def to_dict(self, result) -> dict:
        """Top-level keys added to the eval JSON."""
        out = {"answer_key": self.answer_key.to_dict(), "warnings": self.warnings(result)}
        if self.scale is not None:
            out["scale"] = self.scale.to_dict()
        if self.eligibility is not None:
            out["eligibility"] = {"source": self.eligibility.source, "principal": self.eligibility.principal,
                                  "relevant_judgments_made_ineligible": self.ineligible_relevant,
                                  "depth": self.k(result)}
        if self.requirements is not None:
            out["requirements"] = {"source": self.requirements.source, "queries": len(self.requirements.query_ids),
                                   "depth": self.k(result), "high": self.high,
                                   "paired_with": self.ranking_measure(result)}
        return out

    def run_dict(self, result, name: str) -> dict:
        """Keys added to one run's entry of the eval JSON."""
        out = {}
        leaks = self.leaks(result)
        if name in leaks:
            out["leaks"] = [x.to_dict() for x in leaks[name]]
        gaps = self.gaps(result)
        if name in gaps:
            out["evidence_gaps"] = [g.to_dict(self.ranking_measure(result)) for g in gaps[name]]
        if name in self.abstention:
            out["abstention"] = self.abstention[name].to_dict()
        return out


__all__ = ["Checks", "SideFiles", "Abstention"]
