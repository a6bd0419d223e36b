"""Evidence completeness: Complete@k, Coverage@k and the high-nDCG-but-incomplete list."""

import json

import pandas as pd
import pytest

import judged
from judged.cli import main
from judged.core.errors import MeasureError, ParseError
from judged.core.checks.evidence import read_requirements

# q1 needs the rule (r1 or r2) and the exception (e1); q2 needs s1; q3 has no requirements
QRELS = {"q1": {"r1": 3, "r2": 2, "bg1": 1, "bg2": 1, "e1": 2}, "q2": {"s1": 1}, "q3": {"z": 1}}
REQ = {"q1": {"rule": ["r1", "r2"], "exception": ["e1"]}, "q2": {"steps": ["s1"]}}
RUN = {"q1": {"r1": 9, "bg1": 8, "bg2": 7, "x": 6, "e1": 5},  # exception only at rank 5
       "q2": {"y": 2, "s1": 1},
       "q3": {"z": 1}}


def per_query(measures, **kw):
    r = judged.evaluate(QRELS, RUN, measures, requirements=REQ, **kw)
    return r, r.per_query().pivot(index="qid", columns="measure", values="value")


def test_complete_and_coverage_by_hand():
    _, pq = per_query(["Complete@3", "Coverage@3", "Complete@5", "Coverage@5", "Complete", "Coverage@1"])
    # top 3 of q1: r1, bg1, bg2 -> the rule is covered, the exception is not
    assert pq.loc["q1", "Complete@3"] == 0 and pq.loc["q1", "Coverage@3"] == 0.5
    assert pq.loc["q1", "Complete@5"] == 1 and pq.loc["q1", "Coverage@5"] == 1
    assert pq.loc["q1", "Complete"] == 1
    # q2's only group sits at rank 2
    assert pq.loc["q2", "Coverage@1"] == 0 and pq.loc["q2", "Complete@3"] == 1
    # q3 has no requirements: it needs nothing (declared no-requirements=1)
    assert pq.loc["q3", "Complete@3"] == 1 and pq.loc["q3", "Coverage@1"] == 1


def test_convention_is_declared():
    r, _ = per_query(["Complete@3"])
    assert "evidence=every-group-in-top-k no-requirements=1" in r.conventions["Complete@3"]


def test_high_ndcg_with_missing_exception_is_listed():
    r, pq = per_query(["nDCG@3"])
    gaps = r.checks.gaps(r)["run"]
    assert [g.qid for g in gaps] == ["q1"]  # q2 (nDCG@3 = 0.63) has its one group in the top 3
    assert gaps[0].missing == ["exception"] and gaps[0].score == pytest.approx(pq.loc["q1", "nDCG@3"])
    assert gaps[0].score >= 0.5
    # with a higher bar for "high", the same query is no longer listed
    r.checks.high = 0.99
    assert r.checks.gaps(r)["run"] == []


def test_ineligible_evidence_does_not_cover_a_group():
    elig = pd.DataFrame({"qid": ["q1"], "docid": ["r1"], "eligible": ["false"]})
    _, pq = per_query(["Coverage@3"], eligibility=elig)
    assert pq.loc["q1", "Coverage@3"] == 0  # r1 is the only rule document in the top 3, and may not be shown


def test_requirements_needed_and_read_from_files(tmp_path):
    with pytest.raises(MeasureError, match="Complete@10 needs requirements data"):
        judged.evaluate(QRELS, RUN, ["Complete@10"])
    p = tmp_path / "req.txt"
    p.write_text("qid group docid\nq1 rule r1\nq1 rule r2\nq1 exception e1\n")
    req = read_requirements(p)
    assert sorted(zip(req.group_qid, req.group_name)) == [("q1", "exception"), ("q1", "rule")]
    p.write_text("q1 rule\n")
    with pytest.raises(ParseError, match=r"req\.txt:1: expected qid group docid, found 2"):
        read_requirements(p)


def test_eval_cli_lists_gaps(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in QRELS.items() for d, g in ds.items()))
    (tmp_path / "run.txt").write_text("".join(f"{q} Q0 {d} 1 {s} r\n" for q, ds in RUN.items() for d, s in ds.items()))
    (tmp_path / "req.txt").write_text("".join(f"{q} {g} {d}\n" for q, gs in REQ.items() for g, ds in gs.items() for d in ds))
    base = ["eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "--requirements", str(tmp_path / "req.txt"),
            "-m", "nDCG@3", "-m", "Coverage@3"]
    assert main(base + ["--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    entry = out["runs"][str(tmp_path / "run.txt")]
    assert entry["evidence_gaps"][0]["qid"] == "q1" and entry["evidence_gaps"][0]["missing_groups"] == ["exception"]
    assert out["requirements"]["paired_with"] == "nDCG@3" and out["requirements"]["depth"] == 3
    main(base)
    text = " ".join(capsys.readouterr().out.split())
    assert "1 query with nDCG@3 >= 0.5 but incomplete evidence in the top 3" in text and "missing exception" in text
