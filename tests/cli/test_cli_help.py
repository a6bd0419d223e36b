"""`judged --help`, `--version` and every subcommand's help import no heavy module (issue #19:
under 0.15 s for the whole process; the time itself is measured by benchmarks/workflow.py,
never here): no numpy, pyarrow, pandas, Rich, matplotlib, registry or engine module. The
values the help shows are read from their modules' text (judged.cli.declared), and must be
the values those modules hold."""

import argparse
import importlib
import json
import subprocess
import sys

import pytest

from judged.cli import SUMMARIES, build_parser
from judged.cli import declared as declared_module
from judged.cli.declared import _COMPUTED, _literal, declared

HEAVY = ("numpy", "pyarrow", "pandas", "polars", "scipy", "matplotlib", "rich", "sqlalchemy", "fastapi", "pyspark")
# the judged modules building help may import: the CLI itself, the version line, the error types
LIGHT = ("judged", "judged.cli", "judged.native", "judged._native", "judged.errors", "judged.core",
         "judged.core.native", "judged.core._native", "judged.core.errors",
         "judged.core.suggest",  # "did you mean ...?" for a refused command line: difflib only
         "judged.core.words")  # "1 hole", "2 holes" in the commands' messages

# every command line asking for help: the top level, each subcommand, each nested subcommand
HELP_CALLS = [["--help"], ["--version"], []] + [[name, "--help"] for name in SUMMARIES] + [
    ["meta", sub, "--help"] for sub in ("power", "agreement", "stability", "holdout", "pooling",
                                        "simulate-discount", "synthetic")] + [
    ["judge", sub, "--help"] for sub in ("init", "serve", "export", "status", "agreement")] + [
    ["qrels", sub, "--help"] for sub in ("merge", "diff")]

CHILD = """
import json, sys
from judged.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    before = set(sys.modules)
    try:
        main(argv)
    except SystemExit:
        pass
    out.append([argv, sorted(set(sys.modules) - before)])
sys.stdout.flush()
print("\\nMODULES " + json.dumps(out))
"""


def _offending(modules) -> list:
    return [m for m in modules if m.split(".")[0] in HEAVY
            or m.startswith("judged") and m not in LIGHT and not m.startswith(("judged.cli", "judged.core.cli"))]


def test_no_help_imports_a_heavy_module():
    # one child process, the calls in turn: a module one call imports is charged to it (the
    # others find it loaded, so each call is also checked alone below when this one fails)
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(HELP_CALLS)], capture_output=True, text=True,
                          check=True)
    report = json.loads(done.stdout.rsplit("\nMODULES ", 1)[1])
    bad = {" ".join(argv) or "(no arguments)": _offending(mods) for argv, mods in report}
    assert not {k: v for k, v in bad.items() if v}, bad
    assert len(report) == len(HELP_CALLS)


def test_help_shows_the_values_its_modules_hold():
    read = set()
    real = declared_module.Declared.__getattr__

    def record(self, name):
        read.add((self._module, name))
        return real(self, name)

    declared_module.Declared.__getattr__ = record
    try:
        build_parser()  # every command in full
    finally:
        declared_module.Declared.__getattr__ = real
    assert len(read) >= 20
    for module, name in sorted(read):
        assert _literal(module, name) is not _COMPUTED, f"{module}.{name} is not a literal: --help imports {module}"
        assert _literal(module, name) == getattr(importlib.import_module(module), name), (module, name)
    for module in {m for m, _ in read}:
        assert declared(module).__doc__ == importlib.import_module(module).__doc__, module


def test_a_computed_or_changed_name_is_imported_not_read():
    # STRATEGIES is built from its records (a comprehension): its text is not its value
    strategies = "judged.analyses.pooling.strategies"
    assert _literal(strategies, "STRATEGIES") is _COMPUTED
    assert declared(strategies).STRATEGIES is importlib.import_module(strategies).STRATEGIES
    # CONVENTIONS is computed from TIES (tuple(TIES)): not a literal
    assert _literal("judged.core.conventions", "CONVENTIONS") is _COMPUTED
    conventions = importlib.import_module("judged.core.conventions")
    assert declared("judged.core.conventions").CONVENTIONS == conventions.CONVENTIONS


def test_pool_help_lists_every_strategy_with_its_registered_summary():
    from judged.analyses.pooling.strategies import STRATEGIES

    # the help reads the summaries from the registry module's text, and they are the registry's
    assert _literal("judged.analyses.pooling.strategies", "SUMMARIES") is not _COMPUTED
    shown = declared("judged.analyses.pooling.strategies").SUMMARIES
    assert list(shown.items()) == [(name, s.summary) for name, s in STRATEGIES.items()]
    text = " ".join(build_parser("pool")._subparsers._group_actions[0].choices["pool"].format_help().split())
    assert all(f"{name}: {' '.join(summary.split())}" in text for name, summary in shown.items())


def test_lazy_parsers_still_parse_every_command():
    # building one command's parser from declared values parses as before
    parser = build_parser("pool")
    args = parser.parse_args(["pool", "q.txt", "a.run", "--depth", "10", "-o", "-", "--strategy", "mm"])
    assert args.strategy == "mm" and args.ties == "trec"
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert "mm-ns" in sub.choices["pool"].format_help()


# what `judged eval` on TREC files imports is charged to its start (issue #19: a small file
# under 0.3 s for the whole process): pyarrow.compute builds a wrapper per function when
# imported (0.05 s) and the compiled reading and scoring calls none of them; Rich (0.03 s)
# only on a terminal (judged.cli.plain prints its bytes to a file or a pipe)
EVAL_NEVER = ("pyarrow.compute", "pyarrow.csv", "pandas", "scipy", "polars", "matplotlib", "rich")


def test_eval_of_trec_files_to_a_pipe_imports_no_compute_module_nor_rich():
    from pathlib import Path

    import pytest

    from judged.core.native import compiled

    if compiled() is None:
        pytest.skip("the pure path tokenizes with pyarrow.compute")
    examples = Path(__file__).resolve().parents[2] / "docs" / "examples"
    argv = ["eval", "qrels.txt", "bm25.run", "dense.run", "-m", "nDCG@10", "-m", "AP", "-m", "P@10", "-m", "RR",
            "-m", "R@100"]
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([argv, argv[:3] + ["--format", "json"]])],
                          capture_output=True, text=True, check=True, cwd=examples)
    report = json.loads(done.stdout.rsplit("\nMODULES ", 1)[1])
    assert "nDCG@10" in done.stdout
    for argv, modules in report:
        assert not [m for m in modules if m.startswith(EVAL_NEVER)], argv


def test_a_run_of_eval_reads_its_defaults_from_its_imported_engine():
    """`judged eval` run (not asked for help) imports its engine once its command line is
    parsed (judged.cli.ENGINES), and the values its options declare come from those modules,
    not from their text: a choice checked while parsing (--ties) imports its module."""
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "docs" / "examples"
    child = ("import sys\nimport judged.cli.declared as d\n"
             "def refuse(module, name):\n    raise AssertionError(f'read {name} from the text of {module}')\n"
             "d._literal = refuse\nfrom judged.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    for extra in ([], ["--ties", "input", "--high", "0.7"]):
        done = subprocess.run([sys.executable, "-c", child, "eval", "qrels.txt", "bm25.run", "--format", "json", *extra],
                              capture_output=True, text=True, cwd=examples)
        assert done.returncode == 0, done.stderr
        assert '"nDCG@10"' in done.stdout
    helped = subprocess.run([sys.executable, "-c", child, "eval", "--help"], capture_output=True, text=True)
    assert "from the text of judged.core" in helped.stderr  # --help still reads the text


@pytest.mark.parametrize("bad, said", [(["--bogus"], "unrecognized arguments: --bogus"),
                                       (["--depth-cut", "x"], "invalid int value: 'x'"),
                                       (["--format", "xml"], "invalid choice: 'xml'"),
                                       (["--ties"], "expected one argument"),
                                       (["missing.run"], "missing.run: no such file"),
                                       (["bm25.run", "-m"], "argument -m/--measure: expected one argument"),
                                       ([], "give at least one RUN after the qrels")])
def test_a_command_line_eval_refuses_imports_no_engine(bad, said):
    """argparse refuses a bad command line, and eval a run file that is not there, before
    `judged eval` imports its engine (numpy, pyarrow, the measures: 0.2 s), and before it
    reads a module's text for a value."""
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "docs" / "examples"
    child = ("import json, sys\nimport judged.cli.declared as d\n"
             "def refuse(module, name):\n    raise AssertionError(f'read {name} from the text of {module}')\n"
             "d._literal = refuse\nfrom judged.cli import main\n"
             "try:\n    print(main(sys.argv[1:]))\nexcept SystemExit as exc:\n    print('exit', exc.code)\n"
             "print('MODULES ' + json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", child, "eval", "qrels.txt", *bad], capture_output=True, text=True,
                          cwd=examples)
    assert done.stdout.split("\n", 1)[0] in ("2", "exit 2"), done.stdout  # main's return, or argparse's exit
    assert done.stderr.startswith("judged: error: ") and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    modules = json.loads(done.stdout.rsplit("MODULES ", 1)[1])
    assert _offending(modules) == [], _offending(modules)


def test_the_collector_paused_for_the_start_runs_for_the_command():
    """run() pauses the garbage collector while a command's modules load; main() resumes
    it once the command line is parsed, with what was loaded frozen: a command that runs
    long (judged judge serve, a large compare) collects as usual."""
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "docs" / "examples"
    child = ("import gc, sys\nimport judged.core.evaluation as ev\nfrom judged.cli import main\nseen = []\n"
             "real = ev.evaluate\nev.evaluate = lambda *a, **k: (seen.append((gc.isenabled(), gc.get_freeze_count())),"
             " real(*a, **k))[1]\ngc.disable()\nmain(sys.argv[1:])\nprint('collector', *seen[0])\n")
    done = subprocess.run([sys.executable, "-c", child, "eval", "qrels.txt", "bm25.run"], capture_output=True,
                          text=True, cwd=examples)
    enabled, frozen = done.stdout.rsplit("collector ", 1)[1].split()
    assert enabled == "True" and int(frozen) > 10_000, done.stdout
