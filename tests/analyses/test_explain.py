"""explain's warnings count this query's documents only; bounds are not worked by hand."""

import pytest

from judged.core.errors import MeasureError
from judged.analyses.explain import explain

QRELS = {"1": {"d1": 2, "d2": 0, "d3": 1}, "2": {"d1": 1, "d4": 3}}
# query 1 retrieves 3 documents (d5 unjudged); query 2 follows with d9 unjudged
RUN = {"1": {"d1": 3.0, "d5": 2.0, "d3": 1.0}, "2": {"d4": 2.0, "d9": 1.0}}


@pytest.mark.parametrize("measure", ["Judged@5", "nDCG@10", "P@5"])
def test_unjudged_warning_stays_inside_the_query(measure):
    ex = explain(QRELS, RUN, "1", measure)
    assert [w for w in ex.warnings if "unjudged" in w] == [
        "1 of the top 3 documents is unjudged and counted as not relevant (Judged@3 = 0.67); "
        "judging them could change this score"]


def test_unjudged_warning_respects_the_cutoff():
    ex = explain(QRELS, RUN, "1", "nDCG@1")  # d1 alone: judged
    assert not [w for w in ex.warnings if "unjudged" in w]


@pytest.mark.parametrize("measure", ["nDCG(unjudged=max)@10", "nDCG(unjudged=min)@10", "P(unjudged=max)@5"])
def test_bounds_point_to_holes(measure):
    with pytest.raises(MeasureError, match="judged holes"):
        explain(QRELS, RUN, "1", measure)


def test_a_diversity_measure_reads_the_subtopics(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text("q 1 a 1\nq 1 b 1\nq 2 b 1\nq 2 c 1\n")
    r = tmp_path / "r.txt"
    r.write_text("q Q0 a 1 3 x\nq Q0 b 2 2 x\nq Q0 c 3 1 x\n")
    e = explain(str(q), str(r), "q", "alpha-nDCG@3")
    assert round(e.value, 4) == 0.8561
    assert [row["subtopics"] for row in e.rows] == [["1"], ["1", "2"], ["2"]]
