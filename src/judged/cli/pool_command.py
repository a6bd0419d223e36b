"""``judged pool``: the unjudged pairs in the runs' top k, in the order to judge them."""

from __future__ import annotations

import argparse
import sys
from . import Formatter
from ..core.words import counted
from .common import add_convention_options
from .declared import declared
from .holes_command import add_hole_options
from ..core.errors import UsageError

HELP = """Write the unjudged (qid, docid) pairs in the runs' top DEPTH, one per line:
qid docid priority best_rank runs [strategy columns] strategy stratum inclusion ranks,
after '#' header lines (the line '# qid docid ...' names the columns, the one before it
the strategy's source; '-' = not defined). With --budget N, exactly N pairs (all, if
fewer), chosen by the strategy:

{strategies}

The default strategy: {default_strategy}.
Why, with a budget: {why}.
Which strategy saves judgments depends on the collection. To choose on yours: {how}, e.g.

  judged meta pooling past-qrels.txt past-runs/*.run --budget 1000
  judged pool qrels.txt runs/*.run --depth 100 --budget 500 --strategy STRATEGY -o pool.txt

The adaptive strategies (mtf, the bandits mm, mm-ns, ts, ts-ns, hedge and bounds)
learn from the labels the qrels hold for the runs' top DEPTH; the file holds the order
they follow while no new label arrives. To serve one label by label, give the whole
pool to the judging app: judged judge init --pool POOL --order STRATEGY. judged meta
pooling replays the strategies on a judged collection to measure what a budget buys
(docs/pooling.md).

--strategy sample draws a stratified random sample of N pairs (strata by best rank,
more weight near the top; --seed S) and keeps the design in the file: '# stratum' lines
and the pairs it did not draw as '#~' lines. Judge the sample, merge the labels
(judged qrels merge), then estimate the measures with judged infer QRELS RUN... --sample POOL.

The pool goes to the file -o POOL names (a line on stderr says how many pairs went there),
or to stdout with -o - .

examples:
  judged pool qrels.txt bm25.run dense.run --depth 10 --budget 500 --strategy impact -o pool.txt
  judged pool qrels.txt bm25.run dense.run --budget 50 -o - | head
  judged pool qrels.txt runs/*.run --depth 100 --strategy sample --budget 500 --seed 1 -o sample.pool
  judged pool qrels.txt runs/*.run --depth 100 --budget 1000 --strategy mm -o pool.txt
  judged pool qrels.txt runs/*.run --depth 10 --strategy sample-queries --queries 20 --seed 1 -o queries.pool
  judged pool qrels.txt runs/*.run --depth 10 --strategy disagreement --machine llm.txt --budget 300 -o pool.txt
"""


def _strategies_help(summaries: dict) -> str:
    return "\n".join(f"  {name}: {summary}" for name, summary in summaries.items())


def _starts(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected rank bin starts like 1,2,4,8, got {text!r}")


def register(sub) -> None:
    pool = declared("judged.analyses.pooling.strategies")
    BUDGET_STRATEGY, DEFAULT_STRATEGY = pool.BUDGET_STRATEGY, pool.DEFAULT_STRATEGY
    default = (f"{DEFAULT_STRATEGY}, with or without --budget" if BUDGET_STRATEGY == DEFAULT_STRATEGY else
               f"{BUDGET_STRATEGY} with --budget, {DEFAULT_STRATEGY} without") + " (depth: every unjudged pair of the top " \
        "DEPTH, shallowest first)"
    p = sub.add_parser("pool", help="list the unjudged pairs to judge next", description=HELP.format(
                       strategies=_strategies_help(pool.SUMMARIES), default_strategy=default,
                       why=pool.BUDGET_STRATEGY_WHY, how=pool.HOW_TO_CHOOSE), formatter_class=Formatter)
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("-k", "--depth", type=int, default=10, metavar="K",
                   help="the top K examined: pool the runs' top K (default 10: the holes judged holes shows by "
                        "default, as judged.analyses.pooling.strategies; docs/pooling.md's budget figures pool the top 100)")
    p.add_argument("--budget", type=int, default=None, help="exactly N pairs (all, if fewer)")
    p.add_argument("--strategy", choices=list(pool.SUMMARIES), default=None,
                   help=f"how to choose and order the pairs (see above); default: {BUDGET_STRATEGY} with --budget, "
                        f"{DEFAULT_STRATEGY} without; judged meta pooling on your past judgments recommends one")
    p.add_argument("--seed", type=int, default=None, help="random strategies (sample, ts, ts-ns): the seed (default 0)")
    p.add_argument("--strata", type=_starts, default=None, metavar="R1,R2,...",
                   help="sample: best-rank bins starting at these ranks (default 1,2,4,8,...)")
    p.add_argument("--queries", type=int, default=None, metavar="N",
                   help="sample-queries: how many queries to draw (every hole of a drawn query is in the pool)")
    p.add_argument("--machine", metavar="LABELS",
                   help="machine and disagreement: a machine judge's labels (e.g. an LLM's), in any qrels format; "
                        "they order the pool, they are never written as judgments")
    p.add_argument("-o", "--output", required=True, metavar="POOL",
                   help="the pool file, written whole or not at all; '-' writes it to stdout (to read or pipe "
                        "it), without the summary line on stderr")
    add_hole_options(p)
    add_convention_options(p, depth_cut=False)  # --depth is the pool's
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.conventions import Settings
    from ..analyses.pooling.strategies import BUDGET_STRATEGY_WHY, HOW_TO_CHOOSE, default_strategy, pool

    defaulted = args.strategy is None and args.budget is not None
    if args.strategy is None:
        args.strategy = default_strategy(args.budget)

    if args.machine is not None and args.strategy not in ("machine", "disagreement"):
        raise UsageError(f"--machine orders the pool for --strategy machine or disagreement, not {args.strategy}")
    if args.queries is not None and args.strategy != "sample-queries":
        raise UsageError(f"--queries goes with --strategy sample-queries, not {args.strategy}")
    if args.strata is not None and args.strategy != "sample":
        raise UsageError(f"--strata goes with --strategy sample, not {args.strategy}")
    options = {"strata": args.strata} if args.strata is not None else {}
    if args.queries is not None:
        options["queries"] = args.queries
    if args.machine is not None:
        options["machine"] = args.machine
    settings = Settings(ties=args.ties, on_duplicate=args.on_duplicate, negative=args.negative)
    result = pool(args.qrels, list(args.runs), args.depth, budget=args.budget, strategy=args.strategy,
                  maxgrade=args.maxgrade, seed=args.seed, settings=settings, **options)
    if args.output == "-":
        sys.stdout.write(result.text())
    else:
        result.write(args.output)
        seed = f", seed {result.meta['seed']}" if "seed" in result.meta else ""
        print(f"{len(result)} of {counted(result.unjudged, 'unjudged pair')} written to {args.output} "
              f"(depth {args.depth}, strategy {args.strategy}{seed})", file=sys.stderr)
        if defaulted:  # with the summary line: -o - writes the pool alone
            print(f"strategy {args.strategy}, the default with --budget: {BUDGET_STRATEGY_WHY}. To choose on your "
                  f"own judgments: {HOW_TO_CHOOSE}.", file=sys.stderr)
    return 0
