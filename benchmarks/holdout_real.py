"""Leave-one-run-out on a real collection: the figures of docs/holes.md (not a test).

    python benchmarks/holdout_real.py QRELS RUN... [-k 10] [--pool-depth D] [-m MEASURE ...] [--by run|group]

Runs ``judged.analyses.meta.holdout`` once per measure (default nDCG@10, P@10, AP@10 with k = 10)
and prints one markdown row per measure: the mean absolute error of holes-as-zero,
condensed and the estimate against the full qrels, the estimate's mean error, the
90% interval's coverage over the runs with holes and its mean width, the bound
violations, Kendall's tau of each scoring's system ranking with the full one, and the
seconds it took. Paths come from the command line, so collections that may not be
committed (TREC DL 2019) stay outside the repository:

    python benchmarks/holdout_real.py ../shared/data/robust03/qrels.txt ../shared/data/robust03/runs/*.gz
    python benchmarks/holdout_real.py /work/data/dl19/qrels.txt /work/data/dl19/runs/*.gz
"""

from __future__ import annotations

import argparse
import time

from judged.analyses.meta.holdout import holdout


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--pool-depth", type=int, default=None, help="the pool's depth (default k)")
    p.add_argument("-m", "--measure", action="append", dest="measures")
    p.add_argument("--by", choices=["run", "group"], default="run")
    p.add_argument("--samples", type=int, default=200)
    args = p.parse_args(argv)
    measures = args.measures or [f"nDCG@{args.k}", f"P@{args.k}", f"AP@{args.k}"]
    print(f"{len(args.runs)} runs, k={args.k}, pool depth {args.pool_depth or args.k}, by {args.by}\n")
    print("| measure | MAE zero | MAE condensed | MAE estimate | mean error estimate | coverage | mean width "
          "| violations | tau zero | tau condensed | tau estimate | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in measures:
        t = time.perf_counter()
        res = holdout(args.qrels, args.runs, k=args.k, measure=m, depth=args.pool_depth, by=args.by, samples=args.samples)
        s = res.summary()
        took = time.perf_counter() - t
        tau = s["kendall_tau"]
        print(f"| {m} | {s['mae']['zero']:.4f} | {s['mae']['condensed']:.4f} | {s['mae']['estimate']:.4f} "
              f"| {s['bias']['estimate']:+.4f} | {s['covered']}/{s['intervals']} ({s['coverage']:.1%}) "
              f"| {s['mean_width']:.4f} | {s['violations']} | {tau['zero']:.3f} | {tau['condensed']:.3f} "
              f"| {tau['estimate']:.3f} | {took:.1f} |", flush=True)


if __name__ == "__main__":
    main()
