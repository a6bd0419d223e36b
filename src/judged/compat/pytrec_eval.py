"""pytrec_eval's interface, computed by judged: ``import judged.compat.pytrec_eval as pytrec_eval``.

``RelevanceEvaluator(qrels, measures, relevance_level=1, judged_docs_only_flag=False)``
and ``.evaluate(run)`` return pytrec_eval's ``{qid: {key: value}}`` with its keys
(``ndcg_cut_10``, ``map``, ``P_10``, ``recall_100``, ``recip_rank``, ...). A family name
without a cutoff expands to trec_eval's default cutoffs, as pytrec_eval does
(``ndcg_cut`` -> ``ndcg_cut_5`` ... ``ndcg_cut_1000``; ``success`` -> 1, 5, 10); when a
family is also named with cutoffs, only the cutoffs named are computed, all of them
(``{"P", "P.5"}`` -> ``P_5``; ``{"P.5,10", "P_20"}`` -> ``P_5``, ``P_10``, ``P_20``), as
pytrec_eval combines them; ``name_values`` is ``name.values`` (``set_F_0.5``,
``iprec_at_recall_0.10``, ``Rprec_mult_0.20``: pytrec_eval's keys), and its nicknames
(``official``, ``set``, ``all_trec``: ``supported_nicknames``) expand as it expands them. A
query listed in the run with nothing ranked is scored on an empty ranking (0; ``num_rel``
its count), as pytrec_eval scores it once its process has scored any ranked document:
before that, trec_eval 9's buffers inside it are unallocated, its form_res_rels fails on
an empty ranking and the query keeps the values of a failed computation (``num_rel`` 0,
``iprec_at_recall`` NaN at every level), an answer that depends on what the process did
before, which judged does not copy. An infinite score is ranked as pytrec_eval ranks it
(trec_eval compares doubles: ``inf`` first, ``-inf`` last). What pytrec_eval refuses is
refused here with its message, at construction: ``relevance_level`` below 1 (its
TypeError), a cutoff of 0 (trec_eval stops with "Negative cutoff detected" and pytrec_eval
aborts the process; here a ValueError).

The conventions are pytrec_eval's (the trec_eval code inside it): ties broken by docid
descending, the queries both in the run and the qrels, a query with nothing relevant
scored 0, documents equal to the query id kept. Two differences are deliberate: scores
are compared as doubles, while pytrec_eval rounds them to float32 first, so two scores
that differ only past float32 precision are a tie there and ordered here
(docs/migrating.md shows an example); and a NaN score is refused (:class:`UnorderedScore`,
a ValueError), which pytrec_eval ranks wherever its sort happens to leave it.
"""

from __future__ import annotations

import collections
import re

import numpy as np

from ..core.errors import ConventionError, MeasureError, ParseError

from ..core.measures.registry import (DEFAULT_CUTOFFS, MIN_GEO_MEAN, SUCCESS_CUTOFFS, TREC_NICKNAMES,  # noqa: F401
                                      TREC_NOT_COMPUTED, TREC_STRINGS, trec_table)
from ..core.measures import FAMILIES as JUDGED_FAMILIES, Measure, trec_form
from ..core.measures.params import PARAMS
from ..core.io import read_run, read_qrels
from ..core.conventions import Settings
from ..core.evaluation import ALIGNMENT, Scorer
from ..core.measures.dcg import ranking_for

# trec_eval name -> (judged family, its TrecName record), from the measure registry
TREC = trec_table()
# trec_eval family -> (judged measure name, default cutoffs or None for a measure without one)
FAMILIES = {name: (family, t.cutoffs) for name, (family, t) in TREC.items()}
# trec_eval's measures whose value is a string; pytrec_eval reports 0.0 for each query
STRINGS = TREC_STRINGS
supported_measures = frozenset(FAMILIES) | frozenset(STRINGS)
# pytrec_eval's nicknames: trec_eval 9's lists (trec_eval 10's without rbp, rbp_resid, unj)
supported_nicknames = {name: frozenset(m for m in names if m not in TREC_NOT_COMPUTED)
                       for name, names in TREC_NICKNAMES.items()}
_BY_LENGTH = "|".join(sorted(map(re.escape, supported_measures), key=len, reverse=True))
_WITH_CUTOFFS = re.compile(r"^(%s)[._](\d+(?:,\d+)*)$" % "|".join(sorted((f for f, (_, c) in FAMILIES.items() if c),
                                                                         key=len, reverse=True)))
# pytrec_eval's name_values spelling of trec_eval's name.values (its _combine_measures: numbers
# after '.' or '_'): set_F_0.5, iprec_at_recall_0.10, Rprec_mult_0.20
_UNDERSCORED = re.compile(r"^(%s)_(\d+(?:\.\d+)?(?:,\d+(?:\.\d+)?)*)$" % _BY_LENGTH)


class UnsupportedMeasure(MeasureError, ValueError):
    """A measure name judged does not compute (a ValueError, as pytrec_eval raises)."""


class UnorderedScore(ParseError, ValueError):
    """A NaN score: it has no place in a ranking (a ValueError)."""


class BadRelevanceLevel(ConventionError, TypeError):
    """``relevance_level`` below 1 (a TypeError with pytrec_eval's message, as it raises)."""


def expand(measures, relevance_level: int = 1, judged_docs_only: bool = False) -> dict:
    """pytrec_eval measure names -> {output key: judged Measure}.

    Names are combined per family as pytrec_eval's ``_combine_measures`` does: the cutoffs
    of every ``family.k1,k2`` / ``family_k`` form are pooled, and the family's default
    cutoffs apply only when none is given."""
    from dataclasses import replace

    # pytrec_eval's test (relevance_level < 1); -1, which its int32 parse lets through to
    # score every query 0, is refused here too
    if not isinstance(relevance_level, (int, np.integer)) or relevance_level < 1:
        raise BadRelevanceLevel("Argument relevance_level should be positive.")
    if isinstance(measures, str):
        measures = [measures]
    # pytrec_eval's nicknames (official, set, all_trec), then its name_values keys as name.values
    measures = [name for text in measures for name in sorted(supported_nicknames.get(str(text).strip(), [text]))]
    measures = [_UNDERSCORED.sub(r"\1.\2", str(text).strip()) for text in measures]
    given: dict[str, set] = {}  # family -> cutoffs or levels named (empty: the defaults), in first-seen order
    fixed = {}  # trec_eval's parameter forms (set_F.0.5, utility.1,-1,0,0, ndcg.1=3.5): key -> Measure
    for text in measures:
        text = str(text).strip()
        if text in FAMILIES or text in STRINGS:
            given.setdefault(text, set())
            continue
        m = _WITH_CUTOFFS.match(text)
        if not m:
            try:
                named = trec_form(text)
            except MeasureError as exc:
                raise UnsupportedMeasure(str(exc))
            if named is None:
                raise UnsupportedMeasure(
                    f"unsupported measure {text!r} (judged.compat.pytrec_eval knows {', '.join(sorted(FAMILIES))}, "
                    "with cutoffs as P.5,10 or P_5, levels as iprec_at_recall.0.10, parameters as set_F.0.5)")
            family = text.split(".", 1)[0]
            if TREC[family][1].level:  # iprec_at_recall.0.10,0.50: those levels only, as pytrec_eval
                given.setdefault(family, set()).update(m.option(TREC[family][1].level) for _, m in named)
            else:
                fixed.update(named)
            continue
        cutoffs = {int(k) for k in m.group(2).split(",")}
        if 0 in cutoffs:
            raise UnsupportedMeasure(f"cutoff 0 in {text!r}: trec_eval's cutoffs are positive (trec_eval stops "
                                     "with 'Negative cutoff detected', pytrec_eval aborts)")
        given.setdefault(m.group(1), set()).update(cutoffs)
    out = {}
    for family, cutoffs in [*given.items(), *((key, m) for key, m in fixed.items())]:
        if family in STRINGS:
            out[family] = None  # 0.0 per query, as pytrec_eval
            continue
        name, t = TREC[family]
        defaults = t.cutoffs
        allowed = JUDGED_FAMILIES[name].params
        kw = {}
        if "rel" in allowed:
            kw["rel"] = int(relevance_level)  # trec_eval -l; ndcg reads grades, not the level
        if judged_docs_only and "unjudged" in allowed:
            kw["unjudged"] = "condensed"  # trec_eval -J
        # pytrec_eval holds trec_eval 9's recall levels: floor(x * R + 0.9), not 10's lround
        rounding = (("rounding", "trec9"),) if "rounding" in allowed else ()
        if isinstance(cutoffs, Measure):  # a parameter form: its measure under these settings
            out[family] = replace(cutoffs, **kw, options=cutoffs.options + rounding)
            continue
        if t.levels:  # iprec_at_recall_0.00 ... 1.00, Rprec_mult_0.20 ... 2.00
            for level in sorted(cutoffs) or t.levels:
                options = () if level == PARAMS[t.level].default else ((t.level, float(level)),)
                out[f"{family}_{level:.2f}"] = Measure(name, None, **kw, options=options + rounding)
            continue
        for k in (sorted(cutoffs) or defaults or (None,)):
            key = family if k is None else f"{family}_{k}"
            out[key] = Measure(name, k, **kw, options=rounding)
    return out


class RelevanceEvaluator:
    """pytrec_eval.RelevanceEvaluator, computed by judged in double precision."""

    def __init__(self, query_relevance, measures, relevance_level: int = 1, judged_docs_only_flag: bool = False):
        self.measures = expand(measures, relevance_level, judged_docs_only_flag)
        judged_queries = {q: d for q, d in dict(query_relevance).items() if len(d) > 0}
        self.qrels = read_qrels(judged_queries) if judged_queries else None

    def evaluate(self, scores) -> dict[str, dict[str, float]]:
        """{qid: {key: value}} for the queries both in ``scores`` and the qrels; a query
        listed with nothing ranked is scored on an empty ranking, as pytrec_eval does."""
        if not scores or self.qrels is None:
            return {}
        listed = {str(q) for q in scores}
        run = _run(scores)
        # a listed query with an empty ranking is scored as trec_eval -c scores a missing one
        empty = listed - set(run.qid.unique().to_pylist())
        measures = {key: m for key, m in self.measures.items() if m is not None}
        (scored,) = Scorer(self.qrels, measures, Settings(complete=bool(empty))).runs([run], ALIGNMENT).runs.values()
        values = {key: _trec_values(key, m, scored.aligned, scored.values.get(key)) for key, m in self.measures.items()}
        return {q: {key: float(v[i]) for key, v in values.items()} for i, q in enumerate(scored.qids.tolist())
                if q in listed}


def _run(scores):
    """The run as judged reads it. An infinite score is ordered as trec_eval orders doubles
    (+inf above every number, -inf below; equal infinities tie, then docid descending), as
    pytrec_eval scores it: the scores are then replaced by their rank among the run's
    distinct values, which every trec_eval measure reads alike (only their order counts).
    A NaN score is refused (:class:`UnorderedScore`): it compares false with everything, so
    pytrec_eval puts it wherever its sort happens to leave it."""
    try:
        return read_run({q: d for q, d in scores.items()})
    except ParseError as refused:
        rows = [(str(q), str(d), s) for q, docs in scores.items() if isinstance(docs, dict) for d, s in docs.items()]
        try:
            values = np.array([float(s) for _, _, s in rows], np.float64)
        except (TypeError, ValueError):
            raise refused from None
        if not np.isinf(values).any() and not np.isnan(values).any():
            raise refused from None
        if np.isnan(values).any():
            q, d, s = rows[int(np.flatnonzero(np.isnan(values))[0])]
            raise UnorderedScore("<dict>", None, f"query {q!r} docid {d!r}: score {s!r} has no place in a ranking "
                                 "(pytrec_eval puts a NaN wherever its sort happens to leave it); drop the "
                                 "document or give it a number (-inf ranks it last)") from None
        order = np.unique(values, return_inverse=True)[1].astype(np.float64)
        ranked: dict = {}
        for (q, d, _), value in zip(rows, order.tolist()):
            ranked.setdefault(q, {})[d] = value
        return read_run(ranked)


def _trec_values(key: str, measure, aligned, values) -> np.ndarray:
    """Each query's value as trec_eval reports it from judged's ``values``: the log for a
    geometric mean (gm_map's log(max(AP, 1e-5))), 0 for a string-valued measure."""
    if measure is None:
        return np.zeros(aligned.n_queries)
    t = TREC[key if key in TREC else key.rsplit("_", 1)[0]][1]
    if t.log:
        return np.log(np.maximum(values, MIN_GEO_MEAN))
    if t.empty_nan:  # nothing retrieved: trec_eval's 0/0 at a level that needs no relevant document
        empty = ranking_for(measure, aligned).count == 0
        if t.level == "recall":  # iprec_at_recall
            R = aligned.judgments.count_at_least(measure.rel)
            empty &= np.floor(measure.option("recall") * R + 0.9) == 0  # trec_eval 9's rank, as pytrec_eval
        return np.where(empty, np.nan, values)
    return values


def compute_aggregated_measure(measure: str, values) -> float:
    """Sum for ``num_*``, geometric mean for ``gm_*``, arithmetic mean otherwise (pytrec_eval's rule)."""
    values = np.asarray(list(values), dtype=np.float64)
    if measure.startswith("num_"):
        return float(values.sum())
    if measure.startswith("gm_"):
        return float(np.exp(values.sum() / len(values)))
    return float(values.mean())


def parse_qrel(lines) -> dict[str, dict[str, int]]:
    """TREC qrels lines (``qid iter docid grade``) -> {qid: {docid: grade}}."""
    out = collections.defaultdict(dict)
    for line in lines:
        qid, _, docid, grade = line.strip().split()
        out[qid][docid] = int(grade)
    return out


def parse_run(lines) -> dict[str, dict[str, float]]:
    """TREC run lines (``qid Q0 docid rank score tag``) -> {qid: {docid: score}}."""
    out = collections.defaultdict(dict)
    for line in lines:
        qid, _, docid, _, score, _ = line.strip().split()
        out[qid][docid] = float(score)
    return out
