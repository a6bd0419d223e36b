"""The command line for a newcomer (issue #14): fast --help, help and default for every option,
one meaning per option name (old spellings kept as aliases), a README Use block that runs."""

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from judged.cli import COMMANDS, SUMMARIES, build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def _parsers(parser, path=("judged",)):
    """(command path, parser) for the parser and every subcommand below it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, path + (name,))


@pytest.mark.parametrize("args", [["--help"], ["--version"], []])
def test_top_level_help_and_version_import_neither_numpy_nor_pyarrow(args):
    code = ("import sys\nfrom judged.cli import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass\n"
            "print('MODULES', 'numpy' in sys.modules, 'pyarrow' in sys.modules, 'judged.cli.eval_command' in sys.modules)"
            % (args,))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "MODULES False False False", out


def test_summaries_are_what_the_commands_register():
    full = build_parser()
    sub = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    assert helps == SUMMARIES
    assert set(COMMANDS) <= set(SUMMARIES)


def test_a_command_parses_the_same_with_the_lazy_parser(capsys):
    for name in SUMMARIES:
        lazy = build_parser(name)
        sub = next(a for a in lazy._actions if isinstance(a, argparse._SubParsersAction))
        assert sub.choices[name].format_help() == next(
            p for path, p in _parsers(build_parser()) if path == ("judged", name)).format_help()


def test_every_option_has_help_and_shows_its_default():
    missing = []
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if not action.option_strings or isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            text = parser._get_formatter()._expand_help(action) if action.help else ""
            if not text:
                missing.append(f"{' '.join(path)} {action.option_strings[0]}: no help")
            elif action.default not in (None, False, [], argparse.SUPPRESS) and "default" not in text:
                missing.append(f"{' '.join(path)} {action.option_strings[0]}: default {action.default!r} not shown")
    assert not missing, "\n".join(missing)


def test_format_options_say_their_choices_and_default():
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if "--format" in action.option_strings:
                text = parser._get_formatter()._expand_help(action)
                assert "default" in text and str(action.default) in text, (path, text)


def test_demo_prints_the_sha256_of_the_files_it_writes(tmp_path, capsys):
    # issue #14: the demo printed a qrels sha256 (of in-memory columns) no file had
    import hashlib

    assert main(["demo", "--write", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for label, name in (("before", "qrels.txt"), ("after", "qrels-after.txt")):
        sha = hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
        assert f"{label}: {name}:" in out and f"sha256={sha[:16]}" in out, (name, sha)
    assert (tmp_path / "labels.txt").exists() and (tmp_path / "qrels-after.txt.provenance.tsv").exists()
    assert main(["qrels", "diff", str(tmp_path / "qrels.txt"), str(tmp_path / "qrels-after.txt"),
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["a"]["sha256"] == hashlib.sha256(
        (tmp_path / "qrels.txt").read_bytes()).hexdigest()


def _example(tmp_path):
    out = tmp_path / "ex"
    shutil.copytree(ROOT / "docs" / "examples", out, ignore=shutil.ignore_patterns("beyond", "*.py"))
    return out


def test_one_meaning_per_option_name_old_spellings_kept(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(_example(tmp_path))

    def run_json(*args):
        assert main([*args, "--format", "json"]) == 0, capsys.readouterr().err
        return json.loads(capsys.readouterr().out)

    # a later qrels version: --versus-qrels everywhere; eval's and rejudge's old --qrels kept
    new = run_json("rejudge", "qrels.txt", "bm25.run", "dense.run", "--versus-qrels", "qrels-more.txt")
    old = run_json("rejudge", "--qrels", "qrels.txt", "--qrels", "qrels-more.txt", "bm25.run", "dense.run")
    via_eval = run_json("eval", "qrels.txt", "bm25.run", "dense.run", "--versus-qrels", "qrels-more.txt")
    old_eval = run_json("eval", "qrels.txt", "bm25.run", "dense.run", "--qrels", "qrels-more.txt")
    assert new["runs"] == old["runs"] == via_eval["runs"] == old_eval["runs"]
    # the qrels: the first argument everywhere; freeze's --qrels kept
    assert main(["freeze", "qrels.txt", "-m", "nDCG@10", "-o", "a.toml"]) == 0
    assert main(["freeze", "--qrels", "qrels.txt", "-m", "nDCG@10", "-o", "b.toml"]) == 0
    def frozen(path):  # the manifest without its creation time (the two calls may straddle a second)
        return [line for line in Path(path).read_text().splitlines() if not line.startswith("created")]

    assert frozen("a.toml") == frozen("b.toml")
    assert main(["freeze", "-m", "nDCG@10", "-o", "c.toml"]) == 2
    capsys.readouterr()
    # -k and --depth: the top K examined, both spellings wherever either is taken
    assert run_json("holes", "qrels.txt", "bm25.run", "-k", "5")["k"] == run_json(
        "holes", "qrels.txt", "bm25.run", "--depth", "5")["k"] == 5
    assert run_json("compare", "qrels.txt", "bm25.run", "dense.run", "-k", "5")["holes"]["k"] == 5
    assert run_json("rejudge", "qrels.txt", "bm25.run", "--versus-qrels", "qrels-more.txt", "--depth", "5")[
        "judged"] == "Judged@5"
    # no abbreviation: --depth is never read as --depth-cut
    with pytest.raises(SystemExit) as exit_:
        main(["meta", "power", "qrels.txt", "bm25.run", "dense.run", "--depth", "5"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --depth" in capsys.readouterr().err
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if "-k" in action.option_strings or "--depth" in action.option_strings:
                assert {"-k", "--depth"} <= set(action.option_strings), path
                assert "top K" in action.help, path


def test_on_duplicate_is_one_option_everywhere():
    """--on-duplicate is declared once (judged.cli.common.add_on_duplicate_option): the same
    choices, default and help in every command that reads qrels or runs (it had three help
    texts in six declarations)."""
    from judged.cli.common import ON_DUPLICATE_HELP
    from judged.core.conventions import ON_DUPLICATE

    found = {}
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if "--on-duplicate" in action.option_strings:
                found[" ".join(path)] = (tuple(action.option_strings), tuple(action.choices), action.default, action.help)
    assert set(found) >= {"judged eval", "judged explain", "judged freeze", "judged pool", "judged qrels merge",
                          "judged qrels diff", "judged judge agreement", "judged meta power"}
    assert set(found.values()) == {(("--on-duplicate",), ON_DUPLICATE, "error", ON_DUPLICATE_HELP)}
    src = Path(__file__).resolve().parents[2] / "src" / "judged" / "cli"
    declared = [p.name for p in src.glob("*.py") if '"--on-duplicate"' in p.read_text()]
    assert declared == ["common.py"]


def test_the_same_run_twice_and_runs_named_by_path(tmp_path, capsys, monkeypatch):
    ex = _example(tmp_path)
    monkeypatch.chdir(ex)
    assert main(["compare", "qrels.txt", "bm25.run", "bm25.run", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["runs"] == ["bm25.run (2)"] and d["comparisons"][0]["p_values"]["randomization"] == 1.0
    (ex / "v2").mkdir()
    shutil.copy(ex / "bm25.run", ex / "v2" / "bm25.run")
    runs = [str(ex / "bm25.run"), str(ex / "dense.run"), str(ex / "v2" / "bm25.run")]
    assert main(["report", "qrels.txt", *runs, "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert str(ex) not in md  # no absolute path in the paper table
    assert "| ex/bm25.run (baseline) |" in md and "| dense.run |" in md and "| v2/bm25.run |" in md
    assert main(["report", "qrels.txt", *runs, "-o", "r.html"]) == 0
    page = Path("r.html").read_text()
    body = page.split("id='settings'")[0] if "id='settings'" in page else page
    assert "v2/bm25.run" in page and str(ex / "dense.run") not in body.split("<dl class='settings'>")[0]


def test_qrels_diff_lists_qids_in_natural_order(tmp_path, capsys):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("".join(f"q{i} 0 d 1\n" for i in (1, 2, 10, 9)))
    b.write_text("".join(f"q{i} 0 d 2\n" for i in (1, 2, 10, 9)))
    assert main(["qrels", "diff", str(a), str(b), "--format", "json", "--list"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert list(d["per_query"]) == ["q1", "q2", "q9", "q10"]
    assert [p["qid"] for p in d["pairs"]] == ["q1", "q2", "q9", "q10"]


def _blocks(text: str, lang: str):
    return re.findall(r"```" + lang + r"\n(.*?)```", text, re.S)


def test_readme_use_blocks_run_as_written(tmp_path, monkeypatch, capsys):
    """Every command of the README's Use section runs from a clean checkout (in a copy of
    it here, so the files the commands write stay out of the repository)."""
    use = _use_section()
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "docs" / "examples", checkout / "docs" / "examples")
    monkeypatch.chdir(checkout)
    ran = 0
    for line, words, out in _use_commands(use):
        if words[0] == "cd":  # as in a shell: from where the previous line left
            os.chdir(words[1])
            continue
        args = [a for w in words[1:] for a in (sorted(glob.glob(w)) if "*" in w else [w])]
        assert main(args) == 0, (line, capsys.readouterr().err)
        text = capsys.readouterr().out
        if out:
            Path(out).write_text(text)
        ran += 1
    assert ran >= 12
    os.chdir(checkout / "docs" / "examples")
    exec(_blocks(use, "python")[0], {})  # the Python block, in the example folder
    assert len(_blocks(use, "python")) == 1  # the other Python lines (own data) are under "Your own data"


def _use_section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split("## Use", 1)[1].split("\n## ", 1)[0]


def _use_commands(use: str):
    """(line, words, file the output goes to or None) of every command of the Use section's
    shell blocks: `judged ...`, or `cd DIR`."""
    for block in _blocks(use, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if not line or line.startswith("#"):
                continue
            words, out = shlex.split(line), None
            if ">" in words:  # judged scale > scale.toml
                words, out = words[:words.index(">")], words[words.index(">") + 1]
            assert words[0] in ("judged", "cd"), line
            yield line, words, out


RUN_USE = """
import glob, json, os, sys

class Absent:  # what `pip install judged` does not install cannot be imported
    def find_spec(self, name, path=None, target=None):
        if "." not in name and name in json.loads(sys.argv[2]):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Absent())
from judged.cli import main
for words, out in json.loads(sys.argv[1]):
    if words[0] == "cd":
        os.chdir(words[1])
        continue
    args = [a for w in words[1:] for a in (sorted(glob.glob(w)) if "*" in w else [w])]
    assert main(args) == 0, words
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def _requirement_closure(requirements) -> set:
    """The distributions ``requirements`` name (this Python's markers, no extras) and, as
    installed here, every distribution they require in turn."""
    from importlib.metadata import PackageNotFoundError, requires
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen, todo = set(), list(requirements)
    while todo:
        req = Requirement(todo.pop())
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            todo.extend(requires(name) or [])
        except PackageNotFoundError:
            pass
    return seen


def test_the_use_commands_need_only_the_default_install(tmp_path):
    """`pip install judged` (no extra) runs every command of the README's Use section (issue
    #34: compare, report and meta power --plot needed the compare, report and meta extras):
    run where every installed package that is not a dependency of judged's (or of theirs)
    cannot be imported, as after a plain install, they all succeed."""
    import tomllib
    from importlib.metadata import packages_distributions

    from packaging.utils import canonicalize_name

    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "docs" / "examples", checkout / "docs" / "examples")
    commands = [(words, out) for _, words, out in _use_commands(_use_section()) if not out]
    default = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    installed = _requirement_closure(default)
    absent = sorted(name for name, dists in packages_distributions().items()
                    if name != "judged" and not {canonicalize_name(d) for d in dists} & installed)
    done = subprocess.run([sys.executable, "-c", RUN_USE, json.dumps(commands), json.dumps(absent)], cwd=checkout,
                          capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-2000:]
    imported = set(json.loads(done.stdout.splitlines()[-1]))
    assert {"scipy", "matplotlib"} <= imported  # compare and report; meta power --plot


def test_degenerate_compare_prints_no_warning_on_stderr(tmp_path, capsys):
    # +0.1 on every query up to float rounding: no scipy precision warning leaks (issue #14)
    qrels = tmp_path / "q.txt"
    base, new = tmp_path / "base.run", tmp_path / "new.run"
    # RR: the baseline ranks a non-relevant document first (1/2), the new run a relevant one (1)
    qrels.write_text("".join(f"q{i} 0 d{i}-{j} {int(j > 0)}\n" for i in range(8) for j in range(10)))
    base.write_text("".join(f"q{i} Q0 d{i}-{j} {j + 1} {10 - j} b\n" for i in range(8) for j in range(10)))
    new.write_text("".join(f"q{i} Q0 d{i}-{j} {j + 1} {10 - j if j else 8.5} n\n" for i in range(8) for j in range(10)))
    code = ("import warnings, sys\nwarnings.simplefilter('always')\nfrom judged.cli import main\n"
            f"sys.exit(main(['compare', {str(qrels)!r}, {str(base)!r}, {str(new)!r}, '-m', 'P@10', '-m', 'RR',"
            "'--all-tests', '--regressions', '0']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "n/a" in done.stdout  # t-test and bootstrap: not defined on constant differences
