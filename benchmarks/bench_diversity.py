"""The diversity measures against ndeval (pyndeval, which compiles ndeval.c) on a generated
TREC-Web-like collection: subtopic qrels and one run of 1,000 documents per query.

    python benchmarks/bench_diversity.py                     # 200 queries, best of 3
    python benchmarks/bench_diversity.py --queries 50 --repeat 5

Both read the same files in this process and compute the same seven measures (alpha-nDCG@20,
ERR-IA@20, P-IA@20, NRBP, nNRBP, StRecall@20, AP-IA); pyndeval's time includes turning the
files into its tuples (it takes Python lists, not paths; its evaluation alone is timed
too). Best of ``--repeat`` by CPU seconds
of this process (``time.process_time``), the tools taking turns. The values are compared too:
the largest absolute difference per query is printed (the tests hold it at 0).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import judged

MEASURES = {"alpha-nDCG@20": "alpha-nDCG@20", "ERR-IA@20": "ERR-IA@20", "P-IA@20": "P-IA@20", "NRBP": "NRBP",
            "nNRBP": "nNRBP", "StRecall@20": "strec@20", "AP-IA": "MAP-IA"}


def generate(directory: str, queries: int, seed: int = 1) -> tuple[str, str]:
    """Per query 3-7 subtopics, 400 judged documents (each judged for every subtopic,
    relevant with probability 0.15) of 2,000, and a run ranking 1,000 of them."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, queries + 1):
        n_sub = int(rng.integers(3, 8))
        for d in rng.choice(2000, 400, replace=False):
            for s in range(1, n_sub + 1):
                qrels.append(f"{q} {s} web-{q}-{d} {int(rng.random() < 0.15)}\n")
        for r, d in enumerate(rng.choice(2000, 1000, replace=False)):
            run.append(f"{q} Q0 web-{q}-{d} {r + 1} {1000 - r} run\n")
    paths = os.path.join(directory, "qrels.txt"), os.path.join(directory, "run.txt")
    for path, lines in zip(paths, (qrels, run)):
        with open(path, "w") as fh:
            fh.writelines(lines)
    return paths


def ours(qrels: str, run: str) -> dict:
    r = judged.evaluate(qrels, run, list(MEASURES)).runs[run]
    return {(q, m): float(r.values[m][i]) for i, q in enumerate(r.qids.tolist()) for m in MEASURES}


def theirs(qrels: str, run: str, times: dict) -> dict:
    import pyndeval

    with open(qrels) as fh:
        q = [(a, b, c, int(d)) for a, b, c, d in (line.split() for line in fh)]
    with open(run) as fh:
        r = [(f[0], f[2], float(f[4])) for f in (line.split() for line in fh)]
    t, out = _cpu(lambda: pyndeval.ndeval(q, r, list(MEASURES.values())))
    times["pyndeval, ndeval alone"].append(t)
    return {(qid, m): v[name] for qid, v in out.items() for m, name in MEASURES.items()}


def _cpu(fn):
    t = time.process_time()
    value = fn()
    return time.process_time() - t, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = generate(tmp, args.queries)
        lines = sum(1 for _ in open(qrels))
        times = {"judged": [], "pyndeval": [], "pyndeval, ndeval alone": []}
        for _ in range(args.repeat):
            t, a = _cpu(lambda: ours(qrels, run))
            times["judged"].append(t)
            t, b = _cpu(lambda: theirs(qrels, run, times))
            times["pyndeval"].append(t)
        diff = max((abs(a[k] - b[k]) for k in b if not np.isnan(b[k])), default=0.0)
    print(f"{args.queries} queries, {lines:,} subtopic judgment lines, 1,000 ranked per query, "
          f"{len(MEASURES)} measures; best of {args.repeat} by CPU seconds; load average "
          f"{os.getloadavg()[0]:.1f}")
    best = {k: min(v) for k, v in times.items()}
    for tool, t in best.items():
        print(f"  {tool:<22} {t:6.2f} s CPU")
    print(f"  judged / pyndeval: {best['judged'] / best['pyndeval']:.2f}, judged / its evaluation alone: "
          f"{best['judged'] / best['pyndeval, ndeval alone']:.2f}; largest difference per query: {diff:g}")


if __name__ == "__main__":
    main()
