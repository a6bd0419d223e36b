"""judged.compat.pytrec_eval returns pytrec_eval's keys and values (to 1e-9) on random
collections with float32-exact scores, where the two engines' conventions coincide, on
both of judged's back ends; and refuses what pytrec_eval refuses."""

import subprocess
import sys

import pytest

import judged.compat.pytrec_eval as compat
from synth import random_collection

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURE_SETS = [
    {"ndcg_cut", "map", "map_cut", "P", "recall", "recip_rank", "Rprec", "bpref", "success",
     "num_rel", "num_ret", "num_rel_ret", "ndcg", "infAP"},
    {"ndcg_cut.10", "P.5,10", "recall_100", "map_cut_10", "success_10"},
    {"ndcg_cut_3", "P_1", "recall.2,7"},
]


def assert_same(ours: dict, theirs: dict):
    assert set(ours) == set(theirs)
    for q in theirs:
        assert set(ours[q]) == set(theirs[q]), q
        for key, value in theirs[q].items():
            assert ours[q][key] == pytest.approx(value, abs=1e-9, nan_ok=True), (q, key)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("measures", range(len(MEASURE_SETS)))
def test_same_keys_and_values(seed, measures, backend):
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
    with pytest.raises(ValueError, match="no_such_measure"):
        compat.RelevanceEvaluator({"q": {"d": 1}}, {"no_such_measure"})
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


@pytest.mark.parametrize("seed", range(20))
def test_a_query_with_an_empty_ranking_is_scored_as_pytrec_eval_scores_it(seed, backend):
    """Issue #14: a query listed with {} was dropped; pytrec_eval scores it on an empty
    ranking (0, num_rel its count), so it counts in the mean."""
    qrels, run = random_collection(seed)
    qids = sorted(q for q in qrels if q in run)
    for q in qids[1::3]:  # a third of the evaluated queries, never all of them
        run[q] = {}
    run["nowhere"] = {}  # in neither: left out by both
    ms = MEASURE_SETS[0]
    ours, theirs = compat.RelevanceEvaluator(qrels, ms).evaluate(run), pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    assert_same(ours, theirs)
    assert all(ours[q]["map"] == 0 and ours[q]["num_rel"] == sum(g >= 1 for g in qrels[q].values()) for q in qids[1::3])
    mean = compat.compute_aggregated_measure("map", [v["map"] for v in ours.values()])
    assert mean == pytest.approx(pytrec_eval.compute_aggregated_measure("map", [v["map"] for v in theirs.values()]))


@pytest.mark.parametrize("measures, keys", [
    ({"P", "P.5"}, {"P_5"}),
    ({"P_5", "P"}, {"P_5"}),
    ({"P.5,10", "P_20"}, {"P_5", "P_10", "P_20"}),
    ({"ndcg_cut", "ndcg_cut.10"}, {"ndcg_cut_10"}),
    ({"recall.10", "recall", "map"}, {"recall_10", "map"}),
    ({"success"}, {"success_1", "success_5", "success_10"}),
    ({"map_cut.100,5"}, {"map_cut_5", "map_cut_100"}),
])
def test_family_with_and_without_cutoffs_gives_pytrec_eval_keys(measures, keys):
    """pytrec_eval pools the cutoffs named for a family; its default cutoffs apply only
    when none is named ({"P", "P.5"} gives P_5 alone, not P_5 ... P_1000)."""
    qrels, run = random_collection(1)
    ours = compat.RelevanceEvaluator(qrels, measures).evaluate(run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert set(next(iter(theirs.values()))) == keys
    assert_same(ours, theirs)


@pytest.mark.parametrize("measure", ["P.0", "ndcg_cut.0", "recall_0", "map_cut.5,0", "success.0"])
def test_cutoff_zero_is_refused_where_pytrec_eval_aborts(measure):
    """pytrec_eval takes P.0 at construction, then trec_eval prints 'Negative cutoff
    detected' and the process aborts on evaluate(); judged refuses it at construction."""
    with pytest.raises(ValueError, match="cutoff 0 .*Negative cutoff detected"):
        compat.RelevanceEvaluator({"q": {"d": 1}}, {measure})
    code = ("import pytrec_eval; pytrec_eval.RelevanceEvaluator({'q': {'d': 1}}, {%r}).evaluate({'q': {'d': 1.0}})"
            % measure)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Negative cutoff detected" in done.stderr


@pytest.mark.parametrize("level", [0, False, -1, 1.5])
def test_relevance_level_below_one_is_refused_as_pytrec_eval_refuses_it(level):
    with pytest.raises(TypeError, match="^Argument relevance_level should be positive.$"):
        compat.RelevanceEvaluator({"q": {"d": 1}}, {"map"}, relevance_level=level)
    with pytest.raises(TypeError):
        pytrec_eval.RelevanceEvaluator({"q": {"d": 1}}, {"map"}, relevance_level=0)


@pytest.mark.parametrize("measures", [
    {"iprec_at_recall_0.10", "Rprec_mult_0.20", "set_F_0.5"},  # issue 34: pytrec_eval's own key spellings
    {"iprec_at_recall_0.1", "iprec_at_recall.0.5"}, {"Rprec_mult_1.00", "Rprec_mult.0.2,2"}, {"set_F_0.25"},
    {"official"}, {"set"}, {"all_trec"}, {"all_trec", "P_7"},  # its nicknames; a family named again: those only
])
def test_pytrec_eval_spellings_and_nicknames(measures, backend):
    """pytrec_eval reads name_values as name.values (its _combine_measures) and expands its
    nicknames; judged.compat refused iprec_at_recall_0.10, Rprec_mult_0.20 and set_F_0.5."""
    qrels, run = random_collection(3)
    ours = compat.RelevanceEvaluator(qrels, measures).evaluate(run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert_same(ours, theirs)
    assert compat.supported_nicknames["all_trec"] == pytrec_eval.supported_nicknames["all_trec"]
    assert compat.supported_nicknames["official"] == pytrec_eval.supported_nicknames["official"]


INF = float("inf")


@pytest.mark.parametrize("seed", range(8))
def test_infinite_scores_are_ranked_as_pytrec_eval_ranks_them(seed, backend):
    """Decided for issue 34: +inf and -inf are ordered doubles (trec_eval's comparison puts
    +inf first, -inf last, equal infinities tie and go by docid): scored as pytrec_eval
    scores them; judged.compat refused them."""
    import random

    rng = random.Random(seed)
    qrels, run = random_collection(seed)
    for q, docs in run.items():
        for d in rng.sample(sorted(docs), min(3, len(docs))):
            docs[d] = rng.choice([INF, -INF])
    ms = MEASURE_SETS[0] | {"set_F", "iprec_at_recall", "Rprec_mult", "utility"}
    assert_same(compat.RelevanceEvaluator(qrels, ms).evaluate(run), pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run))


def test_nan_scores_are_refused_with_the_reason():
    """Decided for issue 34: a NaN compares false with every score, so pytrec_eval ranks it
    wherever its sort happens to leave it (here: after 2.0 among [nan, 1.0, 2.0], but
    d, c, b, a by docid among [nan, nan, 2.0, nan]); judged refuses it, a ValueError naming
    the query and the document, and says what to do."""
    qrels = {"q1": {"a": 1, "b": 2, "c": 0, "d": 1}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate({"q1": {"a": NAN, "b": NAN, "c": 2.0, "d": NAN}})
    assert theirs["q1"]["map"] == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)  # d, c, b, a: docid order, c's 2.0 ignored
    with pytest.raises(ValueError, match=r"query 'q1' docid 'a': score nan has no place in a ranking .*-inf ranks"):
        compat.RelevanceEvaluator(qrels, {"map"}).evaluate({"q1": {"a": NAN, "b": 1.0, "c": 2.0}})


NAN = float("nan")


def test_num_rel_of_an_empty_ranking_is_the_count_as_pytrec_eval_once_warm(backend):
    """Issue 34 saw num_rel 2 here and 0 from pytrec_eval. pytrec_eval's answer depends on its
    process: until a ranked document has been scored, trec_eval 9's result buffers are not
    allocated, form_res_rels fails on an empty ranking and the query keeps a failed
    computation's values (num_rel 0, iprec_at_recall NaN at every level); afterwards the
    same call gives the count. judged gives the defined answer, in both cases."""
    qrels, ms = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}, {"num_rel", "map", "iprec_at_recall"}
    run = {"q1": {}, "q2": {"c": 1.0}}
    ours = compat.RelevanceEvaluator(qrels, ms).evaluate(run)
    assert ours["q1"]["num_rel"] == 2.0
    code = ("import json, pytrec_eval\n"
            f"e = pytrec_eval.RelevanceEvaluator({qrels!r}, {ms!r})\n"
            f"cold = e.evaluate({run!r})['q1']\nwarm = e.evaluate({run!r})['q1']\n"
            "print(json.dumps([cold['num_rel'], warm['num_rel'], cold['iprec_at_recall_0.10']]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[0.0, 2.0, NaN]", done.stderr  # a fresh process: 0, then the count
    pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate({"q2": {"c": 1.0}})  # warm in this process
    assert_same(ours, pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run))
