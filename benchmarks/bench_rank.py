"""Speed of the compiled ranking kernel (trec_rank) by the order of a run's rows (not a test).

    python benchmarks/bench_rank.py [queries] [docs per query]

One synthetic run, three row orders: as run files list it (each query's scores
descending: only checked), each query's scores in random order (the in-memory case: a
DataFrame of model scores), and all rows shuffled (queries interleaved). Prints the
best of 20 calls in ms per 100,000 rows; the first layout is the floor (counting sort by
query and the order check), the others add the sort.
"""

import sys
import time

import numpy as np
import pyarrow as pa

from judged.core.data import string_buffers
from judged.core.native import compiled

native = compiled()


def best_ms_per_100k(qe: np.ndarray, nq: int, score: np.ndarray, docid: pa.Array, reps: int = 20) -> float:
    args = (qe, nq, score, *string_buffers(docid))
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        native.trec_rank(*args)
        times.append(time.perf_counter() - t)
    return min(times) * 1e3 * 1e5 / len(qe)


def main(nq: int = 1000, nd: int = 100) -> None:
    if native is None:
        sys.exit("judged.core._native is not built here (no C compiler, or JUDGED_PURE_PYTHON=1)")
    rng = np.random.default_rng(0)
    qe = np.repeat(np.arange(nq, dtype=np.int64), nd)
    score = 20 - np.tile(np.arange(nd), nq) / nd  # descending within each query
    docid = pa.array([f"doc{i}" for i in rng.integers(0, 10 * nq * nd, nq * nd)])
    noisy = score + rng.normal(0, 0.05, len(score))
    shuffle = rng.permutation(len(qe))
    print(f"trec_rank, {nq} queries x {nd} documents: best of 20, ms per 100,000 rows")
    for name, args in [("scores in order", (qe, score, docid)),
                       ("scores in random order", (qe, noisy, docid)),
                       ("rows shuffled", (qe[shuffle], noisy[shuffle], docid.take(pa.array(shuffle))))]:
        print(f"  {name:<24} {best_ms_per_100k(args[0], nq, args[1], args[2]):7.3f}")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:3]))
