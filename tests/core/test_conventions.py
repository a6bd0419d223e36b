"""A convention passed by name is checked where it enters: every public entry point
refuses an unknown value with one ConventionError naming the argument, the value and the
choices (judged.core.conventions.validate, the one place that knows them), before any work."""

from __future__ import annotations

import pytest

import judged
import judged.compat.pytrec_eval as pytrec_eval_compat
from judged.core.conventions import CONVENTIONS, Settings
from judged.core.errors import ConventionError
from judged.analyses.holes.unjudged import holes_report
from judged.analyses.pooling.strategies import pool

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
RUN = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}}
RUNS = {"base": RUN, "new": {"q1": {"b": 1.0, "a": 2.0}, "q2": {"c": 1.0}}}

ENTRY_POINTS = {
    "evaluate": (lambda **kw: judged.evaluate(QRELS, RUN, ["AP"], **kw),
                 {"ties", "complete", "no_relevant", "ignore_identical_ids", "on_duplicate"}),
    "compare": (lambda **kw: judged.compare(QRELS, RUNS, ["AP"], permutations=10, **kw),
                {"ties", "no_relevant", "ignore_identical_ids", "on_duplicate", "negative"}),
    # the analyses take Settings only: a bad value is refused where the Settings is made
    "holes_report": (lambda **kw: holes_report(QRELS, RUNS, settings=Settings(**{"complete": True, **kw})),
                     {"ties", "complete", "no_relevant", "ignore_identical_ids", "on_duplicate", "negative"}),
    "pool": (lambda **kw: pool(QRELS, RUNS, settings=Settings(**kw)), {"ties", "on_duplicate", "negative"}),
    "read_run": (lambda **kw: judged.read_run(RUN, **kw), {"on_duplicate"}),
    "read_qrels": (lambda **kw: judged.read_qrels(QRELS, **kw), {"on_duplicate"}),
    "calc_aggregate": (lambda **kw: judged.calc_aggregate(["AP"], QRELS, RUN, **kw),
                       {"ties", "complete", "no_relevant", "ignore_identical_ids"}),
}
BAD = {"ties": "bogus", "no_relevant": "none", "on_duplicate": "bogus", "negative": "ignore",
       "complete": "yes", "ignore_identical_ids": 1}
CASES = [pytest.param(entry, name, id=f"{entry}-{name}") for entry, (_, names) in ENTRY_POINTS.items()
         for name in sorted(names)]


@pytest.mark.parametrize("entry, name", CASES)
def test_an_unknown_value_is_refused_where_it_enters(entry, name):
    call, _ = ENTRY_POINTS[entry]
    with pytest.raises(ConventionError) as exc:
        call(**{name: BAD[name]})
    message = str(exc.value)
    assert len(message.splitlines()) == 1
    assert f"{name}={BAD[name]!r}" in message or f"{name} must be True or False, not {BAD[name]!r}" == message
    choices, _ = CONVENTIONS[name]
    if choices != (False, True):
        assert f"(choose from {', '.join(choices)})" in message


@pytest.mark.parametrize("entry, name", CASES)
def test_every_known_value_is_taken(entry, name):
    call, _ = ENTRY_POINTS[entry]
    for value in CONVENTIONS[name][0]:
        if (name, value) == ("ties", "rank"):
            continue  # dicts have no rank column to order by
        call(**{name: value})


def test_on_duplicate_bogus_is_refused_even_without_a_duplicate():
    """Issue #14: on_duplicate='bogus' was accepted silently (it was only looked at once a
    repeated pair turned up)."""
    with pytest.raises(ConventionError, match="on_duplicate='bogus'"):
        judged.evaluate(QRELS, RUN, ["AP"], on_duplicate="bogus")


def test_spark_entry_refuses_before_any_spark_work():
    pytest.importorskip("pyspark")
    from judged.spark import evaluate

    with pytest.raises(ConventionError, match="on_duplicate='bogus'"):
        evaluate(None, None, ["AP"], on_duplicate="bogus")
    with pytest.raises(ConventionError, match="ties='x'"):
        evaluate(None, None, ["AP"], ties="x")


def test_compat_pytrec_eval_refuses_its_own_bad_arguments():
    with pytest.raises(TypeError, match="relevance_level should be positive"):
        pytrec_eval_compat.RelevanceEvaluator(QRELS, {"map"}, relevance_level=0)
    assert isinstance(pytrec_eval_compat.BadRelevanceLevel("x"), ConventionError)


def test_settings_is_the_one_value_every_entry_point_takes():
    """Issue 17: the conventions as one frozen, validated value; the keywords are its sugar
    and give the same numbers; a convention given both ways with different values is refused."""
    from dataclasses import replace

    from judged.core.manifest import Manifest

    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"d": 0}}
    runs = {"x": {"q1": {"a": 1.0, "b": 1.0, "z": 0.5}, "q2": {"c": 0.2, "z": 0.9}},
            "y": {"q1": {"b": 2.0, "a": 1.0}, "q3": {"d": 1.0}}}
    s = Settings(ties="input", no_relevant="skip", depth_cut=2, on_duplicate="max")
    kw = dict(ties="input", no_relevant="skip", depth_cut=2, on_duplicate="max")
    assert judged.evaluate(qrels, runs, ["AP", "nDCG@2"], settings=s).to_dict(True) == \
        judged.evaluate(qrels, runs, ["AP", "nDCG@2"], **kw).to_dict(True)
    c1 = judged.compare(qrels, runs, ["AP"], settings=s, holes=False, permutations=50).to_dict()
    c2 = judged.compare(qrels, runs, ["AP"], holes=False, permutations=50, **kw).to_dict()
    assert {k: v for k, v in c1.items() if k != "provenance"} == {k: v for k, v in c2.items() if k != "provenance"}
    complete = replace(s, complete=True)
    assert holes_report(qrels, runs, k=2, samples=5, settings=complete).to_dict() == \
        holes_report(qrels, runs, k=2, samples=5, settings=Settings(complete=True, **kw)).to_dict()
    frozen = Manifest.freeze(qrels, ["AP"], settings=replace(s, depth_cut=None)).to_dict()
    assert frozen["conventions"] == Manifest.freeze(qrels, ["AP"], settings=Settings(ties="input", no_relevant="skip")
                                                    ).to_dict()["conventions"]
    with pytest.raises(ConventionError, match="ties='rank' and settings.ties='input'"):
        judged.evaluate(qrels, runs, ["AP"], ties="rank", settings=s)
    assert judged.evaluate(qrels, runs, ["AP"], ties="input", settings=s).settings == s  # the same value: no conflict
    with pytest.raises(ConventionError, match="on_duplicate='bogus'"):
        Settings(on_duplicate="bogus")
    assert Settings(on_duplicate="max").canonical() == Settings().canonical()  # what is read, not how it is scored
