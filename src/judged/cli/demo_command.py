"""``judged demo``: the seeds' worked examples on built-in data."""

from __future__ import annotations

import os

from . import Formatter
from ..core.words import counted
from .holes_command import print_report
from .rejudge_command import print_rejudged
from .meta_command import print_holdout

HELP = """Run judged on built-in example data: the worked nDCG examples of the product brief,
the same ranking under linear and exponential gain, what nDCG@10 becomes with a single
relevant document, and the holes story: a dense system judged against a pool drawn from
a lexical one, its holes bounded, estimated, pooled, labelled, merged, and the order
flipped; then the estimate checked by leave-one-run-out on 12 generated runs.

example:
  judged demo
  judged demo --write demo-data/
"""


def register(sub) -> None:
    p = sub.add_parser("demo", help="run on built-in example data", description=HELP,
                       formatter_class=Formatter)
    p.add_argument("--write", metavar="DIR", default=None,
                   help="also write the holes story's files to DIR: qrels.txt, lexical.run, dense.run, answer-key.txt, "
                        "the assessor's labels.txt and the merged qrels-after.txt (+ .provenance.tsv); every sha256 "
                        "the demo prints is of these files (default: a temporary folder, removed)")
    p.set_defaults(func=run)


def run(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from ..demo import worked_examples
    from ..core.evaluation import evaluate
    from ..analyses.explain import explain

    console = Console()
    qrels, run_ = worked_examples()
    console.rule("1. One ranking, graded 3, 2, 3, 0, 1, 2 — linear gain (trec_eval's)")
    explain(qrels, run_, "graded", "nDCG@10").render(console)
    console.rule("2. The same ranking with exponential gain 2^grade - 1")
    explain(qrels, run_, "graded", "nDCG(gain=exp)@10").render(console)
    console.rule("3. Three passages graded 2, 0, 1 — exponential gain")
    explain(qrels, run_, "three", "nDCG(gain=exp)@10").render(console)
    console.rule("4. Every query at once; one relevant document makes nDCG@10 a rank measure")
    res = evaluate(qrels, {"demo": run_}, ["nDCG@10", "nDCG(gain=exp)@10", "RR"])
    pq = res.per_query().pivot(index="qid", columns="measure", values="value")
    t = Table()
    t.add_column("query")
    for m in ["nDCG@10", "nDCG(gain=exp)@10", "RR"]:
        t.add_column(m, justify="right")
    for q in ["graded", "three"] + [f"single-at-{r}" for r in (1, 2, 3, 10, 11)]:
        t.add_row(q, *[f"{pq.loc[q, m]:.3f}" for m in ["nDCG@10", "nDCG(gain=exp)@10", "RR"]])
    console.print(t)
    console.print("single-at-r: one relevant document at rank r, so nDCG@10 = 1/log2(1 + r) (0 past rank 10) whatever the gain.\n"
                  "graded: the same ranking, two gain conventions, two numbers; so every score names its convention:",
                  highlight=False)
    for given, conv in res.conventions.items():
        console.print(f"  {conv}", markup=False, highlight=False, soft_wrap=True)
    holes_demo(console, getattr(args, "write", None))
    return 0


def holes_demo(console, write_dir=None) -> None:
    """Sections 5-8: the seeds' TREC-COVID story on generated data. The story is written as
    files (to ``write_dir``, else a temporary folder) and read back from them, so every
    sha256 it prints is that of a file ``judged demo --write`` leaves behind."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _holes_demo(console, tmp)
        if write_dir is not None:
            _copy_new(tmp, write_dir)


def _copy_new(tmp: str, write_dir: str) -> None:
    """The story's files into ``write_dir``, unless one of their names there holds something
    else (a project's own qrels.txt): then none is written. The demo's files again are."""
    from ..core.io.output import write_new_or_same

    files = {}
    for name in sorted(os.listdir(tmp)):
        with open(os.path.join(tmp, name), "rb") as fh:
            files[os.path.join(write_dir, name)] = fh.read()
    write_new_or_same(files, "the demo's", "--write a new folder")


def _holes_demo(console, directory) -> None:
    import os

    from ..demo import POOL_DEPTH, holes_story, write_qrels
    from ..analyses.holes.unjudged import holes_report
    from ..core.io import read_qrels
    from ..analyses.pooling.strategies import pool
    from ..analyses.qrels_ops import merge, rejudge
    story = holes_story()
    story.write(directory)
    before = read_qrels(os.path.join(directory, "qrels.txt"))
    before.source = f"qrels.txt: the lexical top-{POOL_DEPTH} pool"
    console.rule(f"5. Holes: the judgment pool came from the lexical system's top {POOL_DEPTH}")
    report = holes_report(before, story.runs, k=10)
    print_report(report, console)
    console.rule("6. Pool the holes: unjudged pairs in both top 10s, shallowest first")
    pl = pool(before, story.runs, 10)
    for line in pl.header() + pl.lines()[:5] + [f"... ({counted(len(pl), 'pair')})"]:
        console.print(line, highlight=False, markup=False)
    console.rule("7. A simulated assessor labels them from the hidden key; merge")
    write_qrels(os.path.join(directory, "labels.txt"), story.assessor([(p.qid, p.docid) for p in pl.pairs]))
    labels = read_qrels(os.path.join(directory, "labels.txt"))
    labels.source = "labels.txt: the assessor's labels"
    merged = merge(before, [labels], assessor="simulated-assessor")
    merged.write(os.path.join(directory, "qrels-after.txt"))
    after = read_qrels(os.path.join(directory, "qrels-after.txt"))
    after.source = "qrels-after.txt: qrels + assessor labels"
    relevant = int((labels.grade >= 1).sum())
    console.print(f"{counted(len(labels), 'new judgment')} ({relevant} relevant), "
                  f"{counted(len(merged.conflicts), 'conflict')}; {counted(len(after), 'judgment')} after the merge, "
                  "each with its provenance (source, assessor, time)",
                  highlight=False)
    console.rule("8. Before and after: no system changed, only the labels")
    rejudged = rejudge([before, after], story.runs)
    print_rejudged(rejudged, console, labels=["before", "after"])
    console.print("The lexical score moves a little too: the new relevant documents raise its queries' ideal DCG "
                  "(ideal=judged), though not one of its documents changed.", highlight=False)
    for name, rh in report.runs.items():
        s = rh.summary()
        if not s["holes"]:
            continue
        e, truth = s["estimate"], rejudged.scores[name][-1]
        inside = "inside" if e["low"] <= truth <= e["high"] else "outside"
        console.print(f"{name}: section 5 estimated {e['mean']:.4f} ({report.estimates.method}; interval "
                      f"{e['low']:.4f}-{e['high']:.4f}, {_interval_words(e['interval'])}); judging its {s['holes']} "
                      f"holes gave {truth:.4f}, {inside} the interval and within the exact bounds "
                      f"[{s['min']:.4f}, {s['max']:.4f}]" if s["min"] - 1e-12 <= truth <= s["max"] + 1e-12 else
                      f"{name}: judging gave {truth:.4f}, outside the exact bounds [{s['min']:.4f}, {s['max']:.4f}]: "
                      f"a defect, please report it", highlight=False)
    holdout_demo(console)


def holdout_demo(console) -> None:
    """Section 9: does the estimate hold? Leave-one-run-out on a generated pooled collection."""
    from ..analyses.meta.holdout import holdout
    from ..analyses.meta.synthetic import pooled_collection
    coll = pooled_collection(systems=12, queries=30, depth=20, pool_depth=10, seed=0)
    console.rule("9. Does the estimate hold? Hold each run out of a 12-run pool in turn")
    console.print("Two runs cannot check an estimate. A generated collection with 12 runs (4 teams), judged to depth "
                  "10, can: each run's own contributions to the pool are removed, it is scored as a new system would "
                  "be, and the scores are compared with the full judgments (judged meta holdout).", highlight=False)
    print_holdout(holdout(coll.qrels(), coll.runs(), k=10), console, per_run=False)
    console.print("The same experiment on real TREC collections (2003 Robust, 17 runs; Deep Learning 2019 passage, "
                  "37 runs), with their figures: docs/holes.md, 'On real collections'; on yours: judged meta holdout "
                  "QRELS RUN... [--by group].", highlight=False)


def _interval_words(kind: str) -> str:
    return {"conformal": "calibrated on leave-one-run-out residuals", "bounds": "the exact bounds: too few runs "
            "to calibrate", "exact": "no holes"}.get(kind, kind)
