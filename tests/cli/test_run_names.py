"""One naming rule for runs in every command's tables and sentences (issue #34): a run given
by its path is shown by its file name, with the folders it takes to tell two runs apart
(judged.core.runnames.display_names); JSON keeps the names as given. `meta holdout` used to
show 'bm25' where every other command printed the whole path."""

import json
import shutil
from pathlib import Path

import pytest

from judged.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
COMMANDS = {
    "eval": ["eval", "{q}", "{a}", "{b}", "{c}"],
    "holes": ["holes", "{q}", "{a}", "{b}", "{c}", "--samples", "5", "--pairs", "all"],
    "compare": ["compare", "{q}", "{a}", "{b}", "{c}", "--permutations", "200"],
    "report md": ["report", "{q}", "{a}", "{b}", "{c}", "--permutations", "200", "--format", "md"],
    "rejudge": ["rejudge", "{q}", "{a}", "{b}", "{c}", "--versus-qrels", "{more}"],
    "meta holdout": ["meta", "holdout", "{q}", "{a}", "{b}", "{c}", "--samples", "5"],
    "meta stability": ["meta", "stability", "{q}", "{a}", "{b}", "{c}", "-m", "nDCG@10", "-m", "AP"],
}


@pytest.fixture
def files(tmp_path):
    """The example runs in two folders: runs/v1/bm25.run and runs/v2/bm25.run share a file name."""
    for folder in ("v1", "v2"):
        (tmp_path / "runs" / folder).mkdir(parents=True)
    shutil.copy(EXAMPLES / "bm25.run", tmp_path / "runs" / "v1" / "bm25.run")
    shutil.copy(EXAMPLES / "tuned.run", tmp_path / "runs" / "v2" / "bm25.run")
    shutil.copy(EXAMPLES / "dense.run", tmp_path / "runs" / "v2" / "dense.run")
    for name in ("qrels.txt", "qrels-more.txt"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return {"q": str(tmp_path / "qrels.txt"), "more": str(tmp_path / "qrels-more.txt"),
            "a": str(tmp_path / "runs" / "v1" / "bm25.run"), "b": str(tmp_path / "runs" / "v2" / "dense.run"),
            "c": str(tmp_path / "runs" / "v2" / "bm25.run")}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_shows_runs_by_the_one_rule(command, files, capsys):
    assert main([w.format(**files) for w in COMMANDS[command]]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    for path in (files["a"], files["b"], files["c"]):
        assert path not in out  # never the path given
    words = out.replace("|", " ").replace(",", " ").replace(":", " ").split()
    assert "v1/bm25.run" in words and "v2/bm25.run" in words and "dense.run" in words, out
    assert "bm25" not in words and "dense" not in words  # nor a stem


def test_json_keeps_the_names_as_given(files, capsys):
    assert main(["holes", files["q"], files["a"], files["b"], "--samples", "5", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert list(d["runs"]) == [files["a"], files["b"]]
    assert d["summary"]["order"] == sorted([files["a"], files["b"]], key=lambda r: -d["runs"][r]["score"])
