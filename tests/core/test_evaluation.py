"""judged.core.evaluation: what a Result keeps of a run read into memory."""

import numpy as np

from judged.core.evaluation import ALIGNMENT, evaluate

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}}
RUN = {"q1": {"a": 0.5, "c": 0.9, "z": 0.7}, "q2": {"y": 1.0, "x": 0.2}}


def test_alignment_is_made_again_on_first_use_unless_whole_runs():
    # the values are kept; the alignment (four numbers per ranked row) is made again when
    # asked, equal to the one kept with whole_runs=True
    lazy = evaluate(QRELS, {"r": RUN}, ["nDCG@10", "AP"]).runs["r"]
    kept = evaluate(QRELS, {"r": RUN}, ["nDCG@10", "AP"], keep=ALIGNMENT).runs["r"]
    assert lazy._aligned is None and kept.aligned is not None
    assert {m: v.tolist() for m, v in lazy.values.items()} == {m: v.tolist() for m, v in kept.values.items()}
    a, b = lazy.aligned, kept.aligned
    for column in ("q", "pos", "row", "offsets"):
        assert np.array_equal(getattr(a.ranked, column), getattr(b.ranked, column))
    assert np.array_equal(a.ranked.grade, b.ranked.grade, equal_nan=True)
    assert a.qids.tolist() == b.qids.tolist() == ["q1", "q2"]
    assert a.annotations.keys() == b.annotations.keys()
    assert lazy.aligned is a  # made once


def test_evaluate_keywords_are_settings_and_side_files_sugar():
    # every keyword evaluate took before still works: the conventions build Settings, the side
    # files one SideFiles; whole_runs=/keep_ranks= are deprecated spellings of keep=
    import pytest

    from judged.core.checks import SideFiles
    from judged.core.conventions import Settings
    from judged.core.errors import ConventionError, UsageError
    from judged.core.evaluation import Top

    sugar = evaluate(QRELS, {"r": RUN}, ["AP"], ties="input", complete=True, abstain_marker="NONE")
    value = evaluate(QRELS, {"r": RUN}, ["AP"], settings=Settings(ties="input", complete=True),
                     side=SideFiles(abstain_marker="NONE"))
    assert sugar.settings == value.settings and sugar.checks.abstain_marker == value.checks.abstain_marker == "NONE"
    assert sugar.runs["r"].values["AP"].tolist() == value.runs["r"].values["AP"].tolist()
    with pytest.warns(DeprecationWarning, match="keep=ALIGNMENT or keep=Top"):
        cut = evaluate(QRELS, {"r": RUN}, ["AP"], whole_runs=True, keep_ranks=1).runs["r"]
    assert cut.aligned.ranked.pos.max() == 0
    assert evaluate(QRELS, {"r": RUN}, ["AP"], keep=Top(1)).runs["r"].aligned.ranked.pos.max() == 0
    with pytest.raises(TypeError, match="unexpected keyword argument 'tie'"):
        evaluate(QRELS, {"r": RUN}, ["AP"], tie="input")
    with pytest.raises(UsageError, match="give the side files once"):
        evaluate(QRELS, {"r": RUN}, ["AP"], side=SideFiles(), scale=None)
    with pytest.raises(ConventionError, match="give each convention once"):
        evaluate(QRELS, {"r": RUN}, ["AP"], settings=Settings(), ties="input")
