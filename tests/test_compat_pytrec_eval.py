"""judged.compat.pytrec_eval returns pytrec_eval's keys and values (to 1e-9) on random
collections with float32-exact scores, where the two engines' conventions coincide."""

import pytest

import judged.compat.pytrec_eval as compat
from collections_gen import random_collection

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURE_SETS = [
    {"ndcg_cut", "map", "map_cut", "P", "recall", "recip_rank", "Rprec", "bpref", "success",
     "num_rel", "num_ret", "num_rel_ret", "ndcg"},
    {"ndcg_cut.10", "P.5,10", "recall_100", "map_cut_10", "success_10"},
    {"ndcg_cut_3", "P_1", "recall.2,7"},
]


def assert_same(ours: dict, theirs: dict):
    assert set(ours) == set(theirs)
    for q in theirs:
        assert set(ours[q]) == set(theirs[q]), q
        for key, value in theirs[q].items():
            assert ours[q][key] == pytest.approx(value, abs=1e-9), (q, key)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("measures", range(len(MEASURE_SETS)))
def test_same_keys_and_values(seed, measures):
    qrels, run = random_collection(seed)
    ms = MEASURE_SETS[measures]
    assert_same(compat.RelevanceEvaluator(qrels, ms).evaluate(run),
                pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run))


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("level", [2, 3])
def test_relevance_level(seed, level):
    qrels, run = random_collection(seed)
    ms = MEASURE_SETS[0]
    assert_same(compat.RelevanceEvaluator(qrels, ms, relevance_level=level).evaluate(run),
                pytrec_eval.RelevanceEvaluator(qrels, ms, relevance_level=level).evaluate(run))


@pytest.mark.parametrize("seed", range(10))
def test_judged_docs_only(seed):
    qrels, run = random_collection(seed)
    ms = MEASURE_SETS[0]
    assert_same(compat.RelevanceEvaluator(qrels, ms, judged_docs_only_flag=True).evaluate(run),
                pytrec_eval.RelevanceEvaluator(qrels, ms, judged_docs_only_flag=True).evaluate(run))


def test_family_names_expand_to_trec_eval_default_cutoffs():
    qrels, run = random_collection(0)
    keys = set(next(iter(compat.RelevanceEvaluator(qrels, {"ndcg_cut", "success"}).evaluate(run).values())))
    assert keys == {f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)} | \
                   {"success_1", "success_5", "success_10"}


def test_unsupported_measure_is_a_value_error_as_in_pytrec_eval():
    with pytest.raises(ValueError, match="infAP"):
        compat.RelevanceEvaluator({"q": {"d": 1}}, {"infAP"})
    assert "ndcg_cut" in compat.supported_measures and compat.supported_measures <= set(pytrec_eval.supported_measures)


def test_empty_run_and_helpers():
    ev = compat.RelevanceEvaluator({"q": {"d": 1}}, {"map"})
    assert ev.evaluate({}) == {} == pytrec_eval.RelevanceEvaluator({"q": {"d": 1}}, {"map"}).evaluate({})
    assert compat.compute_aggregated_measure("num_ret", [1, 2]) == 3.0
    assert compat.compute_aggregated_measure("map", [0.5, 1.0]) == 0.75
    lines = ["q1 0 d1 2", "q1 0 d2 0"]
    assert compat.parse_qrel(lines) == pytrec_eval.parse_qrel(lines)
    lines = ["q1 Q0 d1 1 2.5 t", "q1 Q0 d2 2 1.5 t"]
    assert compat.parse_run(lines) == pytrec_eval.parse_run(lines)


def test_scores_compared_as_doubles_not_float32():
    # 0.5 and 0.5 + 1e-9 are one float32: pytrec_eval sees a tie and puts 'b' first (docid
    # descending); judged sees two scores and puts 'a' first.
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"a": 0.5 + 1e-9, "b": 0.5}}
    assert pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["q"]["recip_rank"] == 0.5
    assert compat.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["q"]["recip_rank"] == 1.0
