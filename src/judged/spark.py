"""The Spark engine: the same kernels, run on blocks of queries in Spark executors.

Every measure is a function of one query's ranked documents and judgments, so the work
splits by query with no communication between queries. Both tables are shuffled into
``blocks`` buckets by a hash of the qid (co-partitioned: a query's run rows and its
judgments meet in the same bucket), and each bucket is handed, as pandas DataFrames, to
``judged.align`` and the measure kernels exactly as the local engine runs them
(``groupBy(bucket).cogroup(...).applyInPandas``). Per-query values are therefore the
local engine's numbers; means are Spark aggregates over them.

    from judged.spark import evaluate
    scores = evaluate(run_df, qrels_df, ["nDCG@10", "AP"])   # qid, measure, value
    scores.filter("qid = 'all'").show()                      # the means (trec_eval's "all")

Needs the ``spark`` extra (``pip install 'judged[spark]'``) and Java 17.

:func:`session` runs a local master's Python workers on this interpreter (judged is
importable there whether or not a virtual environment is activated); on a cluster it
checks once that the workers' Python can import judged, and says to set PYSPARK_PYTHON if
not. Spark's own log lines, stage bars and pandas warnings go to a log file (:data:`LOG`)
unless ``JUDGED_SPARK_LOGS=1`` (``judged eval --spark-logs``); judged shows its own progress.
"""

from __future__ import annotations

import os
import sys
import tempfile

from .conventions import Settings, validate
from .errors import ConventionError, JudgedError, ParseError
from .measures import Measure

SCHEMA = "qid string, measure string, value double"
MEAN_QID = "all"
LOGS_ENV = "JUDGED_SPARK_LOGS"  # 1: Spark's own logs on stderr
LOG = os.path.join(tempfile.gettempdir(), f"judged-spark-{os.getpid()}.log")  # where they go otherwise


def _columns(df, wanted: dict, what: str):
    """Select and cast the columns an engine needs (qid, docid, score/grade[, rank])."""
    from pyspark.sql import functions as F

    missing = [c for c in wanted if c not in df.columns]
    if missing:
        raise ParseError(what, None, f"no {', '.join(missing)} column (found {', '.join(df.columns)})")
    return df.select(*[F.col(c).cast(t).alias(c) for c, t in wanted.items()])


def evaluate(run_df, qrels_df, measures=("nDCG@10", "Judged@10"), *, ties: str = "trec", complete: bool = False,
             no_relevant: str = "zero", on_duplicate: str = "error", ignore_identical_ids: bool = False,
             blocks: int | None = None):
    """Per-query values of ``measures`` for one run, as a Spark DataFrame (qid, measure, value),
    plus one row per measure with qid ``"all"``: the mean (the sum for NumRel/NumRet/NumRelRet),
    as trec_eval prints them.

    Parameters
    ----------
    run_df : Spark DataFrame with columns qid, docid, score (and rank for ``ties='rank'``)
    qrels_df : Spark DataFrame with columns qid, docid, grade (integer)
    measures : measure strings, as for :func:`judged.evaluate`
    ties, complete, no_relevant, on_duplicate : the conventions of :func:`judged.evaluate`;
        ``ties='input'`` is refused, since Spark keeps no file order.
    blocks : number of query buckets (default: ``spark.sql.shuffle.partitions``)
    """
    from pyspark.sql import functions as F

    validate(on_duplicate=on_duplicate)
    settings = Settings(ties=ties, complete=complete, no_relevant=no_relevant,
                        ignore_identical_ids=ignore_identical_ids)
    if ties == "input":
        raise ConventionError("ties=input needs the file order, which Spark does not keep; use trec or rank")
    parsed = {}
    for given in [measures] if isinstance(measures, (str, Measure)) else measures:
        parsed.setdefault(str(given), Measure.parse(given))
    run_cols = {"qid": "string", "docid": "string", "score": "double"}
    if ties == "rank":
        run_cols["rank"] = "double"
    run = _columns(run_df, run_cols, "run")
    qrels = _columns(qrels_df, {"qid": "string", "docid": "string", "grade": "long"}, "qrels")
    if no_relevant == "error":
        _refuse_no_relevant(run, qrels, complete)
    spark = run.sparkSession
    n = int(blocks or spark.conf.get("spark.sql.shuffle.partitions"))
    bucket = F.pmod(F.xxhash64("qid"), F.lit(n))
    kernel = _block_kernel(parsed, settings, on_duplicate)
    per_query = (run.withColumn("_block", bucket).groupBy("_block")
                 .cogroup(qrels.withColumn("_block", bucket).groupBy("_block"))
                 .applyInPandas(kernel, SCHEMA)
                 .persist())  # the means read it too: score each query once
    summed = [g for g, m in parsed.items() if m.aggregate == "sum"]
    means = per_query.groupBy("measure").agg(
        F.when(F.col("measure").isin(summed), F.sum("value")).otherwise(F.avg("value")).alias("value"))
    return per_query.unionByName(means.select(F.lit(MEAN_QID).alias("qid"), "measure", "value"))


def _block_kernel(parsed: dict, settings: Settings, on_duplicate: str):
    """The function each executor runs on one bucket of queries: the local engine, unchanged."""

    def kernel(run_pdf, qrels_pdf):
        import numpy as np
        import pandas as pd

        from .align import align
        from .io import read_qrels, read_run

        empty = pd.DataFrame({"qid": pd.Series(dtype=str), "measure": pd.Series(dtype=str),
                              "value": pd.Series(dtype=float)})
        if len(qrels_pdf) == 0 or (len(run_pdf) == 0 and not settings.complete):
            return empty
        qrels = read_qrels(qrels_pdf[["qid", "docid", "grade"]], on_duplicate=on_duplicate)
        run = read_run(run_pdf[["qid", "docid", "score"]], name="run", on_duplicate=on_duplicate)
        if settings.ties == "rank":
            run.rank = run_pdf["rank"].to_numpy(dtype=np.float64)
        aligned = align(qrels, run, settings)
        qids = aligned.qids.astype(str)
        return pd.DataFrame({
            "qid": np.tile(qids, len(parsed)),
            "measure": np.repeat(list(parsed), len(qids)),
            "value": np.concatenate([m.compute(aligned) for m in parsed.values()]) if parsed else [],
        })

    return kernel


def _refuse_no_relevant(run, qrels, complete: bool) -> None:
    from pyspark.sql import functions as F

    relevant = qrels.groupBy("qid").agg(F.max((F.col("grade") >= 1).cast("int")).alias("relevant"))
    if not complete:
        relevant = relevant.join(run.select("qid").distinct(), "qid")
    bad = relevant.filter("relevant = 0").select("qid").orderBy("qid").limit(1).collect()
    if bad:
        raise ConventionError(f"queries with nothing relevant in the qrels (first: {bad[0].qid!r}); "
                              "choose --no-relevant zero or skip")


def query_counts(run_df, qrels_df, settings: Settings) -> dict:
    """The local engine's query counts (evaluated, skipped, missing_from_run, only_in_run,
    no_relevant), from one row per query."""
    from pyspark.sql import functions as F

    r = run_df.select("qid").distinct().withColumn("in_run", F.lit(True))
    q = qrels_df.groupBy("qid").agg(F.max((F.col("grade") >= 1).cast("int")).alias("relevant")) \
        .withColumn("in_qrels", F.lit(True))
    both = r.join(q, "qid", "full_outer").fillna(False, ["in_run", "in_qrels"])
    row = both.agg(
        F.sum((F.col("in_run") & ~F.col("in_qrels")).cast("int")).alias("only_in_run"),
        F.sum((~F.col("in_run") & F.col("in_qrels")).cast("int")).alias("missing_from_run"),
        F.sum((F.col("in_qrels") & (F.col("in_run") | F.lit(settings.complete)) & (F.col("relevant") == 0))
              .cast("int")).alias("no_relevant"),
        F.sum((F.col("in_qrels") & (F.col("in_run") | F.lit(settings.complete))).cast("int")).alias("candidates"),
    ).collect()[0]
    no_rel = int(row.no_relevant or 0)
    skipped = no_rel if settings.no_relevant == "skip" else 0
    return {"evaluated": int(row.candidates or 0) - skipped, "skipped": skipped,
            "missing_from_run": int(row.missing_from_run or 0), "only_in_run": int(row.only_in_run or 0),
            "no_relevant": no_rel}


# -- reading files into Spark -----------------------------------------------------------

def read_table(spark, path: str, kind: str):
    """A TREC run / qrels file (split on any white space; blank and ``#`` lines skipped; a
    run line's fields after the tag ignored, as trec_eval does) or Parquet, decided by
    content (a file, or a folder of part files as Spark writes it, whatever its name), as a
    DataFrame with the engine's columns. ``kind``: ``run`` or ``qrels``."""
    from pyspark.sql import functions as F

    from .io.sniff import parquet_files

    if parquet_files(path):
        return spark.read.parquet(path)
    fields = F.split(F.trim(F.col("value")), r"\s+")
    lines = spark.read.text(path).filter(~F.trim(F.col("value")).rlike(r"^(#.*)?$"))
    if kind == "run":
        return lines.select(fields.getItem(0).alias("qid"), fields.getItem(2).alias("docid"),
                            fields.getItem(3).cast("double").alias("rank"),
                            fields.getItem(4).cast("double").alias("score"))
    return lines.select(fields.getItem(0).alias("qid"), fields.getItem(2).alias("docid"),
                        fields.getItem(3).cast("long").alias("grade"))


def spark_logs(logs: bool | None = None) -> bool:
    """Whether Spark's own logs go to stderr: ``logs``, else ``JUDGED_SPARK_LOGS=1``."""
    return os.environ.get(LOGS_ENV, "") not in ("", "0") if logs is None else bool(logs)


def session(master: str = "local[2]", app: str = "judged", *, logs: bool | None = None):
    """A Spark session with Arrow transfer on (the pandas UDFs need it).

    A local master (``local``, ``local[n]``, ``local[*]``) runs its Python workers on this
    interpreter: PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON are set to ``sys.executable``
    (outside an activated virtual environment the workers would otherwise start the
    system's python3, which has no judged). Any other master: :func:`check_workers`.

    ``logs`` (default ``JUDGED_SPARK_LOGS=1``): Spark's log lines, its stage progress bars
    and the pandas warnings of PySpark on stderr. By default they go to :data:`LOG` (the
    JVM's output) or are turned off (stage bars, PySpark's pandas-version warning), and
    the error messages name that log."""
    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.sql import SparkSession
    except ImportError:
        raise JudgedError("the Spark engine needs pyspark: pip install 'judged[spark]'")
    local = master == "local" or master.startswith("local[")
    if local:
        os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    conf = (SparkConf().setMaster(master).setAppName(app)
            .set("spark.sql.execution.arrow.pyspark.enabled", "true")
            .set("spark.ui.enabled", "false"))
    if local:
        conf.set("spark.sql.shuffle.partitions", "8")  # a few query blocks per core
    quiet = not spark_logs(logs)
    if quiet:
        _quiet_python_warnings()
        conf.set("spark.ui.showConsoleProgress", "false")
        conf.set("spark.executorEnv.PYTHONWARNINGS", "ignore::FutureWarning")  # the workers' pandas warnings
        if SparkContext._active_spark_context is None:  # start the JVM with its output in the log file
            from pyspark.java_gateway import launch_gateway

            with open(LOG, "ab") as log:
                gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
            SparkContext(conf=conf, gateway=gateway)
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if not local:
        check_workers(spark)
    return spark


def _quiet_python_warnings() -> None:
    """PySpark's own FutureWarning about the pandas version, raised in this process."""
    import warnings

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)


def check_workers(spark) -> None:
    """Refuse, in one line naming PYSPARK_PYTHON, a cluster whose Python workers cannot
    import judged (one tiny job), instead of failing after the whole evaluation."""
    try:
        spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("judged").__version__).collect()
    except Exception as exc:
        python = os.environ.get("PYSPARK_PYTHON", "python3")
        raise JudgedError(f"the Spark workers cannot import judged ({_executor_message(exc)}): install judged "
                          f"where the workers run, or set PYSPARK_PYTHON to a Python that has it (now: {python})")


class QrelsSummary:
    """What a :class:`judged.evaluation.Result` reports about the qrels, counted in Spark."""

    def __init__(self, source: str, query_ids, judgments: int):
        self.source, self.sha256, self.query_ids, self._n = source, None, query_ids, judgments

    def __len__(self) -> int:
        return self._n


def evaluate_files(qrels_path: str, run_paths: list[str], measures, *, master: str = "local[2]",
                   ties: str = "trec", complete: bool = False, no_relevant: str = "zero",
                   on_duplicate: str = "error", ignore_identical_ids: bool = False, logs: bool | None = None,
                   progress: bool | None = None):
    """``judged eval --engine spark``: files in, a :class:`judged.evaluation.Result` out (the
    per-query values come back to the driver; the work is done by the executors).
    ``logs``: see :func:`session`; ``progress``: judged's bar over the runs (default: when
    stderr is a terminal)."""
    import numpy as np

    from .evaluation import Result, RunResult
    from .progress import progress as progress_bar

    spark = session(master, logs=logs)
    settings = Settings(ties=ties, complete=complete, no_relevant=no_relevant,
                        ignore_identical_ids=ignore_identical_ids)
    parsed = {}
    for given in measures:
        parsed.setdefault(str(given), Measure.parse(given))
    qrels = _columns(read_table(spark, qrels_path, "qrels"), {"qid": "string", "docid": "string", "grade": "long"},
                     qrels_path).cache()
    qids = np.array(sorted(r.qid for r in qrels.select("qid").distinct().collect()), dtype=object)
    summary = QrelsSummary(qrels_path, qids, qrels.count())
    runs, seen = {}, set()
    log = "" if spark_logs(logs) else f" (Spark's log: {LOG})"
    with progress_bar(len(run_paths), f"Spark ({master}): scoring runs", progress) as advance:
        for path in run_paths:
            name = path
            while name in seen:
                name += "'"
            seen.add(name)
            run = read_table(spark, path, "run")
            try:
                scores = evaluate(run, qrels, list(parsed), ties=ties, complete=complete, no_relevant=no_relevant,
                                  on_duplicate=on_duplicate, ignore_identical_ids=ignore_identical_ids
                                  ).filter(f"qid != '{MEAN_QID}'").toPandas()
            except JudgedError:
                raise
            except Exception as exc:  # an error raised in an executor (or by Spark's parser) arrives wrapped
                raise JudgedError(f"{path}: {_executor_message(exc)}{log}")
            table = scores.pivot(index="qid", columns="measure", values="value")
            table = table.reindex(sorted(table.index)) if len(table) else table
            values = {g: table[g].to_numpy(dtype=np.float64) if g in table else np.zeros(0) for g in parsed}
            counts = query_counts(_columns(run, {"qid": "string"}, path), qrels, settings)
            runs[name] = RunResult(name, table.index.to_numpy(dtype=object), values, counts)
            advance()
    return Result(summary, parsed, settings, runs)


def _executor_message(exc: Exception) -> str:
    """One line from a Spark error: judged's own message if an executor raised one, else
    the first line of Spark's (e.g. ``[CAST_INVALID_INPUT] The value 'x' ...``)."""
    text = str(exc)
    for marker in ("ParseError: ", "ConventionError: ", "MeasureError: "):
        if marker in text:
            return text.split(marker, 1)[1].splitlines()[0]
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0].split(". ")[0] if lines else type(exc).__name__
