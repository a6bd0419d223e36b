"""``judged answers``: pair a ranking score with answer acceptance."""

from __future__ import annotations

from . import Formatter
from .check_options import add_answers_option, add_check_options, configure, side_files
from .common import OneMeasure, add_convention_options, format_help, print_json, settings_of

HELP = """Pair each run's ranking score (default nDCG@10) with answer checks: acceptance rate,
mean score among accepted and among failed answers, and the two disagreement lists (a
high score with a failed answer; a low score with an accepted one).

ANSWERS holds 'run qid accepted [note]' lines; accepted is true/false; a run label matches
the run's path as given, its file name, or its file name without the extension.

example:
  judged answers qrels.txt bm25.run dense.run --answers answers.tsv -m nDCG@10 --high 0.5
"""


def register(sub) -> None:
    p = sub.add_parser("answers", help="pair nDCG with answer acceptance", description=HELP,
                       formatter_class=Formatter)
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+", metavar="RUN")
    add_answers_option(p, required=True)
    p.add_argument("-m", "--measure", default="nDCG@10", action=OneMeasure, help="the ranking score to pair (default nDCG@10)")
    p.add_argument("--format", choices=["table", "json"], default="table", help=format_help(["table", "json"]))
    add_convention_options(p)
    add_check_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..analyses.answers import pair_answers
    from ..core.evaluation import evaluate

    result = evaluate(args.qrels, list(args.runs), [args.measure], settings=settings_of(args), side=side_files(args))
    configure(result, args)
    pairings = pair_answers(result, args.answers, args.measure, args.high)
    if args.format == "json":
        print_json({"measure": result.conventions[args.measure], "answers": args.answers,
                    "runs": {name: p.to_dict() for name, p in pairings.items()}})
        return 0
    print_pairings(pairings, result.conventions[args.measure])
    return 0


def print_pairings(pairings, convention: str, console=None) -> None:
    from rich.table import Table

    from .plain import console as make_console

    def f(x):
        return "n/a" if x is None else f"{x:.4f}"

    from ..core.runnames import display_names

    console = console or make_console()
    shown = display_names(list(pairings))  # runs as every command shows them
    first = next(iter(pairings.values()))
    m = first.measure
    t = Table(title=f"answer checks paired with {m} (high: {m} >= {first.high:g})")
    t.add_column("run", overflow="fold")
    for col in ["checked", "ok", "rate", "mean ok", "mean fail", "hi+fail", "lo+ok"]:
        t.add_column(col, justify="right")
    for name, p in pairings.items():
        t.add_row(shown[name], str(p.checked), str(len(p.accepted)), f(p.acceptance_rate), f(p.mean_accepted),
                  f(p.mean_failed), str(len(p.high_score_failed)), str(len(p.low_score_accepted)))
    console.print(t)
    console.print(f"ok = accepted answers; rate = ok / checked; mean ok / mean fail = mean {m} over accepted / "
                  f"failed answers; hi+fail = {m} >= {first.high:g} with a failed answer; lo+ok = {m} < {first.high:g} "
                  f"with an accepted answer", highlight=False, markup=False)
    for name, p in pairings.items():
        for title, rows in ((f"high {m}, failed answer", p.high_score_failed),
                            (f"low {m}, accepted answer", p.low_score_accepted)):
            for qid, score, note in rows:
                console.print(f"{shown[name]}: {title}: query {qid} {m} {score:.4f}" + (f" — {note}" if note else ""),
                              highlight=False, markup=False)
        if p.unscored:
            console.print(f"{shown[name]}: verdicts for {len(p.unscored)} unscored quer{'y' if len(p.unscored) == 1 else 'ies'}: "
                          f"{', '.join(p.unscored)}", highlight=False, markup=False)
    if convention:  # None where the caller already printed it (compare)
        console.print(f"convention: {convention}", highlight=False, markup=False)
