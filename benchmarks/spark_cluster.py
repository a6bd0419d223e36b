"""judged's Spark engine on a real standalone cluster on this machine (issue #19), against the
local engine and Spark MLlib's RankingEvaluator on the same cluster and data (not a test).

    python benchmarks/spark_cluster.py [--lines 1e6 --lines 1e7] [--workers 1 --workers 2]
                                       [--out bench-data/spark-cluster] [--skip-cli] [--skip-mllib]

1. Generates (seeded, once, under bench-data/, git-ignored) runs of LINES lines as a **folder
   of Parquet parts** (1,000 documents a query, 60 judgments a query, grades 0-3; each part
   holds whole queries, about 500,000 lines), and their qrels as Parquet parts.
2. Starts a standalone master and W workers (1 core, 3 GB each) from the pyspark install
   with :func:`judged.spark.local_cluster` (``bin/spark-class ...deploy.master.Master`` and
   ``...deploy.worker.Worker``; the pip package has no ``sbin/start-master.sh``), every
   daemon, the driver and the executors bound to 127.0.0.1, and stops them at the end, also
   on errors and Ctrl-C.
3. In one driver session per cluster: the fixed cost of a job (a 100-line run, median of 5
   after a warm-up), then each run size: the Spark engine's wall time for one job (read,
   shuffle by query, score, per-query values back), checked value by value against the local
   engine (``==``), and the local engine's time on the same files.
4. MLlib: ``pyspark.ml.evaluation.RankingEvaluator(metricName='ndcgAtK', k=10)`` on the same
   cluster and Parquet parts (rankings and relevant sets built in Spark, then the metric),
   next to judged's nDCG@10 on the same judgments made binary (MLlib's nDCG has no grades
   from Python), and MLlib's ideal-DCG bug shown on a two-document example.
5. ``judged eval --engine spark --spark-master spark://127.0.0.1:PORT`` as a user runs it on the
   largest run (2 workers), its ``--per-query --format json`` output compared with the local
   engine's, number for number.

The machine has 2 cores, shared: two 1-core workers share them with the driver, so a second
worker adds parallelism only while the first leaves a core idle. The load average is printed
before and after; compare times measured in the same minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

MEASURES = ["nDCG@10", "AP", "P@10", "RR", "R@100"]


def generate(out: str, lines: int, depth: int = 1000, judged: int = 60, part_lines: int = 500_000,
             seed: int = 0) -> dict:
    """A run of ``lines`` lines (``lines // depth`` queries) and its qrels, as Parquet part
    folders; a binary copy of the qrels (grade >= 1 -> 1) for the comparison with MLlib."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    queries = lines // depth
    base = os.path.join(out, f"{lines // 1_000_000}M" if lines >= 1_000_000 else f"{lines}")
    paths = {k: os.path.join(base, k) for k in ("run", "qrels", "qrels-binary")}
    if all(os.path.isdir(p) for p in paths.values()):
        return paths
    for p in paths.values():
        shutil.rmtree(p, ignore_errors=True)
        os.makedirs(p)
    rng = np.random.default_rng(seed)
    per = max(1, part_lines // depth)
    for part, first in enumerate(range(0, queries, per)):
        q = np.arange(first, min(queries, first + per))
        grade = rng.choice(4, p=[0.7, 0.15, 0.1, 0.05], size=(len(q), 2 * depth))
        score = grade + rng.normal(0, 1.0, size=grade.shape)
        order = np.argsort(-score, axis=1, kind="stable")[:, :depth]
        s = np.round(np.take_along_axis(score, order, axis=1), 4).ravel()  # some exact ties
        qid = np.char.add("q", (q + 1).astype(str))
        name = f"part-{part:05d}.parquet"
        pq.write_table(pa.table({"qid": np.repeat(qid, depth), "docid": np.char.add("d", order.ravel().astype(str)),
                                 "score": s}), os.path.join(paths["run"], name))
        pick = np.argsort(rng.random((len(q), 2 * depth)), axis=1)[:, :judged]
        g = np.take_along_axis(grade, pick, axis=1).ravel().astype(np.int64)
        cols = {"qid": np.repeat(qid, judged), "docid": np.char.add("d", pick.ravel().astype(str))}
        pq.write_table(pa.table({**cols, "grade": g}), os.path.join(paths["qrels"], name))
        pq.write_table(pa.table({**cols, "grade": (g >= 1).astype(np.int64)}), os.path.join(paths["qrels-binary"], name))
    return paths


def score_job(spark, paths: dict, qrels=None, shared=None, shuffle: bool = False):
    """One Spark job of judged's engine on a run folder, as ``judged eval --engine spark``
    runs it (the driver's look at the Parquet footers included): (seconds, RunResult).
    ``shuffle``: shuffle by qid even though the parts hold whole queries."""
    from judged.core.conventions import Settings
    from judged.core.io import read_qrels
    from judged.spark import _parsed, broadcast_qrels, read_run_table, score_run

    qrels = qrels or read_qrels(paths["qrels"])
    shared = shared or broadcast_qrels(spark, qrels)
    t = time.perf_counter()
    run, buckets, grouped = read_run_table(spark, paths["run"])
    result = score_run(run, qrels, shared, _parsed(MEASURES), Settings(), "run", blocks=buckets,
                       grouped=grouped and not shuffle)
    return time.perf_counter() - t, result


def identical(result, local) -> tuple[int, int]:
    """(values equal, values compared): per query and measure, ``==``."""
    import numpy as np

    assert list(result.qids) == list(local.qids)
    same = sum(int(np.sum(result.values[m] == local.values[m])) for m in MEASURES)
    return same, len(local.qids) * len(MEASURES)


def local_job(paths: dict):
    import judged

    t = time.perf_counter()
    result = judged.evaluate(paths["qrels"], {"run": paths["run"]}, MEASURES)
    return time.perf_counter() - t, result.runs["run"]


def mllib_ndcg(spark, paths: dict, k: int = 10) -> tuple[float, float]:
    """MLlib's nDCG@k (``RankingEvaluator``, all in the JVM) on the Parquet parts: each
    query's documents in trec_eval's order (score descending, docid descending), the
    relevant ones (grade >= 1) as the labels; document ids as numbers (our ids are 'd' + an
    integer; MLlib's DataFrame API takes arrays of doubles). (seconds, mean)."""
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.sql import functions as F

    t = time.perf_counter()
    run = spark.read.parquet(paths["run"])
    qrels = spark.read.parquet(paths["qrels"])
    # each query's documents in trec_eval's order: score descending, then docid descending
    ranked = (run.withColumn("neg", -F.col("score")).groupBy("qid")
              .agg(F.array_sort(F.collect_list(F.struct("neg", "docid")),
                                lambda a, b: F.when(a["neg"] < b["neg"], -1).when(a["neg"] > b["neg"], 1)
                                .when(a["docid"] > b["docid"], -1).when(a["docid"] < b["docid"], 1).otherwise(0))
                   .alias("r"))
              .select("qid", F.transform("r", lambda x: F.substring(x["docid"], 2, 20).cast("double")).alias("prediction")))
    labels = (qrels.filter("grade >= 1").groupBy("qid")
              .agg(F.collect_list(F.substring("docid", 2, 20).cast("double")).alias("label")))
    data = ranked.join(labels, "qid", "left").select(
        "prediction", F.coalesce("label", F.array().cast("array<double>")).alias("label"))
    mean = RankingEvaluator(metricName="ndcgAtK", k=k).evaluate(data)
    return time.perf_counter() - t, mean


def cli_check(master: str, paths: dict, out: str) -> dict:
    """``judged eval`` twice as a user runs it: local and ``--engine spark`` on the cluster;
    their per-query JSON compared number for number."""
    judged = os.path.join(os.path.dirname(sys.executable), "judged")
    common = [paths["qrels"], paths["run"], *[a for m in MEASURES for a in ("-m", m)], "--per-query", "--format", "json"]
    got = {}
    for engine, extra in (("local", []), ("spark", ["--engine", "spark", "--spark-master", master])):
        path = os.path.join(out, f"cli-{engine}.json")
        t = time.perf_counter()
        with open(path, "w") as f:
            subprocess.run([judged, "eval", *extra, *common], stdout=f, check=True)
        got[engine] = (time.perf_counter() - t, json.load(open(path)))
    local, spark = got["local"][1]["runs"][paths["run"]], got["spark"][1]["runs"][paths["run"]]
    pairs = [(v, spark["per_query"].get(q, {}).get(m)) for q, vals in local["per_query"].items() for m, v in vals.items()]
    return {"local_s": got["local"][0], "spark_s": got["spark"][0], "values": len(pairs),
            "equal": sum(a == b for a, b in pairs), "means_equal": local["mean"] == spark["mean"],
            "counts_equal": local["queries"] == spark["queries"]}


def row(r) -> list:
    n, w, t, t_shuffled, overhead, t_local, same = r
    return [f"{n:,}", str(w), f"{t:.1f} s", f"{t_shuffled:.1f} s", f"{overhead:.2f} s", f"{t_local:.2f} s", same]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=float, action="append", help="run sizes (default 1e6, 3e6, 1e7)")
    ap.add_argument("--workers", type=int, action="append", help="cluster sizes (default 1, 2)")
    ap.add_argument("--out", default="bench-data/spark-cluster")
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--skip-mllib", action="store_true")
    args = ap.parse_args()
    sizes = [int(n) for n in args.lines or [1e6, 3e6, 1e7]]
    workers = args.workers or [1, 2]
    print(f"load average before: {os.getloadavg()}", flush=True)
    tiny = generate(args.out, 100, depth=10, judged=5)
    data = {n: generate(args.out, n) for n in sizes}
    local = {}
    for n in sizes:
        t, result = local_job(data[n])
        local[n] = (t, result)
        print(f"local engine, {n:,} lines: {t:.2f} s", flush=True)
    rows = []
    from judged.core.io import read_qrels
    from judged.spark import broadcast_qrels, local_cluster, session

    for w in workers:
        with local_cluster(w, cores=1, memory="3g", executor_memory="2g") as master:
            print(f"cluster: master {master}, {w} worker(s) x 1 core, 3 GB", flush=True)
            spark = session(master, app=f"judged-cluster-{w}")
            score_job(spark, tiny)  # warm-up: executors, Python workers, imports
            overhead = sorted(score_job(spark, tiny)[0] for _ in range(5))[2]
            print(f"{w} worker(s): fixed cost of a job (100-line run, median of 5): {overhead:.2f} s", flush=True)
            for n in sizes:
                qrels = read_qrels(data[n]["qrels"])
                shared = broadcast_qrels(spark, qrels)
                t, result = score_job(spark, data[n], qrels, shared)
                same, total = identical(result, local[n][1])
                t_shuffled, result = score_job(spark, data[n], qrels, shared, shuffle=True)
                same_shuffled, _ = identical(result, local[n][1])
                shared.destroy()
                rows.append((n, w, t, t_shuffled, overhead, local[n][0], f"{same:,} / {same_shuffled:,} of {total:,}"))
                print("| " + " | ".join(row(rows[-1])) + " |", flush=True)
            if not args.skip_mllib:
                from spark_mllib import differences

                n = sizes[-1]
                t, mean = mllib_ndcg(spark, data[n])
                binary = local_job({"qrels": data[n]["qrels-binary"], "run": data[n]["run"]})[1]
                import numpy as np

                ours = float(np.mean(binary.values["nDCG@10"]))
                t_ours, _ = score_job(spark, {"qrels": data[n]["qrels-binary"], "run": data[n]["run"]})
                print(f"MLlib RankingEvaluator ndcgAtK k=10 on {n:,} lines, {w} worker(s): {t:.1f} s, mean {mean:.15f}; "
                      f"judged.spark (5 measures, binary qrels) {t_ours:.1f} s, nDCG@10 mean {ours:.15f} "
                      f"(difference {abs(mean - ours):.1e})", flush=True)
                differences(spark)
            spark.stop()
            if not args.skip_cli and w == max(workers):
                check = cli_check(master, data[sizes[-1]], args.out)
                print(f"judged eval on {sizes[-1]:,} lines: local {check['local_s']:.1f} s, --engine spark "
                      f"({w} workers) {check['spark_s']:.1f} s (whole process); per-query values equal: "
                      f"{check['equal']:,} of {check['values']:,}; means equal: {check['means_equal']}; "
                      f"query counts equal: {check['counts_equal']}", flush=True)
    print("| run lines | workers | judged.spark, parts of whole queries | shuffled by qid | fixed cost of a job | "
          "local engine | per-query values equal (parts / shuffled) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| " + " | ".join(row(r)) + " |")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
