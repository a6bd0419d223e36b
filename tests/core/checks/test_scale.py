"""Grade scales: the TOML format, the default scale, and `judged eval --scale`."""

import json

import pytest

import judged
from judged.cli import main
from judged.core.errors import ParseError
from judged.core.checks.scale import default_scale, read_scale, scale_beside

QRELS = "q1 0 a 3\nq1 0 b 2\nq1 0 c 0\nq2 0 d 1\n"
RUN = "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq2 Q0 d 1 1 r\n"
BINARY_SCALE = """
name = "binary"
[[grade]]
value = 0
name = "not relevant"
definition = "Does not help."
[[grade]]
value = 1
name = "relevant"
definition = "Helps answer the question."
examples = ["the policy page"]
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "binary.toml").write_text(BINARY_SCALE)
    return tmp_path


def test_default_scale_is_the_four_grades_of_the_brief():
    s = default_scale()
    assert [(g.value, g.name) for g in s.grades] == [
        (0, "not relevant"), (1, "useful background"), (2, "direct support"), (3, "complete answer")]
    assert all(g.definition and g.examples for g in s.grades)


def test_scale_file_round_trips_to_json(files):
    s = read_scale(files / "binary.toml")
    d = s.to_dict()
    assert d["name"] == "binary" and [g["value"] for g in d["grades"]] == [0, 1]
    assert d["grades"][1]["examples"] == ["the policy page"] and d["grades"][0]["examples"] == []


@pytest.mark.parametrize("text,why", [
    ("name='x'", "at least one [[grade]]"),
    ("[[grade]]\nvalue='1'\nname='a'\ndefinition='b'", "value must be an integer"),
    ("[[grade]]\nvalue=1\nname='a'", "definition must be a non-empty string"),
    ("[[grade]]\nvalue=1\nname='a'\ndefinition='b'\n[[grade]]\nvalue=1\nname='c'\ndefinition='d'", "value 1 appears twice"),
    ("[[grade]]\nvalue=1\nname='a'\ndefinition='b'\ncolour='red'", "unknown key(s) colour"),
    ("[[grade]\n", "invalid TOML"),
])
def test_malformed_scales_are_parse_errors(tmp_path, text, why):
    p = tmp_path / "s.toml"
    p.write_text(text)
    with pytest.raises(ParseError, match=r"s\.toml.*" + why.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        read_scale(p)


def test_grade_off_the_scale_names_qrels_file_and_grade(files):
    # grades 3 and 2 are not on the binary scale: the error names the qrels and the first grade
    with pytest.raises(ParseError) as e:
        judged.evaluate(files / "qrels.txt", files / "run.txt", scale=files / "binary.toml")
    msg = str(e.value)
    assert "qrels.txt" in msg and "grade 2" in msg and "binary.toml" in msg and "grades 0, 1" in msg
    assert "other grades off the scale: 3" in msg


def test_cli_scale_check_fails_cleanly(files, capsys):
    rc = main(["eval", str(files / "qrels.txt"), str(files / "run.txt"), "--scale", str(files / "binary.toml")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("judged: error:") and "grade 2" in err and err.count("\n") == 1


def test_scale_printed_in_json_and_table(files, capsys):
    rc = main(["eval", str(files / "qrels.txt"), str(files / "run.txt"), "--format", "json"])
    plain = json.loads(capsys.readouterr().out)
    assert rc == 0 and "scale" not in plain  # no scale given, none beside the qrels
    (files / "scale.toml").write_text(judged.core.checks.scale.default_scale_text())
    main(["eval", str(files / "qrels.txt"), str(files / "run.txt"), "--format", "json"])
    found = json.loads(capsys.readouterr().out)
    assert found["scale"]["source"].endswith("scale.toml") and len(found["scale"]["grades"]) == 4
    # adding keys never changes the existing ones
    assert {k: v for k, v in found.items() if k in plain} == plain
    main(["eval", str(files / "qrels.txt"), str(files / "run.txt")])
    out = capsys.readouterr().out
    assert "grade scale" in out and "2 direct support" in out


def test_scale_beside_qrels_prefers_the_stem(files):
    assert scale_beside(files / "qrels.txt") is None
    (files / "scale.toml").write_text(BINARY_SCALE)
    (files / "qrels.scale.toml").write_text(BINARY_SCALE)
    assert scale_beside(files / "qrels.txt").endswith("qrels.scale.toml")


def test_judged_scale_command(files, capsys):
    assert main(["scale"]) == 0
    assert "complete answer" in capsys.readouterr().out
    assert main(["scale", str(files / "binary.toml"), "--qrels", str(files / "qrels.txt")]) == 2
    assert "grade 2" in capsys.readouterr().err


def test_judged_scale_json(files, capsys):
    """``judged scale --format json``: the scale as ``judged eval --format json``'s ``scale``
    key holds it, grades in value order, from the default scale or a file, and with
    --qrels the check said on stderr, stdout left to the JSON."""
    (files / "unordered.toml").write_text('name = "three"\ndescription = "coarse"\n'
                                          '[[grade]]\nvalue = 2\nname = "answer"\ndefinition = "Answers it."\n'
                                          'examples = "the refund policy"\n'
                                          '[[grade]]\nvalue = 0\nname = "off"\ndefinition = "Does not help."\n'
                                          '[[grade]]\nvalue = 1\nname = "near"\ndefinition = "Context only."\n'
                                          '[[grade]]\nvalue = 3\nname = "whole"\ndefinition = "All of it."\n')
    assert main(["scale", str(files / "unordered.toml"), "--qrels", str(files / "qrels.txt"), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {
        "source": str(files / "unordered.toml"), "name": "three", "description": "coarse",
        "grades": [{"value": 0, "name": "off", "definition": "Does not help.", "examples": []},
                   {"value": 1, "name": "near", "definition": "Context only.", "examples": []},
                   {"value": 2, "name": "answer", "definition": "Answers it.", "examples": ["the refund policy"]},
                   {"value": 3, "name": "whole", "definition": "All of it.", "examples": []}]}
    assert err == f"# every grade in {files / 'qrels.txt'} is on the scale\n"
    # the same JSON judged eval --scale reports
    assert main(["eval", str(files / "qrels.txt"), str(files / "run.txt"), "-m", "P@1", "--scale",
                 str(files / "unordered.toml"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["scale"] == json.loads(out)
    # no file: the default scale, its four grades
    assert main(["scale", "--format", "json"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["name"] == "default" and default["source"].startswith("<default scale: ")
    assert [(g["value"], g["name"]) for g in default["grades"]] == [
        (0, "not relevant"), (1, "useful background"), (2, "direct support"), (3, "complete answer")]
    # a qrels grade off the scale: one line, exit 2, nothing on stdout
    assert main(["scale", str(files / "binary.toml"), "--qrels", str(files / "qrels.txt"), "--format", "json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "grade 2" in err
