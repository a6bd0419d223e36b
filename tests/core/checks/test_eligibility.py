"""Permission eligibility: an ineligible document never earns gain; Leak@k counts it."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import judged
from judged.cli import main
from judged.core.checks.eligibility import leaks, read_eligibility
from judged.core.errors import ConventionError, MeasureError, ParseError

# every measure family whose value rewards relevance (Judged@k and NumRet count documents, not gain)
GAIN_MEASURES = ["nDCG@5", "nDCG", "nDCG(gain=exp)@5", "nDCG(ideal=retrieved)@5", "DCG@5", "AP", "AP@5", "P@3",
                 "R@5", "RR", "Rprec", "Bpref", "Success@3", "NumRel", "NumRelRet", "nDCG(unjudged=condensed)@5",
                 "P(rel=2)@3"]


def frame(**cols):
    return pd.DataFrame(cols)


def test_ineligible_relevant_document_earns_nothing_and_leaves_the_ideal():
    # x (grade 3) is ineligible: the run ranking it first scores as if x were not relevant,
    # and the ideal ranking is b (grade 2) alone, so b at rank 2 gives nDCG 1/log2(3)
    qrels = {"q": {"x": 3, "b": 2}}
    run = {"q": {"x": 2.0, "b": 1.0}}
    elig = frame(qid=["q"], docid=["x"], eligible=["false"])
    r = judged.evaluate(qrels, run, ["nDCG@10", "P@1", "Leak@10", "NumRel"], eligibility=elig)
    m = r.mean().loc["run"]
    assert m["nDCG@10"] == pytest.approx(1 / np.log2(3))
    assert m["P@1"] == 0 and m["Leak@10"] == 1 and m["NumRel"] == 1
    assert leaks(r) == {"run": [judged.core.checks.eligibility.Leak("q", 1, "x")]}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_an_ineligible_document_never_raises_any_score(data):
    """For random qrels and runs: (1) the grade of an ineligible document changes no score,
    (2) retrieving it, at any rank, never raises a score above not retrieving it."""
    n_docs = data.draw(st.integers(2, 7))
    docs = [f"d{i}" for i in range(n_docs)]
    grades = data.draw(st.lists(st.integers(0, 3), min_size=n_docs, max_size=n_docs))
    judged_mask = data.draw(st.lists(st.booleans(), min_size=n_docs, max_size=n_docs))
    order = data.draw(st.permutations(docs))
    bad = data.draw(st.sampled_from(docs))
    qrels = {"q": {d: g for d, g, j in zip(docs, grades, judged_mask) if j or d == bad}}
    qrels["q"].setdefault("anchor", 1)  # something relevant besides, so every measure is defined
    elig = frame(qid=["*"], docid=[bad], eligible=["no"])

    def scores(grade_of_bad, ranking):
        q = {"q": dict(qrels["q"], **{bad: grade_of_bad})}
        run = {"q": {d: float(len(ranking) - i) for i, d in enumerate(ranking)}}
        res = judged.evaluate(q, run, GAIN_MEASURES, eligibility=elig)
        return res.mean().loc["run"]

    base = scores(0, order)
    for g in (1, 2, 3):
        assert np.allclose(scores(g, order), base, atol=1e-12), "the grade of an ineligible document changed a score"
    without = [d for d in order if d != bad]
    if without:
        assert (base <= scores(3, without) + 1e-12).all(), "retrieving an ineligible document raised a score"


def test_principal_rows_override_rows_for_everyone():
    elig = frame(qid=["*", "*", "q2"], docid=["hr", "hr", "hr"], eligible=["false", "true", "false"],
                 principal=[None, "hr-partner", "hr-partner"])
    qids = judged.core.data.as_string_array(["q1", "q2", "q1"])
    docids = judged.core.data.as_string_array(["hr", "hr", "other"])
    assert read_eligibility(elig).ineligible(qids, docids).tolist() == [True, True, False]
    # hr-partner may see hr everywhere except for q2, where its query-specific row says no
    assert read_eligibility(elig, "hr-partner").ineligible(qids, docids).tolist() == [False, True, False]


def test_eligibility_file_errors(tmp_path):
    p = tmp_path / "elig.txt"
    p.write_text("q1 d1 false\nq1 d1 true\n")
    with pytest.raises(ParseError, match=r"elig\.txt:2: .*opposite eligibility on line 1"):
        read_eligibility(p)
    p.write_text("q1 d1 maybe\n")
    with pytest.raises(ParseError, match=r"elig\.txt:1: eligible must be true or false"):
        read_eligibility(p)
    p.write_text("q1 d1 false alice\n")
    with pytest.raises(ConventionError, match="principal 'bob' does not appear"):
        read_eligibility(p, "bob")


def test_leak_needs_eligibility_data():
    with pytest.raises(MeasureError, match="Leak@10 needs eligibility data"):
        judged.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["Leak@10"])


def test_eval_flags_runs_with_leaks(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text("q1 0 secret 3\nq1 0 public 1\n")
    (tmp_path / "leaky.run").write_text("q1 Q0 secret 1 2 r\nq1 Q0 public 2 1 r\n")
    (tmp_path / "clean.run").write_text("q1 Q0 public 1 2 r\n")
    (tmp_path / "elig.txt").write_text("# qid docid eligible [principal]\n* secret false\n* secret true boss\n")
    args = [str(tmp_path / f) for f in ("qrels.txt", "leaky.run", "clean.run")] + ["--eligibility", str(tmp_path / "elig.txt")]
    assert main(["eval", *args, "-m", "nDCG@10", "-m", "Leak@10", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    leaky, clean = (out["runs"][str(tmp_path / n)] for n in ("leaky.run", "clean.run"))
    assert leaky["leaks"] == [{"qid": "q1", "rank": 1, "docid": "secret"}] and clean["leaks"] == []
    assert leaky["mean"]["Leak@10"] == 1 and clean["mean"]["nDCG@10"] == 1.0
    assert any("leaky.run retrieved 1 ineligible" in w for w in out["warnings"])
    assert out["eligibility"]["relevant_judgments_made_ineligible"] == 1
    main(["eval", *args])
    assert "LEAKS: 1" in " ".join(capsys.readouterr().out.split())
    # as the principal allowed to see it, the same run has no leak and full credit
    main(["eval", *args, "--as", "boss", "-m", "nDCG@10", "-m", "Leak@10", "--format", "json"])
    boss = json.loads(capsys.readouterr().out)["runs"][str(tmp_path / "leaky.run")]
    assert boss["leaks"] == [] and boss["mean"]["nDCG@10"] == 1.0


def test_leak_list_covers_queries_left_out_of_the_measures():
    # q2 is unanswerable (kept out of nDCG and Leak@k), q3 is not judged at all: a leak is a leak there too
    qrels = judged.core.io.read_qrels({"q1": {"a": 1}, "q2": {"__UNANSWERABLE__": 0}})
    run = {"q1": {"a": 3.0, "secret": 2.0}, "q2": {"secret": 1.0}, "q3": {"x": 2.0, "secret": 1.0}}
    r = judged.evaluate(qrels, {"r": run}, ["Leak@10"], eligibility=frame(qid=["*"], docid=["secret"], eligible=["0"]))
    assert r.mean().loc["r", "Leak@10"] == 1  # q1 only: the evaluated query
    assert [(x.qid, x.rank) for x in leaks(r)["r"]] == [("q1", 2), ("q2", 1), ("q3", 2)]
    assert leaks(r, k=1)["r"] == [judged.core.checks.eligibility.Leak("q2", 1, "secret")]
    with pytest.raises(ConventionError, match="no eligibility data"):
        leaks(judged.evaluate(qrels, {"r": run}, ["nDCG@10"]))
