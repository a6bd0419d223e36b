"""The ``judged`` command line: one module per command group, each with ``register()``.

Every error `judged` raises on purpose (bad input, a bad measure string, a refused
convention) becomes one line ``judged: error: ...`` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import re
import sys

from . import common, declared
from .. import __version__
from ..core.native import describe
from ..core.errors import JudgedError

# judged calls no BLAS routine; OpenBLAS's worker threads, started when numpy is imported,
# would only spin on the cores the evaluation uses (2-3% of its CPU). A user's setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# command modules, imported lazily so that `judged eval` stays fast
COMMANDS = ["eval", "compare", "freeze", "gate", "report", "explain", "holes", "pool", "infer", "qrels", "rejudge", "judge",
            "demo", "answers", "scale", "meta", "measures", "completion"]
# the one-line help of every subcommand, as its module registers it (a test keeps them equal):
# `judged --help` and `judged --version` list them without importing any command module,
# numpy or pyarrow
SUMMARIES = {
    "eval": "score runs against qrels",
    "compare": "paired comparison of runs against a baseline",
    "compare-records": "compare two saved evaluation records",
    "freeze": "freeze an evaluation set into a TOML manifest",
    "gate": "decide whether a candidate run may replace a baseline",
    "report": "HTML report or paper tables of a comparison",
    "explain": "work one query's score by hand",
    "holes": "show unjudged documents and bound what judging them could change",
    "pool": "list the unjudged pairs to judge next",
    "infer": "estimate measures from a judged sample of the holes, with intervals",
    "qrels": "merge and diff qrels versions",
    "rejudge": "scores under two or more qrels versions; which pairs flipped",
    "judge": "run a judging campaign (web app)",
    "demo": "run on built-in example data",
    "answers": "pair nDCG with answer acceptance",
    "scale": "show or check a grade scale",
    "meta": "meta-evaluation: discriminative power, agreement, stability, holdout, discounts",
    "measures": "list the measures, or explain one",
    "completion": "print a shell completion script (bash, zsh)",
}
MODULES = {name: f"{name}_command" for name in COMMANDS} | {"compare-records": "compare_command"}  # subcommand -> module
# what a command runs on, imported once its command line is parsed (a command line argparse
# refuses costs no such import): the values its options declare (judged.cli.declared.later)
# are then read from these modules, not from their text, which would cost `judged eval` a
# tenth of its start on a small file
ENGINES = {"eval": "judged.core.evaluation"}

EPILOG = """examples:
  judged demo
  judged eval qrels.txt run.bm25 run.dense -m nDCG@10 -m AP -m Judged@10
  judged eval qrels.txt run.dense -m 'nDCG(gain=exp)@10' --per-query --format json
  judged explain qrels.txt run.dense --query 42 -m nDCG@10
  judged compare qrels.txt run.bm25 run.dense -m nDCG@10 -m AP
  judged freeze qrels.txt -m nDCG@10 -o eval.toml
  judged gate qrels.txt run.bm25 run.dense --policy gate.toml --junit gate.xml
  judged report qrels.txt run.bm25 run.dense -o report.html
  judged holes qrels.txt run.bm25 run.dense -k 10
  judged pool qrels.txt run.bm25 run.dense --depth 10 --budget 500 -o pool.txt
  judged pool qrels.txt runs/*.run --depth 100 --strategy sample --budget 500 --seed 1 -o sample.pool
  judged qrels merge qrels.txt labels.txt -o qrels-v2.txt
  judged infer qrels-v2.txt runs/*.run --sample sample.pool
  judged rejudge qrels.txt run.bm25 run.dense --versus-qrels qrels-v2.txt
  judged judge init --db judging.db --pool pool.txt --queries queries.tsv --corpus corpus.jsonl
  judged eval --beir scifact/ run.dense --ignore-identical-ids
  eval "$(judged completion bash)"
"""


class Parser(argparse.ArgumentParser):
    """argparse with judged's error form: one line ``judged: error: ...``, exit 2 (every
    sub-command's parser is of this class too: ``add_subparsers`` uses the parent's class)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)  # an option is named in full: --depth never means --depth-cut
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"judged: error: {message}{_choice_meant(message)} (see '{self.prog} --help')\n")

    def parse_args(self, args=None, namespace=None):
        """argparse's, with "did you mean --per-query?" for a mistyped option: the options of
        the (sub)command named are the candidates."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            chosen = _chosen_parser(self, parsed)
            options = [o for action in chosen._actions for o in action.option_strings]
            flag = next((e.split("=", 1)[0] for e in extras if e.startswith("-")), None)
            from ..core.suggest import did_you_mean

            chosen.error(f"unrecognized arguments: {' '.join(extras)}" + (did_you_mean(flag, options) if flag else ""))
        return parsed


def _chosen_parser(parser: argparse.ArgumentParser, parsed) -> argparse.ArgumentParser:
    """The parser of the deepest (sub)command named on the command line (``meta power``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
            if chosen is not None:
                return _chosen_parser(chosen, parsed)
    return parser


def _choice_meant(message: str) -> str:
    """" (did you mean 'eval'?)" for argparse's "invalid choice: 'evla' (choose from ...)"."""
    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if not m or "maybe you meant" in message:  # Python 3.14's suggest_on_error said it already
        return ""
    from ..core.suggest import did_you_mean

    return did_you_mean(m.group(1), [c.strip().strip("'") for c in m.group(2).split(",")], "'{}'")


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written; every option's default shown in its help
    (``(default: X)``) unless the help already names it."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if ("default" in text or "%(default)" in text or default in (None, False, argparse.SUPPRESS)
                or action.option_strings == [] and action.nargs not in ("?", "*") or default == []):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


ALL = "*"


def build_parser(command: str | None = ALL) -> argparse.ArgumentParser:
    """The argument parser. ``command``: register only that subcommand's module in full,
    the others by name and one-line help (None: none in full, so ``judged --help`` imports
    no command module); ``ALL`` (default): every command in full (shell completion, tests)."""
    parser = Parser(
        prog="judged", description="Evaluate ranked retrieval honestly: declared conventions, visible holes.",
        epilog=EPILOG, formatter_class=Formatter)
    parser.add_argument("--version", action="version", version=f"judged {__version__}\n{describe()}",
                        help="print the version and whether the compiled extension runs, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = {MODULES[name] for name in COMMANDS} if command == ALL else {MODULES[command]} if command in MODULES else set()
    for name in SUMMARIES:
        module = MODULES[name]
        if module in wanted:
            if name in COMMANDS:  # compare-records: registered by compare's module
                importlib.import_module(f".{module}", __name__).register(sub)
        else:
            sub.add_parser(name, help=SUMMARIES[name], add_help=False)
    return parser


def _command(argv) -> str | None:
    """The subcommand named on the command line (the first word that is not an option)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _command(argv)
    running = command in ENGINES and not {"-h", "--help"} & set(argv)
    declared.IMPORT_ON_USE = running  # a value needed while parsing: from its module, imported
    parser = build_parser(command)
    args = parser.parse_args(argv)  # a command line refused here imports no engine

    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    # one line with the time elapsed once a command runs past a second (on a terminal), the
    # phases it names below it; not for the judging server, which runs until stopped
    quiet = args.command in ("judge", "demo", "completion")
    try:
        common.refuse_output_over_input(args)
        if getattr(args, "precheck", None) is not None:
            args.precheck(args)  # what a command checks before its engine's imports (eval: its files exist)
        if running:
            importlib.import_module(ENGINES[command])
        declared.settle(args)
        if not gc.isenabled():  # run() paused the collector for the start: what it loaded is kept for good
            gc.freeze()
            gc.enable()
        from ..core.progress import progress

        with progress(None, f"judged {args.command}", enabled=False if quiet else None):
            return int(args.func(args) or 0)
    except JudgedError as exc:
        print(f"judged: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("judged: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError as exc:  # e.g. --samples far beyond what fits
        print(f"judged: error: not enough memory for this request ({exc or 'MemoryError'}); "
              "ask for fewer samples, runs or queries", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that cannot be read or written, not caught closer to it
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"judged: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


def run() -> None:
    # the commands run their own threads (readers, kernels, paired tests); OpenBLAS's threads
    # only spin beside them (compare at load 8: 2.0 CPU-s with them, 1.6 without) and make
    # a matrix product's bits depend on the cores. A user's own setting is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # the imports of a command's start (numpy, pyarrow, the engine) allocate a great many
    # objects and hardly a cycle: the collector's passes over them were 7% of `judged eval`'s
    # instructions on a small file. Paused here; main() resumes it once the command line is
    # parsed, with everything loaded so far frozen (never scanned again).
    gc.disable()
    sys.exit(main())
