"""Queries with nothing relevant, unanswerable queries and abstention, thin answer keys."""

import json

import pytest

import judged
from judged.core.checks.abstention import evaluate_abstention
from judged.cli import main
from judged.demo import worked_examples
from judged.core.errors import ParseError
from judged.core.io import read_run

# q1 answerable; q2 judged with nothing relevant; q3 unanswerable by the qrels marker;
# q4 unanswerable by the list; q5 only in the run (not judged)
QRELS = "q1 0 a 2\nq1 0 b 1\nq2 0 c 0\nq2 0 d 0\nq3 0 __UNANSWERABLE__ 0\n"
RUN = ("q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\n"
       "q2 Q0 c 1 1 r\n"
       "q3 Q0 __ABSTAIN__ 1 9 r\nq3 Q0 a 2 1 r\n"  # abstains on q3 (marker first)
       "q5 Q0 e 1 1 r\n")  # answers nothing for q4: that is an abstention too


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "unanswerable.txt").write_text("# nothing answers these\nq4 not in the corpus yet\n")
    return tmp_path


def evaluate(files, **kw):
    return judged.evaluate(files / "qrels.txt", {"r": files / "run.txt"}, ["nDCG@10"],
                           unanswerable=files / "unanswerable.txt", **kw)


def test_three_kinds_of_nothing_relevant(files):
    r = evaluate(files)
    key = r.to_dict()["answer_key"]
    assert key["judged_nothing_relevant_qids"] == ["q2"]  # judged, every judgment 0
    assert key["unanswerable_qids"] == ["q3", "q4"]  # marker line, and the list
    assert r.runs["r"].counts["only_in_run"] == 1  # q5: not judged at all
    assert key["relevant_per_query"] == {"0": 1, "2": 1}


def test_unanswerable_queries_are_kept_out_of_ndcg_by_default(files):
    r = evaluate(files)
    assert r.runs["r"].qids.tolist() == ["q1", "q2"]
    assert r.mean().loc["r", "nDCG@10"] == pytest.approx(0.5)  # q1 1.0, q2 0 (judged, nothing relevant)
    scored = evaluate(files, score_unanswerable=True)
    assert scored.runs["r"].qids.tolist() == ["q1", "q2", "q3"]  # q4 has no qrels line to score
    assert scored.mean().loc["r", "nDCG@10"] == pytest.approx(1 / 3)


def test_abstention_precision_and_recall(files):
    ab = evaluate(files).checks.abstention["r"]
    # universe q1..q4; abstained on q3 (marker first) and q4 (no results): both unanswerable
    assert (ab.abstained, ab.correct, ab.unanswerable) == (2, 2, 2)
    assert ab.precision == 1.0 and ab.recall == 1.0
    # a marker that is not ranked first is not an abstention; an empty answer on q1 is a wrong one
    run = read_run({"q1": {"a": 1.0}, "q3": {"x": 2.0, "__ABSTAIN__": 1.0}})
    ab = evaluate_abstention(run, ["q1", "q2"], ["q3", "q4"])
    assert ab.wrong_abstentions == ["q2"] and ab.missed_abstentions == ["q3"]
    assert ab.precision == 0.5 and ab.recall == 0.5


def test_abstain_marker_is_configurable(files):
    (files / "run.txt").write_text(RUN.replace("__ABSTAIN__", "NO_ANSWER"))
    assert evaluate(files).checks.abstention["r"].correct == 1  # only q4 (no results) counts
    assert evaluate(files, abstain_marker="NO_ANSWER").checks.abstention["r"].correct == 2


def test_unanswerable_with_relevant_judgments_is_refused(files):
    (files / "unanswerable.txt").write_text("q1\n")
    with pytest.raises(ParseError, match="query 'q1' is declared unanswerable but the qrels judge 2"):
        evaluate(files)
    (files / "qrels.txt").write_text("q1 0 __UNANSWERABLE__ 1\n")
    with pytest.raises(ParseError, match="marker must carry grade 0"):
        judged.evaluate(files / "qrels.txt", files / "run.txt")


def test_cli_shows_abstention_and_counts(files, capsys):
    args = ["eval", str(files / "qrels.txt"), str(files / "run.txt"), "--unanswerable", str(files / "unanswerable.txt")]
    main(args)
    text = " ".join(capsys.readouterr().out.split())
    assert "2 unanswerable (kept out of the ranking measures)" in text
    assert "abstention precision 1.000, recall 1.000" in text
    main(args + ["--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert out["runs"][str(files / "run.txt")]["abstention"]["recall"] == 1.0


def test_thin_answer_key_warns():
    # the demo's single-at-R queries have one relevant document each; graded/three have 5 and 2
    qrels, run = worked_examples()
    single = {q: v for q, v in qrels.items() if q.startswith("single")}
    r = judged.evaluate(single, {"demo": run}, ["nDCG@10"])
    d = r.to_dict()
    assert len(d["warnings"]) == 1 and "nDCG@10 has become a rank measure" in d["warnings"][0]
    assert "1/log2(1 + rank of the hit)" in d["warnings"][0]
    assert d["answer_key"]["relevant_per_query"] == {"1": 5} and d["answer_key"]["mean_relevant_per_query"] == 1.0
    # all seven queries: (5 + 2 + 5 * 1) / 7 = 1.71 relevant on average, above 1.5: no warning
    assert judged.evaluate(qrels, {"demo": run}, ["nDCG@10"]).to_dict()["warnings"] == []


def test_thin_key_warning_in_table(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 1\n")  # 1.5 on average
    (tmp_path / "run.txt").write_text("q1 Q0 b 1 2 r\nq1 Q0 a 2 1 r\nq2 Q0 c 1 1 r\n")
    main(["eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")])
    text = " ".join(capsys.readouterr().out.split())
    assert "warning: thin answer key: queries with something relevant average 1.50 relevant documents" in text
    assert "Relevant documents per query -> queries: 1: 1, 2: 1" in text
    # no nDCG asked: the warning names the measures given, not nDCG
    main(["eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", "P@10", "-m", "RR"])
    text = " ".join(capsys.readouterr().out.split())
    assert "P@10, RR each depend on the rank of the hit alone for a single relevant document" in text
    assert "nDCG" not in text.split("thin answer key")[1]
