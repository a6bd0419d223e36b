""""Did you mean ...?" for mistyped measure names and parameters (issue 34: no
"did you mean nDCG@10?" for nDGC@10), from :mod:`judged.core.suggest`."""

from __future__ import annotations

import pytest

from judged.core.errors import MeasureError
from judged.core.measures import Measure
from judged.core.suggest import closest, did_you_mean


def test_closest_ignores_case_and_maps_spellings():
    assert closest("ndgc", ["nDCG", "DCG"]) == "nDCG"
    assert closest("mapp", {"map": "AP", "ndcg": "nDCG"}) == "AP"
    assert closest("zzz", ["nDCG"]) is None
    assert did_you_mean("--per-qeury", ["--per-query", "--format"]) == " (did you mean --per-query?)"
    assert did_you_mean("zzz", ["nDCG"]) == ""


@pytest.mark.parametrize("text, meant", [
    ("nDGC@10", "unknown measure 'nDGC' in 'nDGC@10': did you mean 'nDCG@10'?"),
    ("ndgc(gain=exp)@5", "did you mean 'nDCG(gain=exp)@5'?"),
    ("mapp", "did you mean 'AP'?"),  # trec_eval's map is judged's AP
    ("ndcg_cutt.10", "cannot parse measure 'ndcg_cutt.10': did you mean 'ndcg_cut.10'?"),  # trec_eval's form
    ("ndcg_cutt_10", "did you mean 'ndcg_cut_10'?"),  # pytrec_eval's key
    ("iprec_at_recal_0.10", "did you mean 'iprec_at_recall_0.10'?"),
    ("Rprec_mlt.0.2,1", "did you mean 'Rprec_mult.0.2,1'?"),
    ("nDCG(gian=exp)@10", "nDCG takes no parameter gian ('nDCG(gian=exp)@10') (did you mean gain?)"),
    ("RBP(persistance=0.9)", "(did you mean persistence?)"),
])
def test_mistyped_measures_get_the_closest_name(text, meant):
    with pytest.raises(MeasureError) as info:
        Measure.parse(text)
    assert meant in str(info.value)


def test_nothing_close_lists_the_measures():
    with pytest.raises(MeasureError, match=r"unknown measure 'xyz' in 'xyz@3' \(known: nDCG, DCG, P,") as info:
        Measure.parse("xyz@3")
    assert "did you mean" not in str(info.value)
