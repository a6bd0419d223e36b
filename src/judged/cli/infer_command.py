"""``judged infer``: estimates from a judged sample of the holes, with intervals, and
whether the sample decides each pair of runs."""

from __future__ import annotations

import argparse
import json
import sys

from . import Formatter
from ..core.words import counted
from .common import add_convention_options, format_help, settings_of
from ..core.errors import ConventionError

HELP = """Estimate what judging every pair of a sample's design would show, from the
judged sample: draw it with judged pool --strategy sample, judge it (the judging app or
a file), merge the labels (judged qrels merge), then judged infer (example below).

Estimators (-m, repeatable; default statNDCG@K and statAP):
  statNDCG@k   Horvitz-Thompson DCG@k over an ideal from Horvitz-Thompson grade counts
  statAP       statAP (Aslam, Pavlu & Yilmaz, SIGIR 2006)
  infNDCG@k    infNDCG (Yilmaz, Kanoulas & Aslam, SIGIR 2008), not bias-corrected
  xinfAP       xinfAP (Yilmaz, Kanoulas & Aslam, SIGIR 2008), not bias-corrected
statNDCG and statAP are jackknife bias-corrected. Intervals: the stratified jackknife
over the drawn pairs (Wolter 2007; for statNDCG and statAP, of the corrected estimate
itself), t with Satterthwaite degrees of freedom, widened for a bias up to the one the
correction removed (Armstrong & Kolesar 2020); a stratum whose sample drew fewer relevant
documents than its rank's rate in every stratum (Jeffreys' prior) adds the variance of the
share it fell short by (all of that rate where it drew none, instead of 0). Estimates and
ends stay in the measure's range. Every
number printed is an estimate with its method; judged eval's numbers never change.
For trec_eval's infAP (qrels with -1 for pooled but unjudged) use judged eval -m infAP.

--intervals simultaneous (the default): every run's interval holds AT ONCE with --level
confidence. The runs share one sample, so their errors are correlated; the joint
covariance comes from the same replicates and the critical value is the --level quantile
of the largest |t| among the runs (simulated; Hothorn, Bretz & Westfall 2008), Bonferroni
as the fallback. Default because a table of runs is read as a whole: with 17 runs and
marginal 95% intervals, every run was inside in only 50-65% of samples (robust03, 10%
sampled). --intervals marginal: each run's own 95% interval, narrower (the JSON's low and
high are always these; simultaneous_low and simultaneous_high are added).

For each pair of runs, adjacent in the estimated order: decided at --level (the
interval of the difference excludes 0), or how many more sampled judgments would
decide it with probability --power if the difference is as estimated.

examples:
  judged pool qrels.txt runs/*.run --depth 100 --strategy sample --budget 500 --seed 1 -o sample.pool
  judged qrels merge qrels.txt labels.txt -o qrels-merged.txt
  judged infer qrels-merged.txt runs/*.run --sample sample.pool
  judged infer qrels-merged.txt runs/*.run --sample sample.pool -m 'statNDCG(gain=exp)@10' -m xinfAP --format json
"""


def register(sub) -> None:
    p = sub.add_parser("infer", help="estimate measures from a judged sample of the holes, with intervals",
                       description=HELP, formatter_class=Formatter)
    p.add_argument("qrels", help="qrels holding the judged sample (merged with the earlier judgments)")
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("--sample", required=True, metavar="POOL",
                   help="the pool file written by judged pool --strategy sample")
    p.add_argument("-m", "--measure", action="append", dest="estimators", metavar="ESTIMATOR",
                   help="statNDCG@k, statAP, infNDCG@k, xinfAP (repeatable; default statNDCG@K and statAP)")
    p.add_argument("-k", "--depth", dest="k", type=int, default=10, metavar="K",
                   help="the top K examined: the cutoff of the default statNDCG (default 10)")
    p.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--power", type=float, default=0.8,
                   help="probability of deciding a pair after the judgments said to be needed (default 0.8)")
    add_intervals_option(p)
    p.add_argument("--pairs", choices=["adjacent", "all"], default="adjacent",
                   help="pairs shown in the table output (JSON always has all)")
    p.add_argument("--format", choices=["table", "json"], default="table", help=format_help(["table", "json"]))
    p.add_argument("--machine", metavar="LABELS",
                   help="a machine judge's labels (e.g. an LLM's) of the sample's population: adds prediction-powered "
                        "estimates (the machine corrected by the judged sample; human-only, PPI, PPI++), apart")
    add_convention_options(p, compared=True)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..analyses.holes.inference import default_estimators, infer

    if args.k < 1:
        raise ConventionError(f"-k must be a positive integer, got {args.k}")
    from .estimate_tables import add_sample_json, is_query_sample, ppi_for, print_sample_estimates

    inf = None
    if not (args.machine and is_query_sample(args.sample)):  # else only prediction-powered estimates
        inf = infer(args.qrels, list(args.runs), args.sample, args.estimators or default_estimators(args.k),
                    level=args.level, power=args.power, intervals=args.intervals,
                    settings=settings_of(args, compared=True))
    ppi = None
    if args.machine:
        wanted = ([f"P@{args.k}", f"DCG@{args.k}"] if inf is not None
                  else [f"nDCG@{args.k}", f"AP@{args.k}", f"P@{args.k}"])
        ppi = ppi_for(args.qrels, list(args.runs), args.machine, args.sample, wanted, settings_of(args, compared=True),
                      k=args.k, level=args.level)
    if args.format == "json":
        json.dump(add_sample_json(inf.to_dict() if inf is not None else {}, ppi=ppi), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if inf is not None:
        render(inf, all_pairs=args.pairs == "all")
    print_sample_estimates(ppi=ppi)
    return 0


def render(inf, all_pairs: bool = False, console=None) -> None:
    from ..core.runnames import shortener
    from .estimate_tables import heading, print_estimates
    from .plain import console as make_console

    console = console or make_console()
    _, short = shortener(list(inf.estimates.runs))  # runs as every command shows them
    s = inf.sample
    pct = f"{inf.level:.0%}"
    joint = inf.intervals == "simultaneous"
    console.print(f"estimates, not measurements: what judging all {counted(s['population'], 'pair')} of the sample's "
                  f"design would show, from {s['judged']} judged of {s['drawn']} drawn "
                  f"({counted(s['strata'], 'stratum', 'strata')}, seed "
                  f"{s['seed']}, {s['path']}); {pct} {'simultaneous ' if joint else ''}intervals",
                  highlight=False, markup=False)
    rows = inf.rows()
    print_estimates(rows, heading(inf), console, short)
    value = {(r.run, name): e.value for r in rows for name, e in r.estimates.items()}
    runs = inf.estimates.runs
    for e in inf.estimates.estimators:
        order = sorted(runs, key=lambda r: -value[(r, str(e))])
        pairs = ([(a, b) for i, a in enumerate(order) for b in order[i + 1:]] if all_pairs
                 else list(zip(order, order[1:])))
        for a, b in pairs:
            console.print(short(inf.decide(e, a, b)["sentence"]), highlight=False, markup=False)
    for note in inf.notes:
        console.print(f"note: {note}", highlight=False, markup=False)
    console.print("methods:", highlight=False)
    for e in inf.estimates.estimators:
        console.print(f"  {e.method}", highlight=False, markup=False, soft_wrap=True)
    h = inf.header()
    console.print(f"  interval: {h['interval']}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"  shown: {inf.interval_sentence()}", highlight=False, markup=False, soft_wrap=True)
    if joint:
        console.print(f"  simultaneous: {h['simultaneous_method']}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"  when to stop: {h['stop_rule']}", highlight=False, markup=False, soft_wrap=True)
    for label, conv in h["conventions"].items():
        console.print(f"  {label}: {conv}", highlight=False, markup=False, soft_wrap=True)
    if inf.query_set is not None:
        console.print(inf.query_set.describe(), highlight=False, markup=False, soft_wrap=True)
        for w in inf.warnings:
            console.print(f"warning: {short(w)}", highlight=False, markup=False)


INTERVALS = ("simultaneous", "marginal")  # judged.analyses.holes.inference.INTERVALS, default first (no numpy at --help)


def add_intervals_option(p) -> None:
    p.add_argument("--intervals", choices=list(INTERVALS), default=INTERVALS[0],
                   help="simultaneous (default): the runs' intervals hold all at once at the level (max-|t| over "
                        "the runs' correlated estimates, Hothorn, Bretz & Westfall 2008; Bonferroni as fallback), "
                        "as a table of runs is read; marginal: each run's alone, narrower. JSON low/high stay "
                        "marginal; simultaneous_low/simultaneous_high are added")


def add_sample_option(p) -> None:
    """--sample POOL for holes and compare: estimates from a judged sample and, per pair of
    runs, decided at 95% or how many more sampled judgments would decide it."""
    p.add_argument("--sample", default=None, metavar="POOL",
                   help="a judged sample (judged pool --strategy sample, labels merged into QRELS): estimate the "
                        "measure from it and say per pair whether the order is decided at 95%% or how many more "
                        "sampled judgments would decide it (80%% power); see judged infer")
    add_intervals_option(p)
