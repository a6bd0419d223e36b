"""Every measure pytrec_eval has (trec_eval's set) evaluates through judged.compat.pytrec_eval
with pytrec_eval's keys and values, per query (to 1e-9; NaN where trec_eval divides 0 by 0)
and in the aggregate (geometric means included), on the generated adversarial collections
(ties, docids whose string order is not their numeric order, negative grades, queries on one
side only), at relevance levels 1 and 2 and with -J; on both back ends. Then the judged
names of the same measures, and the hand-worked cases where trec_eval 10 and pytrec_eval
(trec_eval 9's code) differ."""

import math

import numpy as np
import pytest

import judged
import judged.compat.pytrec_eval as compat
from judged.core.measures import Measure
from judged.core.measures.registry import FAMILIES
from synth import make_collection, random_collection

pytrec_eval = pytest.importorskip("pytrec_eval")

EVERY = sorted(pytrec_eval.supported_measures)
SETTINGS = [{}, {"relevance_level": 2}, {"judged_docs_only_flag": True}]


def _collection(i):
    if i < 12:
        return random_collection(i)
    c = make_collection(i, max_queries=10, max_docs=40)
    return c.qrels, c.run


def _same(a: float, b: float) -> bool:
    return a == pytest.approx(b, abs=1e-9) or (math.isnan(a) and math.isnan(b))


def test_every_pytrec_eval_measure_is_supported():
    assert set(EVERY) <= compat.supported_measures
    compat.RelevanceEvaluator({"q": {"d": 1}}, set(EVERY))  # none raises UnsupportedMeasure


@pytest.mark.parametrize("collection", range(30))
@pytest.mark.parametrize("setting", range(len(SETTINGS)))
def test_every_measure_equals_pytrec_eval_per_query_and_in_the_aggregate(collection, setting, backend):
    qrels, run = _collection(collection)
    kw = SETTINGS[setting]
    ours = compat.RelevanceEvaluator(qrels, set(EVERY), **kw).evaluate(run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(EVERY), **kw).evaluate(run)
    assert set(ours) == set(theirs)
    for q in theirs:
        assert set(ours[q]) == set(theirs[q]), q
        for key, value in theirs[q].items():
            assert _same(ours[q][key], value), (q, key, ours[q][key], value)
    for key in next(iter(theirs.values()), {}):
        ours_all = compat.compute_aggregated_measure(key, [v[key] for v in ours.values()])
        theirs_all = pytrec_eval.compute_aggregated_measure(key, [v[key] for v in theirs.values()])
        assert _same(ours_all, theirs_all), key


@pytest.mark.parametrize("collection", range(12, 24))
def test_judged_aggregates_equal_trec_eval_including_geometric_means(collection):
    """judged.evaluate's own aggregate (Measure.aggregate_of: sum, mean, geometric mean) of
    the judged measure each key stands for equals pytrec_eval's aggregate of its values."""
    qrels, run = _collection(collection)
    expanded = compat.expand(EVERY)
    measures = {key: m for key, m in expanded.items() if m is not None}
    result = judged.evaluate(qrels, {"r": run}, list(dict.fromkeys(str(m) for m in measures.values())))
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(EVERY)).evaluate(run)
    for key, m in measures.items():
        if key.startswith(("iprec_at_recall", "11pt_avg")) or key == "num_q":
            continue  # judged's own take trec_eval 10's lround rounding; num_q below
        expected = pytrec_eval.compute_aggregated_measure(key, [v[key] for v in theirs.values()])
        assert result.aggregate("r", str(m)) == pytest.approx(expected, rel=1e-12, abs=1e-12), key
    assert result.aggregate("r", "NumQ") == len(theirs)
    assert Measure.parse("gm_map").aggregate == "geometric-mean"


def test_geometric_mean_floors_each_query_at_trec_evals_minimum():
    m = Measure.parse("GMAP")
    assert m.aggregate_of([0.5, 0.0]) == pytest.approx(math.sqrt(0.5 * 1e-5))
    assert m.aggregate_of([]) == 0.0


def test_recall_levels_trec_eval_10_rounds_where_pytrec_eval_adds_0_9():
    # R = 11 relevant, one retrieved at rank 2: the 0.1 level needs lround(1.1) = 1 relevant
    # document in trec_eval 10 (precision 1/2 there), floor(1.1 + 0.9) = 2 in trec_eval 9 and
    # pytrec_eval (not retrieved: 0)
    qrels = {"q": {f"r{i}": 1 for i in range(11)} | {"n": 0}}
    run = {"q": {"n": 2.0, "r0": 1.0}}
    r = judged.evaluate(qrels, {"a": run}, ["IPrec(recall=0.1)", "IPrec(recall=0.1,rounding=trec9)", "AP11"])
    assert r.aggregate("a", "IPrec(recall=0.1)") == 0.5
    assert r.aggregate("a", "IPrec(recall=0.1,rounding=trec9)") == 0.0
    assert r.aggregate("a", "AP11") == pytest.approx(2 * 0.5 / 11)  # levels 0.0 and 0.1
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate(run)["q"]
    assert theirs["iprec_at_recall_0.10"] == 0.0 and theirs["iprec_at_recall_0.00"] == 0.5


def test_set_measures_by_hand():
    # 4 retrieved, 1 relevant of them, R = 2: set P 1/4, recall 1/2, F1 = 2PR/(P+R) = 1/3,
    # set_map = 1*1/(4*2), relative P = 1/min(4, 2), utility = 1 - 3
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    run = {"q": {"b": 4.0, "a": 3.0, "d": 2.0, "e": 1.0}}
    r = judged.evaluate(qrels, {"a": run}, ["SetP", "SetR", "SetF", "SetAP", "SetRelP", "Utility", "SetF(beta=0.5)",
                                            "NumNonRelJudgedRet", "RelP@2", "Rprec(mult=2)", "BinG"])
    got = {g: r.aggregate("a", g) for g in r.measures}
    assert got == pytest.approx({"SetP": 0.25, "SetR": 0.5, "SetF": 1 / 3, "SetAP": 0.125, "SetRelP": 0.5,
                                 "Utility": -2.0, "SetF(beta=0.5)": 1.5 * 0.25 * 0.5 / (0.5 * 0.25 + 0.5),
                                 "NumNonRelJudgedRet": 1.0, "RelP@2": 0.5, "Rprec(mult=2)": 0.25,
                                 "BinG": (1 / np.log2(3)) / 2})


@pytest.mark.parametrize("name", ["SetP", "IPrec(recall=0.3)", "AP11", "G", "RnDCG", "nDCGRel", "GMAP", "RelP@5",
                                  "Rprec(mult=0.6)"])
def test_new_measures_print_parse_and_name_their_trec_eval_measure(name):
    m = Measure.parse(name)
    assert Measure.parse(str(m)) == m and m.family is FAMILIES[m.name]
    assert Measure.parse(m.trec_eval_name.replace("_0.", ".0.") if "recall" in name or "mult" in name
                         else m.trec_eval_name).name == m.name


def test_recall_and_mult_are_checked():
    from judged.core.errors import MeasureError

    with pytest.raises(MeasureError, match="IPrec needs recall="):
        Measure.parse("IPrec")
    with pytest.raises(MeasureError, match=r"recall must lie in \[0, 1\]"):
        Measure.parse("IPrec(recall=2)")
    assert Measure.parse("IPrec@0.5") == Measure.parse("IPrec(recall=0.5)")  # ir_measures spelling
    with pytest.raises(MeasureError, match="rounding must be one of lround, trec9"):
        Measure.parse("AP11(rounding=up)")


# trec_eval's name.values forms pytrec_eval reads; each key and value equal to its
FORMS = ["ndcg_cut.5,10", "P.5,10", "recall.5,100", "map_cut.10,20", "success.1,5", "relative_P.3,7",
         "set_F.0.5", "iprec_at_recall.0.10,0.50", "Rprec_mult.0.2,1.4"]


@pytest.mark.parametrize("collection", range(12, 24))
def test_trec_eval_parameter_forms_equal_pytrec_eval(collection):
    qrels, run = _collection(collection)
    for forms in [FORMS, ["set_F.2", "P.5"]]:
        ours = compat.RelevanceEvaluator(qrels, set(forms)).evaluate(run)
        theirs = pytrec_eval.RelevanceEvaluator(qrels, set(forms)).evaluate(run)
        assert set(ours) == set(theirs)
        for q in theirs:
            assert set(ours[q]) == set(theirs[q]), q
            assert all(_same(ours[q][key], value) for key, value in theirs[q].items()), q


def test_trec_eval_parameter_forms_by_hand():
    # ndcg.1=3.5: grade 1 gains 3.5, every other grade its own (m_ndcg.c); q1 ranks a (2), an
    # unjudged x, b (1), c (0): DCG = 2 + 3.5 / log2 4; the ideal 3.5, 3.5, 2 gives
    # 3.5 + 3.5 / log2 3 + 2 / 2. utility.2,-1,0,0: 2 * relevant retrieved - non-relevant retrieved.
    qrels = {"q1": {"a": 2, "b": 1, "c": 0, "d": 1}}
    run = {"q1": {"a": 1.0, "x": 0.7, "b": 0.5, "c": 0.2}}
    ours = compat.RelevanceEvaluator(qrels, {"ndcg.1=3.5", "utility.2,-1,0,0", "set_F.0.5"}).evaluate(run)["q1"]
    assert ours["ndcg"] == pytest.approx(3.75 / (3.5 + 3.5 / math.log2(3) + 1), abs=1e-15)
    assert ours["utility"] == 2 * 2 - 2
    P, R = 2 / 4, 2 / 3
    assert ours["set_F"] == pytest.approx(1.5 * P * R / (0.5 * P + R))  # (beta + 1) P R / (beta P + R)
    # the same forms through judged.evaluate: one key per measure named, trec_eval's output names
    result = judged.evaluate(qrels, {"r": run}, ["P.1,2", "ndcg.0=0,1=3.5", "set_F.0.5", "iprec_at_recall.0.5"])
    assert list(result.measures) == ["P_1", "P_2", "ndcg.0=0,1=3.5", "set_F.0.5", "iprec_at_recall.0.5"]
    assert [str(m) for m in result.measures.values()] == ["P@1", "P@2", "nDCG(gains={1:3.5})", "SetF(beta=0.5)",
                                                         "IPrec(recall=0.5)"]
    assert result.aggregate("r", "ndcg.0=0,1=3.5") == ours["ndcg"]


def test_trec_eval_output_names_of_the_forms(tmp_path, capsys):
    from judged.cli import main

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 a 2\nq1 0 b 1\n")
    run.write_text("q1 Q0 a 1 2.0 r\nq1 Q0 x 2 1.0 r\n")
    assert main(["eval", str(qrels), str(run), "-m", "P.1,2", "-m", "set_F.0.5", "-m", "ndcg.1=3.5",
                 "--format", "trec_eval"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.split()[1] == "all"]
    assert names == ["runid", "num_q", "P_1", "P_2", "set_F", "ndcg"]  # trec_eval -m ... prints these


@pytest.mark.parametrize("text,why", [
    ("P.5,10", "names 2 measures"), ("P.x", "cutoffs are positive integers"), ("ndcg.1", "level=gain pairs"),
    ("utility.1,-1,0,1", "collection's size"), ("utility.1,2", "4 values"), ("map.5", "without parameters")])
def test_trec_eval_parameter_forms_refused_with_a_reason(text, why):
    with pytest.raises(judged.core.errors.MeasureError, match=why):
        Measure.parse(text)
