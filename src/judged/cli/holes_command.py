"""``judged holes``: every unjudged document in the runs' top k, what judging it could change."""

from __future__ import annotations

import argparse
import json
import sys

from . import Formatter
from ..core.words import counted
from .common import add_convention_options, add_machine_option, format_help, print_query_set, settings_of
from .infer_command import add_sample_option
from ..core.errors import ConventionError

HELP = """Show the holes (documents with no judgment for this query) in each run's top k: mean
Judged@k, the number of holes, the share of queries with any hole, the worst queries; the
exact min and max of the measure over every grade the holes could get (ideal recomputed),
an estimate (labelled as such), and for every pair of runs whether judging could flip them.

The estimate learns how relevant holes are from the runs themselves: the judged documents
only one of the given runs has in its top k are what that run's holes would be without it
(leave-one-run-out). A model of their grades fills each hole; its 90% interval is
calibrated on the runs' own leave-one-out errors and clipped to the exact bounds. Give the
collection's other runs too (the pooled runs; --reference RUN... to learn from them
without reporting them): with one run, or too few such documents, or where its own
leave-one-run-out errors on these runs exceed those of holes counted as not relevant, the
estimate falls back to holes counted as not relevant and says so. With several runs
estimated, whether it predicts judging each run's own holes, their pool, or the midpoint is
chosen by holding out runs that contributed judgments and judging them together
(--estimate-over).

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
    p.add_argument("--pairs", choices=PAIRS, default="flip",
                   help="the pairs of runs listed under the table: flip = those judging could flip (default), "
                        "all = every pair, none")
    p.add_argument("--worst", type=int, default=3, metavar="N",
                   help="list the N least judged queries, over every run (default 3; 0: none)")
    p.add_argument("--samples", type=int, default=200, help="draws for the estimate (default 200, seed 0)")
    p.add_argument("--level", type=float, default=0.9, help="the estimate interval's nominal level (default 0.9)")
    p.add_argument("--estimate", choices=["loro-logit", "run-prior", "auto"], default=None,
                   help="how the estimate draws the holes' grades: loro-logit (default) a grade model fitted on the "
                        "runs' leave-one-run-out pseudo-holes; run-prior the run's own judged documents near the top "
                        "(Fröbe et al., ECIR 2023), for runs unlike the ones a model could be fitted on; auto "
                        "the one of the two with the lower leave-one-run-out MAE on these runs")
    p.add_argument("--estimate-over", choices=["auto", "pool", "run", "midpoint"], default=None,
                   help="what the estimate predicts: run, judging each run's own holes; pool, judging the holes of "
                        "every run given (the others' holes enter each run's ideal and R); midpoint, the mean of the "
                        "two; auto (the default; 'run' under --bounds-over run), the first of run, midpoint and pool "
                        "within one standard error of the lowest mean absolute error when runs that contributed "
                        "judgments are held out (as many as the runs estimated, at most half) and judged together "
                        "(with one run, a measure with no ideal or R, or fewer than 4 such runs: run). "
                        "Measured on three collections in docs/holes.md; judged meta holdout --estimates all measures "
                        "each on your collection")
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
    if args.k < 1:
        raise ConventionError(f"-k must be a positive integer, got {args.k}")
    if args.worst < 0:
        raise ConventionError(f"--worst must be 0 or more, got {args.worst}")
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
    from ..analyses.holes.unjudged import holes_report
    from .estimate_tables import add_sample_json, print_sample_estimates, sample_estimates

    report = holes_report(args.qrels, list(args.runs), k=args.k, measure=measure, maxgrade=args.maxgrade,
                          samples=args.samples, level=args.level, reference=args.reference,
                          bounds_over=args.bounds_over, estimate=args.estimate, estimate_over=args.estimate_over,
                          deep=bool(args.machine or args.sample), settings=settings_of(args, compared=True))
    machine = machine_filled_holes(report, args.machine) if args.machine else None
    sampled = ppi = None
    if args.sample:
        sampled, ppi = sample_estimates(report.qrels, {name: rh.aligned for name, rh in report.runs.items()},
                                        args.sample, args.machine, [report.measure],
                                        [(p.a, p.b) for p in report.pairs], report.settings, k=report.k,
                                        intervals=args.intervals)
    if args.format == "json":
        d = report.to_dict(holes=args.list)
        from ..analyses.flips import flip_summary

        d["summary"] = flip_summary({name: s["score"] for name, s in d["runs"].items()}, report.pairs).to_dict()
        add_sample_json(d, sampled, ppi)
        if machine is not None:
            from .eval_command import add_machine_json

            add_machine_json(d, machine, per_query=False)
        return d
    if args.list:
        for row in report.hole_list().itertuples(index=False):
            sys.stdout.write(f"{row.run} {row.qid} {row.rank} {row.docid}\n")
        return None
    print_report(report, pairs=args.pairs, worst=args.worst)
    if machine is not None:
        print_machine(machine)
    print_sample_estimates(sampled, ppi)
    return None


def machine_filled_holes(report, labels):
    """The report's measure with the holes labelled by the machine judge ``labels``."""
    from ..analyses.holes.machine import fill_runs

    m = report.measure
    return fill_runs(report.qrels, {name: rh.aligned for name, rh in report.runs.items()}, {str(m): m},
                     report.settings, labels, report.k)


def print_machine(machine, console=None) -> None:
    from .eval_command import print_machine_table
    from .plain import console as make_console

    console = console or make_console()
    print_machine_table(machine, console)
    for name, conv in machine.conventions().items():
        console.print(f"  {name}: {conv}", highlight=False, markup=False, soft_wrap=True)


PAIRS = ("flip", "all", "none")
FLIP, NO_FLIP = "⇄", "·"  # the flip matrix's cells; the diagonal shows the run's # (its last digit)


def print_report(report, console=None, pairs: str = "flip", worst: int = 3) -> None:
    """The report, summary first: what the pairs can do (how many can flip, the runs whose
    rank can change), the runs in rank order with the flip matrix, then the pairs that can
    flip (``pairs='all'``: every pair; 'none'), the ``worst`` least judged queries of any run,
    the query set and the conventions. Runs are shown by :func:`judged.core.runnames.display_names`."""
    from ..analyses.flips import flip_summary
    from ..core.runnames import shortener
    from .plain import console as make_console

    console = console or make_console()  # Rich on a terminal only
    say = (lambda text, **kw: console.print(text, highlight=False, markup=False, **kw))
    m, k = report.measure, report.k
    shown, short = shortener(list(report.runs))
    summaries = {name: rh.summary() for name, rh in report.runs.items()}
    flips = flip_summary({name: s["score"] for name, s in summaries.items()}, report.pairs)
    how = ("exact min and max" if report.bounds_kind == "exact" else
           "conservative min and max (bounds that hold the extremes, not exact)")
    n = len(report.runs)
    over = "the holes of every run given" if report.bounds_over == "pool" and n > 1 else "each run's own holes"
    say(f"holes in the top {k} of {counted(n, 'run')} (qrels {report.qrels.source}): {m} with holes counted as not "
        f"relevant, its {how} over grades 0..{report.maxgrade} for {over}, and an estimate (not a bound)"
        + (" (none for a diversity measure: the estimator models a document's grade, not its subtopics)"
           if report.estimates is None else ""))
    if n > 1:
        say(flips.sentence(shown))
    _print_runs(report, flips, summaries, shown, console)
    if report.estimates is not None:
        say(report.estimates.sentence())
    if n > 1 and pairs != "none":
        _print_pairs(report, flips, shown, console, every=pairs == "all")
    if worst:
        _print_worst(report, shown, console, worst)
    if report.query_set is not None:
        print_query_set(report.query_set, console)
        for w in report.query_set.warnings():
            console.print(f"[yellow]warning:[/] {short(w)}", highlight=False)
    _print_conventions(report, console)


def _print_runs(report, flips, summaries, shown, console) -> None:
    """The runs in rank order: Judged@k, holes, the measure, its bounds, the estimate and its
    interval, and the flip matrix, in one table when it fits the page; else the interval
    and the matrix in a second table, rows numbered as the first's."""
    from .estimate_tables import interval_cell
    from .plain import Table

    m, k, est = report.measure, report.k, report.estimates
    level = f"{est.level:.0%} interval" if est is not None else None
    # the flip matrix from three runs on (two runs: their one pair is listed under the table)
    matrix = [_matrix_row(i, row) for i, row in enumerate(flips.matrix())] if len(flips.runs) > 2 else None
    numbers = {name: (summaries[name], summaries[name].get("estimate")) for name in flips.runs}
    columns = {  # heading -> (cell of a run, left-justified)
        "run": (lambda name, i: shown[name], True),
        f"Judged@{k}": (lambda name, i: f"{numbers[name][0]['judged']:.3f}", False),
        "holes": (lambda name, i: str(numbers[name][0]["holes"]), False),
        str(m): (lambda name, i: f"{numbers[name][0]['score']:.4f}", False),
        "min": (lambda name, i: f"{numbers[name][0]['min']:.4f}", False),
        "max": (lambda name, i: f"{numbers[name][0]['max']:.4f}", False),
        "estimate": (lambda name, i: "-" if numbers[name][1] is None else f"{numbers[name][1]['mean']:.4f}", False),
    }
    if level:  # an interval that is the bounds (too few runs to calibrate one) is no estimate interval: said so
        columns[level] = (lambda name, i: interval_cell(report.runs[name].estimate_detail), False)
    if matrix is not None:
        columns[f"{FLIP} with #"] = (lambda name, i: matrix[i], True)

    def table(headings) -> Table:
        t = Table(box="simple", pad_edge=False, collapse_padding=True, show_edge=False)
        t.add_column("#", justify="right", no_wrap=True)
        for h in headings:
            if h == "run":  # a long name (a path) folds: the numbers are never cut
                t.add_column(h, overflow="fold", min_width=min(12, max(len(shown[r]) for r in flips.runs)))
            else:
                t.add_column(h, justify="left" if columns[h][1] else "right", no_wrap=True)
        for i, name in enumerate(flips.runs):
            t.add_row(str(i + 1), *(columns[h][0](name, i) for h in headings))
        return t

    every, flip = list(columns), f"{FLIP} with #"
    apart = [h for h in every if h in (level, flip)]
    layouts = [[every], [[h for h in every if h != flip], [flip] if flip in every else []],
               [[h for h in every if h not in apart], apart]]
    layouts = [[table(part) for part in layout if part] for layout in layouts]
    chosen = next((tables for tables in layouts if all(t.natural_width() <= console.width for t in tables)),
                  layouts[-1])
    for t in chosen:
        console.print(t)


def _matrix_row(i: int, row: list) -> str:
    return "".join(str((i + 1) % 10) if cell is None and j == i else FLIP if cell else NO_FLIP
                   for j, cell in enumerate(row))


def _print_pairs(report, flips, shown, console, every: bool = False) -> None:
    """The pairs that can flip (``every``: all of them, ⇄ marking those that can), a line per
    run with the runs below it in rank order: '#i RUN vs #j Δ [low, high], ...' (Δ = run i
    minus run j now, then its range with the holes judged)."""
    listed = flips.ranked_pairs() if every else flips.flippable
    if not listed:
        return
    rank = {name: i + 1 for i, name in enumerate(flips.runs)}
    how = "exact" if all(p.exact for p in listed) else "conservative" if not any(p.exact for p in listed) else \
        "exact or conservative"
    console.print(("every pair" if every else "pairs that can flip (--pairs all: every pair)")
                  + f": Δ mean {report.measure} now, [its range with the holes judged, {how}]",
                  highlight=False, markup=False)
    below = {}  # the better run of each pair -> its entries
    for p in listed:
        a, b = sorted((p.a, p.b), key=rank.get)
        d, lo, hi = (p.difference, p.low, p.high) if a == p.a else (-p.difference, -p.high, -p.low)
        mark = f" {FLIP}" if every and p.can_flip else ""
        other = f"#{rank[b]}" if len(rank) > 2 else f"#{rank[b]} {shown[b]}:"  # two runs: no matrix, the name
        below.setdefault(a, []).append(f"{other} {d:+.4f} [{lo:+.4f}, {hi:+.4f}]{mark}")
    for a, entries in below.items():
        console.print(f"  #{rank[a]} {shown[a]} vs " + ", ".join(entries), highlight=False, markup=False)


def _print_worst(report, shown, console, count: int) -> None:
    """The ``count`` least judged queries over every run (Judged@k, then most holes)."""
    k, m = report.k, report.measure
    found = sorted(((w, name) for name, rh in report.runs.items() for w in rh.worst(count)),
                   key=lambda x: (x[0]["judged"], -x[0]["holes"]))[:count]
    if not found:
        return
    console.print(f"least judged queries (--worst N for more):", highlight=False, markup=False)
    for w, name in found:
        console.print(f"  {w['qid']} in {shown[name]}: Judged@{k} {w['judged']:.2f}, {counted(w['holes'], 'hole')}, "
                      f"{m} in [{w['min']:.3f}, {w['max']:.3f}]",
                      highlight=False, markup=False)


def _print_conventions(report, console) -> None:
    """The measure's convention whole; its min and max by what they change (unjudged=...);
    Judged@k's; the negative grades."""
    c = report.conventions()
    measure = c["measure"].split()
    changed = {key: " ".join(t for t in c[key].split() if t not in measure) for key in ("min", "max", "judged")}
    console.print(f"conventions: {c['measure']}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"  min: {changed['min']}; max: {changed['max']}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"  {changed['judged']}; {c['negative']}", highlight=False, markup=False, soft_wrap=True)
