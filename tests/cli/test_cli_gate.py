"""``judged gate`` (issue 33): exit codes 0 pass, 1 fail, 3 undecided, 2 bad input; the rule
lines, Markdown, JSON, GitHub Actions annotations and JUnit XML, on the shipped example."""

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from judged.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
POLICY = """measure = "nDCG@10"
[margin]
non_inferiority = 0.05
[critical]
queries = ["q02", "q07"]
max_loss = 0.2
[holes]
max_share = 0.2
"""


@pytest.fixture
def examples(tmp_path, monkeypatch):
    """A copy of docs/examples as the working folder, with gate.toml, GitHub's variables unset."""
    folder = tmp_path / "examples"
    shutil.copytree(EXAMPLES, folder)
    (folder / "policy.toml").write_text(POLICY)
    monkeypatch.chdir(folder)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return folder


def gate(capsys, *args):
    code = main(["gate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_pass_prints_one_line_per_rule_and_exits_0(examples, capsys):
    code, out, err = gate(capsys, "qrels.txt", "bm25.run", "tuned.run", "--policy", "policy.toml")
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert lines[0] == "judged gate: may tuned.run replace bm25.run? PASS (3 rules: 3 pass; exit 0)"
    assert lines[1].startswith("PASS      non-inferiority: nDCG@10 Δ -0.0131 (tuned.run - bm25.run, 40 queries, "
                               "W/L/T 13/25/2), one-sided 95% lower bound -0.0248 > -0.0500")
    assert lines[2] == ("PASS      critical: 2 critical queries, the largest loss on nDCG@10 0.1100 (q02) "
                        "<= 0.2 allowed")
    assert lines[3].startswith("PASS      holes: unjudged share of tuned.run's top 10 0.0375 (15 holes")
    assert any(line.startswith("margin: one-sided Student t bound") for line in lines)


def test_fail_exits_1_and_undecided_exits_3(examples, capsys):
    code, out, _ = gate(capsys, "qrels.txt", "bm25.run", "dense.run", "--policy", "policy.toml")
    assert code == 1 and out.startswith("judged gate: may dense.run replace bm25.run? FAIL (3 rules: 1 fail, "
                                        "2 undecided; exit 1)")
    assert "UNDECIDED non-inferiority" in out and "FAIL      holes" in out
    assert "judge first (20 of 189 unjudged pairs in the top 10, judged pool's depth order): q04 d04-034" in out
    Path("undecided.toml").write_text('[margin]\nnon_inferiority = 0.05\n')
    code, out, _ = gate(capsys, "qrels.txt", "bm25.run", "dense.run", "--policy", "undecided.toml")
    assert code == 3 and "UNDECIDED (1 rule: 1 undecided; exit 3)" in out.splitlines()[0]


def test_markdown_for_a_pull_request_comment(examples, capsys):
    code, out, _ = gate(capsys, "qrels.txt", "bm25.run", "dense.run", "--policy", "policy.toml", "--format", "md")
    assert code == 1
    assert out.startswith("### ❌ judged gate: `dense.run` may replace `bm25.run`? **fail** (exit 1)\n\n"
                          "| rule | verdict | figure |\n|---|---|---|\n| non-inferiority | ⚠️ undecided | nDCG@10")
    assert "| holes | ❌ fail | unjudged share" in out
    assert "<summary>Judge first: 20 of 189 unjudged pairs (top 10, judged pool's depth order)</summary>" in out
    assert "| q04 | d04-034 | 1 | bm25.run, dense.run |" in out


def test_json_holds_every_rule_and_the_verdict(examples, capsys):
    code, out, _ = gate(capsys, "qrels.txt", "bm25.run", "tuned.run", "--policy", "policy.toml", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "pass" and data["exit_code"] == 0
    assert [r["rule"] for r in data["rules"]] == ["non-inferiority", "critical", "holes"]
    assert data["rules"][0]["lower_bound"] == pytest.approx(-0.0248, abs=5e-5)
    assert data["qrels"]["sha256"] and data["runs"]["tuned.run"]["sha256"]


def test_junit_xml_one_case_per_rule(examples, capsys, tmp_path):
    code, _, _ = gate(capsys, "qrels.txt", "bm25.run", "dense.run", "--policy", "policy.toml",
                      "--junit", str(tmp_path / "gate.xml"))
    suite = ET.parse(tmp_path / "gate.xml").getroot()
    assert code == 1 and suite.tag == "testsuite" and suite.get("tests") == "3" and suite.get("failures") == "3"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == ["non-inferiority", "critical", "holes"]
    assert cases["non-inferiority"].find("failure").get("type") == "undecided"
    assert cases["holes"].find("failure").get("type") == "fail"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["verdict"] == "fail" and props["exit_code"] == "1" and props["candidate"] == "dense.run"
    gate(capsys, "qrels.txt", "bm25.run", "tuned.run", "--policy", "policy.toml", "--junit", str(tmp_path / "ok.xml"))
    ok = ET.parse(tmp_path / "ok.xml").getroot()
    assert ok.get("failures") == "0" and all(c.find("failure") is None for c in ok.iter("testcase"))


def test_github_actions_annotations_and_job_summary(examples, capsys, monkeypatch, tmp_path):
    code, out, _ = gate(capsys, "qrels.txt", "bm25.run", "dense.run", "--policy", "policy.toml", "--format", "github")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("::warning title=judged gate%3A non-inferiority undecided::nDCG@10 Δ -0.2166")
    assert "95%25 lower bound" in lines[0]  # '%' escaped as GitHub's workflow commands want
    assert lines[2].startswith("::error title=judged gate%3A holes fail::unjudged share")
    assert lines[-1].startswith("::notice title=judged gate::judged gate: may dense.run replace bm25.run? FAIL")
    # under GitHub Actions the text is followed by the annotations and the summary goes to the job's page
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, _ = gate(capsys, "qrels.txt", "bm25.run", "tuned.run", "--policy", "policy.toml")
    assert code == 0 and out.startswith("judged gate: may tuned.run replace bm25.run? PASS")
    assert out.splitlines()[-1].startswith("::notice title=judged gate::")
    assert summary.read_text().startswith("### ✅ judged gate: `tuned.run` may replace `bm25.run`? **pass**")


def test_against_a_frozen_manifest_changed_qrels_are_refused(examples, capsys):
    assert main(["freeze", "qrels.txt", "-m", "nDCG@10", "-o", "eval.toml"]) == 0
    capsys.readouterr()
    code, out, _ = gate(capsys, "--manifest", "eval.toml", "bm25.run", "tuned.run", "--policy", "policy.toml")
    assert code == 0 and "PASS" in out.splitlines()[0]
    code, out, err = gate(capsys, "--manifest", "eval.toml", "qrels-more.txt", "bm25.run", "tuned.run",
                          "--policy", "policy.toml")
    assert code == 2 and out == ""
    assert err.startswith("judged: error: the evaluation set no longer matches eval.toml:")
    assert "judgments changed for 40 queries" in err


@pytest.mark.parametrize("args, message", [
    (["qrels.txt", "bm25.run", "tuned.run", "--policy", "missing.toml"], "missing.toml: no such judged gate policy"),
    (["qrels.txt", "bm25.run", "--policy", "policy.toml"], "give QRELS BASELINE CANDIDATE"),
    (["qrels.txt", "bm25.run", "tuned.run", "dense.run", "--policy", "policy.toml"], "give QRELS BASELINE CANDIDATE"),
    (["qrels.txt", "bm25.run", "nothing.run", "--policy", "policy.toml"], "nothing.run"),
    (["qrels.txt", "bm25.run", "tuned.run", "--policy", "bad.toml"], "bad.toml: not a usable gate policy: [margin] "
                                                                       "needs one of non_inferiority"),
])
def test_bad_input_is_one_line_and_exit_2(examples, capsys, args, message):
    Path("bad.toml").write_text("[margin]\nconfidence = 0.9\n")
    code, out, err = gate(capsys, *args)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith("judged: error: ") and message in err
