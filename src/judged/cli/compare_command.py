"""``judged compare`` and ``judged compare-records``: paired statistics against a baseline."""

from __future__ import annotations

import argparse
import sys

from . import Formatter
from ..core.words import counted
from .check_options import add_answers_option, add_check_options, side_files, print_checks
from .declared import declared
from .common import (
    add_convention_options, add_machine_option, add_record_options, format_help, import_ahead, load_manifest,
    print_query_set, settings_of, split_inputs, save_record_of)
from .holes_command import add_hole_options
from .infer_command import add_sample_option
from ..core.errors import JudgedError, UsageError

HELP = """Compare runs with a baseline (the first run) over the same queries: every qrels
query, a run missing one scoring 0 there (the query-set rule of every command that compares
runs; printed, and the runs that miss queries named). Per run and measure: both means, the
mean difference with a 95% CI (Student t), wins/losses/ties (tie: |d| <= 1e-12 x max(1,
largest |score|), one tolerance rule for ties, constant differences and zero variance),
effect size (Cohen's d_z) and two-sided p-values of the paired t-test, Wilcoxon signed-rank
(exact up to 50 nonzero differences, tied ranks included; else normal, tie-corrected), sign
test (exact binomial, ties dropped), randomization test (every sign assignment when 2^n <=
the draws, else random sign flips, p=(b+1)/(m+1)) and bootstrap, corrected across runs per
measure (Holm by default). A test not defined on the data (constant differences) prints
n/a and is never marked; Judged@k (coverage, not quality) is never tested. Then the queries
each run lost most on, both rankings side by side.

examples:
  judged compare qrels.txt bm25.run dense.run tuned.run -m nDCG@10 -m AP
  judged compare --manifest eval.toml bm25.run dense.run --format json
"""

RECORDS_HELP = """Compare the runs of two evaluation records (saved with --save): the first run of
A is the baseline. Records made under different judgments are refused unless
--allow-different-qrels, and then the change is reported.

example:
  judged compare-records before.json after.json
"""


def add_stats_options(p) -> None:
    stats = declared("judged.analyses.stats")
    CORRECTIONS, DEFAULT_PERMUTATIONS, DEFAULT_SEED = stats.CORRECTIONS, stats.DEFAULT_PERMUTATIONS, stats.DEFAULT_SEED

    g = p.add_argument_group("statistics")
    g.add_argument("--correction", choices=list(CORRECTIONS), default="holm",
                   help="multiple-comparison correction across the runs of one measure: holm (default), "
                        "bonferroni, bh (Benjamini-Hochberg)")
    g.add_argument("--permutations", type=int, default=DEFAULT_PERMUTATIONS, metavar="M",
                   help=f"randomization and bootstrap draws (default {DEFAULT_PERMUTATIONS}; at least 10000 "
                        "recommended)")
    g.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"seed of the random draws (default {DEFAULT_SEED}): identical calls print identical numbers")


def add_comparison_options(p) -> None:
    """Inputs, measures, regressions, statistics, conventions, manifest and record (compare, report)."""
    p.add_argument("inputs", nargs="+", metavar="QRELS BASELINE RUN",
                   help="qrels (omit with --manifest), the baseline run, then the runs to compare")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure, repeatable (default nDCG@10)")
    p.add_argument("--baseline", metavar="RUN",
                   help="the run the others are compared with: one of the runs, by its path or by the name the tables "
                        "show (default: the first run)")
    p.add_argument("--regressions", type=int, default=2, metavar="N",
                   help="the queries runs lost most on, on the first measure: the table shows the N worst over every "
                        "run, JSON and the report keep each run's N worst (default 2; 0: none)")
    p.add_argument("-k", "--depth", type=int, default=None, metavar="K",
                   help="the top K examined: ranks shown per regression, k of Judged@k and of the leak and "
                        "evidence-gap lists (default: the first measure's cutoff, else 10)")
    add_stats_options(p)
    add_machine_option(p)
    add_convention_options(p, compared=True)
    add_record_options(p)
    g = add_hole_options(p)
    g.add_argument("--no-holes", dest="holes", action="store_false",
                   help="skip Judged@k and the check whether judging the holes could flip a comparison")
    add_answers_option(add_check_options(p, depth=False))


def register(sub) -> None:
    p = sub.add_parser("compare", help="paired comparison of runs against a baseline", description=HELP,
                       formatter_class=Formatter)
    add_comparison_options(p)
    add_sample_option(p)
    p.add_argument("--format", choices=["table", "json", "csv"], default="table", help=format_help(["table", "json", "csv"]))
    p.add_argument("--all-tests", action="store_true",
                   help="show every test's p-value in the table (default: randomization and its corrected p)")
    p.set_defaults(func=run)

    r = sub.add_parser("compare-records", help="compare two saved evaluation records", description=RECORDS_HELP,
                       formatter_class=Formatter)
    r.add_argument("a", metavar="A.json", help="record holding the baseline run (its first run)")
    r.add_argument("b", metavar="B.json", help="record holding the runs to compare")
    r.add_argument("--baseline", help="the baseline run's name in A (default: its first run)")
    r.add_argument("--allow-different-qrels", action="store_true",
                   help="compare records made under different judgments (and say what changed)")
    r.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="compare only these measures (as written in the records), repeatable; default: all shared")
    r.add_argument("--format", choices=["table", "json", "csv"], default="table", help=format_help(["table", "json", "csv"]))
    r.add_argument("--all-tests", action="store_true",
                   help="show every test's p-value in the table (default: randomization and its corrected p)")
    add_stats_options(r)
    r.set_defaults(func=run_records)


def stats_kwargs(args) -> dict:
    return {"correction": args.correction, "permutations": args.permutations, "seed": args.seed}


def comparison_from_args(args):
    """Evaluate and compare as the CLI options say (shared by compare and report)."""
    from ..analyses.comparison import DEFAULT_MEASURES, compare
    from ..analyses.stats import special_functions

    import_ahead(special_functions)  # the paired tests' scipy functions, loaded while the runs are read
    manifest = load_manifest(args)
    qrels, runs = split_inputs(manifest, args.inputs)
    if len(runs) < 2:
        raise JudgedError("give a baseline run and at least one run to compare with it")
    if getattr(args, "baseline", None):
        runs = baseline_first(runs, args.baseline)
    measures = None if manifest is not None else (args.measures or list(DEFAULT_MEASURES))
    args.qrels = qrels or manifest.resolve(manifest.qrels["path"])  # where the checks look for a scale
    c = compare(qrels, runs, measures, manifest=manifest, regressions=args.regressions, depth=args.depth,
                settings=settings_of(args, compared=True), side=side_files(args), holes=args.holes,
                maxgrade=args.maxgrade, answers=args.answers, high=args.high, deep=reads_deeper(args),
                **stats_kwargs(args),
                digests=getattr(args, "command", None) != "compare" or reads_deeper(args))  # report shows them
    if getattr(args, "machine", None):
        from ..analyses.holes.machine import machine_filled

        c.machine = machine_filled(c.result, args.machine, k=c.holes.k if c.holes is not None else args.depth)
    if getattr(args, "sample", None):
        from .estimate_tables import sample_estimates

        result = c.result
        c.sample, c.ppi = sample_estimates(result.qrels, {name: rr.aligned for name, rr in result.runs.items()},
                                           args.sample, getattr(args, "machine", None), list(c.measures),
                                           [(run, c.baseline) for run in c.runs], result.settings,
                                           baseline=c.baseline, intervals=getattr(args, "intervals", "simultaneous"))
    if getattr(args, "save", None):
        save_record_of(c.result, args, manifest)
    return c


def baseline_first(runs: list, baseline: str) -> list:
    """``runs`` with the one ``baseline`` names first: a run as given, or as the tables show it
    (:func:`judged.core.runnames.display_names`)."""
    from ..core.runnames import display_names

    shown = display_names([str(r) for r in runs])
    found = [i for i, r in enumerate(runs) if baseline in (str(r), shown[str(r)])]
    if len(found) != 1:
        names = ", ".join(shown[str(r)] for r in runs)
        raise UsageError(f"--baseline {baseline}: {'no' if not found else 'more than one'} run of that name "
                         f"(runs: {names})")
    i = found[0]
    return [runs[i], *runs[:i], *runs[i + 1:]]


def reads_deeper(args) -> bool:
    """Whether something after the comparison reads the runs' alignments deeper than its
    measures' cutoffs: --machine, --sample, --save, --answers, report's --power, the checks'
    side files (requirements, eligibility, unanswerable queries)."""
    return any(getattr(args, name, None) for name in ("machine", "sample", "save", "answers", "power", "requirements",
                                                       "eligibility", "unanswerable"))


def run(args) -> int:
    output(comparison_from_args(args), args)
    return 0


def run_records(args) -> int:
    from ..analyses.comparison import compare_records

    c = compare_records(args.a, args.b, allow_different_qrels=args.allow_different_qrels, baseline=args.baseline,
                        measures=args.measures, **stats_kwargs(args))
    output(c, args)
    return 0


def output(c, args) -> None:
    if args.format == "json":
        sys.stdout.write(c.to_json() + "\n")
    elif args.format == "csv":
        c.table().to_csv(sys.stdout, index=False)
    else:
        render(c, all_tests=args.all_tests, regressions=getattr(args, "regressions", None))


FLIP = "⇄"  # judging the holes could reverse this comparison


def mark(p_adjusted: float, delta: float, alpha: float = 0.05) -> str:
    """▲/▼ when the corrected randomization p is below alpha, else blank (also when undefined)."""
    from ..analyses.comparison import significance_mark

    return significance_mark(p_adjusted, delta, alpha)


def render(c, all_tests: bool = False, console=None, regressions: int | None = None) -> None:
    """The comparison, summary first: Judged@k, then per measure the table of runs against the
    baseline and the comparisons judging the holes could flip; the legend, the query set and
    the checks; last the ``regressions`` worst regressions over every run (default: all of
    ``c.regressions``), both rankings side by side. Runs are shown by
    :func:`judged.core.runnames.display_names`."""
    from ..analyses.stats import TESTS, format_effect, format_p
    from ..core.runnames import shortener
    from .estimate_tables import print_sample_estimates
    from .plain import Table, console as make_console

    console = console or make_console()  # Rich on a terminal only
    shown, short = shortener([c.baseline, *c.runs])
    say = (lambda text, **kw: console.print(text, highlight=False, markup=False, **kw))
    abbreviated = {"randomization": "rand.", "bootstrap": "boot.", "wilcoxon": "wilc.", "t-test": "t", "sign": "sign"}
    if c.holes is not None:
        _render_judged(c, shown, console)
    leaks = {name: f" ({counted(len(found), 'leak')})" if found else "" for name, found in c.leaks().items()}
    for measure, convention in c.measures.items():
        rows = [x for x in c.comparisons if x.measure == measure]
        base = f" {rows[0].mean_baseline:.4f}" if rows else ""
        console.print(f"[bold]{measure}[/] — baseline {shown[c.baseline]}{leaks.get(c.baseline, '')}:{base}",
                      highlight=False)
        t = Table(box="simple_head", pad_edge=False, collapse_padding=True, show_edge=False)
        t.add_column("run", min_width=min(12, max(len(shown[r]) for r in c.runs)), overflow="fold")
        for col in ["mean", "Δ mean", "95% CI", "W/L/T", *(["d_z"] if all_tests else [])]:  # 80 columns
            t.add_column(col, justify="right", no_wrap=True)
        tests = TESTS if all_tests else ("randomization",)
        for test in tests:
            if all_tests:
                t.add_column(f"p {abbreviated[test]}", justify="right", no_wrap=True)
            t.add_column(f"p {c.correction}" if not all_tests else c.correction, justify="right", no_wrap=True)
        t.add_column("", justify="left", no_wrap=True)
        for x in rows:
            s = x.test
            cells = []
            for test in tests:
                cells += ([format_p(s.p_values[test])] if all_tests else []) + [format_p(x.p_adjusted[test])]
            flip = c.flip(x)
            t.add_row(shown[x.run] + leaks.get(x.run, ""), f"{x.mean_run:.4f}", f"{s.mean_delta:+.4f}",
                      f"[{s.ci95[0]:+.4f}, {s.ci95[1]:+.4f}]", f"{s.wins}/{s.losses}/{s.ties}",
                      *([format_effect(s.effect_size)] if all_tests else []), *cells, x.mark + (FLIP if flip and flip.can_flip else ""))
        console.print(t)
        say(f"  {convention}", soft_wrap=True)
        logs = next((x.paired_on for x in rows if x.log_ratio), None)
        if logs:
            say(f"  {measure}: {logs}")
        if c.holes is not None and measure in c.holes.skipped:
            say(f"  holes not bounded for {measure}: {c.holes.skipped[measure]}")
        render_machine(c, measure, console)
        _render_flips(c, measure, rows, shown, console)
        for x in rows:
            d = c.sample.decision(measure, x.run, c.baseline) if getattr(c, "sample", None) is not None else None
            if d is not None:
                say(f"  sampled: {short(d['sentence'])}")
    undefined = any(x.p_adjusted.get(t) != x.p_adjusted.get(t) or (all_tests and x.test.effect_size != x.test.effect_size)
                    for x in c.comparisons for t in tests)
    say(f"▲/▼: better/worse than the baseline, randomization p < 0.05 after {c.correction} correction over the runs "
        f"({c.permutations} sign-flip draws or all 2^n, seed {c.seed})"
        + (f"; {FLIP}: judging the holes (grades 0..{c.holes.maxgrade}) could reverse the order" if c.holes is not None
           else "") + ("; d_z = mean(d)/sd(d)" if all_tests else "")
        + ("; n/a: not defined (constant differences) or not tested (Judged@k)" if undefined else ""))
    print_sample_estimates(getattr(c, "sample", None), getattr(c, "ppi", None), console)
    if c.query_set is not None:
        say(short(c.query_set.describe()), soft_wrap=True)
    render_checks(c, console)  # its warnings name the runs that miss queries (judged.core.querysets)
    for name, counts in c.counts.items():
        if counts.get("in_record", 0) > counts.get("compared", 0):
            console.print(f"[yellow]{shown.get(name, name)}[/]: {counts['in_record'] - counts['compared']} of its "
                          "queries are not in the other record and were left out", highlight=False)
    for line in c.provenance.get("qrels_changes", []):
        console.print(f"[yellow]judgments differ between the records:[/] {line}", highlight=False)
    worst = worst_regressions(c.regressions, len(c.regressions) if regressions is None else regressions)
    if worst:
        lost = len(c.regressions)
        say((f"the {len(worst)} worst regressions" if len(worst) > 1 else "the worst regression")
            + f" over every run ({worst[0].measure}; --regressions N for more):" if lost > len(worst) else
            f"regressions ({worst[0].measure}):")
    for r in worst:
        render_regression(r, console, shown)


def worst_regressions(regressions: list, count: int) -> list:
    """The ``count`` regressions with the largest losses, over every run (ties: the order given)."""
    return sorted(regressions, key=lambda r: r.delta)[:count]


def _render_judged(c, shown, console) -> None:
    """Judged@k: every run's when there are few, else the range and the three least judged."""
    h = c.holes
    runs = list(h.runs.items())
    if len(runs) > 3:
        runs = sorted(runs, key=lambda item: item[1]["judged"])  # least judged first
    few = runs[:3]
    listed = ", ".join(f"{shown.get(name, name)} {r['judged']:.4f} ({counted(r['holes'], 'hole')}{_missing(c, name)})"
                       for name, r in few)
    if len(runs) > 3:
        listed = f"{runs[0][1]['judged']:.4f} to {runs[-1][1]['judged']:.4f}; least judged: " + listed
    console.print(f"Judged@{h.k}: {listed}", highlight=False, markup=False)


def _render_flips(c, measure: str, rows: list, shown, console) -> None:
    """The comparisons of ``measure`` judging the holes could flip, with the interval of Δ."""
    found = [(x, c.flip(x)) for x in rows if c.flip(x) is not None]
    if not found:
        return
    flips = [(x, f) for x, f in found if f.can_flip]
    how = "exact" if all(f.exact for _, f in found) else "conservative" if not any(f.exact for _, f in found) else \
        "exact or conservative"
    if not flips:
        console.print(f"  judging the holes could flip none of the {counted(len(found), 'comparison')} ({how} "
                      "intervals of Δ)",
                      highlight=False, markup=False)
        return
    console.print(f"  {FLIP} judging the holes could flip {len(flips)} of {counted(len(found), 'comparison')}; "
                  f"Δ could become anything in ({how}): "
                  + ", ".join(f"{shown[x.run]} [{f.low:+.4f}, {f.high:+.4f}]" for x, f in flips),
                  highlight=False, markup=False)


def render_machine(c, measure: str, console) -> None:
    """The measure with the holes labelled by the machine judge, on its own line, named as such."""
    mf = c.machine
    if mf is None or measure not in mf.measures:
        return
    base = mf.mean(c.baseline, measure)
    cells = [f"{c.baseline} {base:.4f}"] + [f"{r} {mf.mean(r, measure):.4f} (Δ {mf.mean(r, measure) - base:+.4f})"
                                            for r in c.runs]
    console.print(f"  {mf.name(measure)} (holes labelled by the machine judge {mf.machine.source}, not judgments; "
                  f"holes@{mf.k} machine-labelled: " + ", ".join(f"{r} {mf.labelled[r]}/{mf.holes[r]}" for r in mf.values)
                  + "): " + "; ".join(cells), highlight=False, markup=False, soft_wrap=True)


def _missing(c, name: str) -> str:
    """'; 20 of 50 queries not ranked' for a run that misses qrels queries (Judged@k 0 there)."""
    missing = c.counts.get(name, {}).get("missing_from_run", 0)
    return f"; {missing} of {counted(len(c.qids), 'query')} not ranked, 0 there" if missing else ""


def render_checks(c, console) -> None:
    """Leaks, evidence gaps, abstention, the grade scale, warnings and answer checks (when given)."""
    if c.checks is not None:
        print_checks(c.result, console, answer_key=False)
    if c.answers:
        from .answers_command import print_pairings

        print_pairings(c.answers, None, console)  # its convention is printed under its table


def render_regression(r, console, shown: dict | None = None) -> None:
    from .plain import Table

    console.print(f"[bold]{(shown or {}).get(r.run, r.run)}[/] lost {r.measure} on query [bold]{r.qid}[/]: "
                  f"{r.baseline_value:.4f} -> {r.run_value:.4f} ({r.delta:+.4f})", highlight=False)
    t = Table(box="simple_head", pad_edge=False, show_edge=False)
    for col in ["rank", "baseline docid", "grade", "run docid", "grade "]:
        t.add_column(col, justify="right" if col in ("rank", "grade", "grade ") else "left", overflow="fold")
    newly = set(r.newly_unjudged)
    for i in range(max(len(r.baseline_ranking), len(r.run_ranking))):
        b = r.baseline_ranking[i] if i < len(r.baseline_ranking) else (i + 1, "", "")
        n = r.run_ranking[i] if i < len(r.run_ranking) else (i + 1, "", "")
        doc = f"[bold yellow]{n[1]}[/]" if n[1] in newly else n[1]
        t.add_row(str(i + 1), b[1], _grade(b[2]), doc, _grade(n[2]))
    console.print(t)
    if newly:
        console.print(f"  {counted(len(newly), 'unjudged document')} newly in the run's top {len(r.run_ranking)}: "
                      f"{', '.join(r.newly_unjudged)} — judge them before reading this drop as a regression",
                      highlight=False)


def _grade(g) -> str:
    if g == "":
        return ""
    return "unjudged" if g is None else str(g)
