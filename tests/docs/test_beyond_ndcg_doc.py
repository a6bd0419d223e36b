"""The numbers docs/beyond-ndcg.md quotes, recomputed from docs/examples/beyond."""

from pathlib import Path

import pytest

import judged
from judged.analyses.answers import pair_answers
from judged.core.checks.eligibility import leaks

EX = Path(__file__).resolve().parents[2] / "docs" / "examples" / "beyond"


def run(measures=("nDCG@10",), **kw):
    return judged.evaluate(EX / "qrels.txt", {"bm25": EX / "bm25.run", "dense": EX / "dense.run"},
                           list(measures), unanswerable=EX / "unanswerable.txt", **kw)


def test_documented_figures():
    r = run(["nDCG@10", "Complete@10", "Coverage@10"], requirements=EX / "requirements.txt", scale=EX / "grades.toml")
    m = r.mean()
    assert round(m.loc["bm25", "nDCG@10"], 4) == 0.7730 and round(m.loc["dense", "nDCG@10"], 4) == 0.8135
    assert (m.loc["bm25", "Complete@10"], m.loc["bm25", "Coverage@10"]) == (0.75, 0.875)
    gap, = r.checks.gaps(r)["bm25"]
    assert (gap.qid, round(gap.score, 4), gap.missing) == ("q1", 0.7112, ["exception"])
    ab = r.checks.abstention
    assert (ab["bm25"].precision, ab["bm25"].recall, ab["bm25"].missed_abstentions) == (1.0, 0.5, ["q4"])
    assert (ab["dense"].precision, ab["dense"].recall) == (1.0, 1.0)

    e = run(eligibility=EX / "eligibility.txt")
    assert round(e.mean().loc["bm25", "nDCG@10"], 4) == 0.6808
    assert [(x.qid, x.rank) for x in leaks(e)["bm25"]] == [("q2", 1), ("q4", 2)] and leaks(e)["dense"] == []
    p = pair_answers(e, EX / "answers.tsv")["bm25"]
    assert (p.acceptance_rate, round(p.mean_accepted, 4), round(p.mean_failed, 4)) == (0.75, 0.6706, 0.7112)
    assert round(run(eligibility=EX / "eligibility.txt", principal="hr-partner").mean().loc["bm25", "nDCG@10"], 4) == 0.7730


def test_documented_thin_key():
    r = judged.evaluate(EX / "thin" / "qrels.txt", EX / "thin" / "run.txt", ["nDCG@10"])
    assert "average 1.25 relevant documents" in r.to_dict()["warnings"][0]
    assert r.per_query().set_index("qid").loc["t4", "value"] == pytest.approx(0.5)
