"""`--machine LABELS`: scores with the holes labelled by a machine judge, shown apart from the
human-judged ones in every output (eval, holes, compare, report), never counted as judged and
never mixed into the qrels."""

from __future__ import annotations

import json

import pytest

import judged
from judged.analyses.holes.machine import filled_qrels, machine_filled, read_machine

# q1: the people judged a (2), b (0), c (1); the run ranks d (hole), a, b, e (hole), c.
# q2: the people judged x (1); the run ranks y (hole), x.
# The machine labels d 2, e 0, a 0 (the person's 2 must win), y 1, and z of q3 (no human query).
HUMAN = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 x 1\n"
RUN = "q1 Q0 d 1 5 r\nq1 Q0 a 2 4 r\nq1 Q0 b 3 3 r\nq1 Q0 e 4 2 r\nq1 Q0 c 5 1 r\nq2 Q0 y 1 2 r\nq2 Q0 x 2 1 r\n"
MACHINE = "q1 0 d 2\nq1 0 e 0\nq1 0 a 0\nq2 0 y 1\nq3 0 z 2\n"
# what the machine-filled score must equal: the people's qrels plus d 2, e 0, y 1 (not a 0, not z)
FILLED = HUMAN + "q1 0 d 2\nq1 0 e 0\nq2 0 y 1\n"


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (("qrels", HUMAN), ("run", RUN), ("machine", MACHINE), ("filled", FILLED)):
        out[name] = tmp_path / f"{name}.txt"
        out[name].write_text(text)
    return out


MEASURES = ["nDCG@5", "P@5", "AP", "RR", "Judged@5"]


def test_filled_equals_the_union_where_people_win(files):
    q = filled_qrels(judged.read_qrels(files["qrels"]), read_machine(files["machine"]))
    assert sorted(zip(q.qid.to_pylist(), q.docid.to_pylist(), q.grade.tolist())) == sorted(
        tuple(line.split()[i] if i != 3 else int(line.split()[3]) for i in (0, 2, 3)) for line in FILLED.splitlines())
    result = judged.evaluate(files["qrels"], files["run"], MEASURES)
    mf = machine_filled(result, files["machine"])
    truth = judged.evaluate(files["filled"], files["run"], MEASURES).mean()
    assert set(mf.measures) == {"nDCG@5", "P@5", "AP", "RR"}  # Judged@k stays the people's
    for g in mf.measures:
        assert mf.mean(str(files["run"]), g) == pytest.approx(truth.loc[str(files["run"]), g], abs=1e-15)
    # holes in the top 5: d, e (q1) and y (q2); the machine labelled all three
    assert mf.holes[str(files["run"])] == 3 and mf.labelled[str(files["run"])] == 3
    assert mf.added == 3  # d, e, y: not a (judged), not z (query outside the qrels)


def test_eval_json_keeps_the_human_numbers_and_adds_machine_filled_apart(files, cli):
    args = ["eval", files["qrels"], files["run"], *sum((["-m", m] for m in MEASURES), []), "--format", "json"]
    plain = json.loads(cli(*args)[1])
    code, out, err = cli(*args, "--machine", files["machine"], "--per-query")
    assert code == 0, err
    d = json.loads(out)
    run = d["runs"][str(files["run"])]
    assert run["mean"] == plain["runs"][str(files["run"])]["mean"]  # nothing the people judged changed
    assert run["mean"]["Judged@5"] == pytest.approx(5 / 7 * 0 + (3 / 5 + 1 / 2) / 2)
    filled = run["machine_filled"]
    assert set(filled["mean"]) == {"nDCG@5 machine-filled", "P@5 machine-filled", "AP machine-filled",
                                   "RR machine-filled"}
    assert filled["mean"]["P@5 machine-filled"] == pytest.approx((3 / 5 + 2 / 5) / 2)  # q1: d a c; q2: y x
    assert filled["holes"] == 3 and filled["holes_machine_labelled"] == 3
    assert set(filled["per_query"]) == {"q1", "q2"}
    assert d["machine"]["path"].endswith("machine.txt") and "not judgments" in d["machine"]["conventions"][
        "nDCG@5 machine-filled"]
    assert d["qrels"]["judgments"] == 4  # the qrels are the people's: nothing merged


def test_eval_table_and_tsv_name_machine_filled_columns(files, cli):
    code, out, err = cli("eval", files["qrels"], files["run"], "-m", "P@5", "--machine", files["machine"])
    assert code == 0, err
    assert "machine-filled: the holes labelled by the machine judge" in out
    assert "P@5 machine-filled" in out and "0.5000" in out and "not judgments" in out
    code, out, err = cli("eval", files["qrels"], files["run"], "-m", "P@5", "--machine", files["machine"],
                         "--format", "tsv")
    rows = [line.split("\t") for line in out.splitlines()]
    assert [r[2] for r in rows if r[1] == "all"] == ["P@5", "P@5 machine-filled"]
    code, out, err = cli("eval", files["qrels"], files["run"], "--machine", files["machine"],
                         "--format", "trec_eval")
    assert code == 2 and "--machine" in err and err.count("\n") == 1


def test_holes_and_negative_grades(files, cli, tmp_path):
    code, out, err = cli("holes", files["qrels"], files["run"], "-k", 5, "--machine", files["machine"],
                         "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    entry = d["runs"][str(files["run"])]
    assert entry["judged"] == pytest.approx(0.55) and entry["machine_filled"]["holes_machine_labelled"] == 3
    truth = judged.evaluate(files["filled"], files["run"], ["nDCG@5"]).mean().iloc[0, 0]
    assert entry["machine_filled"]["mean"]["nDCG@5 machine-filled"] == pytest.approx(truth)
    # a negative grade (trec_eval's pooled but unjudged) is a hole the machine may label with --negative unjudged
    neg = tmp_path / "neg.txt"
    neg.write_text(HUMAN + "q1 0 d -1\n")
    for negative, labelled in (("nonrelevant", 2), ("unjudged", 3)):
        d = json.loads(cli("holes", neg, files["run"], "-k", 5, "--machine", files["machine"],
                           "--negative", negative, "--format", "json")[1])
        assert d["runs"][str(files["run"])]["machine_filled"]["holes_machine_labelled"] == labelled


FAST = ("-m", "P@5", "--permutations", 200, "--machine")


def test_compare_and_report_show_machine_filled_apart(files, cli, tmp_path):
    run2 = tmp_path / "run2.txt"
    run2.write_text("q1 Q0 a 1 5 s\nq1 Q0 c 2 4 s\nq2 Q0 x 1 2 s\n")
    code, out, err = cli("compare", files["qrels"], run2, files["run"], *FAST, files["machine"])
    assert code == 0, err
    assert "P@5 machine-filled (holes labelled by the machine judge" in out and "(Δ +" in out
    d = json.loads(cli("compare", files["qrels"], run2, files["run"], *FAST, files["machine"], "--format", "json")[1])
    assert d["machine"]["runs"][str(files["run"])]["mean"]["P@5 machine-filled"] == pytest.approx(0.5)
    assert d["comparisons"][0]["mean_run"] == pytest.approx((2 / 5 + 1 / 5) / 2)  # the judged score, unchanged
    html = tmp_path / "r.html"
    code, out, err = cli("report", files["qrels"], run2, files["run"], *FAST, files["machine"], "-o", html)
    page = html.read_text()
    assert "<h2 id='machine'>Machine labels</h2>" in page and "P@5 machine-filled" in page
    code, out, err = cli("report", files["qrels"], run2, files["run"], *FAST, files["machine"], "--format", "md")
    assert out.splitlines()[0] == "| run | P@5 | Judged@5 | P@5 machine-filled |"
    assert "not judgments; no significance test" in out
