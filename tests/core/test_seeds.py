"""The product brief's worked examples, computed by the engine."""

import math

import pytest

import judged
from judged.demo import worked_examples


@pytest.fixture(scope="module")
def per_query():
    qrels, run = worked_examples()
    r = judged.evaluate(qrels, {"demo": run}, ["nDCG@10", "nDCG(gain=exp)@10", "DCG@10", "DCG(gain=exp)@10"])
    pq = r.per_query()
    return {(row.qid, row.measure): row.value for row in pq.itertuples()}


def test_graded_linear_gain(per_query):
    # grades 3,2,3,0,1,2: DCG 6.861, ideal 3,3,2,2,1,0 gives IDCG 7.141, nDCG 0.961
    assert per_query[("graded", "DCG@10")] == pytest.approx(6.861, abs=5e-4)
    assert per_query[("graded", "nDCG@10")] == pytest.approx(0.961, abs=5e-4)
    assert 6.861 / 7.141 == pytest.approx(per_query[("graded", "nDCG@10")], abs=1e-3)


def test_graded_exponential_gain(per_query):
    # the same ranking with gain 2^g - 1 scores 0.949, not 0.961
    assert per_query[("graded", "nDCG(gain=exp)@10")] == pytest.approx(0.949, abs=5e-4)


def test_three_passages_exponential(per_query):
    # grades 2,0,1, gain 2^g-1: DCG = 3 + 0 + 1/log2(4) = 3.5; IDCG = 3 + 1/log2(3) = 3.631
    assert per_query[("three", "DCG(gain=exp)@10")] == pytest.approx(3.5, abs=1e-12)
    assert per_query[("three", "nDCG(gain=exp)@10")] == pytest.approx(3.5 / (3 + 1 / math.log2(3)), abs=1e-12)
    assert per_query[("three", "nDCG(gain=exp)@10")] == pytest.approx(0.964, abs=5e-4)


@pytest.mark.parametrize("rank,expected", [(1, 1.000), (2, 0.631), (3, 0.500), (10, 0.289), (11, 0.0)])
def test_single_relevant_document(per_query, rank, expected):
    # one relevant document: IDCG = 1, so nDCG@10 = 1/log2(1 + rank), 0 below rank 10
    assert per_query[(f"single-at-{rank}", "nDCG@10")] == pytest.approx(expected, abs=5e-4)
