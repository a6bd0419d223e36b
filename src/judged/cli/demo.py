"""``judged demo``: the seeds' worked examples on built-in data."""

from __future__ import annotations

import argparse

HELP = """Run judged on built-in example data: the worked nDCG examples of the product brief,
the same ranking under linear and exponential gain, and what nDCG@10 becomes with a
single relevant document."""


def register(sub) -> None:
    p = sub.add_parser("demo", help="run on built-in example data", description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=run)


def run(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from ..demo import worked_examples
    from ..evaluation import evaluate
    from ..explain import explain

    console = Console()
    qrels, run_ = worked_examples()
    console.rule("1. One ranking, graded 3, 2, 3, 0, 1, 2 — linear gain (trec_eval's)")
    explain(qrels, run_, "graded", "nDCG@10").render(console)
    console.rule("2. The same ranking with exponential gain 2^grade - 1")
    explain(qrels, run_, "graded", "nDCG(gain=exp)@10").render(console)
    console.rule("3. Three passages graded 2, 0, 1 — exponential gain")
    explain(qrels, run_, "three", "nDCG(gain=exp)@10").render(console)
    console.rule("4. A single relevant document: nDCG@10 becomes a rank measure")
    res = evaluate(qrels, {"demo": run_}, ["nDCG@10", "nDCG(gain=exp)@10", "RR"])
    pq = res.per_query().pivot(index="qid", columns="measure", values="value")
    t = Table()
    t.add_column("query")
    for m in ["nDCG@10", "nDCG(gain=exp)@10", "RR"]:
        t.add_column(m, justify="right")
    for q in ["graded", "three"] + [f"single-at-{r}" for r in (1, 2, 3, 10, 11)]:
        t.add_row(q, *[f"{pq.loc[q, m]:.3f}" for m in ["nDCG@10", "nDCG(gain=exp)@10", "RR"]])
    console.print(t)
    console.print("Same ranking, two gain conventions, two numbers: every judged score names its convention:")
    for given, conv in res.conventions.items():
        console.print(f"  {conv}", markup=False, highlight=False)
    return 0
