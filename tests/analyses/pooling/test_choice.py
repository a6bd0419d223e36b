"""Choosing a pooling strategy by what it saved (judged.analyses.pooling.choice): a strategy
is chosen over depth pooling only if it recovered the ranking with fewer judgments at
every tolerance; the figures below are made up to show each case."""

import pytest

from judged.analyses.pooling.choice import RULE_TOLERANCES, beats, choose

T = RULE_TOLERANCES


def test_the_rule_tolerances():
    assert T == (0.005, 0.01, 0.02)


def test_a_saving_at_some_tolerances_only_is_not_enough():
    # the held-back collection of issue 31: mm saves at 0.005 but needs 37.5% more at 0.01
    got = choose({"depth": {0.005: 12000, 0.01: 8000, 0.02: 6000},
                  "mm": {0.005: 11500, 0.01: 11000, 0.02: 5000}}, T)
    assert got.strategy == "depth" and got.beaten_by == ()
    assert got.versus["mm"] == pytest.approx([-500 / 12000, 0.375, -1000 / 6000])
    assert "no strategy" in got.reason and "0.005, 0.01, 0.02" in got.reason


def test_a_tie_is_not_a_saving():
    got = choose({"depth": {0.01: 8000}, "mtf": {0.01: 8000}}, [0.01])
    assert got.strategy == "depth"


def test_the_best_of_those_that_win_everywhere_by_their_worst_ratio():
    # a: ratios 0.5, 0.95 (worst 0.95); b: 0.8, 0.8 (worst 0.8); c loses at 0.02
    recovered = {"depth": {0.01: 1000, 0.02: 2000}, "a": {0.01: 500, 0.02: 1900}, "b": {0.01: 800, 0.02: 1600},
                 "c": {0.01: 100, 0.02: 2100}}
    got = choose(recovered, [0.01, 0.02])
    assert got.strategy == "b" and got.beaten_by == ("b", "a")
    assert got.reason == ("it recovered the ranking with fewer judgments than depth pooling at every tolerance "
                          "(0.01: -20.0%, 0.02: -20.0%)")
    assert got.to_dict()["beat_depth_everywhere"] == ["b", "a"] and got.to_dict()["strategy"] == "b"


def test_never_recovered():
    # a strategy that never recovers never wins; depth pooling that never does is beaten by any recovery
    assert not beats(None, 10) and beats(10, None) and beats(9, 10) and not beats(10, 10)
    got = choose({"depth": {0.01: None}, "mm": {0.01: 4000}, "ts": {0.01: None}}, [0.01])
    assert got.strategy == "mm" and got.versus["mm"] == [None] and "depth never recovered" in got.reason


def test_without_depth_there_is_nothing_to_compare_with():
    got = choose({"mm": {0.01: 10}}, [0.01])
    assert got.strategy is None and "add --strategy depth" in got.reason


def test_cells_of_several_collections():
    # the rule over (collection, protocol, tolerance) cells, as benchmarks/pooling_real.py applies it
    cells = [("a", "loro", 0.01), ("b", "loro", 0.01)]
    got = choose({"depth": dict(zip(cells, [100, 100])), "mtf": dict(zip(cells, [90, 80]))}, cells)
    assert got.strategy == "mtf" and "a loro 0.01: -10.0%" in got.reason
