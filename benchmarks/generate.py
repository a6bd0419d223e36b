"""Synthetic TREC runs and qrels for the benchmarks, written to ``bench-data/`` (git-ignored).

    python benchmarks/generate.py [--only deep|wide|small] [--out bench-data]

Shapes (queries x documents per query):

* ``deep``  7,000 x 1,000  (7M run lines, ~264 MB): the issue's reference file
* ``wide``  100,000 x 100  (10M run lines)
* ``small`` 1,000 x 100    (100k run lines): the "stays snappy" case

Runs are grouped by qid, rank ascending, scores descending with some exact ties (scores are
rounded to 4 decimals). Qrels judge part of each query's retrieved documents plus some it did
not retrieve, grades 0-3. Deterministic (seeded), so every machine gets the same bytes.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

SHAPES = {"deep": (7_000, 1_000, 150), "wide": (100_000, 100, 15), "small": (1_000, 100, 30)}


def _write(path: str, columns: dict) -> None:
    table = pa.table(columns)
    pacsv.write_csv(table, path, write_options=pacsv.WriteOptions(
        include_header=False, delimiter=" ", quoting_style="none", batch_size=1 << 20))


def generate(shape: str, out: str, seed: int = 0) -> tuple[str, str]:
    nq, depth, judged_per_q = SHAPES[shape]
    rng = np.random.default_rng(seed)
    n = nq * depth
    qnum = np.repeat(np.arange(1, nq + 1), depth)
    qid = pa.array(np.char.add("q", qnum.astype(str)))
    doc_space = 50_000_000
    # distinct residues mod depth keep the documents of one query distinct
    docnum = rng.integers(0, doc_space // depth, size=n) * depth + rng.permuted(
        np.tile(np.arange(depth), (nq, 1)), axis=1).ravel()
    docid = pa.array(np.char.add("D", docnum.astype("U8")))
    rank = np.tile(np.arange(1, depth + 1), nq)
    step = rng.exponential(0.01, size=n).reshape(nq, depth)
    score = np.round(20.0 - np.cumsum(step, axis=1), 4).ravel()
    run_path = os.path.join(out, f"{shape}.run")
    _write(run_path, {"qid": qid, "q0": pa.array(np.full(n, "Q0")), "docid": docid, "rank": rank,
                      "score": score, "tag": pa.array(np.full(n, "bench"))})
    # qrels: two thirds of the judgments among the top of the run, the rest elsewhere
    from_run = judged_per_q * 2 // 3
    pick = rng.integers(0, min(depth, 3 * from_run), size=(nq, from_run))
    pick = np.sort(pick, axis=1)
    rows = (np.arange(nq)[:, None] * depth + pick).ravel()
    q_from = qnum[rows]
    d_from = docnum[rows]
    other = judged_per_q - from_run
    q_other = np.repeat(np.arange(1, nq + 1), other)
    d_other = rng.integers(0, doc_space, size=nq * other)
    q_all = np.concatenate([q_from, q_other])
    d_all = np.concatenate([d_from, d_other])
    order = np.argsort(q_all, kind="stable")
    q_all, d_all = q_all[order], d_all[order]
    # drop repeated pairs (several picks of the same rank)
    key = q_all.astype(np.int64) * doc_space + d_all
    _, first = np.unique(key, return_index=True)
    first.sort()
    q_all, d_all = q_all[first], d_all[first]
    grade = rng.choice([0, 1, 2, 3], p=[0.55, 0.25, 0.13, 0.07], size=len(q_all))
    qrels_path = os.path.join(out, f"{shape}.qrels")
    _write(qrels_path, {"qid": pa.array(np.char.add("q", q_all.astype(str))), "iter": pa.array(np.full(len(q_all), "0")),
                        "docid": pa.array(np.char.add("D", d_all.astype("U8"))), "grade": grade})
    return qrels_path, run_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=list(SHAPES), action="append")
    ap.add_argument("--out", default="bench-data")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for shape in args.only or list(SHAPES):
        t = time.perf_counter()
        qrels, run = generate(shape, args.out)
        print(f"{shape}: {run} {os.path.getsize(run) / 1e6:.0f} MB, {qrels} ({time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()
