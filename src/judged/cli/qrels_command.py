"""``judged qrels merge`` and ``judged qrels diff``: qrels versions."""

from __future__ import annotations

import sys

from . import Formatter
from ..core.words import counted
from .common import add_on_duplicate_option, format_help, print_json

HELP = """Work with qrels versions.

examples:
  judged qrels merge qrels.txt new-labels.txt -o qrels-v2.txt --assessor alice
  judged qrels diff qrels.txt qrels-v2.txt
"""


def register(sub) -> None:
    p = sub.add_parser("qrels", help="merge and diff qrels versions", description=HELP,
                       formatter_class=Formatter)
    qs = p.add_subparsers(dest="qrels_command", metavar="SUBCOMMAND")
    m = qs.add_parser("merge", help="union of qrels, with provenance; conflicts refused unless --prefer",
                      description="The union of BASE and NEW qrels, written as TREC qrels to OUT with a "
                                  "provenance sidecar OUT.provenance.tsv (qid docid grade source assessor time "
                                  "replaced). A pair judged with different grades is a conflict: listed and "
                                  "refused unless --prefer new (later file wins) or --prefer base.",
                      epilog="example:\n  judged qrels merge qrels.txt new-labels.txt -o qrels-v2.txt --assessor alice "
                             "--prefer new", formatter_class=Formatter)
    m.add_argument("base")
    m.add_argument("new", nargs="+", metavar="NEW")
    m.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="the merged qrels to write (and OUT.provenance.tsv beside it)")
    m.add_argument("--prefer", choices=["new", "base"], default=None, help="settle conflicts (default: refuse)")
    m.add_argument("--assessor", default=None, help="assessor of the NEW judgments (when they carry none)")
    m.add_argument("--time", default=None, help="time of the NEW judgments, e.g. 2026-11-29T15:00Z")
    add_on_duplicate_option(m)
    m.set_defaults(func=run_merge, output_may_be_input=True)  # read whole before it is replaced
    d = qs.add_parser("diff", help="judgments added, removed and changed per query",
                      description="Judgments added (in B only), removed (in A only) and changed per query, "
                                  "with the sha256 of each file.",
                      epilog="example:\n  judged qrels diff qrels.txt qrels-v2.txt --list",
                      formatter_class=Formatter)
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("--list", action="store_true", help="also list every differing pair")
    d.add_argument("--format", choices=["table", "json"], default="table", help=format_help(["table", "json"]))
    add_on_duplicate_option(d)
    d.set_defaults(func=run_diff)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_merge(args) -> int:
    from ..analyses.qrels_ops import MergeConflict, merge, provenance_path

    try:
        merged = merge(args.base, args.new, prefer=args.prefer, assessor=args.assessor, time=args.time,
                       on_duplicate=args.on_duplicate)
    except MergeConflict as exc:
        for c in exc.conflicts:
            grades = " but ".join(f"{g} in {src}" for src, g in c["grades"])
            print(f"conflict: query {c['qid']} docid {c['docid']}: {grades}", file=sys.stderr)
        raise
    merged.write(args.output)
    settled = f"; {counted(len(merged.conflicts), 'conflict')} settled by --prefer {args.prefer}" if merged.conflicts else ""
    print(f"{counted(len(merged.qrels), 'judgment')} ({merged.added} added to {args.base}) written to {args.output}, "
          f"provenance in {provenance_path(args.output)}{settled}", file=sys.stderr)
    return 0


def run_diff(args) -> int:
    from rich.markup import escape
    from rich.table import Table

    from ..analyses.qrels_ops import diff
    from .plain import console as make_console

    d = diff(args.a, args.b, on_duplicate=args.on_duplicate)
    if args.format == "json":
        print_json(d.to_dict(pairs=args.list))
        return 0
    console = make_console()
    console.print(f"A: {d.a.source} sha256={d.a.sha256} ({counted(len(d.a), 'judgment')})", highlight=False, markup=False)
    console.print(f"B: {d.b.source} sha256={d.b.sha256} ({counted(len(d.b), 'judgment')})", highlight=False, markup=False)
    if d.same:
        console.print("no differences", highlight=False)
        return 0
    t = Table()
    for col in ["qid", "added", "removed", "changed"]:
        t.add_column(col, justify="left" if col == "qid" else "right")
    for q, c in d.per_query().items():
        t.add_row(escape(q), str(c["added"]), str(c["removed"]), str(c["changed"]))
    t.add_row("all", str(len(d.added)), str(len(d.removed)), str(len(d.changed)), style="bold")
    console.print(t)
    if args.list:
        for q, doc, g in d.added:
            print(f"+ {q} {doc} {g}")
        for q, doc, g in d.removed:
            print(f"- {q} {doc} {g}")
        for q, doc, ga, gb in d.changed:
            print(f"~ {q} {doc} {ga} -> {gb}")
    return 0
