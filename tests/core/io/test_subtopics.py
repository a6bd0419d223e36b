"""Subtopic qrels (ndeval's ``qid subtopic docid grade``): the second column of a TREC
qrels file, or a table's subtopic column; bad input is one ParseError naming the line."""

import pandas as pd
import pytest

from judged.core.errors import ParseError
from judged.core.io import read_qrels
from judged.core.io.subtopics import read_subtopic_qrels, subtopics_of


def test_the_flat_qrels_keep_the_largest_grade_and_the_subtopics(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text("7 1 a 0\n7 2 a 2\n7 2 a 2\n7 1 b 1\n")  # an identical repeat is one judgment
    flat = read_qrels(str(q), subtopics=True)
    assert flat.docid.to_pylist() == ["a", "b"] and flat.grade.tolist() == [2, 1]
    sub = subtopics_of(flat)
    assert sub.subtopic.to_pylist() == ["1", "2", "1"] and sub.grade.tolist() == [0, 2, 1]
    frame = read_subtopic_qrels(pd.DataFrame({"query_id": ["7"], "iteration": ["3"], "doc_id": ["a"],
                                              "relevance": [1]}))
    assert subtopics_of(frame).subtopic.to_pylist() == ["3"]


@pytest.mark.parametrize("text, line, why", [
    ("1 1 a 1\n1 1 b 1\n1 1 a 0\n", 3, "query '1' subtopic '1' docid 'a' is judged twice with different grades [0, 1]"),
    ("1 1 a 1\n1 1 b\n", 2, "expected 4 fields (qid subtopic docid grade), found 3"),
    ("1 1 a 1\n1 2 b x\n", 2, "grade 'x' is not an integer"),
])
def test_bad_lines_are_named(tmp_path, text, line, why):
    q = tmp_path / "q.txt"
    q.write_text(text)
    with pytest.raises(ParseError) as exc:
        read_qrels(str(q), subtopics=True)
    assert (exc.value.line, exc.value.why) == (line, why)


def test_a_table_without_a_subtopic_column():
    with pytest.raises(ParseError, match="no subtopic column"):
        read_subtopic_qrels(pd.DataFrame({"qid": ["1"], "docid": ["a"], "grade": [1]}))


def test_ir_datasets_qrels_give_their_subtopics(local_irds, tmp_path):
    """irds: sources read the records' subtopic_id (diversity qrels) or iteration field."""
    import judged

    name = local_irds("q 1 a 1\nq 1 b 1\nq 2 b 1\nq 2 c 1\n", docs="a\tx\nb\ty\nc\tz\n", queries="q\tquery\n")
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    via = judged.evaluate(f"irds:{name}", {"r": run}, ["alpha-nDCG@3", "P-IA@3"])
    file = judged.evaluate(str(tmp_path / "qrels.txt"), {"r": run}, ["alpha-nDCG@3", "P-IA@3"])
    assert via.mean().equals(file.mean()) and round(float(via.mean().loc["r", "alpha-nDCG@3"]), 4) == 0.8561
