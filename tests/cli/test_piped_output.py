"""Output to a file or a pipe (issue #34): no line is wrapped unless COLUMNS says how wide,
in every command (holes, compare and meta holdout used to wrap at 120 or 140 columns
whatever COLUMNS said; judge status cut its headers to 'asse…')."""

import shutil
from pathlib import Path

import pytest

from judged.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
COMMANDS = {
    "eval": ["eval", "{q}", "{a}", "{b}", "-m", "nDCG@10", "-m", "AP"],
    "holes": ["holes", "{q}", "{a}", "{b}", "--samples", "5"],
    "compare": ["compare", "{q}", "{a}", "{b}", "--permutations", "200", "--regressions", "1"],
    "meta holdout": ["meta", "holdout", "{q}", "{a}", "{b}", "{c}", "--samples", "5"],
}


@pytest.fixture
def deep_runs(tmp_path):
    """The example's files under a folder whose path is longer than any page."""
    deep = tmp_path / ("a-long-folder-name-" * 6) / "runs"
    deep.mkdir(parents=True)
    for name in ("qrels.txt", "bm25.run", "dense.run", "tuned.run"):
        shutil.copy(EXAMPLES / name, deep / name)
    return {"q": str(deep / "qrels.txt"), "a": str(deep / "bm25.run"), "b": str(deep / "dense.run"),
            "c": str(deep / "tuned.run")}


def _run(command, files, capsys) -> list:
    assert main([w.format(**files) for w in COMMANDS[command]]) == 0, capsys.readouterr().err
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_piped_lines_are_never_wrapped(command, deep_runs, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = _run(command, deep_runs, capsys)
    # the qrels' path (longer than 120 columns) is printed whole wherever it is printed, and each
    # sentence ends on the line it starts: no line starts with the tail of a wrapped one
    assert any(deep_runs["q"] in line for line in lines) or command in ("compare", "meta holdout")
    folder = str(Path(deep_runs["q"]).parent)
    assert not any(line.startswith(folder[40:60]) for line in lines)
    assert max(map(len, lines)) > 140  # the long lines are there, whole


@pytest.mark.parametrize("command", list(COMMANDS))
def test_piped_output_honours_columns(command, deep_runs, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "70")
    lines = _run(command, deep_runs, capsys)
    if "conventions:" in lines:  # the convention strings are printed whole, to be copied
        lines = lines[:lines.index("conventions:")]
    long = [line for line in lines if len(line) > 70 and "=" not in line]
    assert not long, long


@pytest.mark.parametrize("command", ["eval", "holes", "compare"])
def test_piped_tables_fit_80_columns(command, capsys, monkeypatch):
    """Without COLUMNS, tables fit 80 columns (issue #34: tables that read at 80 columns)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    files = {"q": str(EXAMPLES / "qrels.txt"), "a": str(EXAMPLES / "bm25.run"), "b": str(EXAMPLES / "dense.run")}
    lines = _run(command, files, capsys)
    rows = [line for line in lines if line[:1] in "┏┃┡│└─" or ("   " in line.strip() and not line.startswith("  "))]
    assert len(rows) >= 4 and max(map(len, rows)) <= 80, rows  # the table's lines: cells apart, or box lines


def test_a_piped_table_80_columns_would_cut_is_drawn_whole(capsys, monkeypatch):
    """meta holdout's table needs more than 80 columns for its numbers: drawn as wide as its
    cells, never cut (Rich narrowed it to 4-letter slices)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    files = {"q": str(EXAMPLES / "qrels.txt"), "a": str(EXAMPLES / "bm25.run"), "b": str(EXAMPLES / "dense.run"),
             "c": str(EXAMPLES / "tuned.run")}
    lines = _run("meta holdout", files, capsys)
    rows = [line for line in lines if line.startswith("│ ") and ".run" in line]
    assert len(rows) == 3 and all(len(row.split("│")) == 13 for row in rows)  # one line per run
    assert "…" not in "".join(lines) and max(map(len, rows)) > 80


def test_freeze_prints_its_lines_whole_on_stderr(deep_runs, tmp_path, capsys, monkeypatch):
    """freeze wrote its stderr through a Rich console 80 columns wide: each convention string
    broke in two (`... unjudged=zero` / `ties=score-desc,...`), unlike every other command's."""
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["freeze", deep_runs["q"], "-m", "nDCG@10", "-m", "AP", "-o", str(tmp_path / "eval.toml")]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and lines[0].endswith(f"2 measures into {tmp_path / 'eval.toml'}")
    assert lines[1].startswith("  nDCG@10 gain=linear") and lines[1].endswith("identical-ids=kept")
