"""The ``judged`` command line: one module per command group, each with ``register()``.

Every error `judged` raises on purpose (bad input, a bad measure string, a refused
convention) becomes one line ``judged: error: ...`` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# judged calls no BLAS routine; OpenBLAS's worker threads, started when numpy is imported,
# would only spin on the cores the evaluation uses (2-3% of its CPU). A user's setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# command modules, imported lazily so that `judged eval` stays fast
COMMANDS = ["eval", "compare", "freeze", "report", "explain", "holes", "pool", "infer", "qrels", "rejudge", "judge", "demo",
            "answers", "scale", "meta", "completion"]

EPILOG = """examples:
  judged demo
  judged eval qrels.txt run.bm25 run.dense -m nDCG@10 -m AP -m Judged@10
  judged eval qrels.txt run.dense -m 'nDCG(gain=exp)@10' --per-query --format json
  judged explain qrels.txt run.dense --query 42 -m nDCG@10
  judged compare qrels.txt run.bm25 run.dense -m nDCG@10 -m AP
  judged freeze --qrels qrels.txt -m nDCG@10 -o eval.toml
  judged report qrels.txt run.bm25 run.dense -o report.html
  judged holes qrels.txt run.bm25 run.dense -k 10
  judged pool qrels.txt run.bm25 run.dense --depth 10 --budget 500 -o pool.txt
  judged pool qrels.txt runs/*.run --depth 100 --strategy sample --budget 500 --seed 1 -o sample.pool
  judged qrels merge qrels.txt labels.txt -o qrels-v2.txt
  judged infer qrels-v2.txt runs/*.run --sample sample.pool
  judged rejudge --qrels qrels.txt --qrels qrels-v2.txt run.bm25 run.dense
  judged judge init --db judging.db --pool pool.txt --queries queries.tsv --corpus corpus.jsonl
  judged eval --beir scifact/ run.dense --ignore-identical-ids
  eval "$(judged completion bash)"
"""


class Parser(argparse.ArgumentParser):
    """argparse with judged's error form: one line ``judged: error: ...``, exit 2 (every
    sub-command's parser is of this class too: ``add_subparsers`` uses the parent's class)."""

    def error(self, message: str):
        self.exit(2, f"judged: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__
    from ..native import describe

    parser = Parser(
        prog="judged", description="Evaluate ranked retrieval honestly: declared conventions, visible holes.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"judged {__version__}\n{describe()}",
                        help="print the version and whether the compiled extension runs, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f".{name}", __name__).register(sub)
    return parser


def main(argv=None) -> int:
    from ..errors import JudgedError

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
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
    sys.exit(main())
