"""judged.testing (issue 33): the release gate as an assertion in a project's own test suite."""

from pathlib import Path

import pytest

from judged.testing import assert_gate

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
QRELS, BM25, TUNED, DENSE = (str(EXAMPLES / n) for n in ("qrels.txt", "bm25.run", "tuned.run", "dense.run"))
POLICY = {"margin": {"non_inferiority": 0.05}}


def test_a_passing_gate_returns_its_result():
    result = assert_gate(POLICY, QRELS, BM25, TUNED)
    assert result.passed and result.rules[0].verdict == "pass"


def test_a_failing_gate_raises_with_the_rule_lines():
    with pytest.raises(AssertionError) as info:
        assert_gate({"margin": {"superiority": 0.0}}, QRELS, BM25, TUNED)
    lines = str(info.value).splitlines()
    assert lines[0] == "judged gate: may tuned.run replace bm25.run? FAIL (1 rule: 1 fail; exit 1)"
    assert lines[1].startswith("FAIL      superiority: nDCG@10 Δ -0.0131")


def test_an_undecided_gate_fails_unless_allowed():
    with pytest.raises(AssertionError, match=r"UNDECIDED non-inferiority(.|\n)*judge first \(20 of 189"):
        assert_gate(POLICY, QRELS, BM25, DENSE)
    assert assert_gate(POLICY, QRELS, BM25, DENSE, allow_undecided=True).verdict == "undecided"
    # a failed rule is never allowed
    with pytest.raises(AssertionError, match="FAIL      holes"):
        assert_gate({**POLICY, "holes": {"max_share": 0.2}}, QRELS, BM25, DENSE, allow_undecided=True)
