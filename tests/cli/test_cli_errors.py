"""Every CLI failure is one line ``judged: error: ...`` on stderr, exit 2, no traceback;
and no failure truncates a file that was already there."""

from __future__ import annotations

import os

import pytest

from judged.cli import main
from judged.core.errors import UsageError
from judged.core.io.output import open_replacing

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
    (tmp_path / "latin1.txt").write_bytes("1\n2 caf\xe9\n".encode("latin-1"))
    (tmp_path / "queries.json").write_text('{"1": "a",')
    (tmp_path / "number.json").write_text("7")
    (tmp_path / "queries.jsonl").write_text('{"_id": "1"}\n{"text": "no id"}\n')
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
    "infer": lambda q, r: ["infer", q, r, "--sample", "missing.txt"],
    "rejudge": lambda q, r: ["rejudge", "--qrels", q, "--qrels", "qrels.txt", r],
    "meta power": lambda q, r: ["meta", "power", q, r, "b.run"],
    "compare": lambda q, r: ["compare", q, r, "b.run"],
    "compare run": lambda q, r: ["compare", q, "b.run", r],
    "report": lambda q, r: ["report", q, r, "b.run", "--format", "md"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("bad", BAD_INPUTS + ["short.txt", "grade.txt"])
def test_bad_qrels(files, capsys, command, bad):
    one_line_error(COMMANDS[command](bad, "a.run"), capsys)


@pytest.mark.parametrize("bad", BAD_INPUTS + ["short.txt", "grade.txt"])
def test_freeze_bad_qrels(files, capsys, bad):
    one_line_error(["freeze", "--qrels", bad, "-m", "AP", "-o", "keep.txt"], capsys)
    assert (files / "keep.txt").read_text() == "precious\n"


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
    ["infer", "qrels.txt", "a.run", "--sample", "missing.txt"],
    ["infer", "qrels.txt", "a.run", "--sample", "qrels.txt"],  # not a sample
    ["infer", "qrels.txt", "a.run", "--sample", "qrels.txt", "--level", "1.5"],
    ["infer", "qrels.txt", "a.run", "--sample", "qrels.txt", "-m", "P@10"],
    ["pool", "qrels.txt", "a.run", "--depth", "5", "--strategy", "sample", "-o", "-"],  # no budget
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
    ["compare", "qrels.txt", "a.run", "b.run", "--depth", "0"],
    ["compare", "qrels.txt", "a.run", "b.run", "--depth", "-3"],
    ["compare", "qrels.txt", "a.run", "b.run", "--regressions", "-1"],
    ["compare", "qrels.txt", "a.run", "b.run", "--permutations", "0"],
    ["compare", "qrels.txt", "a.run", "b.run", "--permutations", "x"],
    ["compare", "qrels.txt", "a.run", "b.run", "--seed", "-1"],
    ["compare", "qrels.txt", "a.run", "b.run", "--seed", "x"],
    ["compare", "qrels.txt", "a.run", "b.run", "--correction", "sidak"],
    ["compare", "qrels.txt", "a.run", "b.run", "--format", "xml"],
    ["compare", "qrels.txt", "a.run", "b.run", "--maxgrade", "-1"],
    ["compare", "qrels.txt", "a.run", "b.run", "--maxgrade", "100000000000000000000000"],
    ["compare", "qrels.txt", "a.run", "b.run", "--negative", "x"],
    ["compare", "qrels.txt", "a.run", "b.run", "--high", "nan"],
    ["compare", "qrels.txt", "a.run", "b.run", "--high", "inf"],
    ["compare", "qrels.txt", "a.run", "b.run", "-m", "nDCG@x"],
    ["compare", "qrels.txt", "a.run", "b.run", "-m", "Judged@0"],
    ["compare", "qrels.txt", "a.run", "b.run", "--scale", "binary.dat"],
    ["compare", "qrels.txt", "a.run", "b.run", "--eligibility", "binary.dat"],
    ["compare", "qrels.txt", "a.run", "b.run", "--requirements", "adir"],
    ["compare", "qrels.txt", "a.run", "b.run", "--unanswerable", "binary.dat"],
    ["compare", "qrels.txt", "a.run", "b.run", "--answers", "binary.dat"],
    ["compare", "qrels.txt", "a.run", "b.run", "--as", "bob"],
    ["compare", "qrels.txt", "a.run", "b.run", "--save", "adir"],
    ["compare", "qrels.txt", "a.run", "b.run", "--save", "no/such/dir/r.json"],
    ["compare", "qrels.txt", "a.run"],  # no run to compare with
    ["compare", "qrels.txt"],
    ["compare", "--manifest", "eval.toml", "a.run"],
    ["compare", "--manifest", "eval.toml", "a.run", "b.run", "-m", "AP"],  # the manifest fixes the measures
    ["compare", "--manifest", "eval.toml", "a.run", "b.run", "--ties", "input"],
    ["compare", "--manifest", "missing.toml", "a.run", "b.run"],
    ["compare-records", "rec.json"],
    ["compare-records", "rec.json", "rec.json", "--baseline", "zzz"],
    ["compare-records", "rec.json", "rec.json", "-m", "zzz"],
    ["compare-records", "rec.json", "rec.json", "--permutations", "0"],
    ["compare-records", "rec.json", "rec.json", "--seed", "-3"],
    ["compare-records", "rec.json", "rec.json", "--correction", "x"],
    ["compare-records", "rec.json", "rec.json", "--format", "xml"],
    ["freeze", "--qrels", "qrels.txt", "-o", "e.toml"],  # -m is required
    ["freeze", "--qrels", "qrels.txt", "-m", "AP", "--queries", "binary.dat", "-o", "e.toml"],
    ["freeze", "--qrels", "qrels.txt", "-m", "AP", "--queries", "adir", "-o", "e.toml"],
    ["freeze", "--qrels", "qrels.txt", "-m", "AP", "--queries", "empty.txt", "-o", "e.toml"],
    ["freeze", "--qrels", "qrels.txt", "-m", "AP", "--queries", "missing.txt", "-o", "e.toml"],
    ["freeze", "--qrels", "qrels.txt", "-m", "AP"],  # -o is required
    ["freeze", "--qrels", "qrels.txt", "-m", "nDCG@x", "-o", "e.toml"],
    ["freeze", "--qrels", "qrels.txt", "-m", "AP", "--relevance-unit", "x", "-o", "e.toml"],
    ["freeze", "--qrels", "qrels.txt", "-m", "AP", "-o", "adir"],
    ["freeze", "--qrels", "qrels.txt", "-m", "AP", "-o", "no/such/dir/e.toml"],
    ["eval", "--manifest", "missing.toml", "a.run"],
    ["eval", "--manifest", "eval.toml", "a.run", "--save", "adir"],
    ["eval", "--manifest", "eval.toml", "a.run", "-m", "AP"],
    ["report", "qrels.txt", "a.run", "b.run", "--format", "xml"],
    ["report", "qrels.txt", "a.run", "b.run", "-o", "adir"],
    ["report", "qrels.txt", "a.run", "b.run", "-o", "no/such/dir/r.html"],
    ["report", "qrels.txt", "a.run", "b.run", "--depth", "0"],
    ["report", "qrels.txt", "a.run", "b.run", "--regressions", "-1"],
    ["report", "qrels.txt", "a.run", "b.run", "--permutations", "0"],
    ["report", "qrels.txt", "a.run", "b.run", "--power", "--format", "md"],
    ["report", "qrels.txt", "a.run", "b.run", "--power", "--power-samples", "0"],
    ["report", "qrels.txt", "a.run", "b.run", "--power", "--power-measure", "nDCG@x"],
    ["report", "qrels.txt", "a.run", "b.run", "--title"],
])
def test_one_line_error(frozen, capsys, argv):
    one_line_error(argv, capsys)


@pytest.fixture
def frozen(files):
    """``files`` plus a manifest (eval.toml), a record (rec.json) and one whose qrels are gone."""
    assert main(["freeze", "--qrels", "qrels.txt", "-m", "nDCG@10", "-m", "AP", "-o", "eval.toml"]) == 0
    assert main(["eval", "qrels.txt", "a.run", "b.run", "-m", "nDCG@10", "-m", "AP", "--save", "rec.json"]) == 0
    text = (files / "eval.toml").read_text()
    assert 'path = "qrels.txt"' in text
    (files / "gone.toml").write_text(text.replace('path = "qrels.txt"', 'path = "gone.txt"'))
    return files


@pytest.mark.parametrize("queries, where", [
    ("latin1.txt", "latin1.txt:2: not UTF-8"),
    ("queries.json", "queries.json:1: not JSON"),
    ("number.json", "number.json: a JSON queries file is a list of ids"),
    ("queries.jsonl", "queries.jsonl:2: not a JSON object with an _id"),
])
def test_freeze_bad_queries(files, capsys, queries, where):
    line = one_line_error(["freeze", "--qrels", "qrels.txt", "-m", "AP", "--queries", queries, "-o", "keep.txt"],
                          capsys)
    assert where in line, line
    assert (files / "keep.txt").read_text() == "precious\n"


@pytest.mark.parametrize("command", [["compare", "--manifest", "gone.toml", "a.run", "b.run"],
                                     ["eval", "--manifest", "gone.toml", "a.run"]])
def test_manifest_whose_qrels_are_gone(frozen, capsys, command):
    assert "gone.toml: its qrels file 'gone.txt' no longer exists" in one_line_error(command, capsys)


def _edit_toml(old, new):
    return lambda text: text.replace(old, new) if old in text else pytest.fail(f"{old!r} not in the manifest")


MANIFESTS = {  # file content -> what the one error line must say
    "binary": (None, "binary.dat:2: not UTF-8 text"),
    "directory": (None, "adir: is a directory"),
    "empty": (lambda t: "", "not a judged manifest"),
    "not TOML": (lambda t: "x = [\n", "m.toml:1: invalid TOML"),
    "bad TOML line": (lambda t: t.replace("[conventions]", "[conventions"),  # the line of the broken header
                      lambda t: f"m.toml:{t.splitlines().index('[conventions]') + 1}: invalid TOML"),
    "other format": (lambda t: t.replace('format = "judged-manifest/1"', 'format = "x"'), "not a judged manifest"),
    "no measures": (_edit_toml("[[measures]]", "[[nomeasures]]"), "measures should be a list, got nothing"),
    "measures a string": (lambda t: 'format = "judged-manifest/1"\nmeasures = "AP"\n', "measures should be a list"),
    "bad measure": (_edit_toml('measure = "AP"', 'measure = "AP@x"'), "cannot parse measure 'AP@x'"),
    "bad ties": (_edit_toml('ties = "trec"', 'ties = "bogus"'), "unknown tie order ties='bogus'"),
    "complete a string": (_edit_toml("complete = true", 'complete = "yes"'), "conventions.complete should be true or"),
    "no conventions": (_edit_toml("[conventions]", "[conventionsx]"), "conventions should be a mapping"),
    "qrels path a number": (_edit_toml('path = "qrels.txt"', "path = 5"), "qrels.path should be a string, got int 5"),
    "no qrels": (_edit_toml("[qrels]", "[qrelsx]"), "qrels.path should be a string, got nothing"),
    "frozen qrels binary": (_edit_toml('path = "qrels.txt"', 'path = "binary.dat"'), "binary.dat:1: binary data"),
}


@pytest.mark.parametrize("command", ["compare", "eval", "report"])
@pytest.mark.parametrize("case", list(MANIFESTS))
def test_bad_manifest(frozen, capsys, command, case):
    """A manifest that is not one, or no longer parses, is one line naming the file (and line)."""
    edit, expected = MANIFESTS[case]
    path = {"binary": "binary.dat", "directory": "adir"}.get(case, "m.toml")
    original = (frozen / "eval.toml").read_text()
    if edit is not None:
        (frozen / path).write_text(edit(original))
    if callable(expected):
        expected = expected(original)
    argv = {"compare": ["compare", "--manifest", path, "a.run", "b.run"],
            "eval": ["eval", "--manifest", path, "a.run"],
            "report": ["report", "--manifest", path, "a.run", "b.run", "-o", "keep.txt"]}[command]
    line = one_line_error(argv, capsys)
    assert expected in line, line
    assert (frozen / "keep.txt").read_text() == "precious\n"


def _runs(edit):
    return lambda r: [edit(entry) for entry in r["runs"].values()]


def _per_query(edit):
    return _runs(lambda entry: [edit(v) for v in entry["per_query"].values()])


RECORDS = {  # an edit of a valid record -> what the one error line must say
    "not JSON": ("{", "x.json:1: not a JSON record"),
    "binary": (b"\x80\x81", "x.json:1: not UTF-8 text"),
    "a list": ("[1]", "not a judged evaluation record"),
    "other format": (lambda r: r.update(format="x"), "not a judged evaluation record"),
    "no runs": (lambda r: r.pop("runs"), "runs should be a mapping, got nothing"),
    "runs a list": (lambda r: r.update(runs=[]), "runs should be a mapping, got list"),
    "no run": (lambda r: r.update(runs={}), "it holds no run"),
    "a run null": (_runs(lambda e: e.clear()), "per_query should be a mapping, got nothing"),
    "no qrels": (lambda r: r.pop("qrels"), "qrels should be a mapping"),
    "qrels a string": (lambda r: r.update(qrels="x"), "qrels should be a mapping, got str"),
    "no measures": (lambda r: r.pop("measures"), "measures should be a mapping"),
    "measures a list": (lambda r: r.update(measures=["AP"]), "measures should be a mapping, got list"),
    "per_query a string": (_runs(lambda e: e.update(per_query="x")), "per_query should be a mapping, got str"),
    "value a string": (_per_query(lambda v: v.update(AP="x")), "runs.a.run.per_query.1.AP should be a number"),
    "value null": (_per_query(lambda v: v.update(AP=None)), "AP should be a number, got nothing"),
    "value missing": (_per_query(lambda v: v.pop("AP")), "AP should be a number, got nothing"),
    "no shared query": (_runs(lambda e: e.update(per_query={})), "the records share no query"),
}


@pytest.mark.parametrize("case", list(RECORDS))
@pytest.mark.parametrize("which", ["a", "b"])
def test_bad_record(frozen, capsys, case, which):
    """compare-records on a malformed or hand-edited record: one line naming the file and the key."""
    import json

    edit, expected = RECORDS[case]
    if isinstance(edit, bytes):
        (frozen / "x.json").write_bytes(edit)
    elif isinstance(edit, str):
        (frozen / "x.json").write_text(edit)
    else:
        data = json.loads((frozen / "rec.json").read_text())
        edit(data)
        (frozen / "x.json").write_text(json.dumps(data))
    argv = ["compare-records", "rec.json", "x.json"] if which == "b" else ["compare-records", "x.json", "rec.json"]
    line = one_line_error(argv, capsys)
    assert expected in line, line
    if case != "no shared query":
        assert line.startswith("judged: error: x.json"), line


@pytest.mark.parametrize("argv", [
    ["pool", "qrels.txt", "missing.run", "--depth", "5", "-o", "keep.txt"],
    ["pool", "qrels.txt", "a.run", "--depth", "5", "--maxgrade", "-1", "-o", "keep.txt"],
    ["qrels", "merge", "qrels.txt", "conflict.txt", "-o", "keep.txt"],  # a refused conflict
    ["qrels", "merge", "qrels.txt", "grade.txt", "-o", "keep.txt"],
    ["report", "qrels.txt", "missing.run", "b.run", "-o", "keep.txt"],
    ["report", "qrels.txt", "a.run", "b.run", "--power", "--power-samples", "0", "-o", "keep.txt"],
    ["freeze", "--qrels", "qrels.txt", "-m", "AP", "--queries", "binary.dat", "-o", "keep.txt"],
    ["eval", "qrels.txt", "score.run", "--save", "keep.txt"],
    ["compare", "qrels.txt", "a.run", "b.run", "--seed", "-1", "--save", "keep.txt"],
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
    import judged.cli.eval_command as cli_eval

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


@pytest.mark.parametrize("argv, said", [
    (["evla", "qrels.txt", "a.run"], "invalid choice: 'evla' (choose from 'eval', 'compare'"),
    (["evla", "qrels.txt", "a.run"], "(did you mean 'eval'?) (see 'judged --help')"),
    (["meta", "powr", "qrels.txt"], "(did you mean 'power'?) (see 'judged meta --help')"),
    (["eval", "qrels.txt", "a.run", "--format", "jsn"], "(did you mean 'json'?)"),
    (["eval", "qrels.txt", "a.run", "--per-qeury"],
     "unrecognized arguments: --per-qeury (did you mean --per-query?) (see 'judged eval --help')"),
    (["eval", "qrels.txt", "a.run", "--formt=json"], "unrecognized arguments: --formt=json (did you mean --format?)"),
    (["meta", "power", "qrels.txt", "a.run", "b.run", "--alpah", "0.1"],
     "(did you mean --alpha?) (see 'judged meta power --help')"),
    (["eval", "qrels.txt", "a.run", "-m", "nDGC@10"], "did you mean 'nDCG@10'?"),
])
def test_mistyped_commands_options_and_measures_get_a_suggestion(files, capsys, argv, said):
    """Issue 34: argparse (before Python 3.14) suggests nothing; judged does, one line."""
    assert said in one_line_error(argv, capsys)


def test_nothing_close_suggests_nothing(files, capsys):
    assert "did you mean" not in one_line_error(["eval", "qrels.txt", "a.run", "--zzzzzz"], capsys)


def test_eval_mlflow_without_mlflow_is_one_line(files, capsys, monkeypatch):
    """``judged eval --mlflow`` where mlflow is not installed (None in sys.modules: its import
    fails as if absent) says how to install it, in one line; the
    --mlflow-* options without --mlflow are refused the same way. With mlflow installed,
    tests/integrations/test_mlflow.py logs a run to a local store."""
    monkeypatch.setitem(__import__("sys").modules, "mlflow", None)
    line = one_line_error(["eval", "qrels.txt", "a.run", "-m", "AP", "--mlflow"], capsys)
    assert line.startswith("judged: error: --mlflow needs mlflow: pip install 'judged[mlflow]'")
    line = one_line_error(["eval", "qrels.txt", "a.run", "-m", "AP", "--mlflow-run-name", "x"], capsys)
    assert line == "judged: error: --mlflow-experiment and --mlflow-run-name go with --mlflow"


@pytest.mark.parametrize("argv, victim", [
    (["freeze", "qrels.txt", "-m", "AP", "-o", "qrels.txt"], "qrels.txt"),
    (["pool", "qrels.txt", "a.run", "b.run", "--depth", "5", "-o", "b.run"], "b.run"),
    (["report", "qrels.txt", "a.run", "b.run", "-o", "./a.run"], "a.run"),
    (["eval", "qrels.txt", "a.run", "-m", "AP", "--save", "a.run"], "a.run"),
    (["gate", "qrels.txt", "a.run", "b.run", "--policy", "gate.toml", "--junit", "gate.toml"], "gate.toml"),
])
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(files, capsys, argv, victim):
    """``judged freeze qrels.txt -o qrels.txt`` replaced the qrels with the manifest (and
    ``judged judge export --db j.db -o j.db`` the campaign with its qrels): an output named
    as one of the command's inputs is refused before anything is read, the input untouched.
    ``judged qrels merge`` may still write into its base (test_merge_into_its_own_input)."""
    (files / "gate.toml").write_text("[holes]\nmax_share = 1.0\n")
    before = (files / victim).read_bytes()
    line = one_line_error(argv, capsys)
    assert "is also an input of this command" in line and victim in line
    assert (files / victim).read_bytes() == before


def test_an_output_beside_its_inputs_is_still_written(files, capsys):
    assert main(["freeze", "qrels.txt", "-m", "AP", "-o", "eval.toml"]) == 0
    assert (files / "eval.toml").read_text().startswith("#")


@pytest.mark.parametrize("argv", [
    ["explain", "qrels.txt", "a.run", "--query", "1"],
    ["rejudge", "qrels.txt", "a.run", "b.run", "--versus-qrels", "qrels.txt"],
    ["answers", "qrels.txt", "a.run", "--answers", "answers.tsv"],
    ["meta", "holdout", "qrels.txt", "a.run", "b.run"],
    ["meta", "pooling", "qrels.txt", "a.run", "b.run", "--budget", "2"],
])
def test_a_one_measure_command_refuses_a_second_measure(files, capsys, argv):
    """``judged explain ... -m AP -m P@5`` explained P@5 alone and said nothing of AP (argparse
    keeps the last): a command that reads one measure refuses a second, naming both."""
    (files / "answers.tsv").write_text("a 1 true\n")
    line = one_line_error([*argv, "-m", "AP", "-m", "P@5"], capsys)
    assert "-m/--measure" in line and "'AP'" in line and "'P@5'" in line and "one measure" in line
    assert main([*argv, "-m", "P@5"]) == 0                       # once is fine


@pytest.mark.parametrize("strategy", [[], ["--strategy", "depth"], ["--strategy", "impact"]])
def test_pool_strata_without_the_sample_strategy_is_refused(files, capsys, strategy):
    """``judged pool ... --strategy depth --strata 1,5`` wrote a depth pool and dropped the
    strata unsaid, while ``--queries`` with a strategy that reads none is refused: the same."""
    line = one_line_error(["pool", "qrels.txt", "a.run", "b.run", "--budget", "2", *strategy, "--strata", "1,3",
                           "-o", "keep.txt"], capsys)
    assert "--strata goes with --strategy sample, not" in line
    assert (files / "keep.txt").read_text() == "precious\n"
    assert main(["pool", "qrels.txt", "a.run", "b.run", "--budget", "3", "--strategy", "sample", "--strata", "1,3",
                 "-o", "keep.txt"]) == 0


@pytest.mark.parametrize("option", [["--spark-master", "local[1]"], ["--spark-logs"]])
def test_spark_options_without_the_spark_engine_are_refused(files, capsys, option):
    """``judged eval ... --spark-master spark://host:7077`` without ``--engine spark`` scored
    in this process and said nothing of the master; refused as --mlflow-run-name without
    --mlflow is."""
    line = one_line_error(["eval", "qrels.txt", "a.run", "-m", "AP", *option], capsys)
    assert line == "judged: error: --spark-master and --spark-logs go with --engine spark"


def test_demo_writes_over_no_file_of_the_users(files, capsys):
    """``judged demo --write .`` in a project replaced its qrels.txt with the demo's: a file
    there under one of the demo's names with other content is refused, nothing written;
    the demo's own folder can be written again."""
    assert main(["demo", "--write", "."]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("judged: error: ") and "qrels.txt" in err[0], err
    assert (files / "qrels.txt").read_text() == QRELS and not (files / "lexical.run").exists()
    for _ in range(2):
        assert main(["demo", "--write", "demo-data"]) == 0
    assert (files / "demo-data" / "qrels-after.txt.provenance.tsv").exists()
