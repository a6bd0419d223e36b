"""``judged measures``: every measure judged computes, from the measure registry."""

from __future__ import annotations

import sys

from . import Formatter
from .common import format_help, print_json

HELP = """List every measure with its parameters; with a NAME, explain that measure: what it is,
its formula, its source, and the convention judged applies (as trec_eval -h -m NAME).
NAME may be any spelling judged reads: nDCG, ndcg_cut, map, 'P(rel=2)@5'.

example:
  judged measures
  judged measures nDCG
  judged measures ndcg_cut.10 --format json
"""


def register(sub) -> None:
    p = sub.add_parser("measures", help="list the measures, or explain one", description=HELP,
                       formatter_class=Formatter)
    p.add_argument("name", nargs="?", metavar="NAME", help="a measure or family name (omitted: list them all)")
    p.add_argument("--format", choices=["table", "json"], default="table", help=format_help(["table", "json"]))
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.measures import Measure
    from ..core.measures.params import PARAMS
    from ..core.measures.registry import FAMILIES, NAMES

    out = sys.stdout
    if args.name is None:
        if args.format == "json":
            print_json({"measures": [f.to_dict() for f in FAMILIES.values()]})
            return 0
        width = max(len(n) for n in FAMILIES)
        for f in FAMILIES.values():
            cut = {"required": "@k", "optional": "[@k]", "none": ""}[f.cutoff]
            params = f"({', '.join(f.spellings.get(p, p) for p in f.params)})" if f.params else ""
            out.write(f"{f.name:<{width}}  {f.summary}\n{'':<{width}}    {f.name}{params}{cut}"
                      f"{'  aggregate=' + f.aggregate if f.aggregate != 'mean' else ''}"
                      f"{'  bounds' if f.boundable else ''}\n")
        out.write("\nparameters:\n")
        for p in PARAMS.values():
            out.write(f"  {p.describe()}\n")
        loose = [f.name for f in FAMILIES.values() if f.boundable and f.bounds != "exact"]
        out.write("\nbounds: unjudged=min|max gives its exact extremes over the holes (judged holes -m)"
                  + (f"; for {', '.join(loose)} a conservative interval that holds them" if loose else "") + ".\n"
                  "judged measures NAME explains one (formula, source, the convention judged applies).\n")
        return 0
    name = NAMES.get(args.name.strip().lower())
    measure = None
    if name is None:  # a whole measure string: nDCG(gain=exp)@10, ndcg_cut.10
        measure = Measure.parse(args.name)
        name = measure.name
    family = FAMILIES[name]
    measure = measure or Measure.parse(family.examples[0])  # the convention shown: of the measure given
    if args.format == "json":
        d = family.to_dict()
        d["measure"], d["convention"] = str(measure), measure.convention()
        print_json(d)
    else:
        out.write(family.help(measure))
    return 0
