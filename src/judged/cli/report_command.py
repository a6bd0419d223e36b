"""``judged report``: a comparison people read (self-contained HTML) or tables for papers."""

from __future__ import annotations

import sys

from . import Formatter
from .common import format_help
from .compare_command import add_comparison_options, comparison_from_args
from .declared import declared
from ..core.errors import UsageError

HELP = """Compare runs with a baseline (the first run, or --baseline) and write one
self-contained HTML page (no network, no scripts): first, the runs ranked by the first
measure with their intervals and what judging the holes could make them, how many pairs of
runs judging could flip (the flip matrix); then the main table with significance marks,
Judged@k, the paired comparisons, each run's per-query differences and regressions (folded
beyond three runs), score distributions and the settings. With
--format md|latex|csv, the main table for papers. Judged@k (k = the first measure's
cutoff, else 10) is added to the measures unless given (not with --manifest, which
fixes the measures).

examples:
  judged report qrels.txt bm25.run dense.run -m nDCG@10 -m AP -o report.html
  judged report qrels.txt bm25.run dense.run --format latex
"""


def register(sub) -> None:
    power = declared("judged.analyses.meta.power")
    POWER_MEASURES, DEFAULT_SAMPLES = power.DEFAULT_MEASURES, power.DEFAULT_SAMPLES

    p = sub.add_parser("report", help="HTML report or paper tables of a comparison", description=HELP,
                       formatter_class=Formatter)
    add_comparison_options(p)
    p.add_argument("--format", choices=["html", "md", "latex", "csv"], default="html", help=format_help(["html", "md", "latex", "csv"]))
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    p.add_argument("--title", help="the page title")
    g = p.add_argument_group("discriminative power (judged meta power; HTML only)")
    g.add_argument("--power", action="store_true",
                   help="add the ASL curves of every pair of runs, baseline included (Sakai 2006): randomization "
                        "test, --power-samples draws, --seed")
    g.add_argument("--power-measure", action="append", dest="power_measures", metavar="MEASURE",
                   help="measure for --power, repeatable (default: judged meta power's: "
                        f"{', '.join(POWER_MEASURES)})")
    g.add_argument("--power-samples", type=int, default=DEFAULT_SAMPLES, metavar="M",
                   help=f"sign-flip draws per pair for --power (default {DEFAULT_SAMPLES})")
    p.set_defaults(func=run)


def with_judged_at_k(measures: list) -> list:
    """The measures plus Judged@k, k = the first measure's cutoff (else 10), unless a Judged@ is there."""
    from ..core.measures import Measure, named_measures

    measures = list(named_measures(measures))  # trec_eval's P.5,10: P_5 and P_10
    parsed = [Measure.parse(m) for m in measures]
    if any(m.family.coverage for m in parsed):
        return list(measures)
    k = next((m.cutoff for m in parsed if m.cutoff), 10)
    return [*measures, f"Judged@{k}"]


def run(args) -> int:
    from .. import report
    from ..analyses.comparison import DEFAULT_MEASURES
    from ..core.progress import progress
    if not args.manifest:
        args.measures = with_judged_at_k(args.measures or list(DEFAULT_MEASURES))
    c = comparison_from_args(args)
    power = None
    if args.power:
        from ..analyses.meta.power import DEFAULT_MEASURES, power_of_comparison

        if args.format != "html":
            raise UsageError("--power draws ASL curves: use it with --format html")
        with progress(None, "discriminative power (ASL curves)"):
            power = power_of_comparison(c, args.power_measures or list(DEFAULT_MEASURES), samples=args.power_samples)
    with progress(None, f"writing the {args.format} report"):
        text = report.html(c, title=args.title, power=power) if args.format == "html" else report.table(c, args.format)
    if args.output:
        from ..core.io.output import open_replacing

        with open_replacing(args.output) as fh:
            fh.write(text)
        if args.format == "html":
            print(f"wrote {args.output} ({len(text) // 1024} KiB)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
