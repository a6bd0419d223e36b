"""Exp gain (2^grade - 1) at the edge of float64 (issue 34: grades >= 1024 with
nDCG(gain=exp) gave numpy overflow warnings and an unexplained NaN mean).

2^1023 - 1 is the largest exp gain a float64 holds (2^1024 - 1 is past 1.8e308): up to grade
1023 the values are exact float arithmetic, the same bits on both back ends; a grade of 1024
or more, or gains whose sum is past the largest float, is a ConventionError naming the grade
or the query, never inf or NaN. The peers have no better number: trec_eval and pytrec_eval
have no exp gain, and gdeval (perl) and ranx (numba) compute inf / inf = NaN.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import judged
from judged.cli import main
from judged.core.conventions import Gain, exp_gain
from judged.core.errors import ConventionError


@pytest.fixture(autouse=True)
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow or invalid-value RuntimeWarning fails the test
        yield


def test_exp_gain_up_to_1023_and_refused_past_it():
    assert exp_gain(np.array([0.0, 1.0, 3.0, 53.0])).tolist() == [0.0, 1.0, 7.0, 2.0 ** 53 - 1]
    assert exp_gain(np.array([1023.0]))[0] == 2.0 ** 1023  # - 1 is below float64's resolution there
    with pytest.raises(ConventionError, match=r"grade 1024 has no finite exp gain.*up to 1023"):
        exp_gain(np.array([2.0, 1024.0]))
    with pytest.raises(ConventionError, match="grade 5000"):
        Gain.parse("exp")(np.array([5000.0, np.nan]))


def test_gain_mapping_refuses_infinite_gains():
    with pytest.raises(ConventionError, match="finite"):
        Gain.parse({1: float("inf")})


def test_grade_1023_is_exact_on_both_back_ends(backend):
    """q1: a (grade 1023) ranked second under b (grade 3): DCG = 7 / log2(2) + 2^1023 / log2(3),
    the ideal 2^1023 / log2(2) + 7 / log2(3); the ratio computed here by hand in float64."""
    qrels = {"q1": {"a": 1023, "b": 3}, "q2": {"c": 1}}
    run = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}}
    r = judged.evaluate(qrels, {"r": run}, ["nDCG(gain=exp)@10", "DCG(gain=exp)@10"])
    values = r.runs["r"].values
    big = 2.0 ** 1023
    dcg = 7.0 / math.log2(2) + big / math.log2(3)
    ideal = big / math.log2(2) + 7.0 / math.log2(3)
    assert values["DCG(gain=exp)@10"].tolist() == [dcg, 1.0]
    assert values["nDCG(gain=exp)@10"].tolist() == [dcg / ideal, 1.0]


@pytest.mark.parametrize("measure", ["nDCG(gain=exp)@10", "nDCG(gain=exp)", "DCG(gain=exp)@5", "ERR@10",
                                     "nERR@10", "nDCG(gain=exp,unjudged=condensed)@10"])
def test_grade_1024_is_refused_on_both_back_ends(backend, measure):
    qrels = {"q1": {"a": 1024, "b": 3}, "q2": {"a": 2, "c": 1}}
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"a": 1.0}}
    with pytest.raises(ConventionError, match="grade 1024 has no finite exp gain"):
        judged.evaluate(qrels, {"r": run}, [measure])


def test_grade_1024_in_a_query_not_evaluated_changes_nothing(backend):
    """The refusal is for grades that enter a score: a query the run does not rank is not
    evaluated (queries=run-and-qrels), as a grade a gain mapping lacks there."""
    qrels = {"q1": {"a": 1024}, "q2": {"a": 2, "c": 1}}
    r = judged.evaluate(qrels, {"r": {"q2": {"a": 1.0}}}, ["nDCG(gain=exp)@10"])
    assert r.runs["r"].values["nDCG(gain=exp)@10"].tolist() == [3.0 / (3.0 + 1.0 / math.log2(3))]


def test_gains_adding_up_past_the_largest_float_name_the_query(backend):
    qrels = {"q1": {"a": 1, "b": 0}, "q7": {"a": 1023, "b": 1023, "c": 1023}}
    run = {"q1": {"a": 1.0}, "q7": {"a": 1.0}}
    with pytest.raises(ConventionError, match="ideal DCG of query q7 is past the largest float64"):
        judged.evaluate(qrels, {"r": run}, ["nDCG(gain=exp)@10"])


def test_cli_one_line(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1024\nq1 0 b 3\nq2 0 a 2\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq2 Q0 a 1 1 t\n")
    rc = main(["eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", "nDCG(gain=exp)@10"])
    err = capsys.readouterr().err
    assert rc == 2 and err.splitlines() == [
        "judged: error: grade 1024 has no finite exp gain: 2^1024 - 1 is past the largest float64 (about 1.8e308); "
        "exp gain takes grades up to 1023: use gain=linear or a gain mapping for this grade scale"]
