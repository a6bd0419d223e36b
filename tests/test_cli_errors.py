"""Every CLI failure is one line ``judged: error: ...`` on stderr, exit 2, no traceback;
and no failure truncates a file that was already there."""

from __future__ import annotations

import os

import pytest

from judged.cli import main
from judged.errors import UsageError
from judged.io.output import open_replacing

QRELS = "1 0 d1 2\n1 0 d2 0\n1 0 d3 1\n2 0 d1 1\n2 0 d4 3\n"
RUN_A = "1 Q0 d1 1 3.0 a\n1 Q0 d5 2 2.0 a\n1 Q0 d3 3 1.0 a\n2 Q0 d4 1 2 a\n2 Q0 d9 2 1 a\n"
RUN_B = "1 Q0 d2 1 3.0 b\n1 Q0 d1 2 2.0 b\n2 Q0 d7 1 2 b\n2 Q0 d1 2 1 b\n"


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, text in {"qrels.txt": QRELS, "a.run": RUN_A, "b.run": RUN_B, "empty.txt": "",
                       "short.txt": "1 0 d1\n", "grade.txt": "1 0 d1 x\n", "prefs.txt": "1 a.run b.run a\n",
                       "score.run": "1 Q0 d1 1 abc t\n", "inf.run": "1 Q0 d1 1 inf t\n", "four.run": "1 Q0 d1 1\n",
                       "conflict.txt": "1 0 d1 0\n", "keep.txt": "precious\n"}.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "binary.dat").write_bytes(bytes(range(256)) * 3)
    (tmp_path / "adir").mkdir()
    return tmp_path


def one_line_error(argv, capsys, listed: bool = False) -> str:
    """Run ``argv``; expect exit 2 and one error line (after the listed conflicts, with ``listed``)."""
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own errors exit from inside parse_args
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2, (argv, rc, err)
    assert "Traceback" not in err
    lines = err.splitlines()
    assert (listed or len(lines) == 1) and lines[-1].startswith("judged: error: "), err
    return lines[-1]


BAD_INPUTS = ["missing.txt", "empty.txt", "binary.dat", "adir"]
COMMANDS = {
    "eval": lambda q, r: ["eval", q, r],
    "explain": lambda q, r: ["explain", q, r, "--query", "1"],
    "holes": lambda q, r: ["holes", q, r],
    "pool": lambda q, r: ["pool", q, r, "--depth", "5", "-o", "-"],
    "rejudge": lambda q, r: ["rejudge", "--qrels", q, "--qrels", "qrels.txt", r],
    "meta power": lambda q, r: ["meta", "power", q, r, "b.run"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("bad", BAD_INPUTS + ["short.txt", "grade.txt"])
def test_bad_qrels(files, capsys, command, bad):
    one_line_error(COMMANDS[command](bad, "a.run"), capsys)


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("bad", BAD_INPUTS + ["four.run", "score.run", "inf.run"])
def test_bad_run(files, capsys, command, bad):
    one_line_error(COMMANDS[command]("qrels.txt", bad), capsys)


@pytest.mark.parametrize("argv", [
    ["eval", "qrels.txt", "a.run", "--ties", "foo"],  # argparse: bad choice
    ["eval", "qrels.txt", "a.run", "--format", "xml"],
    ["eval", "qrels.txt", "a.run", "--bogus"],  # unknown flag
    ["eval", "qrels.txt", "a.run", "--high", "x"],  # not a number
    ["eval", "qrels.txt", "a.run", "--high", "nan"],
    ["eval", "qrels.txt", "a.run", "--depth", "0"],
    ["eval", "qrels.txt"],  # no run
    ["eval", "--beir", "adir"],
    ["eval", "qrels.txt", "a.run", "-m", "nDCG@x"],
    ["eval", "qrels.txt", "a.run", "-m", "nDCG(gain=zzz)@10"],
    ["eval", "qrels.txt", "a.run", "--scale", "binary.dat"],
    ["eval", "qrels.txt", "a.run", "--scale", "adir"],
    ["eval", "qrels.txt", "a.run", "--eligibility", "binary.dat"],
    ["eval", "qrels.txt", "a.run", "--requirements", "missing.txt"],
    ["eval", "qrels.txt", "a.run", "--as", "bob"],  # --as without --eligibility
    ["answers", "qrels.txt", "a.run", "--answers", "prefs.txt", "--as", "bob"],
    ["explain", "qrels.txt", "a.run", "--query", "99"],  # unknown qid
    ["holes", "qrels.txt", "a.run", "-k", "0"],
    ["holes", "qrels.txt", "a.run", "--samples", "0"],
    ["holes", "qrels.txt", "a.run", "--maxgrade", "-1"],
    ["holes", "qrels.txt", "a.run", "-m", "Bpref"],
    ["pool", "qrels.txt", "a.run", "--depth", "x", "-o", "-"],
    ["pool", "qrels.txt", "a.run", "--depth", "5", "--maxgrade", "-2", "-o", "-"],
    ["pool", "qrels.txt", "a.run", "--depth", "5", "-o", "no/such/dir/pool.txt"],
    ["pool", "qrels.txt", "a.run", "--depth", "5", "-o", "adir"],
    ["qrels", "merge", "qrels.txt", "qrels.txt", "-o", "no/such/dir/q.txt"],
    ["qrels", "merge", "qrels.txt", "qrels.txt", "-o", "adir"],
    ["qrels", "merge", "qrels.txt", "qrels.txt", "--prefer", "bad", "-o", "m.txt"],
    ["qrels", "bogus"],
    ["scale", "binary.dat"],
    ["scale", "adir"],
    ["scale", "missing.toml"],
    ["answers", "qrels.txt", "a.run", "--answers", "binary.dat"],
    ["meta", "power", "qrels.txt", "a.run", "b.run", "--alpha", "x"],
    ["meta", "power", "qrels.txt", "a.run", "b.run", "--plot", "no/such/dir/asl.png"],
    ["meta", "agreement", "empty.txt", "qrels.txt", "a.run", "b.run"],
    ["meta", "stability", "qrels.txt", "a.run", "b.run"],  # -m is required
    ["meta", "simulate-discount", "--sizes", "x"],
    ["completion", "fish"],
    ["bogus"],
])
def test_one_line_error(files, capsys, argv):
    one_line_error(argv, capsys)


@pytest.mark.parametrize("argv", [
    ["pool", "qrels.txt", "missing.run", "--depth", "5", "-o", "keep.txt"],
    ["pool", "qrels.txt", "a.run", "--depth", "5", "--maxgrade", "-1", "-o", "keep.txt"],
    ["qrels", "merge", "qrels.txt", "conflict.txt", "-o", "keep.txt"],  # a refused conflict
    ["qrels", "merge", "qrels.txt", "grade.txt", "-o", "keep.txt"],
])
def test_failure_keeps_existing_output(files, capsys, argv):
    one_line_error(argv, capsys, listed="conflict.txt" in argv)
    assert (files / "keep.txt").read_text() == "precious\n"
    assert not [n for n in os.listdir(files) if n.startswith(".keep.txt.")]  # no temporary left


def test_merge_into_its_own_input(files, capsys):
    """OUT may be one of the inputs: it is read whole before it is replaced."""
    assert main(["qrels", "merge", "qrels.txt", "qrels.txt", "-o", "qrels.txt"]) == 0
    assert (files / "qrels.txt").read_text() == QRELS
    assert (files / "qrels.txt.provenance.tsv").exists()


def test_open_replacing_discards_on_error(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    with pytest.raises(RuntimeError):
        with open_replacing(target) as fh:
            fh.write("half")
            raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    with open_replacing(target) as fh:
        fh.write("new\n")
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640  # an existing file keeps its permissions
    assert os.listdir(tmp_path) == ["out.txt"]
    with pytest.raises(UsageError, match="cannot write"):
        with open_replacing(tmp_path / "missing" / "x.txt"):
            pass


@pytest.mark.parametrize("exc, text", [
    (MemoryError("Unable to allocate 1.8 TiB"), "not enough memory"),
    (PermissionError(13, "Permission denied", "x.txt"), "x.txt: Permission denied"),
])
def test_last_resort_errors_are_one_line(files, capsys, monkeypatch, exc, text):
    """Errors no command catches closer to their cause still end as one line, exit 2."""
    import judged.cli.eval as cli_eval

    def boom(args):
        raise exc

    monkeypatch.setattr(cli_eval, "run", boom)
    assert text in one_line_error(["eval", "qrels.txt", "a.run"], capsys)


def test_convention_strings_are_never_wrapped(files, capsys):
    """Piped output keeps each canonical convention string on one line, so scripts can grep it."""
    import judged

    assert main(["eval", "qrels.txt", "a.run", "-m", "nDCG(gain=exp)@10"]) == 0
    out = capsys.readouterr().out.splitlines()
    conv = judged.evaluate("qrels.txt", ["a.run"], ["nDCG(gain=exp)@10"]).conventions["nDCG(gain=exp)@10"]
    assert len(conv) > 80 and f"  {conv}" in out
