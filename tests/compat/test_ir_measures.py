"""judged.calc_aggregate / judged.iter_calc against real ir_measures, where conventions match."""

from collections import namedtuple

import pandas as pd
import pytest

import judged
from synth import random_collection

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import AP, NumRel, NumRelRet, NumRet, P, R, RR, Bpref, Judged, Rprec, Success, nDCG  # noqa: E402

MEASURES = [nDCG@10, nDCG@5, nDCG, AP, AP@10, P@5, P(rel=2)@10, R@20, RR, Rprec, Bpref, Success@5,
            NumRet, NumRelRet, AP(rel=2)]


def ours_and_theirs(qrels, run, measures=MEASURES, **conventions):
    return judged.calc_aggregate(measures, qrels, run, **conventions), ir_measures.calc_aggregate(measures, qrels, run)


@pytest.mark.parametrize("seed", range(15))
def test_aggregates_match_when_missing_queries_count_as_zero(seed, backend):
    # ir_measures scores a qrels query that the run lacks as 0: judged's complete=True
    qrels, run = random_collection(seed)
    ours, theirs = ours_and_theirs(qrels, run, complete=True)
    assert set(ours) == set(theirs)
    for m in MEASURES:
        assert ours[m] == pytest.approx(theirs[m], abs=1e-9), str(m)


@pytest.mark.parametrize("seed", range(5))
def test_per_query_values_match(seed):
    qrels, run = random_collection(seed)
    ours = {(m.query_id, str(m.measure)): m.value for m in judged.iter_calc(MEASURES, qrels, run, complete=True)}
    theirs = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(MEASURES, qrels, run)}
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, abs=1e-9), key


@pytest.mark.parametrize("seed", range(5))
def test_judged_at_k_matches_without_ties(seed):
    # ir_measures' Judged provider orders tied scores its own way; without ties the two agree
    qrels, run = random_collection(seed)
    run = {q: {d: s + i / 1024 for i, (d, s) in enumerate(ds.items())} for q, ds in run.items()}
    ours, theirs = ours_and_theirs(qrels, run, [Judged@10, Judged@3], complete=True)
    assert ours[Judged@10] == pytest.approx(theirs[Judged@10], abs=1e-9)
    assert ours[Judged@3] == pytest.approx(theirs[Judged@3], abs=1e-9)


def test_default_mean_is_over_queries_in_both_and_says_so():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    assert ir_measures.calc_aggregate([nDCG@10], qrels, run)[nDCG@10] == 0.5
    assert judged.calc_aggregate([nDCG@10], qrels, run)[nDCG@10] == 1.0
    assert judged.calc_aggregate([nDCG@10], qrels, run, complete=True)[nDCG@10] == 0.5


def test_input_forms_strings_dataframes_namedtuples():
    qrels, run = random_collection(3)
    expected = judged.calc_aggregate(["nDCG@10", "AP"], qrels, run)
    qdf = pd.DataFrame([(q, d, g) for q, ds in qrels.items() for d, g in ds.items()],
                       columns=["query_id", "doc_id", "relevance"])
    rdf = pd.DataFrame([(q, d, s) for q, ds in run.items() for d, s in ds.items()],
                       columns=["query_id", "doc_id", "score"])
    assert judged.calc_aggregate(["nDCG@10", "AP"], qdf, rdf) == expected
    Qrel = namedtuple("Qrel", "query_id doc_id relevance iteration")
    ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")
    qrecs = (Qrel(*row, "0") for row in qdf.itertuples(index=False))
    rrecs = (ScoredDoc(*row) for row in rdf.itertuples(index=False))
    assert judged.calc_aggregate(["nDCG@10", "AP"], qrecs, rrecs) == expected
    # ir_measures' own namedtuples, read with its own reader
    irm_qrels = [ir_measures.Qrel(*row, "0") for row in qdf.itertuples(index=False)]
    assert judged.calc_aggregate([nDCG@10], irm_qrels, run)[nDCG@10] == expected["nDCG@10"]


def test_iter_calc_yields_metrics_keyed_by_the_measure_given():
    metrics = list(judged.iter_calc([nDCG@10, "RR"], {"q": {"a": 1}}, {"q": {"b": 2.0, "a": 1.0}}))
    assert [(m.query_id, m.measure, m.value) for m in metrics] == [("q", nDCG@10, pytest.approx(0.6309, abs=1e-4)),
                                                                 ("q", "RR", 0.5)]
    assert metrics[0]._fields == ("query_id", "measure", "value")


def test_numret_rel_is_ir_measures_spelling_of_numrelret():
    assert str(NumRelRet) == "NumRet(rel=1)"
    assert judged.Measure.parse("NumRet(rel=1)") == judged.Measure.parse("NumRelRet")
    assert NumRel in judged.calc_aggregate([NumRel], {"q": {"a": 1}}, {"q": {"a": 1.0}})


GAINS = [nDCG(gains={0: 0, 1: 1, 2: 3})@10, nDCG(gains={0: 0, 1: 1, 2: 3, 3: 3}), nDCG(gains={1: 5})@5,
         nDCG(gains={0: 1, 3: 0})@20, nDCG(gains={0: 0, 1: 1, 2: 2, 3: 3})@10]


@pytest.mark.parametrize("seed", range(10))
def test_gains_objects_equal_ir_measures(seed, backend):
    """Issue #14: ir_measures' own nDCG(gains={0:0,1:1,2:3})@10 prints as nDCG(gains={2:3})@10
    (its str() drops identity entries). Its gains= maps gains.get(grade, grade): a grade not
    listed keeps its grade, so the printed form means the same, and judged reads it so."""
    qrels, run = random_collection(seed)  # grades 0..3: grade 3 is not listed in the first
    assert str(GAINS[0]) == "nDCG(gains={2:3})@10"
    ours, theirs = ours_and_theirs(qrels, run, GAINS, complete=True)
    for m in GAINS:
        assert ours[m] == pytest.approx(theirs[m], abs=1e-12), str(m)
    assert judged.Measure.parse(str(GAINS[0])) == judged.Measure.parse("nDCG(gains={0:0,1:1,2:3})@10")
    assert judged.Measure.parse(str(GAINS[-1])) == judged.Measure.parse("nDCG@10")


def test_gains_and_gain_keep_their_own_meanings():
    """judged's own gain= mapping still names every grade (a grade it lacks is an error);
    ir_measures' gains= keeps unlisted grades; both print so that they read back the same."""
    a, b = judged.Measure.parse("nDCG(gains={2:3})@10"), judged.Measure.parse("nDCG(gain={0:0,1:1,2:3})@10")
    assert (str(a), str(b)) == ("nDCG(gains={2:3})@10", "nDCG(gain={0:0,1:1,2:3})@10")
    assert judged.Measure.parse(str(a)) == a and judged.Measure.parse(str(b)) == b
    assert "gain={2:3}+linear" in a.convention()
    qrels, run = {"q": {"a": 3, "b": 2}}, {"q": {"a": 1.0, "b": 2.0}}
    assert judged.evaluate(qrels, run, [str(a)]).aggregate("run", str(a)) > 0
    with pytest.raises(judged.ConventionError, match=r"grade\(s\) \[3\] have no gain"):
        judged.evaluate(qrels, run, [str(b)])


@pytest.mark.parametrize("seed", range(5))
def test_diversity_measures_read_the_iteration_field(seed, tmp_path):
    """ir_measures' Qrel records carry the subtopic in ``iteration``: judged.iter_calc reads it
    for the diversity measures and gives its pyndeval provider's values."""
    pytest.importorskip("pyndeval")
    from synth import make_subtopic_collection

    c = make_subtopic_collection(seed)
    qrels_path, run_path = c.write(tmp_path)
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    measures = [ir_measures.parse_measure(m) for m in ("alpha_nDCG@10", "ERR_IA@5", "P_IA@20", "NRBP", "StRecall@10")]
    ours = {(x.query_id, str(x.measure)): x.value for x in judged.iter_calc(measures, qrels, c.run)}
    theirs = {(x.query_id, str(x.measure)): x.value for x in ir_measures.iter_calc(measures, qrels, c.run)
              if x.query_id in c.run}
    assert theirs and all(ours[key] == value for key, value in theirs.items())


@pytest.mark.parametrize("measure", ["Compat", "Compat(p=0.8)", "Compat(normalize=False)"])
def test_compat_of_a_query_the_run_lacks_with_nothing_relevant_is_0(measure, backend):
    """Issue 34: under complete=True (ir_measures' missing-query rule, trec_eval -c) Compat
    was NaN for a qrels query the run lacks and with nothing relevant (0/0 over no depth);
    ir_measures scores it 0. q2 (nothing relevant, ranked) and q3 (relevant, missing) too."""
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 0}, "q3": {"d": 1}, "q4": {"e": 0}}
    run = {"q1": {"a": 1.0, "b": 0.5}, "q2": {"c": 1.0}}
    m = ir_measures.parse_measure(measure)
    ours = {x.query_id: x.value for x in judged.iter_calc([measure], qrels, run, complete=True)}
    theirs = {x.query_id: x.value for x in ir_measures.iter_calc([m], qrels, run)}
    assert ours == theirs and [ours[q] for q in ("q2", "q3", "q4")] == [0.0, 0.0, 0.0]
    assert judged.calc_aggregate([measure], qrels, run, complete=True)[measure] == \
        ir_measures.calc_aggregate([m], qrels, run)[m] == ours["q1"] / 4
    bounds = judged.evaluate(qrels, {"r": run}, [f"{measure[:6]}(unjudged=min)", f"{measure[:6]}(unjudged=max)"],
                             complete=True).runs["r"]
    assert all(v.tolist()[3] == 0.0 for v in bounds.values.values())  # q4: nothing to bound, 0
