"""docs/meta-evaluation.md quotes the tools' output on the synthetic collection (seed 0):
the figures it quotes are recomputed here, so the page cannot drift from the code."""

import pathlib

import pytest

from judged.analyses.meta import (discriminative_power, preference_agreement, ranking_stability, simulate_discount,
                         synthetic_collection)

DOC = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "meta-evaluation.md").read_text()


@pytest.fixture(scope="module")
def coll():
    return synthetic_collection(seed=0)


def test_power_table(coll):
    res = discriminative_power(coll.qrels, coll.runs)
    got = {m: res.significant(m) for m in res.measures}
    assert got == {"nDCG@10": 23, "nDCG(gain=exp)@10": 23, "nDCG(discount=reciprocal)@10": 23,
                   "nDCG(discount=power,p=0.5)@10": 24, "P@10": 24, "RR": 19, "AP": 25}
    pooled = discriminative_power(coll.qrels_pooled, coll.runs, ["nDCG@10", "RR"])
    assert (pooled.significant("nDCG@10"), pooled.significant("RR")) == (22, 16)
    assert "| nDCG@10 (linear gain, log2 discount) | 23/28 (82.1%) | 23/28 | 22/28 (78.6%) |" in DOC
    assert "| RR | 19/28 (67.9%) | 19/28 | 16/28 (57.1%) |" in DOC


def test_agreement_table(coll):
    res = preference_agreement(coll.preferences, coll.qrels, coll.runs)
    nd, rr = res.tally("nDCG@10"), res.tally("RR")
    assert (nd.agree, nd.decided, nd.ties) == (212, 259, 19) and (rr.agree, rr.decided) == (145, 197)
    one = res.tally("nDCG@10", "one-side-nothing")
    assert (one.agree, one.decided) == (46, 60)
    assert "| nDCG@10 | 212/259 | 81.9% | 3.3e-26 | 19 | 76.7% (46/60) | 83.4% (166/199) |" in DOC


def test_stability_table(coll):
    res = ranking_stability(coll.qrels_pooled, coll.runs, "nDCG@10", versus_qrels=coll.qrels)
    assert (round(res.tau, 3), round(res.tau_ap, 3), len(res.swaps())) == (0.643, 0.524, 5)
    assert "| nDCG@10, pooled qrels → complete qrels | 0.643 | 0.524 | 5/28 (17.9%) |" in DOC


def test_discount_table():
    sim = simulate_discount()
    row = {d: [f"{b:.3f} / {w:.3f}, {s:.1%}" for b, w, s in zip(sim.mean_better[i], sim.mean_worse[i],
                                                                 sim.separation[i])]
           for i, d in enumerate(sim.discounts)}
    assert row["log2(rank+1)"][-1] == "0.948 / 0.940, 100.0%"
    assert row["1/rank^2"][-1] == "0.822 / 0.821, 52.5%"
    assert "| log2(rank+1) | 0.856 / 0.830, 61.0% | 0.892 / 0.872, 71.5% | 0.926 / 0.914, 87.5% |" in DOC
