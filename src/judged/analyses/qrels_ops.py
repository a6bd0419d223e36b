"""Qrels versions: merge new judgments into a base with provenance, diff two versions, and
the rejudging report (every run's score and Judged@k under each version, which pairs of
systems flipped): the BEIR TREC-COVID table, produced by the tool.

Provenance travels in a sidecar ``OUT.provenance.tsv`` beside the merged qrels: one line
per judgment, ``qid docid grade source assessor time replaced``. A sidecar found beside
an input (``IN.provenance.tsv``) is read, so provenance survives chained merges; other
inputs get ``source`` = their path and the ``--assessor`` / ``--time`` given, if any.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np

from ..core.conventions import Settings
from ..core.data import Qrels
from ..core.errors import ConventionError, JudgedError, ParseError
from ..core.naturalsort import natural_key
from ..core.words import counted
from ..core.io import read_qrels
from ..core.io.output import open_replacing

PREFER = ("new", "base")
PROVENANCE_SUFFIX = ".provenance.tsv"
PROVENANCE_FIELDS = ["qid", "docid", "grade", "source", "assessor", "time", "replaced"]


class MergeConflict(JudgedError):
    """A pair judged differently by two inputs, with no ``--prefer`` to settle it."""

    def __init__(self, conflicts: list):
        self.conflicts = conflicts
        first = conflicts[0]
        super().__init__(f"{counted(len(conflicts), 'conflicting judgment')}, first: query {first['qid']!r} docid "
                         f"{first['docid']!r} is {_grades_text(first['grades'])}; "
                         "choose --prefer new or --prefer base")


def _grades_text(grades: list) -> str:
    return " but ".join(f"{g} in {src}" for src, g in grades)


def provenance_path(path) -> str:
    return os.fspath(path) + PROVENANCE_SUFFIX


def _read_provenance(path) -> dict:
    """(qid, docid) -> dict of source, assessor, time, from ``path``'s sidecar (if any)."""
    side = provenance_path(path)
    if not os.path.exists(side):
        return {}
    out = {}
    with open(side, encoding="utf-8") as fh:
        rows = csv.reader((line for line in fh if not line.startswith("#")), delimiter="\t")
        header = next(rows, None)
        if header is None or header[:3] != PROVENANCE_FIELDS[:3]:
            raise ParseError(side, 1, f"expected a header {' '.join(PROVENANCE_FIELDS)}")
        for lineno, row in enumerate(rows, start=2):
            rec = dict(zip(header, row))
            out[(rec["qid"], rec["docid"])] = {k: rec.get(k, "") for k in ("source", "assessor", "time")}
    return out


@dataclass
class Merged:
    qrels: Qrels
    provenance: list  # dicts with PROVENANCE_FIELDS, one per judgment, in output order
    conflicts: list  # dicts qid, docid, grades [(source, grade)], kept
    sources: list  # (path, sha256) of every input
    added: int = 0  # pairs the new files added to the base

    def write(self, path) -> None:
        """The qrels as TREC (``qid 0 docid grade``) and the provenance sidecar beside them."""
        qs, ds = self.qrels.qid.to_pylist(), self.qrels.docid.to_pylist()
        # both files are complete before either replaces what was there (OUT may be an input)
        with open_replacing(path) as out, open_replacing(provenance_path(path), newline="") as fh:
            out.writelines(f"{q} 0 {d} {int(g)}\n" for q, d, g in zip(qs, ds, self.qrels.grade.tolist()))
            for src, sha in self.sources:
                fh.write(f"# input {src} sha256={sha}\n")
            w = csv.writer(fh, delimiter="\t", lineterminator="\n")
            w.writerow(PROVENANCE_FIELDS)
            for rec in self.provenance:
                w.writerow([rec[k] for k in PROVENANCE_FIELDS])


def _refuse_pool_file(src) -> None:
    """A pool file lists pairs to judge, not judgments (its ``machine`` column, if any, is a
    machine judge's grade): merging it would mix machine labels into the qrels."""
    if not isinstance(src, (str, os.PathLike)) or not os.path.isfile(src):
        return
    with open(src, "rb") as fh:
        head = fh.read(64)
    if head.startswith(b"# judged pool:"):
        raise JudgedError(f"{os.fspath(src)}: a judged pool file (pairs to judge, not judgments; a machine column "
                          "is a machine judge's grade): judge it (judged judge init --pool) and merge the exported "
                          "labels")


def merge(base, new, *, prefer: str | None = None, assessor: str | None = None, time: str | None = None,
          on_duplicate: str = "error") -> Merged:
    """The union of ``base`` and the ``new`` qrels. A pair judged with different grades is a
    conflict: refused (:class:`MergeConflict`) unless ``prefer`` is ``new`` (the later
    input wins) or ``base`` (the earlier wins). ``assessor`` / ``time`` label the new
    inputs' judgments that carry no provenance of their own."""
    if prefer is not None and prefer not in PREFER:
        raise ConventionError(f"--prefer must be new or base, not {prefer!r}")
    news = list(new) if isinstance(new, (list, tuple)) else [new]
    inputs = [base] + news
    records: dict = {}  # (qid, docid) -> provenance record (insertion order = output order)
    conflicts: dict = {}
    sources = []
    base_n = 0
    for src in inputs:
        _refuse_pool_file(src)
    for i, src in enumerate(inputs):
        q = read_qrels(src, on_duplicate=on_duplicate)
        base_n = base_n or len(q)
        name = q.source
        sources.append((name, q.sha256))
        side = _read_provenance(src) if isinstance(src, (str, os.PathLike)) else {}
        for qid, docid, grade in zip(q.qid.to_pylist(), q.docid.to_pylist(), q.grade.tolist()):
            prov = side.get((qid, docid)) or {"source": name, "assessor": (assessor or "") if i else "",
                                              "time": (time or "") if i else ""}
            rec = {"qid": qid, "docid": docid, "grade": int(grade), **prov, "replaced": ""}
            old = records.get((qid, docid))
            if old is None:
                records[(qid, docid)] = rec
                continue
            if old["grade"] == grade:
                continue
            c = conflicts.setdefault((qid, docid), {"qid": qid, "docid": docid,
                                                    "grades": [(old["source"], old["grade"])]})
            c["grades"].append((prov["source"], int(grade)))
            if prefer == "new":
                rec["replaced"] = ";".join(filter(None, [old["replaced"], f"{old['grade']}@{old['source']}"]))
                records[(qid, docid)] = rec
            elif prefer == "base":
                old["replaced"] = ";".join(filter(None, [old["replaced"], f"{grade}@{prov['source']}"]))
    conflict_list = list(conflicts.values())
    for c in conflict_list:
        c["kept"] = records[(c["qid"], c["docid"])]["grade"]
    if conflict_list and prefer is None:
        raise MergeConflict(conflict_list)
    recs = list(records.values())
    qrels = Qrels([r["qid"] for r in recs], [r["docid"] for r in recs], np.array([r["grade"] for r in recs], np.int64),
                  source="merged")
    return Merged(qrels, recs, conflict_list, sources, added=len(recs) - base_n)


# ---------------------------------------------------------------------------
# diff


@dataclass
class QrelsDiff:
    a: Qrels
    b: Qrels
    added: list  # (qid, docid, grade in b)
    removed: list  # (qid, docid, grade in a)
    changed: list  # (qid, docid, grade in a, grade in b)

    def per_query(self) -> dict:
        """qid -> {added, removed, changed} counts (queries with any difference), in natural
        qid order (q2 before q10)."""
        out: dict = {}
        for kind, rows in (("added", self.added), ("removed", self.removed), ("changed", self.changed)):
            for r in rows:
                out.setdefault(r[0], {"added": 0, "removed": 0, "changed": 0})[kind] += 1
        return dict(sorted(out.items(), key=lambda item: natural_key(item[0])))

    @property
    def same(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def to_dict(self, pairs: bool = False) -> dict:
        out = {"a": {"path": self.a.source, "sha256": self.a.sha256, "judgments": len(self.a)},
               "b": {"path": self.b.source, "sha256": self.b.sha256, "judgments": len(self.b)},
               "added": len(self.added), "removed": len(self.removed), "changed": len(self.changed),
               "per_query": self.per_query()}
        if pairs:
            out["pairs"] = ([{"qid": q, "docid": d, "change": "added", "b": g} for q, d, g in self.added]
                            + [{"qid": q, "docid": d, "change": "removed", "a": g} for q, d, g in self.removed]
                            + [{"qid": q, "docid": d, "change": "changed", "a": ga, "b": gb}
                               for q, d, ga, gb in self.changed])
        return out


def diff(a, b, on_duplicate: str = "error") -> QrelsDiff:
    """Judgments added (in b only), removed (in a only) and changed (different grade)."""
    a, b = read_qrels(a, on_duplicate=on_duplicate), read_qrels(b, on_duplicate=on_duplicate)
    da = dict(zip(zip(a.qid.to_pylist(), a.docid.to_pylist()), a.grade.tolist()))
    db = dict(zip(zip(b.qid.to_pylist(), b.docid.to_pylist()), b.grade.tolist()))
    def pairs(rows):  # natural order of qid, then docid (q2 before q10)
        return sorted(rows, key=lambda r: (natural_key(r[0]), natural_key(r[1])))

    added = pairs((q, d, g) for (q, d), g in db.items() if (q, d) not in da)
    removed = pairs((q, d, g) for (q, d), g in da.items() if (q, d) not in db)
    changed = pairs((q, d, da[(q, d)], g) for (q, d), g in db.items() if (q, d) in da and da[(q, d)] != g)
    return QrelsDiff(a, b, added, removed, changed)


# ---------------------------------------------------------------------------
# the rejudging report


@dataclass
class Rejudged:
    versions: list  # qrels labels (paths)
    measure: str
    judged: str  # Judged@k
    scores: dict  # run -> [score under each version]
    judged_at_k: dict  # run -> [Judged@k under each version]
    conventions: dict = field(default_factory=dict)
    shas: list = field(default_factory=list)
    query_set: object = None  # judged.core.querysets.QuerySet of the first version (every version: the same queries)
    warnings: list = field(default_factory=list)

    def order(self, v: int) -> list[str]:
        """Runs best first under version v (ties: name)."""
        return sorted(self.scores, key=lambda r: (-self.scores[r][v], r))

    def flips(self) -> list[dict]:
        """Pairs whose order under the last version differs from the first."""
        out = []
        last = len(self.versions) - 1
        for a, b in combinations(sorted(self.scores), 2):
            before = _order_sign(self.scores[a][0], self.scores[b][0])
            after = _order_sign(self.scores[a][last], self.scores[b][last])
            if before != after:
                hi0, hi1 = (a, b) if before > 0 else (b, a), (a, b) if after > 0 else (b, a)
                out.append({"pair": [a, b], "before": _above(hi0, before), "after": _above(hi1, after)})
        return out

    def to_dict(self) -> dict:
        return {"versions": [{"path": p, "sha256": s} for p, s in zip(self.versions, self.shas)],
                "measure": self.measure, "judged": self.judged, "conventions": self.conventions,
                "runs": {r: {"score": self.scores[r], "judged": self.judged_at_k[r]} for r in self.scores},
                "order": [self.order(v) for v in range(len(self.versions))], "flipped": self.flips(),
                **({"query_set": self.query_set.to_dict(), "warnings": list(self.warnings)}
                   if self.query_set is not None else {})}


def _order_sign(a: float, b: float) -> float:
    """1, 0 or -1: a above, level with (judged.analyses.stats' tolerance rule) or below b."""
    from .stats import tie_sign

    return float(tie_sign(a - b, a, b))


def _above(pair, sign) -> str:
    return f"{pair[0]} = {pair[1]}" if sign == 0 else f"{pair[0]} > {pair[1]}"


def evaluate_versions(qrels_versions, runs, measures: list, settings: Settings) -> list:
    """One :class:`~judged.core.evaluation.Result` per qrels version (``measures[v]``: the
    measures of version v), every run read once and scored under every version
    (:meth:`judged.core.evaluation.Scorer.runs` with ``versions``): plain-text run files
    streamed by query blocks, each block scored under every version; other runs read two at
    a time, each scored under every version as soon as it is read."""
    from ..core.checks import SideFiles
    from ..core.evaluation import Scorer

    first, *more = [Scorer(q, m, settings, SideFiles()) for q, m in zip(qrels_versions, measures)]
    return first.runs(runs, versions=more)


def rejudge(qrels_versions, runs, measure: str = "nDCG@10", k: int = 10, *, settings=None) -> Rejudged:
    """Score every run under every qrels version: the BEIR TREC-COVID table.

    The query-set rule of :mod:`judged.core.querysets`: every run is scored over every query
    (``complete=True``: 0 where a run ranks nothing), and every version over the queries
    all versions judge (queries only some hold are left out, with a warning), so a flip
    is a change of labels, never of queries."""
    from ..core.querysets import common_queries, mean_over, of_result, refuse_disjoint_runs

    if len(qrels_versions) < 2:
        raise ConventionError("a rejudging report needs two or more qrels versions")
    settings = replace(Settings() if settings is None else settings, complete=True)
    judged_m = f"Judged@{k}"
    qrels = [read_qrels(v, on_duplicate=settings.on_duplicate) for v in qrels_versions]
    results = evaluate_versions(qrels, runs, [[measure, judged_m]] * len(qrels), settings)
    common, left_out = common_queries(qrels)  # after scoring: the index has each version's query ids
    versions, shas, scores, judged_at_k, convs, query_set, warnings = [], [], {}, {}, {}, None, []
    for q, res in zip(qrels, results):
        refuse_disjoint_runs(res)
        versions.append(q.source)
        shas.append(q.sha256)
        convs = res.conventions
        if query_set is None:
            query_set = of_result(res)
            query_set.left_out = left_out
            warnings = query_set.warnings()
        for name in res.runs:
            scores.setdefault(name, []).append(mean_over(res, name, measure, common))
            judged_at_k.setdefault(name, []).append(mean_over(res, name, judged_m, common))
    return Rejudged(versions, measure, judged_m, scores, judged_at_k, convs, shas, query_set, warnings)
