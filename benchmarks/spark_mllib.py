"""judged's Spark engine against Spark MLlib's ``RankingMetrics.ndcgAt``, and where they differ.

    python benchmarks/spark_mllib.py [--shape small] [--master local[2]]

Prints (1) the time both take for nDCG@10 on the same data, with the local engine for
scale, and (2) three tiny examples where MLlib's nDCG is not trec_eval's:

* graded mode uses the exponential gain 2^grade - 1 (trec_eval: the grade itself);
* the ideal DCG takes the grades in the order the caller lists the judgments, not sorted;
* a document listed twice in the ranking earns its gain twice (trec_eval refuses duplicates).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench-data")


def mllib_ndcg(spark, rows, k=10):
    """MLlib's graded nDCG@k. rows: (ranked docids, judged docids, their grades).

    Called on the JVM class itself: PySpark's ``RankingMetrics`` wrapper keeps only the first
    two fields of each row (PythonMLLibAPI.newRankingMetrics builds pairs), so from Python the
    grades are silently dropped and every judged document counts as relevant (binary mode)."""
    sc = spark.sparkContext
    jvm, gateway = sc._jvm, sc._gateway

    def java_array(items, kind):
        out = gateway.new_array(kind, len(items))
        for i, x in enumerate(items):
            out[i] = x
        return out

    triples = jvm.java.util.ArrayList()
    for ranked, labels, grades in rows:
        triples.add(jvm.scala.Tuple3(java_array(ranked, jvm.java.lang.Object), java_array(labels, jvm.java.lang.Object),
                                     java_array(grades, jvm.double)))
    tag = jvm.scala.reflect.ClassTag.apply(jvm.java.lang.Object().getClass())
    return jvm.org.apache.spark.mllib.evaluation.RankingMetrics(sc._jsc.parallelize(triples).rdd(), tag).ndcgAt(k)


def pyspark_ndcg(spark, rows, k=10):
    """The same through PySpark's wrapper (the grades do not reach the JVM)."""
    from pyspark.mllib.evaluation import RankingMetrics

    return RankingMetrics(spark.sparkContext.parallelize(rows, 1)).ndcgAt(k)


def judged_ndcg(ranked, judgments, measure="nDCG@10", on_duplicate="error"):
    import judged

    run = {"q": {d: float(len(ranked) - i) for i, d in enumerate(ranked)}}
    return judged.evaluate({"q": judgments}, run, [measure], on_duplicate=on_duplicate).mean().iloc[0, 0]


def differences(spark) -> None:
    print("where MLlib's nDCG@10 differs from trec_eval's (judged's default):")
    # 1. gain: ranking a, b; judgments listed best first (so MLlib's ideal is the true ideal)
    ranked, judgments = ["a", "b"], {"a": 1, "b": 3}
    m = mllib_ndcg(spark, [(ranked, ["b", "a"], [3.0, 1.0])])
    print(f"  exponential gain:  ranking a,b; b=3 a=1   MLlib {m:.4f}   judged nDCG@10 "
          f"{judged_ndcg(ranked, judgments):.4f}   judged nDCG(gain=exp)@10 "
          f"{judged_ndcg(ranked, judgments, 'nDCG(gain=exp)@10'):.4f}")
    # 2. ideal from the caller's label order: the same judgments, listed low grade first
    m_low_first = mllib_ndcg(spark, [(ranked, ["a", "b"], [1.0, 3.0])])
    print(f"  ideal order:       the same, judgments listed a=1,b=3 -> MLlib {m_low_first:.4f} (its ideal is "
          f"the ranking itself); listed b=3,a=1 -> MLlib {m:.4f}; judged "
          f"{judged_ndcg(ranked, judgments, 'nDCG(gain=exp)@10'):.4f} either way")
    print(f"  PySpark wrapper:   ranking a,b; b=3 a=1   pyspark.mllib RankingMetrics "
          f"{pyspark_ndcg(spark, [(ranked, ['b', 'a'], [3.0, 1.0])]):.4f} (grades dropped: binary nDCG)")
    # 3. duplicates: a relevant document listed twice
    ranked = ["a", "a", "b"]
    m = mllib_ndcg(spark, [(ranked, ["a", "b"], [1.0, 1.0])])
    once = judged_ndcg(["a", "b"], {"a": 1, "b": 1})
    print(f"  duplicates:        ranking a,a,b; a=1 b=1   MLlib {m:.4f} (a counted twice)   judged refuses the "
          f"duplicate by default; with it removed {once:.4f}")


def timing(spark, shape: str) -> None:
    import numpy as np
    import pyarrow.csv as pacsv

    import judged
    from judged.spark import evaluate as spark_evaluate

    run_path, qrels_path = os.path.join(DATA, f"{shape}.run"), os.path.join(DATA, f"{shape}.qrels")
    opts = dict(parse_options=pacsv.ParseOptions(delimiter=" "))
    run = pacsv.read_csv(run_path, read_options=pacsv.ReadOptions(
        column_names=["qid", "q0", "docid", "rank", "score", "tag"]), **opts).select(["qid", "docid", "score"])
    qrels = pacsv.read_csv(qrels_path, read_options=pacsv.ReadOptions(
        column_names=["qid", "iter", "docid", "grade"]), **opts).select(["qid", "docid", "grade"])
    run_pdf, qrels_pdf = run.to_pandas(), qrels.to_pandas()
    print(f"nDCG@10 on {shape}: {len(run_pdf)} ranked rows, {len(qrels_pdf)} judgments, "
          f"{run_pdf.qid.nunique()} queries; master {spark.sparkContext.master}")

    # MLlib wants one row per query: (ranked docids, judged docids, grades)
    ranked = run_pdf.sort_values(["qid", "score"], ascending=[True, False]).groupby("qid")["docid"].apply(list)
    judged_rel = qrels_pdf[qrels_pdf.grade > 0]
    labels = judged_rel.groupby("qid")["docid"].apply(list)
    grades = judged_rel.groupby("qid")["grade"].apply(lambda g: [float(x) for x in g])
    rows = [(ranked[q], labels.get(q, []), grades.get(q, [])) for q in ranked.index]
    rdd = spark.sparkContext.parallelize(rows, spark.sparkContext.defaultParallelism).cache()
    rdd.count()
    from pyspark.mllib.evaluation import RankingMetrics

    t = time.perf_counter()
    mllib = RankingMetrics(rdd).ndcgAt(10)
    t_mllib = time.perf_counter() - t

    run_df, qrels_df = spark.createDataFrame(run_pdf).cache(), spark.createDataFrame(qrels_pdf).cache()
    run_df.count(), qrels_df.count()
    t = time.perf_counter()
    ours = spark_evaluate(run_df, qrels_df, ["nDCG@10", "nDCG(gain=exp)@10"]).filter("qid = 'all'").collect()
    t_spark = time.perf_counter() - t
    t = time.perf_counter()
    local = judged.evaluate(qrels_pdf, {"run": run_pdf}, ["nDCG@10"]).mean().iloc[0, 0]
    t_local = time.perf_counter() - t
    means = {r.measure: r.value for r in ours}
    print(f"  MLlib ndcgAt(10) via PySpark (binary) {t_mllib:5.2f} s   mean {mllib:.4f}")
    print(f"  judged.spark nDCG@10 + exp-gain      {t_spark:6.2f} s   mean {means['nDCG@10']:.4f} (linear), "
          f"{means['nDCG(gain=exp)@10']:.4f} (exp)")
    print(f"  judged local engine nDCG@10          {t_local:6.2f} s   mean {local:.4f}")
    print(f"  judged.spark / MLlib time: {t_spark / t_mllib:.2f}; rows per second per core, judged.spark: "
          f"{len(run_pdf) / t_spark / spark.sparkContext.defaultParallelism:,.0f}")
    del np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="small", choices=["small", "deep", "wide"])
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    from judged.spark import session

    spark = session(args.master, app="judged-vs-mllib")
    differences(spark)
    timing(spark, args.shape)
    spark.stop()


if __name__ == "__main__":
    main()
