"""Speed of `judged holes` and `judged meta holdout` on a large pooled collection (not a test).

    python benchmarks/bench_holdout.py [--systems 59] [--queries 200] [--depth 1000] [--pooled 40]
                                       [--out bench-data/holdout] [--repeat 1]

Generates (once, seeded; written under bench-data/, git-ignored) a collection of SYSTEMS
runs x QUERIES queries x DEPTH documents per query (judged.analyses.meta.synthetic.pooled_collection:
2 x DEPTH candidates per query, graded 0-3), judged by a depth-10 pool of the first POOLED
runs, so the other runs meet holes; then times the two commands end to end as a user runs
them (a fresh process: reading, aligning, bounds, estimate, output to /dev/null), best of
REPEAT: wall-clock seconds and the process's CPU seconds (user + system; on a machine busy
with other work the CPU time is what the command would take alone). The issue's target:
each under a minute on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=59)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--pooled", type=int, default=40, help="runs in the depth-10 pool (default 40)")
    ap.add_argument("--out", default=os.path.join("bench-data", "holdout"))
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    out = os.path.join(args.out, f"{args.systems}x{args.queries}x{args.depth}-p{args.pooled}")
    qrels = os.path.join(out, "qrels.txt")
    if not os.path.exists(qrels):
        from judged.analyses.meta.synthetic import pooled_collection

        t = time.perf_counter()
        coll = pooled_collection(args.systems, args.queries, args.depth, pool_depth=10, pooled_runs=args.pooled,
                                 seed=0)
        coll.write(out)
        print(f"generated {out} in {time.perf_counter() - t:.1f} s")
    runs = sorted(os.path.join(out, "runs", f) for f in os.listdir(os.path.join(out, "runs")))
    lines = sum(1 for _ in open(runs[0]))
    print(f"{len(runs)} runs x {lines} lines, qrels {sum(1 for _ in open(qrels))} judgments; "
          f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    judged = [sys.executable, "-m", "judged"]
    for label, argv in (("judged holes", ["holes", qrels, *runs, "-k", "10"]),
                        ("judged meta holdout", ["meta", "holdout", qrels, *runs, "-k", "10"])):
        best = None
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run(judged + argv, check=True, stdout=subprocess.DEVNULL)
            took = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            best = (took, cpu) if best is None or took < best[0] else best
        print(f"  {label:<22} {best[0]:6.1f} s wall   {best[1]:6.1f} s CPU   load average after "
              f"{os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
