"""MTEB's files read without mteb (judged.core.io.mteb_files): predictions as runs, which subset/split,
the results file's reported scores, and one-line errors."""

import json

import pytest

import judged
from judged.cli import main
from judged.core.errors import ParseError
from judged.core.io.mteb_files import read_predictions, read_scores

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"


def predictions(tmp_path, pairs, name="org/model"):
    obj = {"mteb_model_meta": {"model_name": name, "revision": "r1"}}
    for (subset, split), results in pairs.items():
        obj.setdefault(subset, {})[split] = results
    path = tmp_path / "Task_predictions.json"
    path.write_text(json.dumps(obj))
    return path


DEV = {"q1": {"d2": 0.9, "d1": 0.5}}
TEST = {"q1": {"d1": 0.9, "d2": 0.5}, "q2": {"d3": 0.25}}


def test_read_run_takes_default_test_and_the_models_name(tmp_path):
    path = predictions(tmp_path, {("default", "dev"): DEV, ("default", "test"): TEST})
    run = judged.read_run(path)
    assert len(run) == 3 and run.name == "org/model" and run.source.endswith("(default/test)")
    assert len(read_predictions(path, split="dev")) == 2
    (tmp_path / "q.txt").write_text(QRELS)
    assert judged.evaluate(tmp_path / "q.txt", {"m": run}, ["RR"]).mean().iloc[0, 0] == 1.0


def test_cli_split_reads_that_split(tmp_path, capsys):
    path = predictions(tmp_path, {("default", "dev"): DEV, ("default", "test"): TEST})
    (tmp_path / "q.txt").write_text(QRELS)
    assert main(["eval", str(tmp_path / "q.txt"), str(path), "-m", "RR", "--split", "dev", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"][str(path)]["mean"]["RR"] == 0.5          # dev ranks d2 (grade 0) first


def test_ambiguous_predictions_are_one_line_error(tmp_path, capsys):
    path = predictions(tmp_path, {("en", "test"): TEST, ("fr", "test"): TEST})
    with pytest.raises(ParseError, match=r"hold en/test, fr/test \(subsets en, fr\); several match \(none named\): choose with --subset"):
        judged.read_run(path)
    assert len(read_predictions(path, subset="fr")) == 3
    (tmp_path / "q.txt").write_text(QRELS)
    assert main(["eval", str(tmp_path / "q.txt"), str(path)]) == 2
    assert capsys.readouterr().err.startswith("judged: error:")


def test_reported_scores(tmp_path):
    path = tmp_path / "Task.json"
    path.write_text(json.dumps({"task_name": "Task", "scores": {"test": [
        {"ndcg_at_10": 0.5, "main_score": 0.5, "hf_subset": "default", "languages": ["eng-Latn"]}]}}))
    assert read_scores(path) == {("default", "test"): {"ndcg_at_10": 0.5, "main_score": 0.5}}
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ParseError, match="not an MTEB results file"):
        read_scores(tmp_path / "bad.json")
