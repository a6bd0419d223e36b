"""``judged explain``: one query's score worked by hand."""

from __future__ import annotations

from . import Formatter
from .common import TIES, TIES_HELP, OneMeasure, add_on_duplicate_option

HELP = """Work one query's score by hand: rank, docid, grade, gain, discount, discounted gain,
running DCG; the ideal grade sequence and IDCG; the result, and warnings.

example:
  judged explain qrels.txt dense.run --query 42 -m 'nDCG(gain=exp)@10'
"""


def register(sub) -> None:
    p = sub.add_parser("explain", help="work one query's score by hand", description=HELP,
                       formatter_class=Formatter)
    p.add_argument("qrels")
    p.add_argument("run")
    p.add_argument("--query", "-q", required=True, help="the query id")
    p.add_argument("-m", "--measure", default="nDCG@10", action=OneMeasure, help="measure (default nDCG@10)")
    p.add_argument("--ties", choices=TIES, default="trec", help=TIES_HELP)
    add_on_duplicate_option(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..analyses.explain import explain
    from ..core.conventions import Settings

    from .plain import console

    explain(args.qrels, args.run, args.query, args.measure,
            settings=Settings(ties=args.ties, on_duplicate=args.on_duplicate)).render(console())
    return 0
