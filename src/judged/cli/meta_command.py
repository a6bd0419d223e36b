"""``judged meta``: which measure, gain and discount can be trusted on this collection?"""

from __future__ import annotations

import sys

from . import Formatter
from ..core.words import counted
from .common import OneMeasure, add_convention_options, format_help, print_json, settings_of
from .declared import declared
from .holes_command import add_hole_options
from ..core.errors import JudgedError, ConventionError

HELP = """Meta-evaluation of measures and conventions on your own qrels and runs.

  power              discriminative power (Sakai 2006): paired test of every pair of runs, ASL curves
  agreement          agreement with side-by-side preferences (Sanderson et al. 2010)
  stability          Kendall's tau and tau_AP between two system rankings; the pairs that swapped
  holdout            leave-one-run-out / leave-one-group-out: reusability, bounds and the hole estimate
  pooling            replay pooling strategies on judged runs: error, tau and judgments to recover the ranking
  simulate-discount  Wang et al. (COLT 2013): nDCG drifts to 1, the discount decides if it still separates
  synthetic          write a deterministic 8-run synthetic collection to try the others on

example:
  judged meta synthetic /tmp/meta && cd /tmp/meta
  judged meta power qrels.txt runs/*.run --plot asl.png
  judged meta agreement preferences.txt qrels.txt runs/*.run
  judged meta stability qrels-pooled.txt runs/*.run -m nDCG@10 --versus-qrels qrels.txt
  judged meta holdout qrels.txt runs/*.run -k 10
  judged meta pooling qrels.txt runs/*.run --budget 500 --budget 2000 --plot pooling.png
  judged meta simulate-discount --plot discount.png
"""


def register(sub) -> None:
    agreement, discount, holdout, power, stability = (declared(f"judged.analyses.meta.{name}") for name in
                                                      ("agreement", "discount", "holdout", "power", "stability"))
    meta_pooling = declared("judged.analyses.pooling.replay")

    p = sub.add_parser("meta", help="meta-evaluation: discriminative power, agreement, stability, holdout, "
                                    "discounts",
                       description=HELP, formatter_class=Formatter)
    msub = p.add_subparsers(dest="meta_command", metavar="COMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    pw = _command(msub, "power", "discriminative power and ASL curves (Sakai 2006)", power.__doc__, run_power)
    _qrels_runs(pw)
    _measures(pw, power.DEFAULT_MEASURES)
    pw.add_argument("--test", choices=list(power.TESTS), default="randomization",
                    help="paired test: randomization (default; random sign flips) or bootstrap (Sakai's)")
    pw.add_argument("--samples", type=int, default=power.DEFAULT_SAMPLES,
                    help=f"sign-flip draws or bootstrap resamples per pair (default {power.DEFAULT_SAMPLES})")
    pw.add_argument("--seed", type=int, default=power.DEFAULT_SEED, help="random seed (default 0)")
    pw.add_argument("--alpha", type=float, default=power.DEFAULT_ALPHA, help="significance level (default 0.05)")
    pw.add_argument("--pairs", action="store_true", help="also list every pair's difference and ASL")
    pw.add_argument("--plot", metavar="FILE", help="write the ASL curves (PNG/SVG/PDF by suffix; needs matplotlib)")

    ag = _command(msub, "agreement", "agreement with side-by-side preferences (Sanderson et al. 2010)",
                  agreement.__doc__, run_agreement)
    ag.add_argument("preferences", help="preference file: qid run_a run_b preferred (a|b|none)")
    _qrels_runs(ag)
    _measures(ag, agreement.DEFAULT_MEASURES)
    ag.add_argument("-k", "--depth", type=int, default=agreement.DEFAULT_DEPTH, metavar="K",
                    help="the top K examined: a side 'retrieved something relevant' when its top K holds a grade "
                         ">= 1 (default 10)")

    st = _command(msub, "stability", "Kendall's tau and tau_AP between two system rankings", stability.__doc__,
                  run_stability)
    _qrels_runs(st)
    st.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE", required=True,
                    help="the measure (once, with --versus-qrels) or two measures / conventions to compare")
    st.add_argument("--versus-qrels", metavar="QRELS", help="a second qrels version (e.g. after judging holes)")

    ho = _command(msub, "holdout", "leave-one-run-out: reusability of the qrels, bounds, the hole estimate",
                  holdout.__doc__, run_holdout)
    _qrels_runs(ho)
    ho.add_argument("-k", "--depth", dest="k", type=int, default=10, metavar="K",
                    help="the top K examined: holes are counted there, and the measure's default cutoff (default 10)")
    ho.add_argument("-m", "--measure", default=None, action=OneMeasure,
                    help="measure: one with exact bounds, marked 'bounds' by `judged measures` (default nDCG@k)")
    ho.add_argument("--protocol", choices=["loro", "group", "shift", "few"], default=None,
                    help="loro (default): hold out one run at a time; group: one group of runs (a team's); shift: "
                         "cut the qrels to the pool of some runs (--pool-runs, else the weaker half and --seeds "
                         "random halves) and score the others, truth = the cut qrels + their top K judged; few: the "
                         "3 strongest of those alone with the cut qrels (--scored-runs: the runs named)")
    ho.add_argument("--by", choices=["run", "group"], default="run",
                    help="the old spelling of --protocol loro|group (kept working)")
    ho.add_argument("--pool-runs", nargs="+", metavar="RUN", default=None,
                    help="with --protocol shift|few: the runs the cut qrels are pooled from (names as given, file "
                         "names, or file names without .gz/.run/.txt)")
    ho.add_argument("--scored-runs", nargs="+", metavar="RUN", default=None,
                    help="with --protocol shift|few: the runs scored, all of them (one cell; the qrels cut to "
                         "--pool-runs, else to every other run): your new systems on your old qrels (names as given, "
                         "file names, or file names without .gz/.run/.txt)")
    ho.add_argument("--seeds", type=int, default=None, metavar="N",
                    help="with --protocol shift|few and no --pool-runs: random halves as pool runs beside the weaker "
                         "half (default 5)")
    ho.add_argument("--groups", metavar="FILE",
                    help="with --by group: lines 'RUN GROUP' (RUN: the name given, its file name, or that without "
                         ".gz/.run/.txt)")
    ho.add_argument("--group-regex", metavar="REGEX",
                    help="with --by group: a run's group is REGEX's first group (else its match) in its file name "
                         "without the prefix all run file names share up to a '.', '-' or '_' (e.g. 'input.'); default "
                         "'[A-Za-z]+': its leading letters")
    ho.add_argument("--pool-depth", dest="depth", type=int, default=None, metavar="N",
                    help="the pool's depth: a run contributes the documents it ranks above N (default K)")
    ho.add_argument("--level", type=float, default=0.9, help="the estimate interval's nominal level (default 0.9)")
    ho.add_argument("--estimate", choices=["loro-logit", "run-prior", "auto"], default=None,
                    help="the estimate's method, as `judged holes --estimate` (default loro-logit)")
    ho.add_argument("--estimate-over", choices=["auto", "pool", "run", "midpoint"], default=None,
                    help="what the estimate predicts, as `judged holes --estimate-over` (default auto)")
    ho.add_argument("--estimates", metavar="CONFIGS", default=None,
                    help="compare estimate configurations (method:over, comma-separated, e.g. "
                         "loro-logit:run,loro-logit:midpoint; or all: 3 methods x auto, run, pool, midpoint = 12) "
                         "under --protocol, one replay each, and say "
                         "which to use on this collection: the one whose MAE is below holes-as-zero's and condensed's "
                         "in every cell, else none")
    ho.add_argument("--samples", type=int, default=200, help="draws for each estimate (default 200)")
    ho.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    add_hole_options(ho)

    RULE_TOLERANCES = declared("judged.analyses.pooling.choice").RULE_TOLERANCES
    po = _command(msub, "pooling", "replay pooling strategies on a judged collection", meta_pooling.__doc__,
                  run_pooling)
    _qrels_runs(po)
    po.add_argument("--budget", type=int, action="append", dest="budgets", metavar="N", required=True,
                    help="report the figures after N judgments; repeatable")
    po.add_argument("--strategy", action="append", dest="strategies", metavar="STRATEGY",
                    help="a strategy of `judged pool --strategy`; repeatable (default: every one but sample)")
    po.add_argument("--protocol", choices=list(meta_pooling.PROTOCOLS), default="leave-one-run-out",
                    help="leave-one-run-out (default: each run scored on a pool of the others) or from-scratch "
                         "(one pool of every run)")
    po.add_argument("-k", "--depth", type=int, default=meta_pooling.DEFAULT_DEPTH, metavar="K",
                    help=f"pool each run's top K (default {meta_pooling.DEFAULT_DEPTH})")
    po.add_argument("-m", "--measure", default=meta_pooling.DEFAULT_MEASURE, action=OneMeasure,
                    help=f"the measure compared with the full qrels (default {meta_pooling.DEFAULT_MEASURE})")
    po.add_argument("--tolerance", type=float, action="append", dest="tolerances", metavar="T",
                    help="the ranking counts as recovered when tau = 1 or every run is within T of its full-qrels "
                         "score; repeatable, the judgments to recover are reported at each (default "
                         f"{', '.join(map(str, RULE_TOLERANCES))}). The strategy recommended for judged pool "
                         "--budget is the one that recovered with fewer judgments than depth pooling at every T "
                         "(the best if several), else depth")
    po.add_argument("--step", type=int, help="score every STEP judgments to find where the ranking is recovered "
                                             f"(default: about {meta_pooling.CHECKPOINTS} checkpoints)")
    po.add_argument("--seed", type=int, default=0, help="seed of the randomised strategies (default 0)")
    po.add_argument("--max-judgments", type=int, default=None, metavar="N",
                    help="stop each replay after N judgments (default: when every candidate is judged); "
                         "'recovered' then holds up to N")
    po.add_argument("--curve", action="store_true", help="JSON: also every checkpoint's figures")
    po.add_argument("--plot", metavar="FILE", help="write error and tau against judgments per strategy "
                                                    "(PNG/SVG/PDF; needs matplotlib)")

    sd = _command(msub, "simulate-discount", "Wang et al. (COLT 2013) on synthetic rankers", discount.__doc__,
                  run_simulate_discount, conventions=False)
    sd.add_argument("--sizes", default=",".join(map(str, discount.DEFAULT_SIZES)),
                    help="collection sizes, comma-separated (default %(default)s)")
    sd.add_argument("--discount", action="append", dest="discounts", metavar="DISCOUNT",
                    help="log2, reciprocal, power:P (1/r^P), jk2002:B; repeatable "
                         f"(default {' '.join(discount.DEFAULT_DISCOUNTS)})")
    sd.add_argument("--trials", type=int, default=discount.DEFAULT_TRIALS,
                    help=f"collections drawn per size (default {discount.DEFAULT_TRIALS})")
    sd.add_argument("--noise", type=float, default=discount.DEFAULT_NOISE,
                    help=f"the worse ranker's uniform score noise half-width (default {discount.DEFAULT_NOISE})")
    sd.add_argument("--seed", type=int, default=discount.DEFAULT_SEED, help="random seed (default 0)")
    sd.add_argument("--plot", metavar="FILE", help="write the two panels (PNG/SVG/PDF; needs matplotlib)")

    sy = msub.add_parser("synthetic", help="write a deterministic synthetic collection (qrels, runs, preferences)",
                         epilog=_example("synthetic"), formatter_class=Formatter)
    sy.add_argument("outdir", help="directory to write qrels.txt, qrels-pooled.txt, runs/*.run, preferences.txt")
    sy.add_argument("--systems", type=int, default=8, help="runs (default 8: 4 lexical, 4 dense)")
    sy.add_argument("--queries", type=int, default=50, help="queries (default 50)")
    sy.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    sy.set_defaults(func=run_synthetic)


EXAMPLES = {  # per subcommand, shown at the end of its --help
    "holdout": ("judged meta holdout qrels.txt runs/*.run -k 10 --format json",
                "judged meta holdout qrels.txt runs/*.run -m AP@100 --pool-depth 100",
                "judged meta holdout qrels.txt runs/*.run --by group --groups teams.txt --format json"),
    "stability": ("judged meta stability qrels-pooled.txt runs/*.run -m nDCG@10 --versus-qrels qrels.txt",
                  "judged meta stability qrels.txt runs/*.run -m nDCG@10 -m 'nDCG(gain=exp)@10'",
                  "judged meta stability qrels.txt runs/*.run -m nDCG@10 -m AP"),
    "pooling": "judged meta pooling qrels.txt runs/*.run --budget 1000 --budget 5000 --strategy depth --strategy mm "
               "--plot pooling.png",
    "power": "judged meta power qrels.txt runs/*.run -m nDCG@10 -m 'nDCG(discount=reciprocal)@10' -m P@10 --plot asl.png",
    "agreement": "judged meta agreement preferences.txt qrels.txt runs/*.run -m nDCG@10 -m RR -m P@10",
    "simulate-discount": "judged meta simulate-discount --sizes 10,100,1000 --discount log2 --discount power:2 --plot d.png",
    "synthetic": "judged meta synthetic /tmp/meta && ls /tmp/meta /tmp/meta/runs",
}


def _example(name: str) -> str | None:
    given = EXAMPLES.get(name)
    lines = (given,) if isinstance(given, str) else given or ()
    return "example" + "s" * (len(lines) > 1) + ":" + "".join(f"\n  {x}" for x in lines) if lines else None


def _command(msub, name, help, description, func, conventions=True):
    """A ``judged meta`` subcommand with ``--format`` and, when it evaluates, the engine conventions."""
    p = msub.add_parser(name, help=help, description=description, epilog=_example(name),
                        formatter_class=Formatter)
    p.add_argument("--format", choices=["table", "json"], default="table", help=format_help(["table", "json"]))
    if conventions:
        add_convention_options(p, compared=True)
    p.set_defaults(func=func)
    return p


def _qrels_runs(p) -> None:
    p.add_argument("qrels", help="qrels: TREC, BEIR TSV, JSON or Parquet")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files (at least two)")


def _measures(p, defaults) -> None:
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help=f"measure, repeatable (default: {' '.join(defaults)})")


def _console(width: int | None = None):
    """Rich's console on a terminal, else one printing Rich's bytes without importing Rich
    (:mod:`judged.cli.plain`)."""
    from .plain import console

    return console(width=width)


def _table(title, columns):
    """A table of a left-aligned first column (it folds) and right-aligned others (never cut,
    never wrapped); rows may end a section: ``add_row(..., end_section=True)``."""
    from .plain import Table

    t = Table(title=title)
    for k, c in enumerate(columns):
        t.add_column(c, justify="left" if k == 0 else "right", overflow="fold", no_wrap=k > 0)
    return t


def _pct(x: float) -> str:
    return "-" if x != x else f"{x:.1%}"


def _p(x: float) -> str:
    return "-" if x != x else (f"{x:.2g}" if x < 0.001 else f"{x:.3f}")


def _print_query_set(console, query_set) -> None:
    """The query-set line and its warnings (judged.core.querysets)."""
    if query_set is None:
        return
    console.print(query_set.describe(), markup=False, highlight=False, soft_wrap=True)
    for w in query_set.warnings():
        console.print(f"[yellow]warning:[/] {w}", highlight=False)


def _print_conventions(console, conventions: dict) -> None:
    console.print("conventions:", highlight=False)
    for given, conv in conventions.items():
        console.print(f"  {given}: {conv}", markup=False, highlight=False, soft_wrap=True)


def run_power(args) -> int:
    from ..analyses.meta import power

    res = power.discriminative_power(args.qrels, list(args.runs), args.measures or list(power.DEFAULT_MEASURES),
                                     test=args.test, samples=args.samples, seed=args.seed, alpha=args.alpha,
                                     settings=settings_of(args, compared=True))
    if args.plot:
        power.plot_asl_curves(res, args.plot)
    if args.format == "json":
        out = res.to_dict()
        if not args.pairs:
            out.pop("pairs")
        if args.plot:
            out["plot"] = args.plot
        print_json(out, safe=True)
        return 0
    console = _console()
    sc = res.scores
    t = _table(f"discriminative power — {len(sc.runs)} runs, {counted(len(res.pairs), 'pair')}, "
               f"{counted(len(sc.qids), 'query')}; "
               f"{res.test} test, {counted(res.samples, 'sample')}, seed {res.seed}, two-sided, alpha {res.alpha:g}",
               ["measure", "significant pairs", "power", "median ASL"])
    for row in res.summary():
        t.add_row(row["measure"], f"{row['significant']}/{row['pairs']}", _pct(row["power"]), _p(row["median_asl"]))
    console.print(t)
    for row in res.summary():
        if row["undefined"]:
            console.print(f"{row['measure']}: the {res.test} test is not defined on {counted(row['undefined'], 'pair')} with "
                          "constant differences (no null distribution); counted as not significant", highlight=False)
    if sc.dropped_queries:
        console.print(f"{counted(sc.dropped_queries, 'query')} left out: not evaluated for every run", highlight=False)
    _print_query_set(console, sc.query_set)
    if args.pairs:
        pt = _table("every pair: mean difference (a - b) and ASL", ["a", "b"] + res.measures)
        for k, (a, b) in enumerate(res.pairs):
            pt.add_row(a, b, *[f"{res.differences[m][k]:+.4f} ({_p(res.pvalues[m][k])})" for m in res.measures])
        console.print(pt)
    _print_conventions(console, sc.conventions)
    if args.plot:
        console.print(f"ASL curves written to {args.plot}", highlight=False)
    return 0


def run_agreement(args) -> int:
    from ..analyses.meta import agreement

    res = agreement.preference_agreement(args.preferences, args.qrels, list(args.runs),
                                         args.measures or list(agreement.DEFAULT_MEASURES), depth=args.depth,
                                         settings=settings_of(args, compared=True))
    if args.format == "json":
        print_json(res.to_dict(), safe=True)
        return 0
    console = _console()
    cp = res.category_pairs
    t = _table(f"agreement with {cp['all']} side-by-side preferences "
               f"(counted where the measure tells the rankings apart; binomial test vs 50%)",
               ["measure", "agree", "share", "p", "ties",
                f"one side nothing@{res.depth} ({cp['one-side-nothing']})",
                f"both relevant@{res.depth} ({cp['both-relevant']})"])
    for m in res.measures:
        a, one, both = (res.tally(m, c) for c in ("all", "one-side-nothing", "both-relevant"))
        t.add_row(m, f"{a.agree}/{a.decided}", _pct(a.share), _p(a.pvalue()), str(a.ties),
                  f"{_pct(one.share)} ({one.agree}/{one.decided})", f"{_pct(both.share)} ({both.agree}/{both.decided})")
    console.print(t)
    console.print(f"{counted(res.preferences, 'preference')} read: {res.no_preference} 'none' (left out), "
                  f"{res.skipped} on queries not evaluated for both runs, {cp['neither-relevant']} where neither "
                  f"side retrieved anything relevant in its top {res.depth}", highlight=False)
    _print_query_set(console, res.query_set)
    _print_conventions(console, res.measures)
    return 0


def run_stability(args) -> int:
    from ..analyses.meta import stability

    ms = args.measures
    if args.versus_qrels is None and len(ms) != 2:
        raise JudgedError("stability compares two conditions: give two -m, or one -m and --versus-qrels")
    if len(ms) > 2:
        raise JudgedError("stability compares two conditions: at most two -m")
    res = stability.ranking_stability(args.qrels, list(args.runs), ms[0], versus_measure=ms[-1],
                                      versus_qrels=args.versus_qrels, settings=settings_of(args, compared=True))
    if args.format == "json":
        print_json(res.to_dict(), safe=True)
        return 0
    console = _console()
    console.print(f"A: {res.label_a}", markup=False, highlight=False)
    console.print(f"B: {res.label_b}", markup=False, highlight=False)
    from ..core.runnames import display_names

    t = _table("system rankings", ["rank", "under A", "score A", "under B", "score B"])
    sa = dict(zip(res.runs, res.scores_a))
    sb = dict(zip(res.runs, res.scores_b))
    shown = display_names(res.runs)
    for k, (ra, rb) in enumerate(zip(res.order_a, res.order_b)):
        t.add_row(str(k + 1), shown[ra], f"{sa[ra]:.4f}", shown[rb], f"{sb[rb]:.4f}")
    console.print(t)
    swaps = res.swaps()
    console.print(f"Kendall's tau {res.tau:.4f}   tau_AP (B vs A) {res.tau_ap:.4f}   "
                  f"tau_AP (A vs B) {res.tau_ap_reverse:.4f}   swaps {len(swaps)}/{res.pairs} "
                  f"({_pct(res.swap_rate)})", highlight=False)
    for s in swaps:
        console.print(f"  swapped: {shown[s['above_under_a']]} above {shown[s['above_under_b']]} under A "
                      f"({s['a'][0]:.4f} vs {s['a'][1]:.4f}), below under B ({s['b'][0]:.4f} vs {s['b'][1]:.4f})",
                      markup=False, highlight=False)
    _print_query_set(console, res.query_set)
    return 0


def _never(res, s) -> str:
    """Why a strategy never recovered the ranking."""
    if res.max_judgments is None or res.max_judgments >= max(s.candidates):
        return f"not even with all {max(s.candidates):,} judged"
    return f"not within the first {res.max_judgments:,} (--max-judgments)"


def run_pooling(args) -> int:
    import numpy as np

    from ..analyses.pooling import replay as meta_pooling
    from ..core.progress import progress

    replays = len(args.strategies or meta_pooling.replayable()) * (
        len(args.runs) if args.protocol == "leave-one-run-out" else 1)
    with progress(replays, "replaying pooling strategies") as advance:
        res = meta_pooling.pooling_replay(args.qrels, list(args.runs), args.budgets, args.strategies,
                                          measure=args.measure, protocol=args.protocol, depth=args.depth,
                                          step=args.step, tolerance=args.tolerances, seed=args.seed,
                                          max_judgments=args.max_judgments, progress=lambda *_: advance(),
                                          settings=settings_of(args, compared=True))
    if args.plot:
        meta_pooling.plot_pooling(res, args.plot)
    if args.format == "json":
        out = res.to_dict(curve=args.curve)
        if args.plot:
            out["plot"] = args.plot
        print_json(out, safe=True)
        return 0
    console = _console()
    first = next(iter(res.strategies.values()))
    cands = np.mean(first.candidates)
    console.print(f"pooling replay: {res.protocol}, {len(res.runs)} runs, pool depth {res.depth}, {res.measure}; "
                  f"{cands:,.0f} candidate pairs" + (" per replay (mean)" if len(first.candidates) > 1 else ""),
                  highlight=False)
    default = meta_pooling.budget_default()
    if len(res.tolerances) == 1:
        t = _table(f"judgments to recover the full-qrels ranking (Kendall's tau 1, or every run within "
                   f"{res.tolerance:g}), to the nearest {res.step:,}", ["strategy", "recovered at", "vs depth", "by"])
        for name, s in res.strategies.items():
            at, how = s.recovered()
            v = res.versus(name)
            t.add_row(name + (" (default)" if name == default else ""), "never" if at is None else f"{at:,}",
                      "-" if v is None or name == "depth" else f"{v:+.1%}", how or _never(res, s))
    else:
        t = _table(f"judgments to recover the full-qrels ranking (Kendall's tau 1, or every run within T), to the "
                   f"nearest {res.step:,}, and against depth pooling; *: by tau = 1 before every run was "
                   "within T", ["strategy", *(f"T = {x:g}" for x in res.tolerances)])
        for name in res.strategies:
            cells = []
            for r in res.recovery(name):
                at, v = r["recovered_at"], r["versus_depth"]
                cells.append("never" if at is None else f"{at:,}" + ("" if v is None or name == "depth" else f" {v:+.1%}")
                             + ("*" if (r["recovered_by"] or "").split(" (")[0] == "tau = 1" else ""))
            t.add_row(name + (" (default)" if name == default else ""), *cells)
    console.print(t)
    never = [name for name, s in res.strategies.items() if s.recovered(max(res.tolerances))[0] is None]
    if never and len(res.tolerances) > 1:
        console.print("never: " + "; ".join(f"{n} {_never(res, res.strategies[n])}" for n in never), highlight=False)
    choice = res.choice()
    if choice.strategy is None:
        console.print(f"recommended for judged pool --budget: none ({choice.reason})", markup=False, highlight=False,
                      soft_wrap=True)
    else:
        console.print(f"recommended for judged pool --budget on runs like these: {choice.strategy}, since "
                      f"{choice.reason}" + ("" if choice.strategy == default else
                                            f"; give it: judged pool ... --budget N --strategy {choice.strategy}"),
                      markup=False, highlight=False, soft_wrap=True)
    b = _table(f"per budget, against the full qrels ({'left-out runs' if res.protocol != 'from-scratch' else 'every run'})",
               ["strategy", "budget", "mean |error|", "max |error|", "Kendall's tau", "pairs in order",
                "relevant found"])
    for name, s in res.strategies.items():
        rows = [s.at_budget(x) for x in res.budgets]
        for k, row in enumerate(rows):
            b.add_row(name if k == 0 else "", f"{row['budget']:,}", f"{row['mean_abs_error']:.4f}",
                      f"{row['max_abs_error']:.4f}", f"{row['tau']:.3f}", _pct(row["pairwise_agreement"]),
                      f"{row['relevant_found']:,.0f}", end_section=k == len(rows) - 1)
    console.print(b)
    console.print("strategies:", highlight=False)
    for name, s in res.strategies.items():
        console.print(f"  {name}: {s.source}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"method: {meta_pooling.METHOD}", markup=False, highlight=False, soft_wrap=True)
    _print_conventions(console, {res.measure: res.convention})
    _print_query_set(console, res.query_set)
    if args.plot:
        console.print(f"plot written to {args.plot}", highlight=False)
    return 0


def run_simulate_discount(args) -> int:
    from ..analyses.meta import discount

    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        raise JudgedError(f"--sizes must be comma-separated integers, got {args.sizes!r}")
    sim = discount.simulate_discount(sizes, args.discounts or list(discount.DEFAULT_DISCOUNTS), trials=args.trials,
                                     noise=args.noise, seed=args.seed)
    if args.plot:
        discount.plot_discount_simulation(sim, args.plot)
    if args.format == "json":
        print_json(sim.to_dict(), safe=True)
        return 0
    console = _console()
    t = _table(f"nDCG of a better and a worse ranker as the collection grows — "
               f"{counted(sim.trials, 'collection')} per size, "
               f"seed {sim.seed} (better: rank by x; worse: x + U(±{sim.noise:g}); y ~ Bernoulli(0.8 x))",
               ["discount", *[f"n={n}" for n in sim.sizes]])
    for i, d in enumerate(sim.discounts):
        t.add_row(d, *[f"{sim.mean_better[i, k]:.3f} / {sim.mean_worse[i, k]:.3f}" for k in range(len(sim.sizes))])
        t.add_row("  better wins", *[_pct(sim.separation[i, k]) for k in range(len(sim.sizes))], end_section=True)
    console.print(t)
    console.print("cells: mean nDCG better / worse (whole ranking, binary gain); 'better wins': share of collections "
                  "where the better ranker scores higher (ties half). Consistent distinguishability: it tends to 100%.",
                  highlight=False)
    if args.plot:
        console.print(f"plot written to {args.plot}", highlight=False)
    return 0


def run_synthetic(args) -> int:
    from ..analyses.meta.synthetic import synthetic_collection, write_collection

    coll = synthetic_collection(systems=args.systems, queries=args.queries, seed=args.seed)
    paths = write_collection(coll, args.outdir)
    print(f"wrote {paths['qrels']} (complete), {paths['qrels_pooled']} (lexical top-20 pool), "
          f"{len(paths['runs'])} runs under {args.outdir}/runs, {paths['preferences']}")
    return 0


def run_holdout(args) -> int:
    from ..analyses.meta.holdout import holdout

    if not 0 < args.level < 1:
        raise ConventionError(f"--level must be between 0 and 1, got {args.level}")
    if args.seeds is not None and (args.pool_runs or args.scored_runs):
        print("judged: warning: --seeds draws random halves of the runs to pool from; with --pool-runs or "
              "--scored-runs there are none, and it has no effect", file=sys.stderr)
    common = dict(k=args.k, measure=args.measure, by=args.by, groups=args.groups, group_regex=args.group_regex,
                  depth=args.depth, samples=args.samples, seed=args.seed, level=args.level, maxgrade=args.maxgrade,
                  protocol=args.protocol, pool_runs=args.pool_runs, scored_runs=args.scored_runs, seeds=args.seeds,
                  settings=settings_of(args, compared=True))
    if args.estimates is not None:
        return _compare_estimates(args, common)
    res = holdout(args.qrels, list(args.runs), estimate=args.estimate, estimate_over=args.estimate_over, **common)
    if args.format == "json":
        print_json(res.to_dict(), safe=True)
        return 0
    console = _console()
    if res.protocol in ("shift", "few"):
        print_shift(res, console)
        return 0
    print_holdout(res, console)
    _print_query_set(console, res.query_set)
    return 0


def _compare_estimates(args, common: dict) -> int:
    """``meta holdout --estimates``: each configuration's MAE per cell beside the baselines', the choice."""
    from ..analyses.meta.estimate_choice import compare_estimates, parse_configs, row_of

    if args.estimate is not None or args.estimate_over is not None:
        raise ConventionError("--estimates compares configurations: leave out --estimate and --estimate-over")
    got = compare_estimates(args.qrels, list(args.runs), parse_configs(args.estimates), **common)
    if args.format == "json":
        print_json(got.to_dict(), safe=True)
        return 0
    console = _console()
    configs = list(got.cells)
    t = _table(f"{got.protocol}: MAE of {got.measure} per cell over the runs each configuration estimated "
               f"(* below holes-as-zero's and condensed's; zero and condensed over the first's runs)",
               ["cell", "zero", "condensed", *configs])
    for cell in got.cells[configs[0]]:
        first = row_of(got.cells[configs[0]][cell], got.protocol)
        out = [cell, f"{first['mae_zero']:.4f}", f"{first['mae_condensed']:.4f}"]
        for c in configs:
            r = row_of(got.cells[c][cell], got.protocol)
            abst = f" ({r['abstained']} abst.)" if r["abstained"] else ""
            out.append("-" if r["beats"] is None else f"{r['mae_estimate']:.4f}{'*' if r['beats'] else ''}{abst}")
        t.add_row(*out)
    console.print(t)
    console.print(f"use: {got.choice or 'none'} — {got.reason}", highlight=False, soft_wrap=True)
    return 0


def print_holdout(res, console, per_run: bool = True) -> None:
    """The leave-one-out table (``per_run``), the summary against the full qrels, notes."""
    from ..core.runnames import display_names

    s = res.summary()
    unit = "group" if res.by == "group" else "run"
    names = display_names([r.run for r in res.runs])  # runs as every command shows them
    if per_run:
        shown = [names[r.run] for r in res.runs]
        t = _table(f"leave-one-{unit}-out — {s['runs']} runs, {counted(s['held_out'], unit)} held out in turn; "
                   f"{res.measure}, pool depth {res.depth}; holes in the top {res.k}",
                   ["run", *(["group"] if res.by == "group" else []), "removed", f"Judged@{res.k}", "full", "zero",
                    "condensed", "min", "max", "estimate", f"{res.level:.0%} interval", ""])
        for r, name in zip(res.runs, shown):
            mark = "" if r.covered else "outside"
            if r.violation:
                mark = "BOUND VIOLATED"
            t.add_row(name, *([r.group] if res.by == "group" else []), str(r.removed),
                      f"{r.judged:.3f}", f"{r.full:.4f}", f"{r.zero:.4f}", f"{r.condensed:.4f}", f"{r.min:.4f}",
                      f"{r.max:.4f}", f"{r.estimate:.4f}",
                      {"exact": "exact", "bounds": "none (bounds)"}.get(r.interval, f"{r.low:.4f}-{r.high:.4f}"), mark)
        console.print(t)
    st = _table(f"against the full qrels ({s['estimated']} of {s['runs']} runs: those with a truth, estimated; "
                f"leave-one-{unit}-out, {res.measure})",
                ["scoring", "MAE", "mean error", "largest error", "Kendall's tau", "tau_AP"])
    for name, label in (("zero", "holes as zero"), ("condensed", "condensed (Sakai 2007)"),
                        ("estimate", f"estimate ({res.estimate['method']})")):
        st.add_row(label, _fmt_corr(s['mae'][name]), _fmt_corr(s['bias'][name], "+.4f"),
                   _fmt_corr(s['max_error'][name]), _fmt_corr(s["kendall_tau"][name]), _fmt_corr(s["tau_ap"][name]))
    console.print(st)
    covers = (f"covers the full score for {s['covered']}/{s['intervals']} runs with holes ({_pct(s['coverage'])}; "
              f"mean width {s['mean_width']:.4f})" if s["intervals"] else
              "none: too few runs to calibrate one (the bounds, which hold the full score by construction)")
    console.print(f"{res.level:.0%} interval: {covers}; bound violations: {s['violations']}/{s['runs']}; "
                  f"{counted(s['removed'], 'judgment')} removed in all", highlight=False)
    if s.get("holes_relevant"):
        h = s["holes_relevant"]
        console.print(f"holes of the estimated runs read as relevant: {h['estimate']:.1%} by the estimate, "
                      f"{h['truth']:.1%} judged relevant in the full qrels ({counted(h['holes'], 'hole')})",
                      highlight=False)
    if s["left_out"]:
        console.print(f"{counted(len(s['left_out']), 'run')} left out of the errors and the coverage: judging the holes the full "
                      f"qrels leave in their top {res.k} could move their full score by more than "
                      f"{s['truth_width_limit']} (" + ", ".join(f"{names.get(d['run'], d['run'])} ±{d['truth_width']:.3f}"
                                                              for d in s["left_out"]) + "); over every run: MAE zero "
                      f"{s['mae_all']['zero']:.4f}, condensed {s['mae_all']['condensed']:.4f}, estimate "
                      f"{s['mae_all']['estimate']:.4f}", highlight=False)
    if s["runs_with_holes_in_full"]:
        console.print(f"{counted(s['runs_with_holes_in_full'], 'run has', 'runs have')} holes even on the full qrels ({s['holes_in_full']} in "
                      f"all): their 'full' score counts them as not relevant, an estimate that fills them is judged "
                      f"against that", highlight=False)
        if s["intervals_tested"] < s["intervals"]:
            m = s["mae_tested"]
            console.print(f"over the {s['intervals_tested']} runs with holes whose held-out step removed judgments (the "
                          f"others are scored on the full qrels either way): interval covers "
                          f"{s['covered_tested']}/{s['intervals_tested']} ({_pct(s['coverage_tested'])}); MAE zero "
                          f"{m['zero']:.4f}, condensed {m['condensed']:.4f}, estimate {m['estimate']:.4f}",
                          highlight=False)
    for twins in res.estimate.get("same_top_k") or []:
        console.print(f"runs with the same top {res.k} held out together as one run: {' = '.join(twins)}",
                      markup=False, highlight=False)
    fell = [r for r in res.runs if r.abstain]
    if fell:
        from ..analyses.holes.estimate import FAILED_CHECK

        why = {"the estimate's leave-one-out errors on the other runs exceeded those of holes as zero"
               if FAILED_CHECK in r.abstain else "too little leave-one-out evidence without them" for r in fell}
        console.print(f"{counted(len(fell), 'run')} got the fallback estimate (holes as zero, interval = the bounds): "
                      + "; ".join(sorted(why)), highlight=False)
    if per_run:
        console.print(f"estimate: {res.estimate['method']} — {res.estimate['source']}; {res.estimate['nested']}",
                      markup=False, highlight=False)
        console.print(f"convention: {res.convention}", markup=False, highlight=False, soft_wrap=True)


def print_shift(res, console) -> None:
    """Per cell: the scored runs against their truth, then the summary over every cell."""
    from ..analyses.meta.protocols import abstains
    from ..core.runnames import display_names

    for cell in res.cells:
        s = cell.summary()
        t = _table(f"{res.protocol} — {cell.name}: {len(cell.pool_runs)} pool runs, {len(cell.scored)} scored; "
                   f"{res.measure}, qrels cut to the pool runs' top {res.depth} ({counted(cell.cut, 'judgment')}, {cell.removed} "
                   f"removed); truth = the cut + the scored runs' top {res.k} judged"
                   + (f"; the estimate predicts {cell.estimate['over']}" if cell.estimate.get("over")
                      and not cell.estimate.get("fallback") else ""),
                   ["run", "truth", "zero", "condensed", "min", "max", "estimate", f"{res.level:.0%} interval", ""])
        names = display_names([r.run for r in cell.runs])
        for r, name in ((r, names[r.run]) for r in cell.runs):
            mark = "BOUND VIOLATED" if r.violation or r.cell_violations else "" if r.covered else "outside"
            if r.truth_width > s["truth_width_limit"]:
                mark = f"left out: truth ±{r.truth_width:.3f}"
            t.add_row(name, f"{r.truth:.4f}", f"{r.zero:.4f}", f"{r.condensed:.4f}", f"{r.min:.4f}", f"{r.max:.4f}",
                      "abstains" if abstains(r) else f"{r.estimate:.4f}",
                      f"{r.low:.4f}-{r.high:.4f} ({r.interval})", mark)
        console.print(t)
    _print_shift_summary(res, console)


def _print_shift_summary(res, console) -> None:
    st = _table(f"{res.protocol}: every cell against its truth (runs with a truth, estimated)",
                ["cell", "runs", "MAE zero", "MAE condensed", "MAE estimate", "own holes: zero, cond., est.",
                 "coverage", "width", "holes read / judged relevant", "violations", "left out", "abstained"])
    summary = res.summary()
    for name, s in [*summary["cells"].items(), ("all cells", summary["all"])]:
        own = ", ".join(_fmt_corr(s["mae_own"][k]) for k in ("zero", "condensed", "estimate"))
        st.add_row(name, f"{s['estimated']}/{s['runs']}", f"{s['mae']['zero']:.4f}", f"{s['mae']['condensed']:.4f}",
                   f"{s['mae']['estimate']:.4f}", own,
                   f"{s['covered']}/{s['intervals']} (own {s['covered_own']})" if s["intervals"] else "bounds",
                   _fmt_corr(s["mean_width"]), _read_judged(s.get("holes_relevant")),
                   f"{s['violations']} means, {s['cell_violations']}/{s['cells']} queries",
                   str(len(s["left_out"])), str(len(s["abstained"])))
    console.print(st)
    console.print(f"left out: runs whose truth judging its own remaining holes could move by more than "
                  f"{summary['all']['truth_width_limit']} (their truth is not a truth); own holes: MAE against the "
                  f"truth of judging each run's own holes alone (what --estimate-over run predicts; the other "
                  f"columns: judging every scored run's; coverage: own, the intervals holding that truth; bounds: "
                  f"every run's interval was the exact bounds, no estimate interval to count); holes "
                  f"read / judged relevant: the share of the estimated runs' holes the estimate reads as relevant, "
                  f"and the share the truth judges relevant; "
                  f"convention: {res.convention}",
                  markup=False, highlight=False, soft_wrap=True)


def _read_judged(h: dict | None) -> str:
    """'estimate% / truth%' of a summary's ``holes_relevant`` ('-' without holes estimated)."""
    return "-" if not h else f"{h['estimate']:.1%} / {h['truth']:.1%}"


def _fmt_corr(x: float, spec: str = ".4f") -> str:
    return "-" if x != x else format(x, spec)
