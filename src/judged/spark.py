"""The Spark engine: the local block engine run on buckets of whole queries in executors.

The qrels are read on the driver and broadcast once (:func:`broadcast_qrels`); each run is
shuffled into buckets of whole queries (or read from Parquet parts that already hold them,
:func:`read_run_table`), each bucket scored in an executor by
:func:`judged.core.blocks.score_block` (:func:`block_scorer`), and the per-query values put
together on the driver by :func:`judged.core.blocks.assemble`: the local engine's numbers,
bit for bit (docs/scaling.md).

    from judged.spark import evaluate
    scores = evaluate(run_df, qrels_df, ["nDCG@10", "AP"])   # qid, measure, value
    scores.filter("qid = 'all'").show()                      # the means (trec_eval's "all")

Needs the ``spark`` extra (``pip install 'judged[spark]'``) and Java 17. :func:`session`
runs a local master's Python workers on this interpreter and, on a cluster, checks once
that the workers can import judged. Spark's own logs go to :data:`LOG` unless
``JUDGED_SPARK_LOGS=1`` (``judged eval --spark-logs``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile

from .core.conventions import Settings
from .core.errors import ConventionError, JudgedError, MeasureError, ParseError
from .core.measures import Measure
from .core.io import read_qrels
from .core.blocks import Block, assemble, block_settings, score_block
from .core.io.sniff import parquet_files
from .core.evaluation import Result
from .core.progress import progress as progress_bar
from .core.runnames import unique_name
from .core.data import Qrels
from .core.io.frames import run_from_table
from .core.io.text import RawFile, iter_lines, tokenize
from .core.io.trec_files import QRELS_LAYOUT, RUN_LAYOUT

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
    as trec_eval prints them. The values and the means are the local engine's, bit for bit.

    Parameters
    ----------
    run_df : Spark DataFrame with columns qid, docid, score (and rank for ``ties='rank'``)
    qrels_df : Spark DataFrame with columns qid, docid, grade (integer); collected to the
        driver and broadcast to the executors (judgments are far fewer than ranked rows)
    measures : measure strings, as for :func:`judged.evaluate`
    ties, complete, no_relevant, on_duplicate, ignore_identical_ids : the conventions of
        :func:`judged.evaluate` (the sugar of ``settings``, a :class:`judged.core.conventions.Settings`);
        ``ties='input'`` is refused, since Spark keeps no file order.
    blocks : number of query buckets (default: the run's input partitions, at least the
        cluster's cores)
    """
    import pandas as pd

    settings = _settings(Settings.of(settings, evaluate, ties=ties, complete=complete, no_relevant=no_relevant,
                                     on_duplicate=on_duplicate, ignore_identical_ids=ignore_identical_ids))
    parsed = _parsed(measures)
    spark = run_df.sparkSession
    qrels = read_qrels(_columns(qrels_df, QRELS_COLUMNS, "qrels").toArrow(), on_duplicate=settings.on_duplicate)
    shared = broadcast_qrels(spark, qrels)
    try:
        result = score_run(run_df, qrels, shared, parsed, settings, "run", blocks=blocks)
    finally:
        shared.destroy()
    n = len(result.qids)
    rows = pd.DataFrame({"qid": list(result.qids) * len(parsed) + [MEAN_QID] * len(parsed),
                         "measure": [g for g in parsed for _ in range(n)] + list(parsed),
                         "value": [float(v) for g in parsed for v in result.values[g]]
                         + [float(m.aggregate_of(result.values[g])) for g, m in parsed.items()]})
    return spark.createDataFrame(rows, SCHEMA)


QRELS_COLUMNS = {"qid": "string", "docid": "string", "grade": "long"}


def _parsed(measures) -> dict:
    parsed = {}
    for given in [measures] if isinstance(measures, (str, Measure)) else measures:
        parsed.setdefault(str(given), Measure.parse(given))
    subtopic = [str(m) for m in parsed.values() if m.family.subtopics]
    if subtopic:  # the qrels table has no subtopic column here (judged.core.io.subtopics)
        raise MeasureError(f"{subtopic[0]} reads subtopic qrels, which the Spark engine does not carry yet: "
                           "evaluate it with judged eval or judged.evaluate")
    return parsed


def _settings(settings: Settings) -> Settings:
    if settings.ties == "input":
        raise ConventionError("ties=input needs the file order, which Spark does not keep; use trec or rank")
    if settings.depth_cut is not None:
        raise ConventionError("depth_cut is not supported by the Spark engine")
    return settings


def broadcast_qrels(spark, qrels):
    """The judgments (qid, docid, grade), read and checked once on the driver, as one Arrow
    IPC buffer broadcast to every executor: read once per executor and shared by every run
    and bucket, instead of a shuffle of the qrels for each run."""
    import pyarrow as pa

    table = pa.table({"qid": qrels.qid, "docid": qrels.docid, "grade": qrels.grade})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return spark.sparkContext.broadcast(sink.getvalue().to_pybytes())


def score_run(run_df, qrels, shared, parsed: dict, settings: Settings, name: str,
              source: str | None = None, blocks: int | None = None, grouped: bool = False):
    """One run's :class:`judged.core.results.RunResult`, the local engine's numbers: the run
    shuffled once into buckets of whole queries (``repartition(blocks, qid)``), each bucket
    scored in an executor on Arrow batches (``mapInArrow``, :func:`block_scorer`) by the
    local block engine, the buckets' per-query values brought back and put together on the
    driver by :func:`judged.core.blocks.assemble` with the whole qrels (the queries the run
    lacks, the refusal of queries with nothing relevant, the query counts).

    ``grouped``: the run's input partitions are thought to hold whole queries (each query
    in one Parquet part, :func:`read_run_table`): they are scored as they are read, with
    no shuffle. Every bucket names every query it saw, so a query met in two partitions is
    seen on the driver; the run is then scored again, shuffled."""
    import numpy as np
    import pyarrow.compute as pc

    run_cols = {"qid": "string", "docid": "string", "score": "double"}
    if settings.ties == "rank":
        run_cols["rank"] = "double"
    run = _columns(run_df, run_cols, "run")
    scorer, schema = block_scorer(shared, parsed, settings, source or name), block_schema(parsed)
    out = run.mapInArrow(scorer, schema).toArrow() if grouped else None
    if out is None or pc.count_distinct(out["qid"]).as_py() != out.num_rows:
        n = int(blocks or max(run.rdd.getNumPartitions(), run.sparkSession.sparkContext.defaultParallelism))
        out = run.repartition(n, "qid").mapInArrow(scorer, schema).toArrow()
    known = out["known"].to_numpy(zero_copy_only=False)
    rows = out.filter(known)
    codes = pc.index_in(rows["qid"], value_set=qrels.index.query_vocab).to_numpy(zero_copy_only=False)
    evaluated = rows["evaluated"].to_numpy(zero_copy_only=False)
    qids = np.array(rows["qid"].to_pylist(), dtype=object)[evaluated]
    values = {g: rows[f"v{i}"].to_numpy(zero_copy_only=False)[evaluated] for i, g in enumerate(parsed)}
    block = Block(qids, values, {"only_in_run": int((~known).sum())}, codes.astype(np.int64),
                  codes[evaluated].astype(np.int64), int(pc.max(out["depth"]).as_py() or 0))
    return assemble(qrels, [block], parsed, settings, name, realign=None, source=source)


def block_schema(parsed: dict) -> str:
    """What :func:`block_scorer` yields: one row per query of the run; ``known``: the qrels
    have it; ``evaluated``: its values ``v0, v1, ...`` (in the order of ``parsed``) count
    (not skipped for having nothing relevant); ``depth``: the bucket's deepest ranking."""
    return ", ".join(["qid string", "known boolean", "evaluated boolean", "depth long"]
                     + [f"v{i} double" for i in range(len(parsed))])


def block_scorer(shared, parsed: dict, settings: Settings, source: str = "run"):
    """The function each executor runs on one bucket of whole queries (an iterator of Arrow
    record batches): the bucket read as a run, the broadcast judgments of its queries as
    qrels, and :func:`judged.core.blocks.score_block` on them, the local engine unchanged."""

    def scorer(batches):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        batches = list(batches)
        if not batches or sum(b.num_rows for b in batches) == 0:  # an empty bucket
            return
        table = pa.Table.from_batches(batches)
        try:
            run = run_from_table(table, "run", source=source, on_duplicate=settings.on_duplicate)
        except ParseError as exc:  # a row of a bucket is no line of the file: the file and the why
            raise ParseError(source, None, exc.why) from None
        judgments = judgments_table(shared)
        run_qids = pc.unique(run.qid)
        mine = judgments.filter(pc.is_in(judgments["qid"], value_set=run_qids))
        qrels = Qrels(mine["qid"], mine["docid"], mine["grade"].to_numpy(), source="qrels", sha256="")
        _, block = score_block(qrels, run, parsed, block_settings(settings))
        found = qrels.index.query_ids[block.run_queries]
        absent = pc.filter(run_qids, pc.invert(pc.is_in(run_qids, value_set=pa.array(found, pa.string()))))
        evaluated = np.zeros(len(found), bool)
        evaluated[np.searchsorted(block.run_queries, block.qid_codes)] = True
        n = len(found) + len(absent)
        columns = {"qid": pa.concat_arrays([pa.array(found, pa.string()), absent.cast(pa.string())]),
                   "known": np.arange(n) < len(found), "evaluated": np.append(evaluated, np.zeros(len(absent), bool)),
                   "depth": np.full(n, block.max_depth, np.int64)}
        for i, g in enumerate(parsed):
            v = np.full(n, np.nan)
            v[:len(found)][evaluated] = block.values[g]
            columns[f"v{i}"] = v
        yield pa.RecordBatch.from_pydict(columns)

    return scorer


def judgments_table(shared):
    """The broadcast judgments as an Arrow table (zero-copy over the broadcast bytes, which
    PySpark loads once per Python worker)."""
    import pyarrow as pa

    return pa.ipc.open_stream(pa.py_buffer(shared.value)).read_all()


# -- reading files into Spark -----------------------------------------------------------

def read_table(spark, path: str, kind: str):
    """A TREC run / qrels file or Parquet, decided by content (a file, or a folder of part
    files as Spark writes it, whatever its name), as a DataFrame with the engine's columns.
    ``kind``: ``run`` or ``qrels``. Text is read by Spark as lines and tokenized in the
    executors by the local readers' tokenizer (:func:`text_rows`), so it is split, skipped
    and its numbers parsed exactly as ``judged eval`` reads the file."""
    from pyspark.sql import functions as F

    if parquet_files(path):
        return spark.read.parquet(path)
    lines = spark.read.text(path, lineSep="\n")  # a line ends at \n only, as the tokenizer reads a file
    if kind == "run":
        rows = lines.mapInArrow(text_rows(path, kind), "qid string, docid string, rank string, score double")
        return rows.select("qid", "docid", F.col("rank").cast("double").alias("rank"), "score")
    return lines.mapInArrow(text_rows(path, kind), "qid string, docid string, grade long")


def text_rows(source: str, kind: str):
    """The function each executor runs on its lines of a TREC file (Arrow batches of one
    string column): the batch's lines put back together and tokenized by
    :func:`judged.core.io.text.tokenize` (run or qrels layout: ``bytes.split()`` per line,
    blank and ``#`` lines skipped, trailing run fields ignored, the C grammar for numbers),
    a line it refuses read by the line-by-line reader. A bad line is the local reader's
    ParseError without its line number (a batch's lines do not know theirs). Spark's reader
    drops the file's byte-order mark, as the local reader does."""

    def rows(batches):
        import pyarrow as pa
        import pyarrow.compute as pc

        layout = RUN_LAYOUT if kind == "run" else QRELS_LAYOUT
        names = ["qid", "docid", "rank", "score"] if kind == "run" else ["qid", "docid", "grade"]
        for batch in batches:
            if batch.num_rows == 0:
                continue
            lines = batch.column(0)
            joined = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines), "\n")
            data = joined[0].as_buffer().to_pybytes()
            if b"\x00" in data:
                raise ParseError(source, None, "binary data (NUL byte), not a text file")
            tokens = tokenize(data, layout)
            if not isinstance(tokens, int):
                columns = [*tokens.strings, pa.array(tokens.number)]
            else:  # a line the tokenizer refused: the line-by-line reader's error for it, or its rows
                raw = RawFile(source, data, "")
                try:
                    parsed = [layout.check(raw, n, f) for n, f in iter_lines(raw)]
                except ParseError as exc:
                    raise ParseError(source, None, exc.why) from None
                columns = [pa.array(list(c)) for c in zip(*parsed)]
            if columns:
                yield pa.RecordBatch.from_arrays(columns, names)

    return rows


ROWS_PER_BUCKET = 2_000_000  # a bucket's run rows: about 300 MB in its Python worker
SPARK_TYPES = {"string": "string", "large_string": "string", "int8": "tinyint", "int16": "smallint", "int32": "int",
               "int64": "bigint", "float": "float", "double": "double", "bool": "boolean"}


def read_run_table(spark, path: str):
    """A run file as :func:`read_table` reads it, with what the driver can tell cheaply from
    the files themselves: (DataFrame, buckets, grouped). For Parquet, the footers give the
    schema (so Spark runs no inference job) and the row count (buckets of about
    :data:`ROWS_PER_BUCKET` rows, at least one per core), and the qid column of each part
    says whether every query lies in one part (``grouped``: then no shuffle is needed, see
    :func:`score_run`). For text, buckets of about 64 MB of the file."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    cores = spark.sparkContext.defaultParallelism
    files = parquet_files(path)
    if not files:
        return read_table(spark, path, "run"), max(cores, -(-os.path.getsize(path) // (64 << 20))), False
    schema = pq.read_schema(files[0])
    types = [SPARK_TYPES.get(str(f.type)) for f in schema]
    reader = spark.read.schema(", ".join(f"`{f.name}` {t}" for f, t in zip(schema, types))) if all(types) else spark.read
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    grouped = len(files) == 1
    if not grouped and "qid" in schema.names:
        per_file = [pc.unique(pq.read_table(f, columns=["qid"])["qid"]) for f in files]
        grouped = sum(len(u) for u in per_file) == len(pc.unique(pa.chunked_array(per_file)))
    return reader.parquet(path), max(cores, -(-rows // ROWS_PER_BUCKET)), grouped


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


LOOPBACK = "127.0.0.1"


@contextlib.contextmanager
def local_cluster(workers: int = 2, cores: int = 1, memory: str = "2g", executor_memory: str = "1g"):
    """A Spark standalone cluster on this machine, for trying ``--spark-master`` and for
    measuring: a master and ``workers`` workers (``cores`` and ``memory`` each) started from
    the pyspark install (``bin/spark-class org.apache.spark.deploy.master.Master`` and
    ``...deploy.worker.Worker``; pip's pyspark has no ``sbin/start-master.sh``), every
    daemon, the driver and the executors bound to 127.0.0.1 only. Yields the master URL
    (``spark://127.0.0.1:PORT``); while it is open, this process's environment points Spark
    at it (``SPARK_LOCAL_IP``, a ``spark-defaults.conf`` in ``SPARK_CONF_DIR``, and this
    interpreter as the workers' Python), so a session or a ``judged`` child process started
    inside uses it. Stops the daemons on exit, errors and Ctrl-C included."""
    import json
    import shutil
    import socket
    import subprocess
    import time
    import urllib.request

    try:
        import pyspark
    except ImportError:
        raise JudgedError("the Spark engine needs pyspark: pip install 'judged[spark]'")

    def free_port() -> int:
        with socket.socket() as sock:
            sock.bind((LOOPBACK, 0))
            return sock.getsockname()[1]

    def state(ui: int):
        try:
            with urllib.request.urlopen(f"http://{LOOPBACK}:{ui}/json/", timeout=2) as answer:
                return json.load(answer)
        except OSError:
            return None

    spark_class = os.path.join(os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__), "bin", "spark-class")
    tmp = tempfile.mkdtemp(prefix="judged-spark-cluster-")
    with open(os.path.join(tmp, "spark-defaults.conf"), "w") as f:
        f.write(f"spark.driver.host {LOOPBACK}\nspark.driver.bindAddress {LOOPBACK}\n"
                f"spark.executor.memory {executor_memory}\n")
    env = {"SPARK_LOCAL_IP": LOOPBACK, "SPARK_MASTER_HOST": LOOPBACK, "SPARK_CONF_DIR": tmp,
           "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    port, ui = free_port(), free_port()
    url = f"spark://{LOOPBACK}:{port}"
    log = open(os.path.join(tmp, "daemons.log"), "ab")
    daemons = []

    def start(*args):
        daemons.append(subprocess.Popen([spark_class, *args], stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                        env={**os.environ, **env, "SPARK_WORKER_DIR": os.path.join(tmp, "work")}))

    def wait(ready, what: str, timeout: float = 180):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if ready():
                return
            if any(d.poll() is not None for d in daemons):
                break
            time.sleep(0.3)
        raise JudgedError(f"the local Spark cluster did not start ({what}); its log: {log.name}")

    saved = {k: os.environ.get(k) for k in env}
    try:
        start("org.apache.spark.deploy.master.Master", "--host", LOOPBACK, "--port", str(port), "--webui-port", str(ui))
        wait(lambda: state(ui), "the master")
        for _ in range(workers):
            start("org.apache.spark.deploy.worker.Worker", url, "--host", LOOPBACK, "--cores", str(cores),
                  "--memory", memory, "--webui-port", str(free_port()))
        wait(lambda: (state(ui) or {}).get("aliveworkers", 0) >= workers, f"{workers} workers")
        os.environ.update(env)
        yield url
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for d in reversed(daemons):
            d.terminate()
        for d in daemons:
            try:
                d.wait(timeout=30)
            except subprocess.TimeoutExpired:
                d.kill()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def evaluate_files(qrels_path: str, run_paths: list[str], measures, *, master: str = "local[2]",
                   ties: str = "trec", complete: bool = False, no_relevant: str = "zero",
                   on_duplicate: str = "error", ignore_identical_ids: bool = False, logs: bool | None = None,
                   progress: bool | None = None, blocks: int | None = None, settings: Settings | None = None):
    """``judged eval --engine spark``: files in, a :class:`judged.core.evaluation.Result` out, the
    local engine's numbers. The qrels are read on the driver by the local reader (the same
    checks and messages) and broadcast once for every run; each run is read by Spark and
    scored by the executors (:func:`score_run`); only per-query values come back.
    ``logs``: see :func:`session`; ``progress``: judged's bar over the runs (default: when
    stderr is a terminal); ``blocks``: see :func:`evaluate`; ``settings`` or its sugar, as
    :func:`evaluate`."""
    settings = _settings(Settings.of(settings, evaluate_files, ties=ties, complete=complete, no_relevant=no_relevant,
                                     on_duplicate=on_duplicate, ignore_identical_ids=ignore_identical_ids))
    parsed = _parsed(measures)
    qrels = read_qrels(qrels_path, on_duplicate=settings.on_duplicate)
    spark = session(master, logs=logs)
    shared = broadcast_qrels(spark, qrels)
    runs, seen = {}, set()
    log = "" if spark_logs(logs) else f" (Spark's log: {LOG})"
    with progress_bar(len(run_paths), f"Spark ({master}): scoring runs", progress) as advance:
        for path in run_paths:
            name = unique_name(path, seen)  # the local engine's names: the same file twice is 'a.run (2)'
            try:
                run, buckets, grouped = read_run_table(spark, path)
                runs[name] = score_run(run, qrels, shared, parsed, settings, name, source=path,
                                       blocks=blocks or buckets, grouped=grouped and not blocks)
            except JudgedError:
                raise
            except Exception as exc:  # an error raised in an executor (or by Spark's parser) arrives wrapped
                message = _executor_message(exc)
                raise JudgedError((message if message.startswith(f"{path}: ") else f"{path}: {message}") + log)
            advance()
    shared.destroy()
    return Result(qrels, parsed, settings, runs)


def _executor_message(exc: Exception) -> str:
    """One line from a Spark error: judged's own message if an executor raised one, else
    the first line of Spark's (e.g. ``[CAST_INVALID_INPUT] The value 'x' ...``)."""
    text = str(exc)
    for marker in ("ParseError: ", "ConventionError: ", "MeasureError: "):
        if marker in text:
            return text.split(marker, 1)[1].splitlines()[0]
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and "from the Python worker" in lines[0]:
        return lines[-1]  # the Python exception's own line, at the end of the worker's traceback
    return lines[0].split(". ")[0] if lines else type(exc).__name__
