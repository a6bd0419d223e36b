"""The measure registry: one record per measure family, declared once.

Each :class:`Family` names its canonical spelling, the aliases and trec_eval names it is
known by, the parameters it takes (each a :class:`judged.core.measures.params.Param`: type,
choices, default, description), its cutoff rule, how per-query values are aggregated, whether
``unjudged=min|max`` bounds it (:mod:`judged.core.measures.bounds`), the kernel module that computes it
and a paragraph saying what it is (formula, convention, source). Parsing, validation,
printing and the canonical convention strings (:class:`judged.core.measures.Measure`), the
``judged measures`` listing, shell completion, trec_eval output names and the
pytrec_eval compatibility table (:mod:`judged.compat.pytrec_eval`) are all read from
:data:`FAMILIES`; nothing else lists measures.

Adding a measure: a record here, its kernel (a module with ``compute(measure,
aligned)``), its tests (docs/architecture.md shows the diff of adding one).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Callable

from . import beyond, binary, completeness, dcg, diversity, infap, judged, leak, trec_eval_rest
from .params import PARAMS

# trec_eval's default cutoffs of P, recall, ndcg_cut, map_cut (and pytrec_eval's)
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SUCCESS_CUTOFFS = (1, 5, 10)  # trec_eval's success


MIN_GEO_MEAN = 1e-5  # trec_eval's floor before a geometric mean (trec_eval.h)


def _unjudged(m) -> str:
    if m.unjudged not in ("min", "max"):
        return f"unjudged={m.unjudged}"
    grades = "qrels-max" if m.maxgrade is None else str(m.maxgrade)
    how = ",conservative" if m.family.bounds == "conservative" else ""  # an interval holding the extremes
    return f"unjudged={m.unjudged}(grades=0..{grades},ideal-recomputed{how})"


def _graded(m) -> list[str]:
    return [f"gain={m.gain}", f"discount={m.discount}"] + (["ideal=" + m.ideal] if m.name == "nDCG" else []) + \
        [_unjudged(m)]


def _binary(m) -> list[str]:
    return [f"rel>={m.rel}", _unjudged(m)]


def _options(m) -> list[str]:
    return [f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}" for key, value in m.options]


def _diversity(*words):
    """The convention words of a diversity measure (judged.core.measures.diversity)."""
    def convention(m) -> list[str]:
        given = [f"alpha={m.option('alpha'):g}"] if "alpha" in m.family.params else []
        given += [f"beta={m.option('patience'):g}"] if "patience" in m.family.params else []
        return ["qrels=subtopics(second-column)", f"rel>={m.rel}(binary-per-subtopic)", *given, *words,
                "S=subtopics-with-a-relevant-judgment", "no-subtopics=0",
                _diversity_bound(m) if m.unjudged in ("min", "max") else _unjudged(m)]
    return convention


def _diversity_bound(m) -> str:
    """A diversity measure's unjudged=min|max: all holes covering no / every subtopic where the
    measure rises with every label, else the extremes over every coverage (AP-IA: exact;
    the greedy-normalised ones: a conservative interval)."""
    if m.name not in ("AP-IA", "alpha-nDCG", "nERR-IA", "nNRBP"):
        return f"unjudged={m.unjudged}(holes-cover-{'no' if m.unjudged == 'min' else 'every'}-subtopic,S-fixed)"
    grades = "qrels-max" if m.maxgrade is None else str(m.maxgrade)
    how = ",conservative" if m.family.bounds == "conservative" else ""
    return f"unjudged={m.unjudged}(grades=0..{grades},holes-cover-any-subtopics,S-fixed{how})"


@dataclass(frozen=True)
class TrecName:
    """A trec_eval / pytrec_eval name of a family: ``name`` alone (cutoffs None) or
    ``name.k`` / ``name_k`` with the default cutoffs pytrec_eval expands a bare name to."""

    name: str
    cutoffs: tuple | None = None
    needs_cutoff: bool = False  # judged's parser refuses the bare name (map_cut)
    level: str | None = None  # the parameter its levels set (iprec_at_recall: recall)
    levels: tuple = ()  # the levels pytrec_eval expands a bare name to, keyed name_%.2f
    log: bool = False  # trec_eval reports each query's log(max(v, 1e-5)) (gm_map, gm_bpref)
    empty_nan: bool = False  # trec_eval divides 0 by 0 for a query with nothing retrieved (judged: 0)
    # what trec_eval's ``name.values`` form sets, besides cutoffs and levels: parameters in
    # order (set_F.0.5: beta; utility.1,-1,0,0: tp, fp, fn and tn, which must be 0), or
    # "gains" for ndcg's level=gain pairs (ndcg.1=3.5,2=9: unlisted levels keep their grade)
    params: tuple = ()


@dataclass(frozen=True)
class Family:
    """One measure family: everything judged knows about it, in one place."""

    name: str
    kernel: object  # a module with compute(measure, aligned) -> per-query float64
    summary: str  # one line, for the listing
    explanation: str  # formula, convention and source
    cutoff: str = "none"  # required | optional | none
    params: tuple = ()  # names in PARAMS
    aggregate: str = "mean"  # mean | sum | geometric-mean
    boundable: bool = False  # unjudged=min|max bounds it (judged.analyses.holes.unjudged)
    bounds: str = "exact"  # boundable: "exact" extremes, or "conservative" (an interval that holds them)
    at_param: str | None = None  # the parameter NAME@x sets (ir_measures' IPrec@0.5), if not a cutoff
    bound_gain: str = "relevance"  # what a hole's grade moves, monotonely: relevance (grade >= rel) or grade
    coverage: bool = False  # how much was judged, not how good the ranking is: never tested for significance
    aliases: tuple = ()  # other spellings (matched case-insensitively, as the name is)
    trec: tuple = ()  # TrecName: trec_eval / pytrec_eval names
    convention: Callable = field(default=_binary)  # measure -> the family's words in its convention string
    examples: tuple = ()  # measure strings offered by shell completion
    source: str = ""
    defaults: dict = field(default_factory=dict)  # this family's defaults where they differ from PARAMS'
    spellings: dict = field(default_factory=dict)  # parameter -> the name it is written as (persistence: p)
    subtopics: bool = False  # reads subtopic qrels (the qrels' second column; judged.core.io.subtopics)
    # (low, high): every value of a query, and their mean, lies in it (grades inside the measure's scale,
    # max_rel); estimates from samples are clipped to it (judged.analyses.holes.inference, judged.analyses.holes.ppi)
    value_range: tuple = (0.0, 1.0)
    # What the analyses ask of a family, declared here rather than asked of its name (no `m.name == "nDCG"`
    # outside judged.core.measures; tests/core/measures/test_registry.py enforces it):
    # what a query's value reads besides the run's ranked list: "grades" (the ranked documents' grades and
    # the query's judgments), "judgments" (the query's judgments only, never the ranking: NumRel), "judged"
    # (whether each ranked document carries any grade: Judged), "retrieved" (the ranking's length: NumRet),
    # "queries" (1 per query: NumQ), "requirements" (the requirements file: Complete, Coverage),
    # "eligibility" (the eligibility file: Leak)
    reads: str = "grades"
    # the value as a sum over the ranked documents of each label's worth times a coefficient of its rank,
    # divided by the normaliser when it has one: "gain" (gain(grade) x discount(rank): nDCG, DCG),
    # "relevant" ([grade >= rel] / k: P); None: not of that form, or not declared
    label_worth: str | None = None
    # what the per-query normaliser reads of the query's judgments, as counts per grade (what the hole
    # estimate draws, judged.analyses.holes.drawn_scores): "ideal-gains" (nDCG with ideal=judged: the cutoff largest
    # positive gains), "ideal-grades" (nERR: the cutoff largest positive grades), "relevant" (AP, R: every
    # judgment with grade >= rel), "positive" (Compat's ideal: every grade > 0); None: no count of them
    normaliser: str | None = None
    sampled: str | None = None  # the estimator of its mean from a sampled pool (judged.analyses.holes.sampled_estimators)
    # query-sample (PPI) estimates carry the heavy-tail warning (judged.analyses.holes.ppi.heavy_tail_note): the value
    # over the whole ranking divides by R, so a query with few relevant documents moves it by up to 1
    heavy_tail: bool = False
    headline: bool = False  # what reports pair their lists with when no measure is named (nDCG, judged's default)

    @property
    def linear_in_labels(self) -> bool:
        """Its value is a sum of each label's worth times a coefficient of its rank, with no normaliser
        read from the judgments (DCG, P): a sample of (query, document) pairs estimates it without bias."""
        return self.label_worth is not None and self.normaliser is None

    def default(self, param: str):
        return self.defaults.get(param, PARAMS[param].default)

    def help(self, measure) -> str:
        """The text of ``judged measures NAME`` (as ``trec_eval -h -m NAME``), ending with the
        convention judged applies to ``measure`` (a Measure of this family)."""
        lines = [f"{self.name}: {self.summary}", "", *_wrap(self.explanation), ""]
        cut = {"required": "required (NAME@k)", "optional": "optional (NAME@k; none: the whole ranking)",
               "none": "none"}[self.cutoff]
        lines.append(f"cutoff: {cut}")
        lines.append(f"aggregate over queries: {self.aggregate}")
        if self.params:
            lines.append("parameters:")
            for p in self.params:
                text = PARAMS[p].describe()
                if p in self.defaults:
                    text = text.replace(f"default {PARAMS[p].default}.", f"default {self.defaults[p]}.")
                text = text if p not in self.spellings else f"{self.spellings[p]} ({text}"[:-1] + ")"
                lines += textwrap.wrap(text, 88, initial_indent="  ", subsequent_indent="      ")
        if self.aliases:
            lines.append(f"also spelled: {', '.join(self.aliases)}")
        if self.trec:
            lines.append("trec_eval names: " + ", ".join(t.name + (".k" if t.cutoffs else "") for t in self.trec))
        if self.boundable and self.bounds == "exact":
            lines.append("bounds: unjudged=min|max gives the exact extremes over the holes (judged holes)")
        elif self.boundable:
            lines.append("bounds: unjudged=min|max gives a conservative interval, not the exact extremes, over "
                         "the holes (judged holes)")
        if self.source:
            lines.append(f"source: {self.source}")
        lines += ["", f"the convention judged applies ({measure}):", f"  {measure.convention()}"]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict:
        return {"name": self.name, "summary": self.summary, "explanation": "\n".join(_wrap(self.explanation)),
                "cutoff": self.cutoff, "aggregate": self.aggregate, "boundable": self.boundable,
                "bounds": self.bounds if self.boundable else None,
                "parameters": [{"name": self.spellings.get(p, p), "type": PARAMS[p].type, "default": self.default(p),
                                "choices": list(PARAMS[p].choices) if PARAMS[p].choices else None,
                                "description": PARAMS[p].description} for p in self.params],
                "aliases": list(self.aliases), "trec_eval": [t.name for t in self.trec],
                "examples": list(self.examples), "source": self.source}


def _wrap(text: str, width: int = 88) -> list[str]:
    out = []
    for para in text.strip().split("\n\n"):
        if para.startswith("    "):  # a formula block, as written
            out += para.split("\n")
        else:
            out += textwrap.wrap(" ".join(para.split()), width)
        out.append("")
    return out[:-1]


_DCG = ("gain", "discount", "base", "p")
_TREC_EVAL = "trec_eval 10 (usnistgov/trec_eval)"

FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family(
        "nDCG", dcg, "normalised discounted cumulative gain", cutoff="optional", label_worth="gain",
        normaliser="ideal-gains", sampled="statNDCG", headline=True,
        params=(*_DCG, "ideal", "unjudged", "maxgrade"), boundable=True, convention=_graded,
        aliases=("ndcg",), trec=(TrecName("ndcg_cut", DEFAULT_CUTOFFS), TrecName("ndcg", params=("gains",))),
        examples=("nDCG@10", "nDCG@100", "nDCG"),
        explanation="""
DCG@k of the run divided by DCG@k of the ideal ranking (0 when the ideal's is 0):

    DCG@k  = sum_{r=1..k} gain(grade_r) / log2(r + 1)
    nDCG@k = DCG@k / IDCG@k

With the defaults (gain = grade, discount 1/log2(r+1), the ideal over every judged
document of the query, unjudged documents not relevant) the value equals trec_eval's
ndcg_cut.k (ndcg without a cutoff) to the last bit. Without a cutoff the whole ranking
counts. The relevance level does not apply: every positive grade has gain.""",
        source="Jarvelin & Kekalainen, TOIS 2002; Burges et al., ICML 2005; trec_eval m_ndcg_cut.c"),
    Family(
        "DCG", dcg, "discounted cumulative gain (not normalised)", cutoff="optional", label_worth="gain",
        value_range=(0.0, float("inf")),
        params=(*_DCG, "unjudged", "maxgrade"), boundable=True, convention=_graded,
        aliases=("dcg",), examples=("DCG@10",),
        explanation="""
    DCG@k = sum_{r=1..k} gain(grade_r) * discount(r)

Under the same gain and discount as nDCG; without a cutoff the whole ranking counts.""",
        source="Jarvelin & Kekalainen, TOIS 2002"),
    Family(
        "P", binary, "precision at k", cutoff="required", params=("rel", "unjudged", "maxgrade"), boundable=True,
        label_worth="relevant",
        trec=(TrecName("P", DEFAULT_CUTOFFS),), examples=("P@10",),
        explanation="""
Relevant documents in the top k, divided by k (a ranking shorter than k is padded with
non-relevant documents).""", source=f"{_TREC_EVAL} m_P.c"),
    Family(
        "R", binary, "recall at k", cutoff="required", params=("rel", "unjudged", "maxgrade"), boundable=True,
        normaliser="relevant",
        aliases=("recall",), trec=(TrecName("recall", DEFAULT_CUTOFFS),), examples=("R@100",),
        explanation="""
Relevant documents in the top k, divided by R, the query's relevant judgments (0 when
R = 0).""", source=f"{_TREC_EVAL} m_recall.c"),
    Family(
        "RR", binary, "reciprocal rank of the first relevant document", cutoff="optional",
        params=("rel", "unjudged", "maxgrade"), boundable=True, aliases=("recip_rank", "mrr"),
        trec=(TrecName("recip_rank"),), examples=("RR", "RR@10"),
        explanation="""
1 / the rank of the first relevant document, 0 when none is retrieved (RR@k: none in
the top k). Its mean over queries is MRR.""", source=f"{_TREC_EVAL} m_recip_rank.c"),
    Family(
        "AP", binary, "average precision", cutoff="optional", params=("rel", "unjudged", "maxgrade"),
        normaliser="relevant", sampled="statAP", heavy_tail=True,
        boundable=True, aliases=("map",), trec=(TrecName("map"), TrecName("map_cut", DEFAULT_CUTOFFS, True)),
        examples=("AP", "AP@10"),
        explanation="""
The sum, over the relevant documents retrieved, of the precision at each one's rank,
divided by R, the query's relevant judgments (0 when R = 0). AP@k stops the sum at rank k
and still divides by R (trec_eval's map_cut.k). Its mean over queries is MAP.""",
        source=f"{_TREC_EVAL} m_map.c, m_map_cut.c"),
    Family(
        "Rprec", binary, "precision at rank R", params=("rel", "unjudged", "mult"), heavy_tail=True,
        trec=(TrecName("Rprec"), TrecName("Rprec_mult", level="mult", levels=trec_eval_rest.RPREC_MULTS)),
        examples=("Rprec", "Rprec(mult=2)"), convention=lambda m: _binary(m) + _options(m),
        explanation="""
Relevant documents in the top R, divided by R, the query's relevant judgments (0 when
R = 0). With mult=x (trec_eval's Rprec_mult.x) the rank read is c = floor(x * R + 0.9)
and the value is relevant documents in the top c / c (0 when c = 0).""",
        source=f"{_TREC_EVAL} m_Rprec.c, m_Rprec_mult.c"),
    Family(
        "Bpref", binary, "binary preference, robust to incomplete judgments", params=("rel",), heavy_tail=True,
        trec=(TrecName("bpref"),), examples=("Bpref",),
        convention=lambda m: [f"rel>={m.rel}", "unjudged=ignored"],
        explanation="""
For each relevant retrieved document, 1 - min(n, R) / min(N, R), with n the judged
non-relevant documents ranked above it and N all judged non-relevant documents
(0 <= grade < rel); summed and divided by R. Unjudged documents and negative grades are
skipped, as trec_eval computes it.""", source=f"Buckley & Voorhees, SIGIR 2004; {_TREC_EVAL} m_bpref.c"),
    Family(
        "infAP", infap, "inferred average precision from a uniform sample of the pool", params=("rel", "unjudged"),
        aliases=("infap",), trec=(TrecName("infAP"),), examples=("infAP",), convention=infap.convention,
        explanation="""
A negative grade marks a pooled document that was not judged (sampled out); a document
absent from the qrels is not in the pool. At the 0-based index j of each judged relevant
document:

    1 (j = 0),  else 1/(j+1) + (j/(j+1)) * ((rel+nonrel+unjudged)/j) * ((rel+eps)/(rel+nonrel+2 eps))

with rel, nonrel and unjudged counted above it, eps = 1e-5; summed and divided by R.
With no negative grades infAP is AP to within eps. unjudged=condensed (trec_eval -J)
removes every document without a grade >= 0 from the ranking first.""",
        source=f"Yilmaz & Aslam, CIKM 2006; {_TREC_EVAL} m_infap.c"),
    Family(
        "Success", binary, "1 if a relevant document is in the top k", cutoff="required",
        params=("rel", "unjudged", "maxgrade"), boundable=True, trec=(TrecName("success", SUCCESS_CUTOFFS),),
        examples=("Success@10",),
        explanation="""1 when at least one relevant document is in the top k, else 0.""",
        source=f"{_TREC_EVAL} m_success.c"),
    Family(
        "NumRel", binary, "relevant judgments of the query", params=("rel",), aggregate="sum", reads="judgments",
        value_range=(0.0, float("inf")),
        aliases=("num_rel",), trec=(TrecName("num_rel"),), examples=("NumRel",),
        convention=lambda m: [f"rel>={m.rel}"],
        explanation="""The query's judgments with grade >= rel; the aggregate is the sum over queries.""",
        source=f"{_TREC_EVAL} m_num_rel.c"),
    Family(
        "NumRet", binary, "documents retrieved", params=("unjudged",), aggregate="sum", reads="retrieved",
        value_range=(0.0, float("inf")),
        aliases=("num_ret",), trec=(TrecName("num_ret"),), examples=("NumRet",),
        convention=lambda m: [_unjudged(m)],
        explanation="""Documents ranked for the query; the aggregate is the sum over queries.
ir_measures' NumRet(rel=1) is NumRelRet.""", source=f"{_TREC_EVAL} m_num_ret.c"),
    Family(
        "NumRelRet", binary, "relevant documents retrieved", params=("rel", "unjudged"), aggregate="sum",
        value_range=(0.0, float("inf")),
        aliases=("num_rel_ret",), trec=(TrecName("num_rel_ret"),), examples=("NumRelRet",),
        explanation="""Relevant documents ranked for the query; the aggregate is the sum over queries.""",
        source=f"{_TREC_EVAL} m_num_rel_ret.c"),
    Family(
        "GMAP", trec_eval_rest, "average precision, geometric mean over queries", params=("rel", "unjudged"),
        aggregate="geometric-mean", trec=(TrecName("gm_map", log=True),), examples=("GMAP",),
        convention=lambda m: _binary(m) + ["floor=1e-5"],
        explanation="""
AP per query; the run's number is the geometric mean exp(mean(log(max(AP, 1e-5)))),
which rewards consistency over queries. trec_eval and pytrec_eval report each query's
log(max(AP, 1e-5)) (judged.compat.pytrec_eval does); judged's per-query value is AP.""",
        source=f"Robertson, CIKM 2006; {_TREC_EVAL} m_gm_map.c"),
    Family(
        "GMBpref", trec_eval_rest, "bpref, geometric mean over queries", params=("rel",), aggregate="geometric-mean",
        trec=(TrecName("gm_bpref", log=True),), examples=("GMBpref",),
        convention=lambda m: [f"rel>={m.rel}", "unjudged=ignored", "floor=1e-5"],
        explanation="""
Bpref per query; the run's number is the geometric mean exp(mean(log(max(bpref, 1e-5)))).
trec_eval reports each query's log(max(bpref, 1e-5)).""", source=f"{_TREC_EVAL} m_gm_bpref.c"),
    Family(
        "SetP", trec_eval_rest, "precision of the whole retrieved set", params=("rel", "unjudged"),
        trec=(TrecName("set_P"),), examples=("SetP",),
        explanation="""Relevant retrieved / retrieved (0 when nothing is retrieved); unlike P@k, a
short ranking is not padded.""", source=f"{_TREC_EVAL} m_set_P.c"),
    Family(
        "SetR", trec_eval_rest, "recall of the whole retrieved set", params=("rel", "unjudged"),
        trec=(TrecName("set_recall"),), examples=("SetR",),
        explanation="""Relevant retrieved / R (0 when R = 0).""", source=f"{_TREC_EVAL} m_set_recall.c"),
    Family(
        "SetF", trec_eval_rest, "F measure of the retrieved set", params=("rel", "unjudged", "beta"),
        trec=(TrecName("set_F", params=("beta",)),), examples=("SetF", "SetF(beta=0.5)"),
        convention=lambda m: _binary(m) + [f"beta={m.option('beta'):g}"],
        explanation="""
    SetF = (beta + 1) * P * R / (beta * P + R),  0 when nothing relevant is retrieved

with P and R the set precision and recall; beta weighs recall against precision
(default 1: their harmonic mean).""", source=f"van Rijsbergen 1979; {_TREC_EVAL} m_set_F.c"),
    Family(
        "SetAP", trec_eval_rest, "unranked average precision of the retrieved set", params=("rel", "unjudged"),
        trec=(TrecName("set_map"),), examples=("SetAP",),
        explanation="""relret^2 / (retrieved * R): set precision times set recall (0 when either
count is 0).""", source=f"{_TREC_EVAL} m_set_map.c"),
    Family(
        "SetRelP", trec_eval_rest, "set precision relative to the best possible", params=("rel", "unjudged"),
        trec=(TrecName("set_relative_P"),), examples=("SetRelP",),
        explanation="""Relevant retrieved / min(retrieved, R) (0 when either is 0).""",
        source=f"{_TREC_EVAL} m_set_rel_P.c"),
    Family(
        "RelP", trec_eval_rest, "precision at k relative to the best possible", cutoff="required",
        params=("rel", "unjudged"), trec=(TrecName("relative_P", DEFAULT_CUTOFFS),), examples=("RelP@10",),
        explanation="""Relevant documents in the top k / min(k, R) (0 when R = 0).""",
        source=f"{_TREC_EVAL} m_rel_P.c"),
    Family(
        "IPrec", trec_eval_rest, "interpolated precision at a recall level", params=("rel", "unjudged", "recall", "rounding"),
        trec=(TrecName("iprec_at_recall", level="recall", levels=trec_eval_rest.IPREC_LEVELS, empty_nan=True),),
        examples=("IPrec(recall=0.5)",), convention=lambda m: _binary(m) + _options(m), at_param="recall",
        explanation="""
The highest precision at any rank at or after the c-th relevant document retrieved, with
c = lround(recall * R) (the first for c = 0); 0 when fewer than c relevant documents are
retrieved, and when nothing is (trec_eval: 0/0, NaN). IPrec@0.5 is ir_measures' spelling
of IPrec(recall=0.5). rounding=trec9 takes c = floor(recall * R + 0.9) instead, as trec_eval 9 and
pytrec_eval do (trec_eval 10 changed it to lround: 0.1 * 11 gives 1 there, 2 here).""", source=f"{_TREC_EVAL} m_iprec_at_recall.c"),
    Family(
        "AP11", trec_eval_rest, "11-point interpolated average precision", params=("rel", "unjudged", "rounding"),
        trec=(TrecName("11pt_avg", empty_nan=True),), examples=("AP11",), convention=lambda m: _binary(m) + _options(m),
        explanation="""The mean of IPrec at the recall levels 0.0, 0.1, ..., 1.0 (rounding as IPrec's).""",
        source=f"{_TREC_EVAL} m_11pt_avg.c"),
    Family(
        "BinG", trec_eval_rest, "binary G: relevant documents discounted by the non-relevant above",
        params=("rel", "unjudged"), trec=(TrecName("binG"),), examples=("BinG",),
        explanation="""
    BinG = sum over relevant retrieved of 1 / log2(2 + non-relevant ranked above it), / R

(0 when nothing relevant is retrieved). Experimental in trec_eval (2008).""",
        source=f"{_TREC_EVAL} m_binG.c"),
    Family(
        "G", trec_eval_rest, "normalised gain (trec_eval's experimental G)", params=("unjudged",),
        trec=(TrecName("G"),), examples=("G",), convention=lambda m: ["gain=linear", _unjudged(m)],
        explanation="""
Each document at rank i adds gain / log2(2 + ideal_gain(i) - results_gain(i)), with the
cumulative gains of the ideal ranking (each step at least 1) and of the run before it;
the sum is divided by the ideal's total gain. Gain = grade. Experimental in trec_eval (2008).""",
        source=f"{_TREC_EVAL} m_G.c"),
    Family(
        "RnDCG", trec_eval_rest, "nDCG averaged at the R levels", params=("rel", "unjudged"),
        trec=(TrecName("Rndcg"),), examples=("RnDCG",), convention=lambda m: ["gain=linear", *_binary(m)],
        explanation="""
nDCG (gain = grade, 1/log2(r+1)) averaged at the ranks where the ideal ranking's gain
changes (the number of judgments at each grade, highest first) and at the end of the
ranking; 0 when nothing is relevant at rel. Experimental in trec_eval.""",
        source=f"Jarvelin & Kekalainen, TOIS 2002; {_TREC_EVAL} m_Rndcg.c"),
    Family(
        "nDCGRel", trec_eval_rest, "nDCG averaged over the relevant documents", params=("unjudged",),
        trec=(TrecName("ndcg_rel"),), examples=("nDCGRel",), convention=lambda m: ["gain=linear", _unjudged(m)],
        explanation="""
nDCG (gain = grade, 1/log2(r+1)) read at each retrieved document with a positive gain and,
for each one not retrieved, at the end of the ranking; averaged over the documents with
a positive gain. Experimental in trec_eval.""", source=f"{_TREC_EVAL} m_ndcg_rel.c"),
    Family(
        "Utility", trec_eval_rest, "set utility: a gain per document retrieved or missed",
        value_range=(float("-inf"), float("inf")),
        params=("rel", "unjudged", "tp", "fp", "fn"), trec=(TrecName("utility", params=("tp", "fp", "fn", "tn")),),
        examples=("Utility",),
        convention=lambda m: _binary(m) + [f"tp={m.option('tp'):g},fp={m.option('fp'):g},fn={m.option('fn'):g},tn=0"],
        explanation="""
    Utility = tp * relret + fp * (retrieved - relret) + fn * (R - relret)

trec_eval's fourth coefficient (true negatives) needs the collection size (its -N, 0 by
default and in pytrec_eval): judged takes it as 0.""", source=f"{_TREC_EVAL} m_utility.c"),
    Family(
        "NumQ", trec_eval_rest, "queries evaluated (a count)", aggregate="sum", trec=(TrecName("num_q"),), reads="queries",
        value_range=(0.0, float("inf")),
        examples=("NumQ",), convention=lambda m: [],
        explanation="""1 per query evaluated; the aggregate is the number of queries.""",
        source=f"{_TREC_EVAL} m_num_q.c"),
    Family(
        "NumNonRelJudgedRet", trec_eval_rest, "judged non-relevant documents retrieved", params=("rel", "unjudged"),
        value_range=(0.0, float("inf")),
        aggregate="sum", trec=(TrecName("num_nonrel_judged_ret"),), examples=("NumNonRelJudgedRet",),
        explanation="""
Retrieved documents judged with a grade below rel (trec_eval's -1 'not pooled' and -2
'pooled, not judged' grades are not judged); the aggregate is the sum.""",
        source=f"{_TREC_EVAL} m_num_nonrel_judged_ret.c"),
    Family(
        "ERR", beyond, "expected reciprocal rank (cascade model)", cutoff="optional",
        params=("unjudged", "maxgrade", "max_rel"), defaults={"max_rel": 4}, examples=("ERR@10", "ERR(max_rel=3)@20"),
        boundable=True, bound_gain="grade",
        convention=lambda m: [f"gain=(2^grade-1)/2^{m.option('max_rel')}", _unjudged(m)],
        explanation="""
    ERR@k = sum_{i=1..k} (R_i / i) * prod_{j<i} (1 - R_j),   R = (2^grade - 1) / 2^max_rel

The user scans down and stops at rank i, satisfied, with probability R_i. max_rel is the
top of the grade scale: 4 by default, as gdeval (TREC Web 2010-2014) and ir_measures'
ERR@k; a grade above it would make R > 1. Unjudged documents and negative grades give 0.
ERR is monotone in every grade: unjudged=min|max are the exact extremes over the holes'
grades (every hole at 0, every hole at maxgrade).""",
        source="Chapelle, Metzler, Zhang & Grinspan, CIKM 2009; gdeval.pl"),
    Family(
        "nERR", beyond, "ERR normalised by the ideal ranking's", cutoff="optional", normaliser="ideal-grades",
        params=("unjudged", "maxgrade", "max_rel"), defaults={"max_rel": 4}, examples=("nERR@10",),
        boundable=True, bounds="conservative", bound_gain="grade",
        convention=lambda m: [f"gain=(2^grade-1)/2^{m.option('max_rel')}", "ideal=judged", _unjudged(m)],
        explanation="""
ERR@k divided by the ERR@k of the ideal ranking (every judged document of the query by
grade, highest first); 0 when that is 0. Worked example (docs/measures.md): grades 0, 2
ranked over an ideal of 2, 0 with max_rel 4 give ERR 3/16/2 = 0.09375 and nERR 0.5.
Bounds are conservative, not exact: ERR and the ideal's ERR both rise with every hole's
grade, so unjudged=min is ERR(holes 0) / ideal(holes at maxgrade) and unjudged=max is
min(1, ERR(holes at maxgrade) / ideal(holes 0)); the true extremes lie inside.""",
        source="Chapelle et al., CIKM 2009 (normalised as nDCG is)"),
    Family(
        "RBP", beyond, "rank-biased precision", params=("rel", "unjudged", "maxgrade", "persistence"),
        spellings={"persistence": "p"}, examples=("RBP", "RBP(p=0.95)"), cutoff="optional", boundable=True,
        convention=lambda m: _binary(m) + [f"p={m.option('persistence'):g}", "depth=run" if m.cutoff is None else "depth=k"],
        explanation="""
    RBP = (1 - p) * sum_{i >= 1} p^(i-1) * [grade_i >= rel]

A user reads on from rank i to i + 1 with probability p (persistence, default 0.8). Over
the whole ranking (RBP@k: the top k); unjudged documents count 0. RBP(unjudged=max) is
its value with every hole relevant (RBP plus the residual's ranked part); RBPResidual adds
the ranks below the ranking too.
ir_measures' RBP (cwl_eval) cuts rankings at 1000 ranks and normalises the weights over
them: equal to 1e-12 for p <= 0.95.""", source="Moffat & Zobel, TOIS 2008"),
    Family(
        "RBPResidual", beyond, "the most RBP could still gain (unjudged and unranked)",
        params=("unjudged", "persistence"), spellings={"persistence": "p"}, examples=("RBPResidual",),
        convention=lambda m: [_unjudged(m), f"p={m.option('persistence'):g}", "residual=holes+tail"],
        explanation="""
    residual = (1 - p) * sum over unjudged ranks i of p^(i-1)  +  p^depth

The weight RBP gives to the unjudged documents ranked plus everything below the last
rank: RBP + residual is the largest value full judgments could give, RBP the smallest
(Moffat & Zobel's interval, beside judged's own bounds).""", source="Moffat & Zobel, TOIS 2008"),
    Family(
        "SDCG", beyond, "scaled DCG (C/W/L)", cutoff="required", params=("unjudged", "maxgrade", "max_rel", "min_rel"),
        examples=("SDCG(max_rel=3)@10",), boundable=True, bound_gain="grade",
        convention=lambda m: [f"gain=(grade-{m.option('min_rel')})/({m.option('max_rel')}-{m.option('min_rel')})",
                              "discount=log2(rank+1)", "norm=sum-of-discounts", _unjudged(m)],
        explanation="""
    SDCG@k = sum_{i<=k} gain_i / log2(i+1)  /  sum_{i<=k} 1 / log2(i+1)

with gain = (grade - min_rel) / (max_rel - min_rel), clipped to [0, 1]: DCG scaled by a
ranking of k documents at the top grade, not by the qrels' ideal. max_rel is required,
as in ir_measures. SDCG is monotone in every grade and its scale does not depend on the
judgments: unjudged=min|max are the exact extremes over the holes' grades.""", source="Moffat et al.; Azzopardi, Thomas & Moffat, SIGIR 2019 (cwl_eval)"),
    Family(
        "INST", beyond, "an adaptive user model with a target T",
        params=("unjudged", "maxgrade", "T", "max_rel", "min_rel"), examples=("INST(max_rel=3)",), boundable=True,
        bound_gain="grade",
        convention=lambda m: [f"gain=(grade-{m.option('min_rel')})/({m.option('max_rel')}-{m.option('min_rel')})",
                              f"T={m.option('T'):g}", "depth=1000", _unjudged(m)],
        explanation="""
The user goes on from rank i with probability C_i = ((i + T + T_i - 1) / (i + T + T_i))^2,
T_i = T - the gain found up to rank i; the value is the expected gain per document read,
sum_i W_i gain_i with W derived from C over 1000 ranks (the ranking cut or padded with
gain 0, as cwl_eval). Gains scaled as SDCG's; max_rel is required. For T >= 1/2 INST
rises with every gain (judged.core.measures.bounds proves it): unjudged=min|max, every
hole at grade 0 / at maxgrade, are the exact extremes; below 1/2 the bounds are refused.""",
        source="Moffat, Bailey, Scholer & Thomas, ADCS 2015; cwl_eval"),
    Family(
        "INSQ", beyond, "INSQ: INST's user, the target T never reduced",
        params=("unjudged", "maxgrade", "T", "max_rel", "min_rel"), examples=("INSQ(max_rel=3)",), boundable=True,
        bound_gain="grade", convention=lambda m: FAMILIES["INST"].convention(m),
        explanation="""
The user goes on from rank i with probability C_i = ((i + 2T - 1) / (i + 2T))^2: INST's
model with T_i = T at every rank, whatever the gain found. Computed as INST (W from C over
1000 ranks, gains scaled as SDCG's; max_rel is required). The weights W do not depend on
the gains, so INSQ rises with every grade: unjudged=min|max are the exact extremes.""",
        source="Moffat, Scholer & Thomas, ADCS 2012; cwl_eval"),
    Family(
        "Compat", beyond, "compatibility with the ideal ranking (rank-biased overlap)", normaliser="positive",
        params=("persistence", "normalize", "unjudged", "maxgrade"), spellings={"persistence": "p"},
        defaults={"persistence": 0.95}, examples=("Compat", "Compat(p=0.8)"), boundable=True, bounds="conservative",
        convention=lambda m: [f"p={m.option('persistence'):g}", f"normalize={m.option('normalize')}",
                              "ideal=relevant-by-grade,ties=run-order", _unjudged(m)],
        explanation="""
Rank-biased overlap, to depth max(|ranking|, |ideal|), of the ranking with the ideal
ranking of the query's relevant documents (by grade, ties in the run's order, then docid);
with normalize, divided by the ideal's overlap with itself. Bounds are conservative, not
exact: a hole labelled relevant also joins the ideal, moving the others down. For s holes
labelled relevant, R + s fixes the normaliser; a ranked relevant document's ideal rank moves
down by at most s (at the top grade a hole can take, by at most the holes ranked above it: a
lower bound of every overlap) and at most min(s, holes above d) labelled
holes join the overlap at depth d (an upper bound); unjudged=min|max are the least and
greatest over s.""",
        source="Clarke, Vtyurina & Smucker, TOIS 2020; ir_measures' compat provider"),
    Family(
        "alpha-nDCG", diversity, "novelty-aware nDCG over subtopics", cutoff="required",
        value_range=(0.0, float("inf")),  # the greedy ideal is not always the best ranking
        params=("rel", "unjudged", "maxgrade", "alpha"), subtopics=True, aliases=("alpha_nDCG",),
        examples=("alpha-nDCG@20",), boundable=True, bounds="conservative",
        convention=_diversity("ideal=greedy(ties=docid-desc)", "norm=ideal"),
        explanation="""
Over subtopic qrels (qid subtopic docid grade: the qrels' second column is the subtopic,
as ir_measures reads it). A document covers a subtopic when its grade for it is >= rel;
the n-th document covering a subtopic gains (1 - alpha)^(n-1) for it:

    G(r)          = sum over the subtopics s document r covers of (1 - alpha)^(c_s(r))
    alpha-DCG@k   = sum_{r=1..k} G(r) / log2(r + 1)
    alpha-nDCG@k  = alpha-DCG@k / alpha-DCG@k of the ideal ranking

with c_s(r) the documents above r covering s. The ideal ranking is ndeval's greedy one
over the query's judged documents (at each rank the largest G, ties to the largest docid
by strcmp). A query's subtopics are those with a relevant judgment; one without any
scores 0. Equal to ndeval's alpha-nDCG@k (TREC Web 2009-2012; ir_measures' alpha_nDCG
through pyndeval). Bounds are conservative: the greedy ideal moves with the holes' labels,
and not monotonely (a label can lower it), so unjudged=min is the value with no hole covering
anything over the most any ranking could gain (every hole covering every subtopic, n_s
documents per subtopic at the top), and unjudged=max the value with every hole covering all S
over the least the greedy ideal can gain (at least 1 - (1 - 1/m)^m of the best m documents at
every depth m, Nemhauser, Wolsey & Fisher 1978), at most 1 / (1 - (1 - 1/k)^k): the greedy
ideal is not always the best ranking, so a run can score above 1. Worked
example (docs/measures.md): run a, b, c; a covers s1, b covers s1 and s2, c covers s2:
G = 1, 1.5, 0.5, alpha-DCG@3 = 2.1964; the ideal b, c, a gives 2.5655; alpha-nDCG@3 = 0.8561.""",
        source="Clarke et al., SIGIR 2008; ndeval 4.5 (TREC Web track)"),
    Family(
        "alpha-DCG", diversity, "alpha-DCG scaled by an ideal-ideal ranking (ndeval)", cutoff="required",
        params=("rel", "unjudged", "maxgrade", "alpha"), subtopics=True, aliases=("alpha_DCG",),
        examples=("alpha-DCG@20",), boundable=True,
        convention=_diversity("norm=ideal-ideal(every-document-covers-all-S)"),
        explanation="""
alpha-DCG@k (as alpha-nDCG's) divided by the alpha-DCG@k of a ranking whose every
document covers all S subtopics: sum_{r<=k} S (1 - alpha)^(r-1) / log2(r + 1) (ndeval's
collection-independent normalisation; ndeval leaves k = 1 undivided, judged divides it
too). Monotone in every (document, subtopic) label with S fixed: unjudged=min|max are
the exact extremes over the holes (a hole covering none / every one of the query's
subtopics).""", source="Clarke et al., SIGIR 2008; ndeval 4.5"),
    Family(
        "ERR-IA", diversity, "intent-aware expected reciprocal rank (ndeval)", cutoff="required",
        params=("rel", "unjudged", "maxgrade", "alpha"), subtopics=True, aliases=("ERR_IA",),
        examples=("ERR-IA@20", "ERR-IA(alpha=0.3)@20"), boundable=True,
        convention=_diversity("norm=ideal-ideal(every-document-covers-all-S)"),
        explanation="""
The mean over the query's S subtopics of ERR@k with binary relevance, a relevant
document satisfying the user with probability alpha (ndeval's -alpha, default 0.5 as
ndeval's: (2^1 - 1) / 2^1, gdeval's ERR of a binary grade):

    ERR-IA@k = sum_{r<=k} (1/r) sum_s [r covers s] (1 - alpha)^(c_s(r))  /  sum_{r<=k} S (1 - alpha)^(r-1) / r

divided, as ndeval does, by the value of a ranking whose every document covers every
subtopic (collection-independent; ndeval leaves k = 1 undivided, judged divides it too; the
factor alpha of each term cancels). Monotone in every label with S fixed: unjudged=min|max
are exact.""",
        source="Chapelle, Metzler, Zhang & Grinspan, CIKM 2009; Agrawal et al., WSDM 2009; ndeval 4.5"),
    Family(
        "nERR-IA", diversity, "ERR-IA normalised by the greedy ideal ranking's", cutoff="required",
        value_range=(0.0, float("inf")),  # the greedy ideal is not always the best ranking
        params=("rel", "unjudged", "maxgrade", "alpha"), subtopics=True, aliases=("nERR_IA",),
        examples=("nERR-IA@20",), boundable=True, bounds="conservative",
        convention=_diversity("ideal=greedy(ties=docid-desc)", "norm=ideal"),
        explanation="""
ERR-IA@k (with its alpha, ndeval's -alpha, default 0.5) divided by the ERR-IA@k of ndeval's
greedy ideal ranking (alpha-nDCG's, with the same alpha); 0 when nothing is relevant.
Bounds conservative, as alpha-nDCG's (the greedy ideal moves with the holes).""",
        source="Chapelle et al., CIKM 2009; ndeval 4.5"),
    Family(
        "NRBP", diversity, "novelty- and rank-biased precision", params=("rel", "unjudged", "maxgrade", "alpha",
                                                                         "patience"),
        subtopics=True, spellings={"patience": "beta"}, examples=("NRBP", "NRBP(alpha=0.5,beta=0.8)"), boundable=True,
        convention=_diversity("norm=(1-(1-alpha)beta)/S", "depth=run"),
        explanation="""
    NRBP = (1 - (1 - alpha) beta) / S * sum_{r>=1} beta^(r-1) G(r)

G(r) as alpha-nDCG's; over the whole ranking (beta, the patience, default 0.5). Monotone
in every label with S fixed: unjudged=min|max are exact.""",
        source="Clarke, Kolla & Vechtomova, ICTIR 2009; ndeval 4.5"),
    Family(
        "nNRBP", diversity, "NRBP normalised by the greedy ideal ranking's",
        value_range=(0.0, float("inf")),  # the greedy ideal is not always the best ranking
        params=("rel", "unjudged", "maxgrade", "alpha", "patience"), subtopics=True, spellings={"patience": "beta"},
        examples=("nNRBP",), boundable=True, bounds="conservative",
        convention=_diversity("ideal=greedy(ties=docid-desc)", "norm=ideal", "depth=run"),
        explanation="""
NRBP divided by the NRBP of ndeval's greedy ideal ranking; 0 when nothing is relevant
(ndeval: 0/0). Bounds conservative, as alpha-nDCG's (over the whole ranking, the greedy
ideal's share at least 1 - 1/e; unjudged=max at most e / (e - 1)).""",
        source="Clarke, Kolla & Vechtomova, ICTIR 2009; ndeval 4.5"),
    Family(
        "P-IA", diversity, "intent-aware precision at k", cutoff="required", params=("rel", "unjudged", "maxgrade"),
        subtopics=True, aliases=("P_IA",), examples=("P-IA@20",), boundable=True, convention=_diversity("norm=k*S"),
        explanation="""
    P-IA@k = (relevant (document, subtopic) pairs in the top k) / (k * S)

the mean over the S subtopics of P@k (a ranking shorter than k padded). Monotone in every
label with S fixed: unjudged=min|max are the exact extremes (every hole covering none /
all of the query's subtopics).""", source="Agrawal, Gollapudi, Halverson & Ieong, WSDM 2009; ndeval 4.5"),
    Family(
        "AP-IA", diversity, "intent-aware average precision", params=("rel", "unjudged", "maxgrade"), subtopics=True,
        aliases=("AP_IA", "MAP-IA"), examples=("AP-IA",), convention=_diversity("R=relevant-per-subtopic"),
        boundable=True,
        explanation="""
The mean over the S subtopics of AP with the subtopic's relevant judgments as R, over the
whole ranking (ndeval's MAP-IA). Not monotone (a relevant hole also raises R), but each
subtopic's AP reads only its own labels and a hole may cover any subset of S: unjudged=min|max
are the exact extremes, the mean over the subtopics of AP's own (judged holes).""",
        source="Agrawal et al., WSDM 2009; ndeval 4.5"),
    Family(
        "StRecall", diversity, "subtopic recall: share of the subtopics covered in the top k", cutoff="required",
        params=("rel", "unjudged", "maxgrade"), subtopics=True, aliases=("S-recall", "strec"),
        examples=("StRecall@20",), boundable=True, convention=_diversity("norm=S"),
        explanation="""
Subtopics with a relevant document in the top k, divided by S (ndeval's strec@k).
Monotone: unjudged=max is 1 when a hole is in the top k (it may cover every subtopic).""",
        source="Zhai, Cohen & Lafferty, SIGIR 2003; ndeval 4.5"),
    Family(
        "Judged", judged, "share of the top k that is judged (coverage, not quality)", cutoff="required",
        reads="judged",
        coverage=True, examples=("Judged@10",), convention=lambda m: ["judged=any-grade-for-this-query"],
        explanation="""
The share of the top min(k, retrieved) documents that carry a judgment of any grade for
this query (0 when nothing is retrieved). A document judged only for another query is a
hole here, unlike BEIR's Hole@k. It says how far the other numbers can be trusted, not how
good the ranking is: comparisons never test it for significance.""", source="ir_measures' Judged@k"),
    Family(
        "Complete", completeness, "1 when every required evidence group is in the top k", cutoff="optional",
        reads="requirements",
        examples=("Complete@10",), convention=completeness.convention,
        explanation="""
Over a requirements file (qid group docid; --requirements): 1 when each of the query's
required groups has a document in the top k, else 0; 1 for a query without requirements.
Grades play no part.""", source="judged (docs/beyond.md)"),
    Family(
        "Coverage", completeness, "share of the required evidence groups in the top k", cutoff="optional",
        reads="requirements",
        examples=("Coverage@10",), convention=completeness.convention,
        explanation="""
Over a requirements file (qid group docid; --requirements): the query's required groups
with a document in the top k, divided by the groups required; 1 for a query without
requirements.""", source="judged (docs/beyond.md)"),
    Family(
        "Leak", leak, "ineligible documents retrieved (a count)", cutoff="optional", aggregate="sum",
        reads="eligibility",
        value_range=(0.0, float("inf")),
        examples=("Leak@10",), convention=leak.convention,
        explanation="""
Ineligible documents (--eligibility) in the top k, per query; the aggregate is the sum,
so any value above 0 flags the run. Every other measure already treats an ineligible
document as not relevant.""", source="judged (docs/beyond.md)"),
)}

# lower-case spelling -> family name
NAMES = {}
for _f in FAMILIES.values():
    for _spelling in (_f.name, *_f.aliases, *(t.name for t in _f.trec)):
        NAMES.setdefault(_spelling.lower(), _f.name)
# trec_eval names that need a cutoff in judged's syntax
NEEDS_CUTOFF = {t.name.lower() for f in FAMILIES.values() for t in f.trec if t.needs_cutoff}
# ir_measures spellings of another family: (family, parameter given) -> family
SPELLINGS = {("NumRet", "rel"): "NumRelRet"}
BOUNDED = tuple(f.name for f in FAMILIES.values() if f.boundable)


def family(name: str) -> Family:
    return FAMILIES[name]


def completion_words() -> list[str]:
    """The measure strings shell completion offers for ``-m``."""
    return [e for f in FAMILIES.values() for e in f.examples]


def trec_names() -> dict:
    """trec_eval name -> (family, default cutoffs or None): pytrec_eval's measure table."""
    return {t.name: (f.name, t.cutoffs) for f in FAMILIES.values() for t in f.trec}


def trec_table() -> dict:
    """trec_eval name -> (family name, its :class:`TrecName`)."""
    return {t.name: (f.name, t) for f in FAMILIES.values() for t in f.trec}


# trec_eval 10's measures in the order it prints them (measures.c, te_trec_measures; the
# preference and jg measures, which need other qrels, left out)
TREC_ORDER = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
              "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
              "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P",
              "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
              "rbp", "rbp_resid", "unj")
# trec_eval 10's -m nicknames (measures.c), the measures of its relevance qrels
TREC_NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": TREC_ORDER,
}
TREC_STRINGS = ("relstring", "runid")  # string-valued per query (pytrec_eval reports 0.0)
# in trec_eval 10's all_trec, not in trec_eval 9's (pytrec_eval's): judged's RBP, RBPResidual and
# Judged@k are other conventions (trec_eval 10's rbp rescales graded gains, unj counts unjudged)
TREC_NOT_COMPUTED = ("rbp", "rbp_resid", "unj")
