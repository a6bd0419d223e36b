"""Speed of the hole bounds on a synthetic collection (not a test).

    python benchmarks/bench_holes.py [queries] [docs per query]

Judgments: 150 random documents per query, grades 0..3; the run ranks every document,
so most of its top k are holes (the hard case for the bounds). The estimate needs
several runs: benchmarks/bench_holdout.py times it with `judged holes` and
`judged meta holdout` on 59 runs.
"""

import sys
import time

import numpy as np

from judged.core.align import align
from judged.analyses.holes.unjudged import bounds
from judged.core.io import read_qrels, read_run


def main(nq: int = 200, nd: int = 1000) -> None:
    rng = np.random.default_rng(0)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 4)) for j in rng.choice(nd, 150, replace=False)}
             for i in range(nq)}
    run = {f"q{i}": {f"d{j}": float(rng.random()) for j in range(nd)} for i in range(nq)}
    a = align(read_qrels(qrels), read_run(run))
    print(f"{nq} queries x {nd} ranked documents, 150 judged per query (grades 0..3)")
    for m in ["nDCG@10", "nDCG@20", "nDCG@100", "AP@100", "AP", "P@10", "RR"]:
        t = time.perf_counter()
        lo, hi = bounds(m, a)
        print(f"  bounds {m:<10} {time.perf_counter() - t:6.2f} s   mean min {lo.mean():.4f}  mean max {hi.mean():.4f}")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:3]))
