"""The release gate (issue 33): every rule's pass, fail and undecided on the shipped example
collections (docs/examples: bm25, dense, tuned; docs/examples/beyond: the checks beyond the
score), the figures cross-checked against scipy and judged's own commands."""

import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sp

import judged
from judged.analyses.gate import EXIT_CODES, Policy, gate
from judged.analyses.pooling.strategies import pool as judged_pool
from judged.core.errors import ParseError, UsageError
from judged.core.manifest import Manifest, ManifestError

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
BEYOND = EXAMPLES / "beyond"


def run(name, folder=EXAMPLES):
    return str(folder / name)


QRELS, MORE = run("qrels.txt"), run("qrels-more.txt")


def test_non_inferiority_passes_on_the_one_sided_t_bound_scipy_gives():
    # tuned.run loses 0.0131 nDCG@10 on average (13/25/2); its one-sided 95% lower bound, -0.0248,
    # is above -0.05: non-inferior by that margin. The bound is scipy's one-sided t interval's.
    r = gate({"margin": {"non_inferiority": 0.05}}, QRELS, run("bm25.run"), run("tuned.run"))
    (rule,) = r.rules
    c = judged.evaluate(QRELS, {n: run(n) for n in ("bm25.run", "tuned.run")}, ["nDCG@10"], complete=True)
    d = c.runs["tuned.run"].values["nDCG@10"] - c.runs["bm25.run"].values["nDCG@10"]
    low = sp.ttest_1samp(d, 0, alternative="greater").confidence_interval(0.95).low
    assert rule.value == pytest.approx(low, rel=1e-12) and round(low, 4) == -0.0248
    assert rule.detail["mean_delta"] == pytest.approx(-0.0131, abs=5e-5)
    assert (rule.name, rule.verdict, rule.threshold, r.verdict, r.exit_code) == ("non-inferiority", "pass", -0.05,
                                                                                  "pass", 0)
    assert "lower bound -0.0248 > -0.0500" in rule.line() and rule.could_flip is False
    assert (rule.detail["wins"], rule.detail["losses"], rule.detail["ties"]) == (13, 25, 2)


def test_a_tighter_margin_or_a_higher_confidence_fails():
    # the margin 0.025: -0.0248 clears it at 95% (so close that judging tuned's 15 holes could undo
    # it: undecided unless the policy ignores the holes); at 99% the bound is -0.0299 and does not
    close = {"non_inferiority": 0.025}
    assert gate({"margin": close}, QRELS, run("bm25.run"), run("tuned.run")).exit_code == 3
    assert gate({"margin": close, "holes": {"could_flip": "ignore"}}, QRELS, run("bm25.run"),
                run("tuned.run")).exit_code == 0
    for margin in ({"non_inferiority": 0.02}, {"non_inferiority": 0.025, "confidence": 0.99}, {"superiority": 0.0}):
        r = gate({"margin": margin, "holes": {"could_flip": "ignore"}}, QRELS, run("bm25.run"), run("tuned.run"))
        assert r.verdict == "fail" and r.exit_code == 1 and "<=" in r.rules[0].figure, margin
    assert gate({"margin": {"superiority": 0.0}}, QRELS, run("bm25.run"), run("tuned.run")).rules[0].name == \
        "superiority"


def test_judging_the_holes_could_flip_dense_so_the_gate_is_undecided_until_they_are_judged():
    # docs/comparing.md's story: dense loses 0.2166 on the judged documents, 45% of its top ten is
    # unjudged, and judging them could make Δ anything in [-0.2411, +0.2576] (exact, judged compare)
    policy = {"margin": {"non_inferiority": 0.05}}
    r = gate(policy, QRELS, run("bm25.run"), run("dense.run"))
    rule = r.rules[0]
    assert (rule.verdict, r.verdict, r.exit_code) == ("undecided", "undecided", 3)
    assert rule.could_flip and rule.detail["holes"]["exact"]
    assert (round(rule.detail["holes"]["delta_min"], 4), round(rule.detail["holes"]["delta_max"], 4)) == \
        (-0.2411, 0.2576)
    c = judged.compare(QRELS, [run("bm25.run"), run("dense.run")], ["nDCG@10"], permutations=100)
    flip = c.flip(c.get("nDCG@10", run("dense.run")))
    assert (rule.detail["holes"]["delta_min"], rule.detail["holes"]["delta_max"]) == (flip.low, flip.high)
    # the pairs to judge first: judged pool's depth order over both runs' top 10 (every query concerned)
    pooled = judged_pool(QRELS, [run("bm25.run"), run("dense.run")], 10, strategy="depth")
    assert [(p["qid"], p["docid"]) for p in r.judge_first] == [(p.qid, p.docid) for p in pooled.pairs[:20]]
    assert r.unjudged == pooled.unjudged == 189 and r.strategy == "depth"
    # the policy may fail such a rule instead, or not ask the holes
    assert gate({**policy, "holes": {"could_flip": "fail"}}, QRELS, run("bm25.run"), run("dense.run")).exit_code == 1
    ignored = gate({**policy, "holes": {"could_flip": "ignore"}}, QRELS, run("bm25.run"), run("dense.run"))
    assert ignored.exit_code == 1 and ignored.rules[0].could_flip is None and not ignored.judge_first
    # with the holes judged (qrels-more.txt), dense gains 0.1421 and passes
    judged_all = gate(policy, MORE, run("bm25.run"), run("dense.run"))
    assert judged_all.exit_code == 0 and round(judged_all.rules[0].detail["mean_delta"], 4) == 0.1421


def test_the_pairs_to_judge_first_follow_the_policys_strategy_and_count():
    policy = {"margin": {"non_inferiority": 0.05}, "holes": {"strategy": "impact", "judge_first": 5}}
    r = gate(policy, QRELS, run("bm25.run"), run("dense.run"))
    pooled = judged_pool(QRELS, [run("bm25.run"), run("dense.run")], 10, strategy="impact")
    assert [(p["qid"], p["docid"]) for p in r.judge_first] == [(p.qid, p.docid) for p in pooled.pairs[:5]]
    assert r.strategy == "impact"


def test_critical_queries_pass_fail_and_undecided():
    base, tuned = run("bm25.run"), run("tuned.run")
    # q02: tuned loses 0.1100 there; judging the one hole of the two runs' top 10 there could make
    # the loss anything in [-0.0139, 0.1939] (conservative)
    r = gate({"critical": {"queries": ["q02"], "max_loss": 0.1}}, QRELS, base, tuned)
    rule = r.rules[0]
    assert (rule.verdict, r.exit_code, rule.queries) == ("undecided", 3, ["q02"])
    assert round(-rule.detail["differences"]["q02"], 4) == 0.11
    assert [(p["qid"], p["docid"]) for p in r.judge_first] == [("q02", "d02-050")]  # that query's holes only
    assert [round(x, 4) for x in rule.detail["holes"]["q02"]] == [-0.1939, 0.0139]
    assert gate({"critical": {"queries": ["q02"], "max_loss": 0.12}}, QRELS, base, tuned).exit_code == 3
    assert gate({"critical": {"queries": ["q02"], "max_loss": 0.2}}, QRELS, base, tuned).exit_code == 0
    # judged (qrels-more.txt): tuned loses 0.0853 on q02, decided either way
    assert gate({"critical": {"queries": ["q02"], "max_loss": 0.1}}, MORE, base, tuned).exit_code == 0
    failed = gate({"critical": {"queries": ["q01", "q02"], "max_loss": 0.05}}, MORE, base, tuned)
    assert failed.exit_code == 1 and failed.rules[0].detail["lost_more"] == ["q02"]
    assert "1 of 2 critical queries lost more than 0.05 on nDCG@10: q02 0.0853" in failed.rules[0].figure


def test_critical_queries_from_a_file_beside_the_policy(tmp_path):
    (tmp_path / "critical.txt").write_text("q02\n# a comment\nq07\n")
    (tmp_path / "gate.toml").write_text('[critical]\nfile = "critical.txt"\nqueries = ["q01"]\nmax_loss = 0.5\n')
    p = Policy.load(tmp_path / "gate.toml")
    assert p.critical["queries"] == ("q01", "q02", "q07")
    assert gate(tmp_path / "gate.toml", MORE, run("bm25.run"), run("tuned.run")).exit_code == 0
    with pytest.raises(UsageError, match="critical query q99 is not among the 40 queries evaluated"):
        gate({"critical": {"queries": ["q99"]}}, QRELS, run("bm25.run"), run("tuned.run"))


def test_the_checks_beyond_the_score_pass_for_dense_and_fail_for_bm25():
    policy = {"evidence": {"requirements": run("requirements.txt", BEYOND), "min_complete": 0.9},
              "eligibility": {"file": run("eligibility.txt", BEYOND)},
              "answers": {"file": run("answers.tsv", BEYOND), "min_acceptance": 0.7},
              "abstention": {"unanswerable": run("unanswerable.txt", BEYOND), "min_recall": 1.0, "min_precision": 1.0}}
    qrels, bm25, dense = run("qrels.txt", BEYOND), run("bm25.run", BEYOND), run("dense.run", BEYOND)
    good = gate(policy, qrels, bm25, dense)
    assert [(r.name, r.verdict) for r in good.rules] == [
        ("complete", "pass"), ("leaks", "pass"), ("answers", "pass"), ("abstention recall", "pass"),
        ("abstention precision", "pass")] and good.exit_code == 0
    bad = gate(policy, qrels, dense, bm25)
    figures = {r.name: (r.verdict, r.value) for r in bad.rules}
    # docs/beyond-ndcg.md's figures: bm25 Complete@10 0.75, 2 leaks (q2 and q4, hr-salaries),
    # 3 of 4 answers accepted, abstained on 1 of 2 unanswerable queries (precision 1)
    assert figures == {"complete": ("fail", 0.75), "leaks": ("fail", 2.0), "answers": ("pass", 0.75),
                       "abstention recall": ("fail", 0.5), "abstention precision": ("pass", 1.0)}
    assert bad.exit_code == 1
    assert [x["qid"] for x in bad.rules[1].detail["leaks"]] == ["q2", "q4"]
    # as hr-partner the salary document is eligible: no leak
    partner = gate({"eligibility": {"file": run("eligibility.txt", BEYOND), "principal": "hr-partner"}},
                   qrels, dense, bm25)
    assert partner.rules[0].value == 0 and partner.exit_code == 0
    # the answers may come with the call (judged gate --answers) rather than the policy
    floor = {"answers": {"min_acceptance": 0.8}}
    assert gate(floor, qrels, bm25, dense, answers=run("answers.tsv", BEYOND)).exit_code == 1
    with pytest.raises(UsageError, match="needs the answer verdicts"):
        gate(floor, qrels, bm25, dense)


def test_abstention_floors_need_unanswerable_queries():
    with pytest.raises(UsageError, match="need unanswerable queries"):
        gate({"abstention": {"min_recall": 0.5}}, QRELS, run("bm25.run"), run("tuned.run"))


def test_the_hole_share_ceiling():
    policy = {"holes": {"max_share": 0.2}}
    ok = gate(policy, QRELS, run("bm25.run"), run("tuned.run"))
    assert ok.exit_code == 0 and ok.rules[0].value == pytest.approx(1 - 0.9625)  # Judged@10 0.9625
    too_many = gate(policy, QRELS, run("bm25.run"), run("dense.run"))
    assert too_many.exit_code == 1 and too_many.rules[0].value == pytest.approx(1 - 0.555)
    assert len(too_many.judge_first) == 20  # a ceiling of holes says what to judge too


def test_a_frozen_manifest_refuses_changed_qrels(tmp_path):
    shutil.copy(QRELS, tmp_path / "qrels.txt")
    Manifest.freeze(tmp_path / "qrels.txt", ["nDCG@10", "AP"]).write(tmp_path / "eval.toml")
    policy = {"margin": {"non_inferiority": 0.05}}
    frozen = gate(policy, None, run("bm25.run"), run("tuned.run"), manifest=tmp_path / "eval.toml")
    assert frozen.exit_code == 0 and frozen.provenance["manifest"]["path"] == str(tmp_path / "eval.toml")
    with pytest.raises(ManifestError, match="judgments changed for"):
        gate(policy, MORE, run("bm25.run"), run("tuned.run"), manifest=tmp_path / "eval.toml")
    with pytest.raises(UsageError, match="measure P@10 .* is not frozen"):
        gate({"measure": "P@10", **policy}, None, run("bm25.run"), run("tuned.run"), manifest=tmp_path / "eval.toml")
    # the policy may name the manifest itself, beside it
    (tmp_path / "gate.toml").write_text('manifest = "eval.toml"\n[margin]\nnon_inferiority = 0.05\n')
    assert gate(tmp_path / "gate.toml", None, run("bm25.run"), run("tuned.run")).exit_code == 0


@pytest.mark.parametrize("policy, why", [
    ({}, "states no rule"),
    ({"margin": {}}, "needs one of non_inferiority"),
    ({"margin": {"non_inferiority": 0.1, "superiority": 0}}, "needs one of non_inferiority"),
    ({"margin": {"non_inferiority": -0.1}}, r"\[margin\] non_inferiority should be a number >= 0, got -0.1"),
    ({"margin": {"superiority": 0, "confidence": 1.0}}, "confidence should be a number in"),
    ({"margin": {"non_inferiority": "0.1"}}, "should be a number"),
    ({"treshold": 1}, "unknown key 'treshold'"),
    ({"margin": {"non_inferiority": 0.1, "alpha": 0.05}}, r"unknown key\(s\) alpha in \[margin\]"),
    ({"measure": "Judged@10", "holes": {"max_share": 0.1}}, "not Judged@10 \\(coverage\\)"),
    ({"measure": "GMAP", "margin": {"superiority": 0}}, "aggregate geometric-mean"),
    ({"measure": "nDCG@ten", "margin": {"superiority": 0}}, "not a usable gate policy"),
    ({"critical": {"max_loss": 0.1}}, r"\[critical\] names no query"),
    ({"holes": {"max_share": 1.5}}, r"max_share should be a number in \[0, 1\]"),
    ({"holes": {"max_share": 0.1, "could_flip": "maybe"}}, "could_flip should be one of undecided, fail, ignore"),
    ({"holes": {"max_share": 0.1, "strategy": "sample"}}, "strategy should be one of depth"),
    ({"evidence": {"min_complete": 0.5}}, r"\[evidence\] needs requirements"),
    ({"abstention": {"unanswerable": "u.txt"}}, "needs min_recall and/or min_precision"),
])
def test_a_bad_policy_is_a_parse_error_naming_the_key(policy, why):
    with pytest.raises(ParseError, match=why):
        Policy.load(policy)


def test_a_policy_file_that_is_not_toml_names_its_line(tmp_path):
    (tmp_path / "gate.toml").write_text('measure = "nDCG@10"\n[margin\n')
    with pytest.raises(ParseError, match=r"gate.toml:2: invalid TOML"):
        Policy.load(tmp_path / "gate.toml")


def test_runs_in_memory_are_named_baseline_and_candidate():
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
    base = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"c": 1.0}}
    better = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}
    r = gate({"margin": {"non_inferiority": 0.0}, "critical": {"queries": ["q2"]}}, qrels, base, better)
    assert (r.baseline, r.candidate) == ("baseline", "candidate")
    # q1: RR-like nDCG 0.6309 -> 1; q2 tied: two queries, the bound is well below the mean
    assert [x.verdict for x in r.rules] == ["fail", "pass"]
    assert EXIT_CODES == {"pass": 0, "fail": 1, "undecided": 3}
    assert np.isclose(r.rules[0].detail["mean_delta"], (1 - 1 / np.log2(3)) / 2)


def test_abstention_precision_fails_for_a_run_that_abstains_on_an_answerable_query():
    # q3 is unanswerable (the qrels' marker line); the candidate returns nothing for q1 and q3:
    # it abstains twice, once rightly: precision 1/2, recall 1/1. A run that never abstains passes
    # the precision floor (no wrong abstention) and fails the recall one.
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"__UNANSWERABLE__": 0}}
    never = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"x": 1.0}}
    shy = {"q2": {"b": 1.0}}
    policy = {"abstention": {"min_precision": 0.9, "min_recall": 1.0}}
    r = gate(policy, qrels, never, shy)
    assert [(x.name, x.verdict, x.value) for x in r.rules] == [("abstention recall", "pass", 1.0),
                                                               ("abstention precision", "fail", 0.5)]
    assert r.rules[1].detail["abstained_on_answerable"] == ["q1"]
    back = gate(policy, qrels, shy, never)
    assert [(x.verdict, x.value) for x in back.rules] == [("fail", 0.0), ("pass", None)]
    assert "n/a (never abstained)" in back.rules[1].figure
