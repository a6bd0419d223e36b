"""Measures beyond trec_eval equal their reference implementations, per query, on the
generated adversarial collections (scores made distinct: the references break ties their
own ways): ERR@k = gdeval's (ir_measures' provider; gdeval prints 5 decimals), RBP, SDCG
and INST = cwl_eval's (through ir_measures), Compat = ir_measures' compat provider,
RBPResidual = cwl_eval's residual; nERR by hand. ir_measures scores a qrels query missing
from the run as 0: those are left out (judged evaluates the queries of both)."""

import logging
import warnings

import numpy as np
import pytest

import judged
from judged.core.measures import Measure
from synth import make_collection

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("cwl")
from ir_measures import providers  # noqa: E402

# judged's string, provider, ir_measures' string, tolerance
PAIRS = [
    ("ERR@10", "gdeval", "ERR@10", 5.1e-6), ("ERR@5", "gdeval", "ERR@5", 5.1e-6),
    ("RBP", "cwl_eval", "RBP(rel=1,p=0.8)", 1e-12), ("RBP(p=0.95,rel=2)", "cwl_eval", "RBP(rel=2,p=0.95)", 1e-12),
    ("SDCG(max_rel=3)@10", "cwl_eval", "SDCG(max_rel=3)@10", 1e-12),
    ("INST(max_rel=3)", "cwl_eval", "INST(max_rel=3)", 1e-12),
    ("INST(max_rel=3,T=2)", "cwl_eval", "INST(max_rel=3,T=2)", 1e-12),
    ("INSQ(max_rel=3)", "cwl_eval", "INSQ(max_rel=3)", 1e-12), ("INSQ(max_rel=2,T=3)", "cwl_eval", "INSQ(max_rel=2,T=3)", 1e-12),
    ("Compat", "compat", "Compat(p=0.95)", 1e-12),
    ("Compat(p=0.8,normalize=False)", "compat", "Compat(p=0.8,normalize=False)", 1e-12),
]


def _distinct(run: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {q: {d: float(s) for d, s in zip(docs, rng.permutation(len(docs)) + 1.0)} for q, docs in run.items()}


@pytest.fixture(autouse=True)
def quiet():
    logging.disable(logging.WARNING)  # cwl_eval's notes on the grade range
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize("seed", range(20))
def test_equal_to_the_reference_implementations(seed, backend):
    c = make_collection(seed, max_queries=10, max_docs=40)
    run = _distinct(c.run, seed)
    ours = judged.evaluate(c.qrels, {"r": run}, [p[0] for p in PAIRS]).runs["r"]
    qids = ours.qids.tolist()
    compared = 0
    for given, provider, theirs_name, tol in PAIRS:
        m = ir_measures.parse_measure(theirs_name)
        theirs = {x.query_id: x.value for x in providers.registry[provider].evaluator([m], c.qrels).iter_calc(run)}
        for q, value in theirs.items():
            if q not in run:
                continue  # ir_measures' 0 for a query the run lacks
            assert ours.values[given][qids.index(q)] == pytest.approx(value, abs=tol), (given, q)
            compared += 1
    assert compared > 0


@pytest.mark.parametrize("seed", range(10))
def test_rbp_residual_is_cwl_evals(seed):
    from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
    from cwl.ruler.ranking import Ranking

    c = make_collection(seed, max_queries=10, max_docs=40)
    run = _distinct(c.run, seed)
    ours = judged.evaluate(c.qrels, {"r": run}, ["RBP(p=0.8)", "RBPResidual(p=0.8)"]).runs["r"]
    for i, q in enumerate(ours.qids.tolist()):
        ranked = sorted(run[q], key=lambda d: -run[q][d])
        gains = [np.nan if d not in c.qrels[q] or c.qrels[q][d] < 0 else float(c.qrels[q][d] >= 1) for d in ranked]
        metric = RBPCWLMetric(0.8)
        metric.residuals = True
        value = metric.measure(Ranking(q, np.array(gains), np.ones(len(gains))))
        assert ours.values["RBP(p=0.8)"][i] == pytest.approx(value, abs=1e-12)
        # cwl_eval's best case pads to 1000 ranks: its residual lacks p^1000 (1e-97 here)
        assert ours.values["RBPResidual(p=0.8)"][i] == pytest.approx(metric.residual_expected_utility, abs=1e-12)


def test_err_and_nerr_by_hand():
    # grades 0 then 2, max_rel 4: R = (2^2 - 1) / 16 = 3/16 at rank 2 after a first document
    # that satisfies nobody: ERR = 3/16 / 2 = 0.09375; the ideal puts the 2 first: 3/16, nERR 0.5
    r = judged.evaluate({"q": {"a": 0, "b": 2}}, {"r": {"q": {"a": 2.0, "b": 1.0}}}, ["ERR@10", "nERR@10", "ERR@1"])
    assert r.aggregate("r", "ERR@10") == 0.09375 and r.aggregate("r", "nERR@10") == 0.5
    assert r.aggregate("r", "ERR@1") == 0.0


def test_rbp_and_its_residual_by_hand():
    # p = 0.5, ranking: relevant, unjudged, non-relevant (3 ranks): RBP = 0.5 * 1 = 0.5;
    # residual = 0.5 * 0.5 (the hole at rank 2) + 0.5^3 (below rank 3) = 0.375
    r = judged.evaluate({"q": {"a": 1, "c": 0}}, {"r": {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}},
                        ["RBP(p=0.5)", "RBPResidual(p=0.5)"])
    assert r.aggregate("r", "RBP(p=0.5)") == 0.5 and r.aggregate("r", "RBPResidual(p=0.5)") == 0.375


def test_rbp_and_err_bounds_over_the_holes_by_hand():
    # the hole at rank 2 relevant: RBP 0.5 + 0.5 * 0.5 = 0.75 (the residual without the tail
    # 0.5^3); ERR@3 with grades 1, hole, 0 (max_rel 4, holes up to the qrels' top grade 2):
    # R1 = 1/16; the hole at grade 2 adds 3/16 * 15/16 / 2
    qrels, run = {"q": {"a": 1, "c": 0, "z": 2}}, {"r": {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}}
    r = judged.evaluate(qrels, run, ["RBP(p=0.5,unjudged=max)", "RBP(p=0.5,unjudged=min)", "ERR(unjudged=min)@3",
                                     "ERR(unjudged=max)@3"])
    assert r.aggregate("r", "RBP(p=0.5,unjudged=max)") == 0.75 and r.aggregate("r", "RBP(p=0.5,unjudged=min)") == 0.5
    assert r.aggregate("r", "ERR(unjudged=min)@3") == 1 / 16
    assert r.aggregate("r", "ERR(unjudged=max)@3") == pytest.approx(1 / 16 + 3 / 16 * 15 / 16 / 2)


def test_parameters_spelled_as_ir_measures():
    assert str(Measure.parse("RBP(p=0.9)")) == "RBP(p=0.9)" and Measure.parse("RBP").option("persistence") == 0.8
    assert Measure.parse("Compat").option("persistence") == 0.95
    assert Measure.parse("ERR@10").option("max_rel") == 4
    from judged.core.errors import MeasureError

    with pytest.raises(MeasureError, match="SDCG needs max_rel="):
        Measure.parse("SDCG@10")
