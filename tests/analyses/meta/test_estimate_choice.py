"""Which estimate configuration a collection's own runs recommend (judged.analyses.meta.estimate_choice):
the rule judged's default follows, applied to the user's collection."""

import json
import math

import pytest

from judged.analyses.meta.estimate_choice import CONFIGS, DEFAULT_CONFIG, choose, parse_configs, row_of
from judged.cli import main
from judged.core.errors import ConventionError
from test_protocols import collection, write


def cell(zero, condensed, estimate, estimated=6, abstained=0):
    return {"mae": {"zero": zero, "condensed": condensed, "estimate": estimate}, "estimated": estimated,
            "abstained": [{"run": f"r{i}", "why": "fallback"} for i in range(abstained)]}


def test_the_rule_every_cell_below_both_baselines_the_lowest_mean_wins():
    cells = {
        "loro-logit:run": {"a": cell(0.02, 0.03, 0.01), "b": cell(0.01, 0.02, 0.015)},  # loses b to zero
        "loro-logit:midpoint": {"a": cell(0.02, 0.03, 0.012), "b": cell(0.01, 0.02, 0.008)},
        "run-prior:run": {"a": cell(0.02, 0.03, 0.005), "b": cell(0.01, 0.02, 0.009)},
    }
    choice, reason, lost = choose(cells, "shift")
    assert choice == "run-prior:run" and f"the default is {DEFAULT_CONFIG}" in reason
    assert lost["loro-logit:run"] == ["b"] and lost["loro-logit:midpoint"] == []
    none, why, _ = choose({"loro-logit:run": cells["loro-logit:run"]}, "shift")
    assert none is None and "loro-logit:run lost 1 of 2" in why


def test_abstaining_on_more_than_a_quarter_loses_the_cell_except_in_few():
    cells = {"loro-logit:run": {"a": cell(0.02, 0.03, 0.01, estimated=2, abstained=2)}}
    assert choose(cells, "shift")[0] is None and choose(cells, "few")[0] == "loro-logit:run"
    assert choose(cells, {"a": "few"})[0] == "loro-logit:run"  # one protocol per cell: several protocols at once
    assert row_of(cells["loro-logit:run"]["a"], "loro")["too_many_abstained"]
    # a cell where it estimated nothing neither wins nor loses; with nothing estimated anywhere, no choice
    empty = {"loro-logit:run": {"a": cell(math.nan, math.nan, math.nan, estimated=0, abstained=3)}}
    assert row_of(empty["loro-logit:run"]["a"], "few")["beats"] is None and choose(empty, "few")[0] is None


def test_parse_configs():
    assert parse_configs("all") == list(CONFIGS)
    assert parse_configs("loro-logit:midpoint, loro-logit:run,loro-logit:midpoint") == ["loro-logit:midpoint",
                                                                                      "loro-logit:run"]
    with pytest.raises(ConventionError, match="loro-logit:middle"):
        parse_configs("loro-logit:middle")


def test_meta_holdout_estimates_cli(tmp_path, capsys):
    q, runs = write(tmp_path, collection(seed=4))  # both cells estimated (seed 3: one fails the estimate's check)
    args = ["meta", "holdout", q, *runs, "-k", "10", "--protocol", "shift", "--seeds", "1", "--samples", "10",
            "--estimates", "loro-logit:run,loro-logit:midpoint"]
    assert main(args + ["--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert list(d["configs"]) == ["loro-logit:run", "loro-logit:midpoint"] and d["protocol"] == "shift"
    assert set(d["configs"]["loro-logit:run"]) == {"weaker half", "random half 1"}
    row = d["configs"]["loro-logit:run"]["weaker half"]
    assert row["beats"] == (row["mae_estimate"] < min(row["mae_zero"], row["mae_condensed"]))
    assert (d["choice"] is None) == all(d["lost"][c] for c in d["configs"])
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "use: " in out and "loro-logit:midpoint" in out
    assert main(args + ["--estimate", "run-prior"]) == 2
    assert "leave out --estimate" in capsys.readouterr().err
