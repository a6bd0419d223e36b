"""``judged rejudge``: every run under two or more qrels versions; which pairs flipped."""

from __future__ import annotations

from . import Formatter
from .common import OneMeasure, add_convention_options, format_help, print_json, settings_of
from ..core.errors import UsageError

HELP = """The rejudging report (BEIR's TREC-COVID table, produced by the tool): per run the
score and Judged@k under each qrels version, the order of the systems under each, and
which pairs flipped between the first and the last version.

example:
  judged rejudge qrels-v1.txt bm25.run dense.run --versus-qrels qrels-v2.txt -m nDCG@10
  judged rejudge --qrels qrels-v1.txt --qrels qrels-v2.txt bm25.run dense.run   # the old spelling, kept
"""


def register(sub) -> None:
    p = sub.add_parser("rejudge", help="scores under two or more qrels versions; which pairs flipped",
                       description=HELP, formatter_class=Formatter)
    p.add_argument("inputs", nargs="+", metavar="QRELS RUN",
                   help="the first qrels version, then the runs (with the old --qrels spelling: the runs only)")
    p.add_argument("--versus-qrels", action="append", metavar="QRELS",
                   help="a later qrels version, repeatable, oldest first")
    p.add_argument("--qrels", action="append", metavar="QRELS",
                   help="the old spelling, kept: every qrels version given this way, oldest first, and only runs as "
                        "positional arguments")
    p.add_argument("-m", "--measure", default="nDCG@10", action=OneMeasure, help="measure (default nDCG@10)")
    p.add_argument("-k", "--depth", dest="k", type=int, default=10, metavar="K",
                   help="the top K examined: Judged@K (default 10)")
    p.add_argument("--format", choices=["table", "json"], default="table", help=format_help(["table", "json"]))
    add_convention_options(p, compared=True)
    p.set_defaults(func=run)


def versions_and_runs(args) -> tuple[list, list]:
    """(qrels versions, runs): ``QRELS RUN... --versus-qrels V2``, or the old ``--qrels V1
    --qrels V2 RUN...``."""
    if args.qrels:
        versions, runs = list(args.qrels) + list(args.versus_qrels or []), list(args.inputs)
    else:
        versions, runs = [args.inputs[0], *(args.versus_qrels or [])], list(args.inputs[1:])
    if not runs:
        raise UsageError("give at least one RUN after the qrels")
    return versions, runs


def run(args) -> int:
    from ..analyses.qrels_ops import rejudge

    versions, runs = versions_and_runs(args)
    output(rejudge(versions, runs, args.measure, args.k, settings=settings_of(args, compared=True)), args.format)
    return 0


def output(report, fmt: str) -> None:
    """The rejudging report as JSON or as the table (rejudge, eval --qrels)."""
    if fmt == "json":
        print_json(report.to_dict())
    else:
        print_rejudged(report)


def print_rejudged(report, console=None, labels=None) -> None:
    from ..core.runnames import shortener
    from .plain import Table, console as make_console

    console = console or make_console()  # Rich on a terminal only
    shown, short = shortener(list(report.scores))  # runs as every command shows them
    labels = labels or [f"v{i + 1}" for i in range(len(report.versions))]
    for label, path, sha in zip(labels, report.versions, report.shas):
        console.print(f"{label}: {path} sha256={sha[:16]}…", highlight=False, markup=False)
    t = Table(title=f"{report.measure} and {report.judged} under each qrels version")
    t.add_column("run", overflow="fold")
    for label in labels:
        t.add_column(f"{report.measure} {label}", justify="right")
        t.add_column(f"{report.judged} {label}", justify="right")
    t.add_column("change", justify="right")
    for name in report.scores:
        cells = []
        for v in range(len(labels)):
            cells += [f"{report.scores[name][v]:.4f}", f"{report.judged_at_k[name][v]:.3f}"]
        t.add_row(shown[name], *cells, f"{report.scores[name][-1] - report.scores[name][0]:+.4f}")
    console.print(t)
    for v, label in enumerate(labels):
        console.print(f"order under {label}: " + " > ".join(shown.get(r, r) for r in report.order(v)),
                      highlight=False, markup=False)
    if report.query_set is not None:
        console.print(report.query_set.describe(), highlight=False, markup=False, soft_wrap=True)
        for w in report.warnings:
            console.print(f"[yellow]warning:[/] {short(w)}", highlight=False)
    flips = report.flips()
    if flips:
        for f in flips:
            console.print(f"flipped: {short(f['before'])} under {labels[0]}, {short(f['after'])} under {labels[-1]}",
                          highlight=False, markup=False)
    else:
        console.print(f"no pair of runs changed order between {labels[0]} and {labels[-1]}", highlight=False)
    if report.conventions:
        console.print("conventions:", highlight=False)
        for conv in report.conventions.values():
            console.print(f"  {conv}", highlight=False, markup=False, soft_wrap=True)
