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

from .core.conventions import Settings
from .core.errors import ConventionError, JudgedError, ParseError
from .core.measures import Measure
from .core.measures.registry import MIN_GEO_MEAN

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
             blocks: int | None = None, settings: Settings | None = None):
    """Per-query values of ``measures`` for one run, as a Spark DataFrame (qid, measure, value),
    plus one row per measure with qid ``"all"``: the mean (the sum for NumRel/NumRet/NumRelRet),
    as trec_eval prints them.

    Parameters
    ----------
    run_df : Spark DataFrame with columns qid, docid, score (and rank for ``ties='rank'``)
    qrels_df : Spark DataFrame with columns qid, docid, grade (integer)
    measures : measure strings, as for :func:`judged.evaluate`
    ties, complete, no_relevant, on_duplicate, ignore_identical_ids : the conventions of
        :func:`judged.evaluate` (the sugar of ``settings``, a :class:`judged.conventions.Settings`);
        ``ties='input'`` is refused, since Spark keeps no file order.
    blocks : number of query buckets (default: ``spark.sql.shuffle.partitions``)
    """
    from pyspark.sql import functions as F

    settings = _settings(Settings.of(settings, evaluate, ties=ties, complete=complete, no_relevant=no_relevant,
                                     on_duplicate=on_duplicate, ignore_identical_ids=ignore_identical_ids))
    parsed, on_duplicate = _parsed(measures), settings.on_duplicate
    per_query = _scored(run_df, qrels_df, parsed, settings, on_duplicate, blocks).filter(~_is_count()).persist()
    summed = [g for g, m in parsed.items() if m.aggregate == "sum"]
    geometric = [g for g, m in parsed.items() if m.aggregate == "geometric-mean"]
    floored = F.log(F.greatest(F.col("value"), F.lit(MIN_GEO_MEAN)))  # Measure.aggregate_of's floor
    means = per_query.groupBy("measure").agg(
        F.when(F.col("measure").isin(summed), F.sum("value"))
        .when(F.col("measure").isin(geometric), F.exp(F.sum(floored) / F.count("value")))
        .otherwise(F.avg("value")).alias("value"))
    return per_query.unionByName(means.select(F.lit(MEAN_QID).alias("qid"), "measure", "value"))


COUNT = "\x00count:"  # measure prefix of the rows carrying a bucket's query counts (never a measure's name)


def _is_count():
    from pyspark.sql import functions as F

    return F.col("measure").startswith(COUNT)


def _parsed(measures) -> dict:
    parsed = {}
    for given in [measures] if isinstance(measures, (str, Measure)) else measures:
        parsed.setdefault(str(given), Measure.parse(given))
    return parsed


def _settings(settings: Settings) -> Settings:
    if settings.ties == "input":
        raise ConventionError("ties=input needs the file order, which Spark does not keep; use trec or rank")
    if settings.depth_cut is not None:
        raise ConventionError("depth_cut is not supported by the Spark engine")
    return settings


def _scored(run_df, qrels_df, parsed: dict, settings: Settings, on_duplicate: str, blocks: int | None):
    """Per-query values and each bucket's query counts (rows whose measure starts with
    :data:`COUNT`), persisted: the local block engine (:mod:`judged.blocks`) run on buckets
    of whole queries."""
    from pyspark.sql import functions as F

    run_cols = {"qid": "string", "docid": "string", "score": "double"}
    if settings.ties == "rank":
        run_cols["rank"] = "double"
    run = _columns(run_df, run_cols, "run")
    qrels = _columns(qrels_df, {"qid": "string", "docid": "string", "grade": "long"}, "qrels")
    if settings.no_relevant == "error":
        _refuse_no_relevant(run, qrels, settings.complete)
    n = int(blocks or run.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    bucket = F.pmod(F.xxhash64("qid"), F.lit(n))
    kernel = _block_kernel(parsed, settings, on_duplicate)
    return (run.withColumn("_block", bucket).groupBy("_block")
            .cogroup(qrels.withColumn("_block", bucket).groupBy("_block"))
            .applyInPandas(kernel, SCHEMA)
            .persist())  # the means and the counts read it too: score each query once


def _block_kernel(parsed: dict, settings: Settings, on_duplicate: str):
    """The function each executor runs on one bucket of whole queries: the local block
    engine, unchanged (:func:`judged.blocks.score_block`, :func:`judged.blocks.assemble`),
    its per-query values and its query counts as rows."""

    def kernel(run_pdf, qrels_pdf):
        import numpy as np
        import pandas as pd
        import pyarrow as pa

        from .core.blocks import assemble, block_settings, query_counts, score_block
        from .core.data import Run
        from .core.io import read_qrels, read_run

        qids, measures, values = [], [], []
        if len(qrels_pdf) == 0:  # the bucket's queries are only in the run
            counts = query_counts(np.zeros(0, bool), np.zeros(0, bool), run_pdf["qid"].nunique(), settings)
        else:
            qrels = read_qrels(qrels_pdf[["qid", "docid", "grade"]], on_duplicate=on_duplicate)
            run = read_run(run_pdf[["qid", "docid", "score"]], name="run", on_duplicate=on_duplicate) \
                if len(run_pdf) else Run(pa.array([], pa.string()), pa.array([], pa.string()), np.zeros(0), name="run")
            if settings.ties == "rank" and len(run_pdf):
                run.rank = run_pdf["rank"].to_numpy(dtype=np.float64)
            _, block = score_block(qrels, run, parsed, block_settings(settings))
            result = assemble(qrels, [block], parsed, settings, "run", realign=None)
            counts, n = result.counts, len(result.qids)
            qids = [np.tile(result.qids.astype(object), len(parsed))]
            measures = [np.repeat(np.array(list(parsed), dtype=object), n)]
            values = [result.values[g] for g in parsed]
        # one DataFrame built once (pandas' concat would hand Arrow a chunked column)
        return pd.DataFrame({
            "qid": np.concatenate(qids + [np.full(len(counts), "", dtype=object)]),
            "measure": np.concatenate(measures + [np.array([COUNT + k for k in counts], dtype=object)]),
            "value": np.concatenate(values + [np.array(list(counts.values()), dtype=np.float64)]),
        })

    return kernel


def _refuse_no_relevant(run, qrels, complete: bool) -> None:
    """``no_relevant='error'``: the local engine's refusal (:func:`judged.align.no_relevant_error`),
    before any scoring: the queries with nothing relevant, in qid order."""
    from pyspark.sql import functions as F

    from .core.align import no_relevant_error

    relevant = qrels.groupBy("qid").agg(F.max((F.col("grade") >= 1).cast("int")).alias("relevant"))
    if not complete:
        relevant = relevant.join(run.select("qid").distinct(), "qid")
    bad = [r.qid for r in relevant.filter("relevant = 0").select("qid").orderBy("qid").collect()]
    if bad:
        raise no_relevant_error(bad)


def counts_of(scored) -> dict:
    """The run's query counts: the buckets' counts (:func:`judged.blocks.query_counts`) summed."""
    from pyspark.sql import functions as F

    rows = scored.filter(_is_count()).groupBy("measure").agg(F.sum("value").alias("value")).collect()
    got = {r.measure[len(COUNT):]: int(r.value) for r in rows}
    return {k: got.get(k, 0) for k in ("evaluated", "skipped", "missing_from_run", "only_in_run", "no_relevant")}


# -- reading files into Spark -----------------------------------------------------------

def read_table(spark, path: str, kind: str):
    """A TREC run / qrels file (split on any white space; blank and ``#`` lines skipped; a
    run line's fields after the tag ignored, as trec_eval does) or Parquet, decided by
    content (a file, or a folder of part files as Spark writes it, whatever its name), as a
    DataFrame with the engine's columns. ``kind``: ``run`` or ``qrels``."""
    from pyspark.sql import functions as F

    from .core.io.sniff import parquet_files

    if parquet_files(path):
        return spark.read.parquet(path)
    # bytes.split()'s white space is Java's \s (space, \t, \n, \x0b, \f, \r); F.trim strips spaces only
    stripped = F.regexp_replace(F.col("value"), r"^\s+|\s+$", "")
    fields = F.split(stripped, r"\s+")
    lines = spark.read.text(path).filter(~stripped.rlike(r"^(#.*)?$"))
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
                   progress: bool | None = None, settings: Settings | None = None):
    """``judged eval --engine spark``: files in, a :class:`judged.evaluation.Result` out (the
    per-query values come back to the driver; the work is done by the executors).
    ``logs``: see :func:`session`; ``progress``: judged's bar over the runs (default: when
    stderr is a terminal); ``settings`` or its sugar, as :func:`evaluate`."""
    import numpy as np

    from .core.evaluation import Result
    from .core.progress import progress as progress_bar
    from .core.results import RunResult
    from .core.runnames import unique_name

    settings = _settings(Settings.of(settings, evaluate_files, ties=ties, complete=complete, no_relevant=no_relevant,
                                     on_duplicate=on_duplicate, ignore_identical_ids=ignore_identical_ids))
    parsed, on_duplicate = _parsed(measures), settings.on_duplicate
    spark = session(master, logs=logs)
    qrels = _columns(read_table(spark, qrels_path, "qrels"), {"qid": "string", "docid": "string", "grade": "long"},
                     qrels_path).cache()
    qids = np.array(sorted(r.qid for r in qrels.select("qid").distinct().collect()), dtype=object)
    summary = QrelsSummary(qrels_path, qids, qrels.count())
    runs, seen = {}, set()
    log = "" if spark_logs(logs) else f" (Spark's log: {LOG})"
    with progress_bar(len(run_paths), f"Spark ({master}): scoring runs", progress) as advance:
        for path in run_paths:
            name = unique_name(path, seen)  # the local engine's names: the same file twice is 'a.run (2)'
            try:
                scored = _scored(read_table(spark, path, "run"), qrels, parsed, settings, on_duplicate, None)
                scores = scored.filter(~_is_count()).toPandas()
                counts = counts_of(scored)
            except JudgedError:
                raise
            except Exception as exc:  # an error raised in an executor (or by Spark's parser) arrives wrapped
                raise JudgedError(f"{path}: {_executor_message(exc)}{log}")
            scored.unpersist()
            table = scores.pivot(index="qid", columns="measure", values="value")
            table = table.reindex(sorted(table.index)) if len(table) else table
            values = {g: table[g].to_numpy(dtype=np.float64) if g in table else np.zeros(0) for g in parsed}
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
