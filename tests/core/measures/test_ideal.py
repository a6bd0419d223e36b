"""IDCG over the judgments is computed once per qrels index for every query, and equals,
bit for bit, the ideal built from the evaluated queries' own judgments."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import judged
from judged.core.align import align
from judged.core.conventions import Settings
from judged.core.measures import Measure
from judged.core.measures.dcg import idcg

from synth import make_collection

IDEALS = ["nDCG@10", "nDCG", "nDCG@1", "nDCG(gain=exp)@5", "nDCG(discount=jk2002,base=3)@10",
          "nDCG(discount=power,p=0.5)", "nDCG(gain={-1:0,0:0,1:1,2:3,3:9})@10"]


@pytest.mark.parametrize("seed", range(10))
def test_index_ideal_equals_the_evaluated_queries_ideal(seed, backend):
    """The index-wide ideal (compiled kernel, or numpy) against the numpy ideal of the
    evaluated queries' judgments."""
    coll = make_collection(seed, max_queries=12, max_docs=50)
    qrels, run = judged.read_qrels(coll.qrels), judged.read_run(coll.run)
    aligned = align(qrels, run, Settings(complete=bool(seed % 2)))
    assert aligned.judgments.index is qrels.index
    alone = dataclasses.replace(aligned, judgments=dataclasses.replace(aligned.judgments, index=None, codes=None,
                                                                       _memo={}))
    for text in IDEALS:
        m = Measure.parse(text)
        shared = idcg(m, aligned, aligned.ranked)
        assert shared.view(np.uint64).tolist() == idcg(m, alone, alone.ranked).view(np.uint64).tolist(), text
    assert len([key for key in qrels.index._memo if key[0] == "idcg"]) == len(IDEALS)
    assert all(v is not None for key, v in qrels.index._memo.items() if key[0] == "idcg")


def test_a_grade_without_gain_outside_the_evaluated_queries_is_not_an_error():
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 5}}
    run = {"q1": {"a": 1.0, "b": 0.5}}
    m = "nDCG(gain={0:0,1:1})@10"
    r = judged.evaluate(qrels, run, [m])
    assert r.runs["run"].qids.tolist() == ["q1"] and r.runs["run"].values[m].tolist() == [1.0]
    with pytest.raises(judged.core.errors.ConventionError, match=r"grade\(s\) \[5\]"):
        judged.evaluate(qrels, run, [m], complete=True)


@pytest.mark.parametrize("seed", range(6))
def test_index_grade_counts_equal_the_evaluated_queries_counts(seed):
    """R per relevance level and Bpref's N, read from the index's counts of every query."""
    coll = make_collection(seed, max_queries=12, max_docs=50)
    qrels = judged.read_qrels(coll.qrels)
    aligned = align(qrels, judged.read_run(coll.run), Settings(complete=bool(seed % 2)))
    own = dataclasses.replace(aligned.judgments, index=None, codes=None, _memo={})
    for level in (-1, 0, 1, 2, 3, 4):
        assert aligned.judgments.count_at_least(level).tolist() == own.count_at_least(level).tolist()
        assert aligned.judgments.count_nonrelevant(level).tolist() == own.count_nonrelevant(level).tolist()
    assert ("count", 2, None) in qrels.index._memo
