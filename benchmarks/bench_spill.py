"""A large run file NOT grouped by query: spilled to disk by qid (judged.core.spill) against read whole.

    python benchmarks/bench_spill.py                      # 20M lines (20,000 queries x 1,000)
    python benchmarks/bench_spill.py --lines 50000000 --skip-whole
    python benchmarks/bench_spill.py --budget 134217728   # bytes per partition

Writes ``bench-data/shuffled-<lines>.run`` and ``.qrels`` (git-ignored; deterministic) the
first time: queries of 1,000 ranked documents, every line at a random place in the file,
scores descending with rank, an exact tie every 50 ranks. Then each way runs in its own
child process, nDCG@10, AP, P@10, RR and R@100 per query: ``spill`` with
``JUDGED_SPILL_BYTES=0`` (partitions of ``--budget`` bytes in ``TMPDIR``), ``whole`` with
spilling off (the file read into memory). Wall time, CPU time and peak memory (max RSS)
come from ``os.wait4``, as in ``benchmarks/run.py``; the children also print a digest of
the per-query values, which must agree. A third child reads the qrels alone: the memory
both ways need whatever the run's size.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import DATA, _fmt, run_child  # noqa: E402

DEPTH = 1_000  # documents per query
DOC_SPACE = 50_000_000
CHILD = """
import hashlib, json, sys, time
import numpy as np
import judged, judged.core.evaluation, judged.core.stream, judged.core.spill
qrels_path, run_path = sys.argv[1], sys.argv[2]
t = time.perf_counter()
r = judged.evaluate(qrels_path, run_path, ["nDCG@10", "AP", "P@10", "RR", "R@100"])
rr = r.runs[run_path]
seconds = time.perf_counter() - t
digest = hashlib.sha256("\\n".join(rr.qids.tolist()).encode())
for m in sorted(rr.values):
    digest.update(np.ascontiguousarray(rr.values[m]).tobytes())
print(json.dumps({"seconds": seconds, "queries": len(rr.qids), "digest": digest.hexdigest()[:16],
                  "way": type(rr).__name__}))
"""


QRELS_ONLY = """
import json, sys, time
import judged
t = time.perf_counter()
q = judged.read_qrels(sys.argv[1])
q.index
print(json.dumps({"seconds": time.perf_counter() - t, "queries": len(q.query_ids), "digest": "-", "way": "Qrels"}))
"""


def _docnum(q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Document number of rank r of query q: distinct within a query (1000003 is prime to 5e7)."""
    return (r * 1_000_003 + q * 7_919) % DOC_SPACE


def generate(lines: int, out: str, seed: int = 0, batch: int = 1 << 21) -> tuple[str, str]:
    """A shuffled run of ``lines`` lines and its qrels (150 judgments a query), written in batches."""
    nq = -(-lines // DEPTH)
    run_path, qrels_path = (os.path.join(out, f"shuffled-{lines}.{ext}") for ext in ("run", "qrels"))
    if os.path.exists(run_path) and os.path.exists(qrels_path):
        return qrels_path, run_path
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    order = rng.permutation(lines)  # line i of the file is row order[i] of the grouped run
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with pacsv.CSVWriter(run_path + ".part", pa.schema([("qid", pa.string()), ("q0", pa.string()),
                         ("docid", pa.string()), ("rank", pa.int64()), ("score", pa.float64()),
                         ("tag", pa.string())]), write_options=options) as writer:
        for a in range(0, lines, batch):
            row = order[a:a + batch]
            q, r = row // DEPTH, row % DEPTH
            n = len(row)
            writer.write_table(pa.table({
                "qid": pa.array(np.char.add("q", (q + 1).astype(str))), "q0": pa.array(np.full(n, "Q0")),
                "docid": pa.array(np.char.add("D", _docnum(q, r).astype(str))), "rank": r + 1,
                "score": np.round(20.0 - (r - (r % 50 == 1)) * 0.0137, 4), "tag": pa.array(np.full(n, "bench"))}))
    os.replace(run_path + ".part", run_path)
    # qrels: 100 judgments among each query's first 300 ranks, 50 documents it did not retrieve
    q = np.repeat(np.arange(nq), 150)
    r = np.concatenate([rng.permuted(np.tile(np.arange(300), (nq, 1)), axis=1)[:, :100],
                        DEPTH + 2 * np.arange(50) + rng.integers(0, 2, size=(nq, 50))], axis=1).ravel()
    grade = rng.choice([0, 1, 2, 3], p=[0.55, 0.25, 0.13, 0.07], size=len(q))
    pacsv.write_csv(pa.table({"qid": pa.array(np.char.add("q", (q + 1).astype(str))),
                              "iter": pa.array(np.full(len(q), "0")),
                              "docid": pa.array(np.char.add("D", _docnum(q, r).astype(str))), "grade": grade}),
                    qrels_path, write_options=options)
    return qrels_path, run_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=20_000_000)
    ap.add_argument("--budget", type=int, help="bytes per partition (JUDGED_SPILL_PARTITION_BYTES)")
    ap.add_argument("--skip-whole", action="store_true", help="only the spilled evaluation")
    ap.add_argument("--out", default=DATA)
    args = ap.parse_args()
    t = time.perf_counter()
    qrels, run = generate(args.lines, args.out)
    size = os.path.getsize(run)
    print(f"{args.lines:,} lines, {size / 1e6:,.0f} MB ({time.perf_counter() - t:.0f} s to make or find); "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}", flush=True)
    ways = {"spill": {"JUDGED_SPILL_BYTES": "0"}, "whole": {"JUDGED_SPILL_BYTES": str(1 << 62)}}
    if args.budget:
        ways["spill"]["JUDGED_SPILL_PARTITION_BYTES"] = str(args.budget)
    if args.skip_whole:
        del ways["whole"]
    results = {"qrels": run_child([sys.executable, "-c", QRELS_ONLY, qrels])}  # the floor both ways stand on
    print(f"  qrels  {_fmt(results['qrels'])}   (reading the qrels alone)", flush=True)
    for way, env in ways.items():
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            results[way] = run_child([sys.executable, "-c", CHILD, qrels, run])
        finally:
            for k, v in saved.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        r = results[way]
        print(f"  {way:<6} {_fmt(r)}" + ("" if "error" in r else f"   {r['queries']} queries, {r['way']}, "
                                                                   f"digest {r['digest']}"), flush=True)
    if "whole" in results and all("error" not in r for r in results.values()):
        s, w = results["spill"], results["whole"]
        print(f"  spill / whole: time {s['seconds'] / w['seconds']:.2f}   cpu {s['cpu'] / w['cpu']:.2f}   "
              f"memory {s['peak_mb'] / w['peak_mb']:.2f}   same values: {s['digest'] == w['digest']}")


if __name__ == "__main__":
    main()
