"""``judged holes``: every unjudged document in the runs' top k, what judging it could change."""

from __future__ import annotations

import argparse
import json
import sys

from . import Formatter
from ..core.words import counted
from .common import (add_convention_options, add_machine_option, format_help, print_query_set,
                     settings_kwargs)
from .infer import add_sample_option, print_sample_decisions

HELP = """Show the holes (documents with no judgment for this query) in each run's top k: mean
Judged@k, the number of holes, the share of queries with any hole, the worst queries; the
exact min and max of the measure over every grade the holes could get (ideal recomputed),
an estimate (labelled as such), and for every pair of runs whether judging could flip them.

The estimate learns how relevant holes are from the runs themselves: the judged documents
only one of the given runs has in its top k are what that run's holes would be without it
(leave-one-run-out). A model of their grades fills each hole; its 90% interval is
calibrated on the runs' own leave-one-out errors and clipped to the exact bounds. Give the
collection's other runs too (the pooled runs; --reference RUN... to learn from them
without reporting them): with one run, or too few such documents, the estimate falls
back to holes counted as not relevant and says so.

examples:
  judged holes qrels.txt bm25.run dense.run -k 10
  judged holes qrels.txt dense.run --list          # every hole: run qid rank docid
  judged holes qrels.txt a.run b.run -m 'AP@100' --maxgrade 1 --format json
  judged holes qrels.txt new.run --reference pooled-runs/*.run   # learn the estimate from the pooled runs
  judged holes qrels.txt bm25.run dense.run --machine llm-labels.txt   # + machine-filled, apart
  judged holes merged.txt bm25.run dense.run --machine llm.txt --sample sample.pool  # + prediction-powered
"""


def add_hole_options(p):
    """--maxgrade and --negative (holes, compare, report); returns the option group."""
    g = p.add_argument_group("holes")
    g.add_argument("--maxgrade", type=int, default=None,
                   help="holes may get grades 0..MAXGRADE (default: the largest grade in the qrels)")
    g.add_argument("--negative", choices=["nonrelevant", "unjudged"], default="nonrelevant",
                   help="negative grades (trec_eval's pooled-but-unjudged): nonrelevant (default, as trec_eval) "
                        "or unjudged (holes)")
    return g


def register(sub) -> None:
    p = sub.add_parser("holes", help="show unjudged documents and bound what judging them could change",
                       description=HELP, formatter_class=Formatter)
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("-k", "--depth", dest="k", type=int, default=10, metavar="K",
                   help="the top K examined: holes are counted and Judged@K taken there (default 10)")
    p.add_argument("-m", "--measure", action="append", default=None,
                   help="measure to bound: one with exact bounds, marked 'bounds' by `judged measures` (default "
                        "nDCG@k); repeat -m for several: one report each (--format json: a list of the reports)")
    p.add_argument("--list", action="store_true", help="list every hole as: run qid rank docid")
    p.add_argument("--samples", type=int, default=200, help="draws for the estimate (default 200, seed 0)")
    p.add_argument("--level", type=float, default=0.9, help="the estimate interval's nominal level (default 0.9)")
    p.add_argument("--estimate", choices=["loro-logit", "run-prior"], default=None,
                   help="how the estimate draws the holes' grades: loro-logit (default) a grade model fitted on the "
                        "runs' leave-one-run-out pseudo-holes; run-prior the run's own judged documents near the top "
                        "(Fröbe et al., ECIR 2023), for runs unlike the ones a model could be fitted on")
    p.add_argument("--reference", nargs="+", action="extend", metavar="RUN", default=[],
                   help="more runs the estimate learns from but the report leaves out (e.g. the collection's pooled "
                        "runs, when RUN is a new system)")
    p.add_argument("--format", choices=["table", "json"], default="table", help=format_help(["table", "json"]))
    p.add_argument("--bounds-over", choices=["pool", "run"], default="pool",
                   help="what a run's min and max range over: pool (default) every grade of every hole in the top K "
                        "of all the runs given, one label per document (judging their pool: other runs' holes can "
                        "raise the ideal and R); run: the run's own holes only (labelled holes=run in the "
                        "conventions; not what judging a pool of several runs gives)")
    add_hole_options(p)
    add_machine_option(p)
    add_sample_option(p)
    add_convention_options(p, compared=True)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.errors import ConventionError

    if args.k < 1:
        raise ConventionError(f"-k must be a positive integer, got {args.k}")
    if not 0 < args.level < 1:
        raise ConventionError(f"--level must be between 0 and 1, got {args.level}")
    measures = args.measure or [None]  # one report per -m, in the order given
    if args.list and args.format != "json":
        measures = measures[:1]  # the holes are the same whatever the measure
    reports = []
    for i, measure in enumerate(measures):
        if i and args.format != "json":
            print()
        reports.append(_report(args, measure))
    if args.format == "json":
        json.dump(reports[0] if len(reports) == 1 else reports, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


def _report(args, measure) -> dict | None:
    """The report of one measure (None: nDCG@k): its JSON dict (--format json), else printed."""
    from ..core.errors import ConventionError
    from ..analyses.holes import holes_report

    report = holes_report(args.qrels, list(args.runs), k=args.k, measure=measure, maxgrade=args.maxgrade,
                          negative=args.negative, samples=args.samples, level=args.level, reference=args.reference,
                          bounds_over=args.bounds_over, estimate=args.estimate,
                          deep=bool(args.machine or args.sample), **settings_kwargs(args, compared=True))
    machine = machine_filled_holes(report, args.machine) if args.machine else None
    from .machine import is_query_sample

    query_sample = bool(args.sample) and is_query_sample(args.sample)
    if query_sample and not args.machine:
        raise ConventionError(f"{args.sample} is a sample of whole queries: estimate from it with a machine "
                              "judge's labels (--machine LABELS)")
    sampled = (holes_sample_decisions(report, args.sample, args.intervals) if args.sample and not query_sample
               else None)
    ppi = None
    if args.machine and args.sample:
        from .machine import ppi_for

        ppi = ppi_for(report.qrels, {name: rh.aligned.run for name, rh in report.runs.items()}, args.machine,
                      args.sample, [report.measure], report.settings, k=report.k)
    if args.format == "json":
        d = report.to_dict(holes=args.list)
        if sampled is not None:
            d["sample"] = sampled.to_dict()
        if ppi is not None:
            from .machine import ppi_json

            d["ppi"] = ppi_json(ppi)
        if machine is not None:
            from .eval import add_machine_json

            add_machine_json(d, machine, per_query=False)
        return d
    if args.list:
        for row in report.hole_list().itertuples(index=False):
            sys.stdout.write(f"{row.run} {row.qid} {row.rank} {row.docid}\n")
        return None
    print_report(report)
    if machine is not None:
        print_machine(machine)
    if sampled is not None:
        print_sample_decisions(sampled)
    if ppi is not None:
        from .machine import print_ppi

        print_ppi(ppi)
    return None


def holes_sample_decisions(report, sample, intervals: str = "simultaneous"):
    """--sample POOL: the report's measure estimated from the judged sample, and for every
    pair of runs whether the sample decides their order (judged.inference)."""
    from ..analyses.inference import sample_decisions

    return sample_decisions(report.qrels, {name: rh.aligned for name, rh in report.runs.items()}, sample,
                            [report.measure], [(p.a, p.b) for p in report.pairs], settings=report.settings,
                            intervals=intervals)


def machine_filled_holes(report, labels):
    """The report's measure with the holes labelled by the machine judge ``labels``."""
    from ..analyses.machine import fill_runs

    m = report.measure
    return fill_runs(report.qrels, {name: rh.aligned for name, rh in report.runs.items()}, {str(m): m},
                     report.settings, labels, report.k, negative=report.negative)


def print_machine(machine, console=None) -> None:
    from .eval import print_machine_table
    from .plain import console as make_console

    console = console or make_console()
    print_machine_table(machine, console)
    for name, conv in machine.conventions().items():
        console.print(f"  {name}: {conv}", highlight=False, markup=False, soft_wrap=True)


def _interval_note(rh, kind: str = "exact") -> str:
    d = rh.estimate_detail
    if d is None or d.interval == "conformal":
        return ""
    return " (no holes: exact)" if d.interval == "exact" else f" (the {kind} bounds)"


def print_report(report, console=None) -> None:
    from .plain import Table, console as make_console

    console = console or make_console()  # Rich on a terminal only
    m, k = report.measure, report.k
    how = ("exact min and max" if report.bounds_kind == "exact" else
           "conservative min and max (bounds that hold the extremes, not exact)")
    over = ("the holes of every run given (judging their pool; unjudged documents no run retrieved can only "
            "lower a score)" if report.bounds_over == "pool" and len(report.runs) > 1 else "each run's own holes")
    console.print(f"holes in the top {k} (qrels {report.qrels.source}); {m} with holes counted as not relevant, "
                  f"its {how} over grades 0..{report.maxgrade} for {over}, and an estimate"
                  + (" (none for a diversity measure: the estimator models a document's grade, not its subtopics)"
                     if report.estimates is None else ""), highlight=False, markup=False)
    t = Table(box="simple", pad_edge=False, collapse_padding=True)
    for col in ["run", f"Judged@{k}", "holes", "with holes", str(m), "min", "max", "estimate"]:
        if col == "run":  # a long name (a path) folds: the numbers are never cut
            t.add_column(col, overflow="fold", min_width=min(12, max(len(n) for n in report.runs)))
        else:
            t.add_column(col, justify="right", no_wrap=True)
    for name, rh in report.runs.items():
        s = rh.summary()
        e = s.get("estimate")
        t.add_row(name, f"{s['judged']:.3f}", str(s["holes"]),
                  f"{s['queries_with_holes']}/{s['queries']}", f"{s['score']:.4f}",
                  f"{s['min']:.4f}", f"{s['max']:.4f}", "-" if e is None else f"{e['mean']:.4f}")
    console.print(t)
    est = report.estimates
    level = f"{est.level:.0%} interval" if est is not None else "interval"
    if est is not None:
        console.print(f"estimate (not a bound), {level}: " + "; ".join(
            f"{name} {rh.summary()['estimate']['low']:.4f}-{rh.summary()['estimate']['high']:.4f}"
            + _interval_note(rh, report.bounds_kind) for name, rh in report.runs.items()), highlight=False,
            markup=False)
        console.print(est.sentence(), highlight=False, markup=False)
    for p in report.pairs:
        console.print(p.sentence(), highlight=False, markup=False)
    for name, rh in report.runs.items():
        worst = rh.worst()
        if worst:
            console.print(f"{name}: worst queries: " + ", ".join(
                f"{w['qid']} (Judged@{k} {w['judged']:.2f}, {counted(w['holes'], 'hole')}, {m} in [{w['min']:.3f}, {w['max']:.3f}])"
                for w in worst), highlight=False, markup=False)
    if report.query_set is not None:
        print_query_set(report.query_set, console)
        for w in report.query_set.warnings():
            console.print(f"[yellow]warning:[/] {w}", highlight=False)
    console.print("conventions:", highlight=False)
    for label, conv in report.conventions().items():
        console.print(f"  {label}: {conv}", highlight=False, markup=False, soft_wrap=True)
