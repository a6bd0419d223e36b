"""``infAP`` is trec_eval's infAP (qrels grade < 0 = pooled but not judged), to the bit,
against pytrec_eval (trec_eval's C code) on generated collections."""

import numpy as np
import pytest
import pytrec_eval

from judged import evaluate
from judged.core.measures import Measure

from synth import random_collection


def sampled_collection(seed: int, share_unjudged: float):
    """A random collection whose qrels mark a share of the pool as pooled-but-unjudged (-1
    or -2); every qrels query keeps a grade >= 0 (trec_eval crashes on all-negative queries)."""
    rng = np.random.default_rng(1000 + seed)
    qrels, run = random_collection(seed, n_queries=14, n_docs=80)
    for qid, docs in qrels.items():
        names = sorted(docs)
        for d in names[1:]:
            if rng.random() < share_unjudged:
                docs[d] = int(rng.choice([-1, -2]))
    return qrels, run


def per_query(qrels, run, rel):
    res = evaluate(qrels, {"r": run}, [f"infAP(rel={rel})" if rel != 1 else "infAP"])
    frame = res.per_query()
    return {str(q): float(v) for q, v in zip(frame["qid"], frame["value"])}


@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("share", [0.0, 0.3, 0.7])
def test_infap_is_trec_eval_infap(seed, share, rel):
    qrels, run = sampled_collection(seed, share)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"infAP"}, relevance_level=rel).evaluate(run)
    ours = per_query(qrels, run, rel)
    assert set(ours) == set(theirs)
    for q, v in ours.items():
        assert v == theirs[q]["infAP"], (q, v, theirs[q]["infAP"])  # bit for bit


def test_worked_example():
    # ranks: x (not pooled), a (relevant), b (pooled, unjudged), c (non-relevant), d (relevant)
    qrels = {"q": {"a": 1, "b": -1, "c": 0, "d": 1}}
    run = {"q": {"x": 5.0, "a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    # a at j=1: 1/2 + (1/2)(0/1)(...) = 0.5; d at j=4: 1/5 + (4/5)(3/4)((1+e)/(2+2e)) = 0.2 + 0.3 = 0.5
    # (1 + e)/(2 + 2e) is exactly 1/2; infAP = (0.5 + 0.5)/2 = 0.5 where AP is (1/2 + 2/5)/2 = 0.45
    res = evaluate(qrels, {"r": run}, ["infAP", "AP"]).mean()
    assert res.loc["r", "infAP"] == pytest.approx(0.5, abs=1e-15) and res.loc["r", "AP"] == pytest.approx(0.45)
    assert pytrec_eval.RelevanceEvaluator(qrels, {"infAP"}).evaluate(run)["q"]["infAP"] == pytest.approx(0.5)


def test_without_negative_grades_infap_is_ap():
    qrels, run = random_collection(3)
    res = evaluate(qrels, {"r": run}, ["infAP", "AP"]).per_query().pivot(index="qid", columns="measure",
                                                                          values="value")
    assert len(res) > 5 and np.allclose(res["infAP"], res["AP"], atol=1e-12)


def test_name_and_convention():
    m = Measure.parse("infap")
    assert str(m) == "infAP" and "negative-grade=pooled-unjudged" in m.convention()
    with pytest.raises(Exception, match="no cutoff"):
        Measure.parse("infAP@10")
