"""Answer checks: nDCG paired with whether the answer was accepted."""

import json

import pytest

import judged
from judged.analyses.answers import pair_answers, read_answers
from judged.cli import main
from judged.core.errors import ConventionError, ParseError

QRELS = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}}
# nDCG@10: q1 1.0 (hit at 1), q2 0.5 (rank 3), q3 0.289 (rank 10), q4 0 (missed)
RUN = {"q1": {"a": 10}, "q2": {"x": 10, "y": 9, "b": 8},
       "q3": {**{f"n{i}": 20 - i for i in range(9)}, "c": 1}, "q4": {"z": 1}}
ANSWERS = """# run qid accepted note
sys q1 false cited the right page but answered the wrong year
sys q2 true
sys q3 true the model knew it anyway
sys q4 false
sys q9 true
"""


@pytest.fixture
def answers(tmp_path):
    p = tmp_path / "answers.tsv"
    p.write_text(ANSWERS)
    return p


def test_pairing_by_hand(answers):
    r = judged.evaluate(QRELS, {"sys": RUN}, ["nDCG@10"])
    p = pair_answers(r, answers)["sys"]
    assert p.checked == 4 and p.acceptance_rate == 0.5
    assert p.mean_accepted == pytest.approx((0.5 + 1 / 3.4594316186372973) / 2)  # log2(11) = 3.459
    assert p.mean_failed == pytest.approx(0.5)  # (1.0 + 0) / 2
    assert [q for q, _, _ in p.high_score_failed] == ["q1"]
    assert p.high_score_failed[0][2] == "cited the right page but answered the wrong year"
    assert [q for q, _, _ in p.low_score_accepted] == ["q3"]  # q2 (0.5) is high: >= 0.5
    assert p.unscored == ["q9"]


def test_run_labels_match_file_names(tmp_path, answers, capsys):
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in QRELS.items() for d, g in ds.items()))
    (tmp_path / "sys.run").write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, ds in RUN.items() for d, s in ds.items()))
    rc = main(["answers", str(tmp_path / "qrels.txt"), str(tmp_path / "sys.run"), "--answers", str(answers),
               "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    entry = out["runs"][str(tmp_path / "sys.run")]
    assert rc == 0 and entry["acceptance_rate"] == 0.5 and entry["failed"] == 2
    assert [x["qid"] for x in entry["high_score_failed"]] == ["q1"] and entry["high_score_failed"][0]["nDCG@10"] == 1.0
    assert out["measure"].startswith("nDCG@10 gain=linear")
    main(["answers", str(tmp_path / "qrels.txt"), str(tmp_path / "sys.run"), "--answers", str(answers), "--high", "0.2"])
    text = " ".join(capsys.readouterr().out.split())
    assert "low nDCG@10, accepted answer" not in text and "high nDCG@10, failed answer: query q1" in text


def test_answers_errors(tmp_path, answers):
    r = judged.evaluate(QRELS, {"other": RUN}, ["nDCG@10"])
    with pytest.raises(ConventionError, match="answers name run\\(s\\) 'sys' that were not evaluated"):
        pair_answers(r, answers)
    p = tmp_path / "dup.tsv"
    p.write_text("sys q1 true\nsys q1 false\n")
    with pytest.raises(ParseError, match=r"dup\.tsv:2: .*already has a verdict on line 1"):
        read_answers(p)
    p.write_text("sys q1 perhaps\n")
    with pytest.raises(ParseError, match="accepted must be true or false"):
        read_answers(p)
