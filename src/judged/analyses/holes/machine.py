"""Machine labels as a declared source: relevance labels from a machine judge (an LLM such
as UMBRELA at TREC RAG 2024, a classifier), kept apart from the people's judgments.

Machine labels are read like qrels (``qid iter docid grade``, or any format
:func:`judged.core.io.read_qrels` takes) but they are **never judgments**: they are never counted
by Judged@k, never merged into the qrels, and every output that uses them names them and
shows the numbers they produce apart from the human-judged ones:

* **machine-filled** scores (:func:`machine_filled`): a measure computed on the human qrels
  with the holes (pairs the people did not judge for that query) labelled by the machine;
  where both labelled a pair, the person's grade is used. Labelled as such everywhere
  (``nDCG@10 machine-filled``), beside the human-only score; machine labels of queries
  outside the human qrels are left out, so both scores average over the same queries.
* **agreement** (:func:`agreement`): how the machine's labels compare with the people's on
  the pairs both labelled (Cohen's kappa, Krippendorff's alpha, the confusion matrix).
* **prediction-powered estimates** (:mod:`judged.analyses.holes.ppi`): a human sample of known design
  corrects the machine's bias, with intervals valid however biased it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...core.words import counted
from ...core.data import Qrels, as_numpy
from ...core.io import read_qrels
from ...core.errors import JudgedError
from ..assessor_agreement import alpha_from_coincidences, kappa_from_confusion
from ...core.evaluation import ALIGNMENT, Scorer
from ...core.checks.eligibility import restrict_qrels

FILLED = "machine-filled"  # the suffix of every machine-filled measure's name
KAPPA_WEIGHTS = (None, "linear", "quadratic")
ALPHA_LEVELS = ("nominal", "ordinal", "interval")
DEFAULT_RESAMPLES = 2000
AGREEMENT_SOURCES = ("Cohen's kappa: Cohen 1960; weighted: Cohen 1968 (weights over the positions of the sorted "
                     "grades, as scikit-learn); Krippendorff's alpha: Krippendorff 2011 (two coders, no missing "
                     "values); intervals: percentile bootstrap over the overlapping pairs (Efron & Tibshirani 1993)")


@dataclass(eq=False)
class MachineLabels:
    """A machine judge's labels: one grade per (qid, docid), from ``qrels.source``."""

    qrels: Qrels

    @property
    def source(self) -> str:
        return self.qrels.source

    @property
    def sha256(self) -> str:
        return self.qrels.sha256

    def __len__(self) -> int:
        return len(self.qrels)

    def describe(self) -> dict:
        return {"path": self.source, "sha256": self.sha256, "labels": len(self),
                "queries": int(len(self.qrels.query_ids))}


def read_machine(source, on_duplicate: str = "error") -> MachineLabels:
    """Machine labels from anything :func:`judged.core.io.read_qrels` reads (a TREC qrels file
    written by an LLM judge, a DataFrame, a dict); a :class:`MachineLabels` is returned as is."""
    if isinstance(source, MachineLabels):
        return source
    return MachineLabels(read_qrels(source, on_duplicate=on_duplicate))


def pair_key(qid: pa.Array, docid: pa.Array) -> pa.Array:
    """One string per (qid, docid) pair, for set lookups (qid, a NUL byte, docid)."""
    return pc.binary_join_element_wise(qid, docid, "\x00")


def filled_qrels(human: Qrels, machine: MachineLabels, queries=None) -> Qrels:
    """The human qrels plus the machine's label of every pair the people did not judge,
    restricted to ``queries`` (default: the human qrels' queries). Where both labelled a
    pair the person's grade stays. The result says so in its ``source``; it is what a
    machine-filled score is computed on, never written out as qrels."""
    m = machine.qrels
    keep = pc.invert(pc.is_in(pair_key(m.qid, m.docid), value_set=pair_key(human.qid, human.docid)))
    queries = human.query_ids if queries is None else queries
    keep = pc.and_(keep, pc.is_in(m.qid, value_set=pa.array(list(queries), type=pa.string())))
    mask = as_numpy(keep)
    qid = pa.concat_arrays([human.qid, m.qid.filter(keep)])
    docid = pa.concat_arrays([human.docid, m.docid.filter(keep)])
    grade = np.concatenate([human.grade, m.grade[mask]])
    return Qrels(qid, docid, grade, source=f"{human.source} + {FILLED} from {machine.source}",
                 meta={"machine_added": int(mask.sum())})


# ---------------------------------------------------------------------------
# Agreement of a machine judge with the people


@dataclass
class Agreement:
    """How a machine judge's labels agree with the people's on the pairs both labelled."""

    human: dict  # path, sha256, labels
    machine: dict
    pairs: int  # the overlap
    human_only: int  # pairs only the people labelled
    machine_only: int
    grades: list  # the sorted grades of the confusion matrix
    confusion: np.ndarray  # counts, rows: human grade, columns: machine grade
    kappa: dict  # weights (unweighted | linear | quadratic) -> value
    kappa_interval: dict  # weights -> (low, high)
    alpha: dict  # level -> value
    alpha_interval: dict
    rel: int  # relevance level of the binary view
    binary: dict  # at grade >= rel: counts, precision, recall, kappa, rates
    resamples: int
    seed: int
    level: float = 0.95
    grade_counts: dict = field(default_factory=dict)  # who -> {grade: count}, over each whole file

    @property
    def method(self) -> str:
        return (f"overlap of the two files by (qid, docid); {AGREEMENT_SOURCES}; {counted(self.resamples, 'resample')}, "
                f"seed {self.seed}, {self.level:.0%}")

    def to_dict(self) -> dict:
        f = (lambda x: None if x is None or not np.isfinite(x) else float(x))
        return {"human": self.human, "machine": self.machine, "pairs": self.pairs, "human_only": self.human_only,
                "machine_only": self.machine_only, "grades": list(self.grades),
                "confusion": {"rows": "human grade", "columns": "machine grade",
                              "counts": self.confusion.astype(int).tolist()},
                "per_grade": {"human": self.marginal(0), "machine": self.marginal(1)},
                "grade_counts": self.grade_counts,
                "cohen_kappa": {_wname(w): {"value": f(self.kappa[_wname(w)]),
                                            "interval": [f(x) for x in self.kappa_interval[_wname(w)]]}
                                for w in KAPPA_WEIGHTS},
                "krippendorff_alpha": {lv: {"value": f(self.alpha[lv]), "interval": [f(x) for x in self.alpha_interval[lv]]}
                                       for lv in ALPHA_LEVELS},
                "binary": {k: (f(v) if isinstance(v, float) else v) for k, v in self.binary.items()},
                "method": self.method}

    def marginal(self, axis: int) -> dict:
        """Grade -> count on the overlap: the people's (axis 0) or the machine's (axis 1)."""
        counts = self.confusion.sum(axis=1 - axis)
        return {str(g): int(c) for g, c in zip(self.grades, counts)}


def _wname(w) -> str:
    return "unweighted" if w is None else w


def agreement(human, machine, *, rel: int = 1, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
              level: float = 0.95, on_duplicate: str = "error") -> Agreement:
    """Cohen's kappa (unweighted, linear and quadratic weights), Krippendorff's alpha
    (nominal, ordinal, interval), the confusion matrix and the binary view at grade >= ``rel``
    of the machine's labels against the people's, on the pairs both labelled.

    Intervals: percentile bootstrap (``resamples`` draws of the overlapping pairs with
    replacement, as a multinomial over the confusion matrix's cells; ``seed``).

    >>> a = agreement({"q": {"a": 1, "b": 0, "c": 1, "d": 0}}, {"q": {"a": 1, "b": 0, "c": 0, "d": 0, "e": 1}})
    >>> a.pairs, a.machine_only, round(a.kappa["unweighted"], 3)
    (4, 1, 0.5)
    """
    if resamples < 0:
        raise JudgedError(f"resamples must be 0 or more, got {resamples}")
    if not 0 < level < 1:
        raise JudgedError(f"the interval's level must be between 0 and 1, got {level}")
    h = read_qrels(human, on_duplicate=on_duplicate)
    m = read_machine(machine, on_duplicate=on_duplicate).qrels
    at = as_numpy(pc.index_in(pair_key(m.qid, m.docid), value_set=pair_key(h.qid, h.docid)), null=-1)
    both = at >= 0
    at = at[both].astype(np.int64)
    hg, mg = h.grade[at], m.grade[both]
    grades = np.unique(np.concatenate([hg, mg]))
    k = len(grades)
    confusion = np.zeros((k, k))
    np.add.at(confusion, (np.searchsorted(grades, hg), np.searchsorted(grades, mg)), 1)
    n = int(confusion.sum())
    rng = np.random.default_rng(seed)
    draws = (rng.multinomial(n, confusion.ravel() / n, size=resamples).reshape(resamples, k, k)
             if n and resamples else np.zeros((0, k, k)))
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2

    def interval(values):
        values = values[np.isfinite(values)]
        if not len(values):
            return (float("nan"), float("nan"))
        return (float(np.quantile(values, lo_q)), float(np.quantile(values, hi_q)))

    kappa, kappa_iv, alpha, alpha_iv = {}, {}, {}, {}
    for w in KAPPA_WEIGHTS:
        kappa[_wname(w)] = float(kappa_from_confusion(confusion, w)) if n else float("nan")
        kappa_iv[_wname(w)] = interval(kappa_from_confusion(draws, w)) if len(draws) else (float("nan"),) * 2
    coincidence = lambda c: c + np.swapaxes(c, -1, -2)  # noqa: E731  two coders, no missing value
    for lv in ALPHA_LEVELS:
        alpha[lv] = float(alpha_from_coincidences(coincidence(confusion), grades, lv)) if n else float("nan")
        alpha_iv[lv] = (interval(alpha_from_coincidences(coincidence(draws), grades, lv)) if len(draws)
                        else (float("nan"),) * 2)
    binary = _binary(hg, mg, rel)
    counts = {who: {str(g): int(c) for g, c in zip(*np.unique(q.grade, return_counts=True))}
              for who, q in (("human", h), ("machine", m))}
    return Agreement({"path": h.source, "sha256": h.sha256, "labels": len(h)},
                     {"path": m.source, "sha256": m.sha256, "labels": len(m)},
                     n, len(h) - n, len(m) - n, grades.tolist(), confusion, kappa, kappa_iv, alpha, alpha_iv, rel,
                     binary, resamples, seed, level, counts)


def _binary(hg: np.ndarray, mg: np.ndarray, rel: int) -> dict:
    """The machine as a detector of relevance (grade >= rel) against the people."""
    hr, mr = hg >= rel, mg >= rel
    tp, fp = int((hr & mr).sum()), int((~hr & mr).sum())
    fn, tn = int((hr & ~mr).sum()), int((~hr & ~mr).sum())
    n = len(hg)
    ratio = (lambda a, b: a / b if b else float("nan"))
    return {"relevant": f"grade >= {rel}", "true_positive": tp, "false_positive": fp, "false_negative": fn,
            "true_negative": tn, "human_relevant_share": ratio(tp + fn, n), "machine_relevant_share": ratio(tp + fp, n),
            "precision": ratio(tp, tp + fp), "recall": ratio(tp, tp + fn),
            "false_positive_rate": ratio(fp, fp + tn),
            "kappa": float(kappa_from_confusion(np.array([[tn, fp], [fn, tp]]))) if n else float("nan")}


# ---------------------------------------------------------------------------
# Machine-filled scores


@dataclass
class MachineFilled:
    """Scores with the holes labelled by a machine judge, kept apart from the human-judged
    scores they sit beside (same runs, same queries)."""

    machine: MachineLabels
    k: int  # depth at which holes and machine-labelled holes are counted
    measures: dict  # measure as given -> Measure (the human result's, Judged@k and bounds left out)
    settings: object
    qids: dict  # run -> evaluated qids (the human result's)
    values: dict  # run -> measure as given -> per-query values
    holes: dict  # run -> holes in the top k (no human judgment)
    labelled: dict  # run -> how many of those holes the machine labelled
    added: int = 0  # machine labels used (pairs of the human qrels' queries the people did not judge)

    @staticmethod
    def name(given: str) -> str:
        """The name a machine-filled measure is shown under: ``nDCG@10 machine-filled``."""
        return f"{given} {FILLED}"

    def mean(self, run: str, given: str) -> float:
        return self.measures[given].aggregate_of(self.values[run][given])

    def conventions(self) -> dict:
        return {self.name(g): f"{m.convention(self.settings)}; {self.convention}" for g, m in self.measures.items()}

    @property
    def convention(self) -> str:
        return (f"holes labelled by the machine judge {self.machine.source} (sha256 {self.machine.sha256[:12]}); "
                "a person's grade wins where both labelled a pair; machine labels are not judgments "
                "(Judged@k counts the people's only)")

    def run_dict(self, run: str) -> dict:
        return {"mean": {self.name(g): self.mean(run, g) for g in self.measures},
                "holes": int(self.holes[run]), "holes_machine_labelled": int(self.labelled[run]), "k": self.k}

    def to_dict(self) -> dict:
        return {**self.machine.describe(), "added_labels": self.added, "k": self.k, "conventions": self.conventions(),
                "runs": {r: self.run_dict(r) for r in self.values}}


def fillable(measure) -> bool:
    """Whether a machine-filled version of the measure is shown: not Judged@k (it counts
    the people's judgments only), not the exact bounds, not the side-file measures."""
    return measure.family.reads not in ("judged", "requirements", "eligibility") and \
        measure.unjudged not in ("min", "max")


def machine_filled(result, machine, k: int | None = None) -> MachineFilled:
    """Every fillable measure of an evaluated :class:`~judged.core.evaluation.Result`, recomputed
    with the holes labelled by ``machine``, over the same runs and queries; per run the
    holes in the top ``k`` (default: the first cutoff, else 10) and how many the machine
    labelled."""
    measures = {g: m for g, m in result.measures.items() if fillable(m)}
    checks = getattr(result, "checks", None)
    return fill_runs(result.qrels, {name: rr.aligned for name, rr in result.runs.items()}, measures,
                     result.settings, machine, k, eligibility=getattr(checks, "eligibility", None),
                     qids={name: rr.qids for name, rr in result.runs.items()})


def fill_runs(qrels, aligned: dict, measures: dict, settings, machine, k: int | None = None, *, eligibility=None,
              qids: dict | None = None) -> MachineFilled:
    """``measures`` (as given -> Measure) of every aligned run (name -> Aligned against
    ``qrels``) with the holes labelled by ``machine``, over each run's ``qids`` (default:
    its evaluated queries); an ``eligibility`` keeps ineligible pairs graded 0;
    ``settings.negative='unjudged'``: trec_eval's negative grades are holes the machine may label."""
    machine = read_machine(machine)
    if k is None:
        k = next((m.cutoff for m in measures.values() if m.cutoff), 10)
    if settings.negative == "unjudged" and (qrels.grade < 0).any():
        keep = qrels.grade >= 0
        qrels = Qrels(qrels.qid.filter(pa.array(keep)), qrels.docid.filter(pa.array(keep)), qrels.grade[keep],
                      source=qrels.source)
    filled = filled_qrels(qrels, machine)
    if eligibility is not None:  # an ineligible pair stays graded 0
        filled, _ = restrict_qrels(filled, eligibility)
    out_qids, values, holes, labelled = {}, {}, {}, {}
    scored = Scorer(filled, measures, settings).runs({name: a.run for name, a in aligned.items()}, ALIGNMENT)
    for name, human in aligned.items():
        keep_qids = human.qids if qids is None else qids[name]
        a = scored.runs[name].aligned
        where = {q: i for i, q in enumerate(a.qids.tolist())}
        pick = np.array([where.get(q, -1) for q in keep_qids.tolist()], dtype=np.int64)
        vals = {}
        for g, v in scored.runs[name].values.items():
            vals[g] = np.where(pick >= 0, v[np.maximum(pick, 0)], 0.0) if len(v) else np.zeros(len(pick))
        out_qids[name], values[name] = keep_qids, vals
        th, tf = human.ranked.top(k), a.ranked.top(k)
        allowed = set(keep_qids.tolist())
        inside = _member(human.qids[th.q], allowed)
        holes[name] = int((~th.judged & inside).sum())
        inside = _member(a.qids[tf.q], allowed)
        labelled[name] = holes[name] - int((~tf.judged & inside).sum())
    return MachineFilled(machine, k, measures, settings, out_qids, values, holes, labelled,
                         filled.meta.get("machine_added", 0))


def _member(values: np.ndarray, allowed: set) -> np.ndarray:
    """Per value: whether it is in ``allowed`` (ids are Python strings: a set, not np.isin)."""
    return np.fromiter((v in allowed for v in values.tolist()), bool, len(values))
