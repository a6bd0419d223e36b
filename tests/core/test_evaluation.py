"""judged.core.evaluation: what a Result keeps of a run read into memory."""

import numpy as np

from judged.core.evaluation import evaluate

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}}
RUN = {"q1": {"a": 0.5, "c": 0.9, "z": 0.7}, "q2": {"y": 1.0, "x": 0.2}}


def test_alignment_is_made_again_on_first_use_unless_whole_runs():
    # the values are kept; the alignment (four numbers per ranked row) is made again when
    # asked, equal to the one kept with whole_runs=True
    lazy = evaluate(QRELS, {"r": RUN}, ["nDCG@10", "AP"]).runs["r"]
    kept = evaluate(QRELS, {"r": RUN}, ["nDCG@10", "AP"], whole_runs=True).runs["r"]
    assert lazy._aligned is None and kept.aligned is not None
    assert {m: v.tolist() for m, v in lazy.values.items()} == {m: v.tolist() for m, v in kept.values.items()}
    a, b = lazy.aligned, kept.aligned
    for column in ("q", "pos", "row", "offsets"):
        assert np.array_equal(getattr(a.ranked, column), getattr(b.ranked, column))
    assert np.array_equal(a.ranked.grade, b.ranked.grade, equal_nan=True)
    assert a.qids.tolist() == b.qids.tolist() == ["q1", "q2"]
    assert a.annotations.keys() == b.annotations.keys()
    assert lazy.aligned is a  # made once
