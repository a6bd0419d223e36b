"""``judged pool``: the unjudged pairs in the runs' top k, in the order to judge them."""

from __future__ import annotations

import argparse
import sys

HELP = """Write the unjudged (qid, docid) pairs in the runs' top DEPTH, one per line:
qid docid priority best_rank runs [impact], after '#' header lines. With --budget N,
exactly N pairs (all, if fewer), chosen by the strategy: depth (shallowest ranks first)
or impact (the pairs whose labels can move the runs' nDCG@DEPTH and their pairwise
differences most, in the spirit of Carterette et al.'s minimal test collections).

example:
  judged pool qrels.txt bm25.run dense.run --depth 10 --budget 500 --strategy impact -o pool.txt
"""


def register(sub) -> None:
    from .common import add_convention_options
    from .holes import add_hole_options

    p = sub.add_parser("pool", help="list the unjudged pairs to judge next", description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("--depth", "-k", type=int, required=True, help="pool the runs' top DEPTH")
    p.add_argument("--budget", type=int, default=None, help="exactly N pairs (all, if fewer)")
    p.add_argument("--strategy", choices=["depth", "impact"], default="depth",
                   help="depth: shallowest ranks first (default); impact: largest possible effect first")
    p.add_argument("-o", "--output", required=True, metavar="POOL", help="output file ('-' for stdout)")
    add_hole_options(p)
    add_convention_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..pool import pool

    result = pool(args.qrels, list(args.runs), args.depth, budget=args.budget, strategy=args.strategy,
                  maxgrade=args.maxgrade, negative=args.negative, ties=args.ties, on_duplicate=args.on_duplicate)
    if args.output == "-":
        sys.stdout.write("\n".join(result.header() + result.lines()) + "\n")
    else:
        result.write(args.output)
        print(f"{len(result)} of {result.unjudged} unjudged pairs written to {args.output} "
              f"(depth {args.depth}, strategy {args.strategy})", file=sys.stderr)
    return 0
