"""``explain``: one query's score worked by hand, as the seeds do it.

For the DCG family every rank shows grade, gain, discount, discounted gain and the
running DCG, then the ideal grade sequence and IDCG; other measures show which ranked
documents count as relevant (the diversity measures: which subtopics each covers). Warnings say when the number means less than it seems
(a single relevant document, unjudged documents in the top k, nothing relevant).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..core.words import counted
from ..core.conventions import Settings
from ..core.errors import ConventionError, MeasureError
from ..core.evaluation import ALIGNMENT, Scorer
from ..core.measures import Measure


@dataclass
class Explanation:
    qid: str
    measure: Measure
    convention: str
    rows: list  # dicts: rank, docid, grade (None = unjudged), gain, discount, discounted, running (subtopics)
    ideal_grades: list
    ideal_gains: list
    dcg: float | None
    idcg: float | None
    value: float
    relevant: int
    warnings: list = field(default_factory=list)

    def render(self, console=None) -> None:
        from rich.console import Console
        from rich.table import Table

        console = console or Console()
        m = self.measure
        console.print(f"[bold]{m}[/] for query [bold]{self.qid}[/]", highlight=False)
        console.print(f"convention: {self.convention} (one query: no mean, so no query set)", highlight=False,
                      markup=False, soft_wrap=True)
        dcg_family = m.family.label_worth == "gain"
        t = Table()
        for col in ["rank", "docid", "grade"] + (["gain", "discount", "discounted gain", "running DCG"]
                                                  if dcg_family else ["relevant"]) + \
                (["subtopics covered"] if m.family.subtopics else []):
            t.add_column(col, justify="left" if col in ("docid", "subtopics covered") else "right")
        for r in self.rows:
            grade = "unjudged" if r["grade"] is None else str(r["grade"])
            if dcg_family:
                t.add_row(str(r["rank"]), r["docid"], grade, _n(r["gain"]), _n(r["discount"]),
                          _n(r["discounted"]), _n(r["running"]))
            else:
                t.add_row(str(r["rank"]), r["docid"], grade, "yes" if r["relevant"] else "",
                          *([", ".join(r["subtopics"])] if m.family.subtopics else []))
        console.print(t)
        if dcg_family:
            console.print(f"DCG = {self.dcg:.3f}", highlight=False)
            if m.family.normaliser:
                console.print(f"ideal grade sequence: {', '.join(str(g) for g in self.ideal_grades) or '(none)'}",
                              highlight=False)
                console.print(f"IDCG = {self.idcg:.3f}", highlight=False)
                if self.idcg > 0:
                    console.print(f"nDCG = {self.dcg:.3f} / {self.idcg:.3f} = [bold]{self.value:.3f}[/]", highlight=False)
                else:
                    console.print("nDCG = [bold]0[/] (IDCG is 0: nothing relevant to find)", highlight=False)
        else:
            console.print(f"{m} = [bold]{self.value:.4f}[/]", highlight=False)
        for w in self.warnings:
            console.print(f"[yellow]warning:[/] {w}", highlight=False)


def _subtopics_covered(qrels, qid: str, rel: int) -> dict:
    """docid -> the subtopics (in qrels order) it is judged relevant to, for one query."""
    from ..core.io.subtopics import subtopics_of

    sub = subtopics_of(qrels)
    out = {}
    for q, s, d, g in zip(sub.qid.to_pylist(), sub.subtopic.to_pylist(), sub.docid.to_pylist(), sub.grade.tolist()):
        if q == qid and g >= rel:
            out.setdefault(d, []).append(s)
    return out


def _n(x: float) -> str:
    return f"{x:.3f}"


def explain(qrels, run, qid: str, measure="nDCG@10", *, max_rows: int = 1000,
            settings: Settings | None = None) -> Explanation:
    settings = Settings() if settings is None else settings
    m = Measure.parse(measure)
    if m.unjudged in ("min", "max"):  # the table shows one grade assignment; a bound is an optimum over many
        raise MeasureError(f"explain works {m.short} with its holes as not relevant (unjudged=zero) or removed "
                           f"(unjudged=condensed); for unjudged={m.unjudged}, run: judged holes QRELS RUN -m '{measure}'")
    qid = str(qid)
    scored = Scorer(qrels, {"m": m}, replace(settings, complete=True)).runs([run], ALIGNMENT)
    qrels, (rr,) = scored.qrels, scored.runs.values()
    aligned = rr.aligned
    where = np.flatnonzero(aligned.qids == qid)
    if len(where) == 0:
        raise ConventionError(f"query {qid!r} is not in the qrels {qrels.source} "
                              f"(it has {counted(len(qrels.query_ids), 'query')})")
    qi = int(where[0])
    value = float(rr.values["m"][qi])
    ranked = aligned.ranked.condensed if m.unjudged == "condensed" else aligned.ranked
    lo, hi = ranked.offsets[qi], ranked.offsets[qi + 1]
    shown = hi - lo if m.cutoff is None else min(hi - lo, m.cutoff)
    shown = min(shown, max_rows)
    grades = ranked.grade[lo:lo + shown]
    docids = aligned.docids(ranked.row[lo:lo + shown])
    rows = []
    j = aligned.judgments
    qgrades = j.grade[j.offsets[qi]:j.offsets[qi + 1]]
    relevant = int((qgrades >= m.rel).sum())
    dcg = idcg = None
    ideal_grades, ideal_gains = [], []
    if m.family.label_worth == "gain":
        gains = m.gain(grades)
        ranks = np.arange(1, shown + 1, dtype=np.float64)
        disc = m.discount.divide(np.ones(shown), ranks)
        discounted = m.discount.divide(gains, ranks)
        running = np.cumsum(discounted)
        for i in range(shown):
            rows.append({"rank": i + 1, "docid": docids[i], "grade": None if np.isnan(grades[i]) else int(grades[i]),
                         "gain": float(gains[i]), "discount": float(disc[i]), "discounted": float(discounted[i]),
                         "running": float(running[i])})
        dcg = float(running[-1]) if shown else 0.0
        if m.ideal == "judged":
            pool = qgrades.astype(np.float64)
        else:
            pool = ranked.grade[lo:hi]
        pool_gains = m.gain(pool)
        judged_pool = ~np.isnan(pool)
        pool, pool_gains = pool[judged_pool], pool_gains[judged_pool]
        order = np.lexsort((-pool, -pool_gains))
        if m.cutoff is not None:
            order = order[: m.cutoff]
        ideal_grades = [int(pool[i]) for i in order]  # zero-gain grades shown too, as the seed does
        ideal_gains = [float(pool_gains[i]) for i in order]
        positive = [g for g in ideal_gains if g > 0]
        idcg = float(np.sum(m.discount.divide(np.array(positive), np.arange(1, len(positive) + 1, dtype=np.float64))))
    else:
        covers = _subtopics_covered(qrels, qid, m.rel) if m.family.subtopics else {}
        for i in range(shown):
            g = grades[i]
            rows.append({"rank": i + 1, "docid": docids[i], "grade": None if np.isnan(g) else int(g),
                         "relevant": bool(g >= m.rel)})
            if m.family.subtopics:  # the grade is the largest over the subtopics; these are the ones >= rel
                rows[-1]["subtopics"] = covers.get(docids[i], [])
    warnings = []
    k = m.cutoff
    label = m.short
    if relevant == 0:
        warnings.append(f"the qrels hold nothing relevant (grade >= {m.rel}) for this query: "
                        f"{label} is 0 here by convention (--no-relevant zero); skip or refuse it with --no-relevant")
    elif relevant == 1 and m.family.label_worth == "gain" and m.family.normaliser and m.gain.kind != "map":
        warnings.append(f"one relevant document: {label} here is 1/log2(1 + rank of the hit)"
                        if m.discount.kind == "log2" else f"one relevant document: {label} here only measures the rank of the hit")
    if hi == lo:
        warnings.append("the run retrieved nothing for this query")
    start, end = aligned.ranked.offsets[qi], aligned.ranked.offsets[qi + 1]
    top = min(k or (end - start), end - start)
    unjudged = int(np.isnan(aligned.ranked.grade[start:start + top]).sum())
    if unjudged and m.unjudged == "zero":
        warnings.append(f"{unjudged} of the top {counted(top, 'document')} {'is' if unjudged == 1 else 'are'} "
                        "unjudged and counted as not relevant "
                        f"(Judged@{top} = {1 - unjudged / top:.2f}); judging them could change this score")
    return Explanation(qid, m, m.convention(settings, one_query=True), rows, ideal_grades, ideal_gains, dcg, idcg,
                       value, relevant, warnings)
