"""docs/comparing.md shows real output: its first compare block is what the CLI prints today."""

import re

from judged.cli import main

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "comparing.md"
COMMAND = "judged compare qrels.txt bm25.run dense.run tuned.run -m nDCG@10 -m AP --regressions 1"


def test_example_files_are_what_the_generator_writes(example):
    for name in ("qrels.txt", "qrels-more.txt", "bm25.run", "dense.run", "tuned.run"):
        assert (example / name).read_bytes() == (ROOT / "docs" / "examples" / name).read_bytes(), name


def test_compare_block_matches_the_cli(example, capsys, monkeypatch):
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```\n\$ (.*?)\n(.*?)```", text, re.S)
    printed = {cmd: out for cmd, out in blocks}
    monkeypatch.chdir(example)
    monkeypatch.setenv("COLUMNS", "120")  # the doc shows a 120-column terminal
    assert main(COMMAND.split()[1:]) == 0
    out = "\n".join(line.rstrip() for line in capsys.readouterr().out.splitlines())
    documented = printed[COMMAND].rstrip("\n")
    # the doc splits this output in two blocks (tables, then regressions): both are verbatim
    regressions = re.search(r"```\n(dense\.run lost nDCG@10 on query .*?)```", text, re.S).group(1).rstrip("\n")
    assert out.rstrip() == documented + "\n" + regressions
