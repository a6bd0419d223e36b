"""Every number docs/conventions.md states, computed by judged (so the guide cannot drift)."""

from __future__ import annotations

from pathlib import Path

import pytest

import judged
from judged.demo import worked_examples

QRELS, RUN = worked_examples()


def value(qrels, run, measure, qid=None, **settings):
    res = judged.evaluate(qrels, {"r": run}, [measure], **settings)
    if qid is None:
        return res.aggregate("r", measure)
    rr = res.runs["r"]
    return float(rr.values[measure][rr.qids.tolist().index(qid)])


@pytest.mark.parametrize("measure,expected", [
    ("DCG@10", 6.861), ("nDCG@10", 0.961), ("DCG(gain=exp)@10", 13.848), ("nDCG(gain=exp)@10", 0.949),
    ("nDCG(gain={0:0,1:1,2:3,3:7})@10", 0.949), ("nDCG(discount=jk2002,base=2)@10", 0.932),
    ("nDCG(discount=jk2002,base=3)@10", 0.965), ("nDCG(discount=reciprocal)@10", 0.943),
    ("nDCG(discount=power,p=2)@10", 0.950), ("nDCG@1", 1.000), ("nDCG@3", 0.978), ("nDCG", 0.961),
])
def test_graded(measure, expected):
    """Grades 3, 2, 3, 0, 1, 2 under each gain, discount and cutoff of the guide."""
    assert value(QRELS, RUN, measure, "graded") == pytest.approx(expected, abs=5e-4)


def test_graded_idcg():
    dcg = value(QRELS, RUN, "DCG@10", "graded")
    assert dcg / value(QRELS, RUN, "nDCG@10", "graded") == pytest.approx(7.141, abs=5e-4)
    dcg = value(QRELS, RUN, "DCG(gain=exp)@10", "graded")
    assert dcg / value(QRELS, RUN, "nDCG(gain=exp)@10", "graded") == pytest.approx(14.595, abs=5e-4)


def test_three():
    assert value(QRELS, RUN, "DCG(gain=exp)@10", "three") == 3.5
    assert value(QRELS, RUN, "nDCG(gain=exp)@10", "three") == pytest.approx(0.964, abs=5e-4)
    assert value(QRELS, RUN, "nDCG@10", "three") == pytest.approx(0.950, abs=5e-4)


@pytest.mark.parametrize("rank,ndcg10,ndcg,rr,jk2", [
    (1, 1.0, 1.0, 1.0, 1.0), (2, 0.631, 0.631, 0.5, 1.0), (3, 0.5, 0.5, 0.333, 0.631),
    (10, 0.289, 0.289, 0.1, 0.301), (11, 0.0, 0.279, 0.091, 0.0)])
def test_single_relevant_document(rank, ndcg10, ndcg, rr, jk2):
    q = f"single-at-{rank}"
    for measure, expected in [("nDCG@10", ndcg10), ("nDCG", ndcg), ("RR", rr),
                              ("nDCG(discount=jk2002,base=2)@10", jk2)]:
        assert value(QRELS, RUN, measure, q) == pytest.approx(expected, abs=5e-4), measure


def test_ideal_judged_versus_retrieved():
    qrels, run = {"t": {"p1": 2, "p2": 0, "p3": 1}}, {"t": {"p2": 2.0, "p3": 1.0}}
    assert value(qrels, run, "DCG(gain=exp)@10") == pytest.approx(0.631, abs=5e-4)
    assert value(qrels, run, "nDCG(gain=exp)@10") == pytest.approx(0.174, abs=5e-4)
    assert value(qrels, run, "nDCG(gain=exp,ideal=retrieved)@10") == pytest.approx(0.631, abs=5e-4)


def test_unjudged_zero_versus_condensed():
    qrels, run = {"t": {"p1": 2, "p3": 1}}, {"t": {"p1": 3.0, "p2": 2.0, "p3": 1.0}}
    assert value(qrels, run, "nDCG(gain=exp)@10") == pytest.approx(0.964, abs=5e-4)
    assert value(qrels, run, "nDCG(gain=exp,unjudged=condensed)@10") == 1.0
    assert value(qrels, run, "Judged@10") == pytest.approx(0.667, abs=5e-4)


@pytest.mark.parametrize("measure,expected", [
    ("nDCG@10", 0.631), ("nDCG(unjudged=condensed)@10", 1.0), ("AP", 0.5), ("AP(unjudged=condensed)", 1.0),
    ("Bpref", 1.0), ("Judged@10", 0.75), ("NumRel", 1)])
def test_negative_grades(measure, expected):
    qrels, run = {"1": {"a": -1, "b": 1, "c": 0}}, {"1": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}}
    assert value(qrels, run, measure) == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize("ties,rr", [("trec", 0.5), ("input", 1.0)])
def test_tie_order(ties, rr):
    qrels, run = {"1": {"10": 1, "9": 0}}, {"1": {"10": 0.5, "9": 0.5}}
    assert value(qrels, run, "RR", ties=ties) == rr


@pytest.mark.parametrize("complete,no_relevant,mean", [
    (False, "zero", 0.5), (True, "zero", 1 / 3), (False, "skip", 1.0), (True, "skip", 0.5)])
def test_queries_averaged(complete, no_relevant, mean):
    qrels = {"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 0}}
    run = {"1": {"a": 1.0}, "3": {"c": 1.0}}
    assert value(qrels, run, "nDCG@10", complete=complete, no_relevant=no_relevant) == pytest.approx(mean)


def test_canonical_string():
    res = judged.evaluate(QRELS, {"r": RUN}, ["nDCG@10", "AP(rel=2)", "NumRel", "Bpref", "nDCG(discount=power,p=2)"])
    engine = "ties=score-desc,docid-desc queries=run-and-qrels no-relevant=zero identical-ids=kept"
    assert res.conventions == {
        "nDCG@10": f"nDCG@10 gain=linear discount=log2(rank+1) ideal=judged unjudged=zero {engine}",
        "AP(rel=2)": f"AP rel>=2 unjudged=zero {engine}",
        "NumRel": f"NumRel rel>=1 {engine} aggregate=sum",
        "Bpref": f"Bpref rel>=1 unjudged=ignored {engine}",
        "nDCG(discount=power,p=2)": f"nDCG gain=linear discount=1/rank^2 ideal=judged unjudged=zero {engine}",
    }
    with open(Path(__file__).resolve().parents[2] / "docs" / "conventions.md") as fh:
        assert f"nDCG@10 gain=linear discount=log2(rank+1) ideal=judged unjudged=zero {engine}\n" in fh.read()
