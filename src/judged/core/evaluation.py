"""``evaluate``: qrels + runs + measures + conventions -> :class:`Result`."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, replace

from . import DISPLAY
from .checks.abstention import ABSTAIN_MARKER
from .blocks import score_block
from .checks import Checks
from .conventions import Settings
from .data import Qrels
from .errors import UsageError
from .io import file_kind, read_qrels, read_run
from .measures import Measure, named_measures
from .progress import progress as progress_bar
from .querysets import refuse_disjoint, run_query_sample
from .results import LazyRunResult, RunResult, max_depth  # noqa: F401  (judged.evaluation.RunResult, as before)
from .runnames import unique_name
from .words import counted
from .align import align

DEFAULT_MEASURES = ("nDCG@10", "Judged@10")


@dataclass
class Result:
    """Scores of one or more runs against one qrels, with their declared conventions.

    ``mean()`` and ``per_query()`` give pandas DataFrames; ``to_dict()`` is the JSON
    contract of ``judged eval --format json``.
    """

    qrels: Qrels
    measures: dict  # measure as given -> Measure
    settings: Settings
    runs: dict  # run name -> RunResult
    checks: "Checks | None" = None  # side data and checks beyond the score (judged.checks)

    @property
    def conventions(self) -> dict:
        """Measure as given -> its canonical convention string."""
        return {given: m.convention(self.settings) for given, m in self.measures.items()}

    def aggregate(self, run: str, measure: str) -> float:
        return self.measures[measure].aggregate_of(self.runs[run].values[measure])

    def mean(self, backend: str = "pandas"):
        """One row per run, one column per measure (NumRel/NumRet/NumRelRet are sums, as trec_eval).

        ``backend``: ``"pandas"`` (default; the runs are the index, named ``run``),
        ``"polars"`` or ``"arrow"`` (a pyarrow Table): the runs are then the first column,
        ``run``. The same float64 values in every backend."""
        data = {given: [self.aggregate(r, given) for r in self.runs] for given in self.measures}
        if check_backend(backend) != "pandas":
            return frame_of({"run": list(self.runs), **data}, backend)
        import pandas as pd

        df = pd.DataFrame(data, index=pd.Index(list(self.runs), name="run"))
        return df

    def per_query(self, backend: str = "pandas"):
        """Tidy table: run, qid, measure, value (``backend`` as :meth:`mean`: pandas, polars, arrow)."""
        if check_backend(backend) != "pandas":
            import numpy as np

            parts = [(name, rr.qids.astype(str), given, rr.values[given])
                     for name, rr in self.runs.items() for given in self.measures]
            return frame_of({"run": [name for name, q, _, _ in parts for _ in range(len(q))],
                             "qid": [x for _, q, _, _ in parts for x in q.tolist()],
                             "measure": [given for _, q, given, _ in parts for _ in range(len(q))],
                             "value": np.concatenate([np.asarray(v, np.float64) for *_, v in parts])
                             if parts else np.zeros(0)}, backend)
        import pandas as pd

        frames = []
        for name, rr in self.runs.items():
            for given in self.measures:
                frames.append(pd.DataFrame({"run": name, "qid": rr.qids.astype(str), "measure": given,
                                            "value": rr.values[given]}))
        if not frames:
            return pd.DataFrame(columns=["run", "qid", "measure", "value"])
        return pd.concat(frames, ignore_index=True)

    @property
    def query_set(self):
        """Which queries the means are over (:mod:`judged.querysets`)."""
        from .querysets import of_result

        return of_result(self)

    def to_dict(self, per_query: bool = False) -> dict:
        out = {
            "qrels": {"path": self.qrels.source, "sha256": self.qrels.sha256,
                      "queries": int(len(self.qrels.query_ids)), "judgments": int(len(self.qrels))},
            "measures": self.conventions,
            "query_set": self.query_set.to_dict(),
            "runs": {},
        }
        for name, rr in self.runs.items():
            entry = {"mean": {g: self.aggregate(name, g) for g in self.measures}, "queries": dict(rr.counts)}
            if per_query:
                qids = rr.qids.tolist()
                entry["per_query"] = {q: {g: float(rr.values[g][i]) for g in self.measures} for i, q in enumerate(qids)}
            if self.checks is not None:
                entry.update(self.checks.run_dict(self, name))
            out["runs"][name] = entry
        if self.checks is not None:
            out.update(self.checks.to_dict(self))
        return out

    def to_json(self, per_query: bool = False, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(per_query), indent=indent)

    def _repr_html_(self) -> str:
        """Jupyter: the mean table with its conventions (see :mod:`judged.notebook`)."""
        return DISPLAY["result_html"](self)

    def plot(self, measure: str | None = None, ax=None):
        """The per-query picture with matplotlib (extra ``plot``); see :func:`judged.notebook.plot_result`."""
        return DISPLAY["plot_result"](self, measure, ax)

    def __repr__(self) -> str:
        return f"Result({counted(len(self.runs), 'run')}, measures={list(self.measures)})"


BACKENDS = ("pandas", "polars", "arrow")  # what Result.mean and Result.per_query return


def check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise UsageError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    return backend


def frame_of(columns: dict, backend: str):
    """A polars DataFrame or a pyarrow Table of ``columns`` (name -> values): strings as
    strings, the numbers as float64."""
    import pyarrow as pa

    table = pa.table({name: pa.array(values, type=pa.string() if name in ("run", "qid", "measure")
                                     else pa.float64()) for name, values in columns.items()})
    if backend == "arrow":
        return table
    try:
        import polars as pl
    except ImportError as exc:
        raise UsageError("backend='polars' needs polars: pip install 'judged[polars]'") from exc
    return pl.from_arrow(table)


def evaluate(qrels, runs, measures=DEFAULT_MEASURES, *, ties: str = "trec", complete: bool = False,
             no_relevant: str = "zero", on_duplicate: str = "error", scale=None, requirements=None,
             eligibility=None, principal: str | None = None, unanswerable=None,
             abstain_marker: str = ABSTAIN_MARKER, score_unanswerable: bool = False,
             ignore_identical_ids: bool = False, depth_cut: int | None = None, progress: bool = False,
             whole_runs: bool = False, settings: Settings | None = None, keep_ranks: int | None = None,
             digests: bool = True) -> Result:
    """Score runs against qrels.

    Parameters
    ----------
    qrels : path, DataFrame, dict or Qrels
    runs : a run (path, DataFrame, dict of dicts, Run), a list of them, or a dict name -> run
    measures : measure strings such as ``"nDCG@10"``, ``"AP(rel=2)"``, ``"nDCG(gain=exp)@10"``
    ties, complete, no_relevant, ignore_identical_ids, depth_cut, on_duplicate : engine-wide
        conventions (which queries a mean is over: :mod:`judged.querysets`; ``on_duplicate``:
        ``error`` | ``first`` | ``max`` for repeated pairs in the inputs), the sugar of
    settings : all of them as one :class:`judged.conventions.Settings`
    scale : grade scale TOML (every qrels grade must be on it; printed in the output)
    requirements : ``qid group docid`` evidence groups, for Complete@k / Coverage@k
    eligibility, principal : ``qid docid eligible [principal]``; ineligible documents are
        graded 0 everywhere and counted by Leak@k
    unanswerable, abstain_marker, score_unanswerable : declared unanswerable queries (also
        the qrels marker ``__UNANSWERABLE__``) get an abstention evaluation and are kept out
        of the ranking measures unless ``score_unanswerable``
    (see :mod:`judged.checks`; the results are in ``Result.checks`` and ``to_dict()``)
    progress : show a progress bar (stderr) while streaming large run files
    whole_runs : read every run whole and keep its alignment (``RunResult.aligned``) rather
        than stream it: for callers that go on to read the alignment (compare's holes and
        regressions), which a streamed run would read and align a second time. Otherwise a
        run read into memory keeps only its values, and ``RunResult.aligned`` is made again
        on first use
    keep_ranks : with ``whole_runs``, keep only each query's first ``keep_ranks`` ranks of
        every alignment (the values are computed on every rank first): for callers that read
        no deeper (a comparison whose measures all have that cutoff or less)
    digests : False: a plain TREC run file read whole is not hashed (``Run.sha256`` None),
        for callers that show no run's hash

    Runs that share few or no query ids with the qrels, miss qrels queries, cover
    different queries or rank different depths are named in ``Result.checks.warnings``
    (the commands refuse a run sharing no query id: :func:`judged.querysets.refuse_disjoint_runs`).

    TREC run files grouped by query are streamed by query blocks (bounded memory, see
    :mod:`judged.stream`); larger ones not grouped by query (over ``JUDGED_SPILL_BYTES``,
    default 1 GiB) are partitioned by query in ``TMPDIR`` (see :mod:`judged.spill`). Their
    ``RunResult.aligned`` is then computed on first use.

    Example
    -------
    b (grade 2) ranked above a (grade 3): DCG = 2/log2(2) + 3/log2(3) = 3.893, the ideal
    3/log2(2) + 2/log2(3) = 4.262, nDCG = 0.913.

    >>> r = evaluate({"q1": {"a": 3, "b": 2}}, {"q1": {"a": 1.0, "b": 2.0}}, ["nDCG@10", "RR"])
    >>> round(float(r.mean().loc["run", "nDCG@10"]), 3)
    0.913
    >>> r.per_query()[["qid", "measure", "value"]].values.tolist()
    [['q1', 'nDCG@10', 0.9134...], ['q1', 'RR', 1.0]]
    """
    settings = Settings.of(settings, evaluate, ties=ties, complete=complete, no_relevant=no_relevant,
                           ignore_identical_ids=ignore_identical_ids, depth_cut=depth_cut, on_duplicate=on_duplicate)
    reader = first_run_reader(runs) if isinstance(qrels, (str, os.PathLike)) and not whole_runs else None
    try:
        return _evaluate(qrels, runs, measures, settings, reader, scale=scale,
                         requirements=requirements, eligibility=eligibility, principal=principal,
                         unanswerable=unanswerable, abstain_marker=abstain_marker,
                         score_unanswerable=score_unanswerable, progress=progress, whole_runs=whole_runs,
                         keep_ranks=keep_ranks, digests=digests)
    finally:
        if reader is not None:
            reader.close()


def first_run_reader(runs):
    """The first run file, tokenized in a second thread while the qrels are read
    (:class:`judged.stream.PieceReader`), or None."""
    first = runs[0] if isinstance(runs, (list, tuple)) and runs else runs
    if isinstance(runs, dict):
        first = next(iter(runs.values()), None)
    if not isinstance(first, (str, os.PathLike)) or isinstance(first, str) and first.startswith("irds:"):
        return None
    from .stream import PieceReader

    return PieceReader.start(first) if file_kind(os.fspath(first)) == "text" else None


def _evaluate(qrels, runs, measures, settings, reader, *, scale, requirements, eligibility, principal,
              unanswerable, abstain_marker, score_unanswerable, progress, whole_runs=False,
              keep_ranks=None, digests=True) -> Result:
    on_duplicate = settings.on_duplicate
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    parsed = named_measures(measures)  # trec_eval's P.5,10: P_5 and P_10
    # a diversity measure reads the qrels' second column as the subtopic (judged.io.subtopics)
    qrels = read_qrels(qrels, on_duplicate=on_duplicate, subtopics=any(m.family.subtopics for m in parsed.values()))
    checks, qrels = Checks.load(qrels, scale=scale, requirements=requirements, eligibility=eligibility,
                                principal=principal, unanswerable=unanswerable, abstain_marker=abstain_marker,
                                score_unanswerable=score_unanswerable)
    stream = None if checks.needs_whole_run or whole_runs else (lambda name, path: _stream(
        qrels, path, parsed, settings, name, progress,
        reader if reader is not None and not reader.used and reader.source == os.fspath(path) else None))

    def score(name: str, run) -> RunResult:
        # the whole run is one block, aligned with the run's settings (complete, no_relevant)
        run = checks.prepare_run(name, run, settings)
        aligned, block = score_block(qrels, run, parsed, settings, annotate=checks.attach)
        if whole_runs:
            if keep_ranks is not None:
                aligned = replace(aligned, ranked=aligned.ranked.top(keep_ranks))
            return RunResult(name, block.qids, block.values, block.counts, aligned, block.max_depth)
        # the alignment (four numbers per ranked row) is not kept for callers that read only the
        # values: it is made again on first use, as for a streamed run
        return LazyRunResult(name, block.qids, block.values, block.counts,
                             lambda: realign(qrels, run, settings, checks.attach), block.max_depth)

    results = {}
    count = len(runs) if isinstance(runs, (list, tuple, dict)) else None
    # one run is scored in this thread (concurrent.futures, 0.01 s to import, only for more)
    workers = 1 if checks.needs_whole_run or (count or 1) < 2 else scoring_threads()
    with _pool(workers) if workers > 1 else contextlib.nullcontext() as pool, \
            progress_bar(count, "reading and scoring runs", enabled=progress) as advance:
        try:
            # runs kept whole (their alignments too): read two at a time, ahead of the scoring
            for name, run in named_runs(runs, on_duplicate, streamed=stream or (lambda name, path: None),
                                        ahead=whole_runs and keep_ranks is None, digest=digests):
                if isinstance(run, RunResult):
                    results[name] = run
                elif pool is not None:
                    qrels.index  # built once (on the first run read whole), before the threads share it
                    results[name] = pool.submit(score, name, run)
                    results[name].add_done_callback(lambda _: advance())
                    continue
                else:
                    results[name] = score(name, run)
                advance()
        except BaseException:
            _in_order(results, pool)  # a run scored before the failure raises first, as in one thread
            raise
        _in_order(results, pool)
    return Result(qrels, parsed, settings, results, checks)


def realign(qrels: Qrels, run, settings: Settings, annotate=None):
    """The alignment :func:`evaluate` scored a run read into memory with, made again."""
    aligned = align(qrels, run, settings)
    if annotate is not None:
        annotate(aligned)
    return aligned


def scoring_threads() -> int:
    """How many runs read into memory are scored at once: ``JUDGED_THREADS``, else the
    cores this process may use (at most 4). The kernels release the GIL, so runs scored in
    threads overlap; each run's numbers are computed exactly as in one thread."""
    given = os.environ.get("JUDGED_THREADS", "")
    if given.strip():
        try:
            return max(1, int(given))
        except ValueError:
            raise UsageError(f"JUDGED_THREADS={given!r} is not a number of threads")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, cores))


def _pool(workers: int, **options):
    """A thread pool (concurrent.futures is imported only when one is wanted: 0.01 s)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(workers, **options)


def _in_order(results: dict, pool) -> None:
    """Wait for the runs scored in threads, in run order; the first failure is raised and
    the runs not started are cancelled."""
    if pool is None:
        return
    from concurrent.futures import Future
    for name, value in results.items():
        if isinstance(value, Future):
            try:
                results[name] = value.result()
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise


def _stream(qrels, path, measures, settings, name, progress, reader=None):
    """The run file scored by query blocks, or None when it must be read whole."""
    if file_kind(os.fspath(path)) != "text" or not os.path.isfile(path):
        return None
    from . import stream

    large = os.path.getsize(path) > 64 << 20
    if reader is not None:
        reader.used = True
    options = dict(name=name, progress=progress and large)
    result = stream.evaluate_run_file(qrels, path, measures, settings, reader=reader, **options)
    if result is None:  # not grouped by query: partitioned on disk when large (judged.spill)
        from . import spill

        result = spill.evaluate_run_file(qrels, path, measures, settings, **options)
    return result


def aligned_runs(qrels: Qrels, runs, settings: Settings, each=None, docids_only: bool = False,
                 keep_ranks: int | None = None, digest: bool = True) -> dict:
    """name -> each run read and aligned with ``qrels`` under ``settings``, with a progress
    bar; a run sharing no query id with the qrels is refused as soon as it is read
    (:func:`judged.querysets.refuse_disjoint`): what every analysis of several runs reads
    (every alignment kept: run files are read ahead, :func:`named_runs`). ``each(name,
    aligned)`` is called as each run is aligned (e.g. to start work on it meanwhile).
    ``docids_only``: each alignment keeps its run without the qid, score and rank columns
    (:meth:`~judged.core.data.Run.docids_only`), for callers that read only the docids of
    aligned rows; their memory is freed before the last run is aligned, where two runs
    read at once would otherwise peak. ``keep_ranks``: each alignment keeps only each
    query's first ``keep_ranks`` ranks (for callers that read no deeper). ``digest``: as
    :func:`named_runs`'."""
    from .native import release_pool

    aligned = {}
    count = len(runs) if isinstance(runs, (list, tuple, dict)) else None
    with progress_bar(count, "reading and aligning runs") as advance:
        for i, (name, run) in enumerate(named_runs(runs, settings.on_duplicate, ahead=True, digest=digest)):
            if docids_only and i + 1 == count:
                release_pool()  # every file read: the columns dropped so far are not reused
            aligned[name] = align(qrels, run, settings)
            if keep_ranks is not None:
                aligned[name] = replace(aligned[name], ranked=aligned[name].ranked.top(keep_ranks))
            refuse_disjoint(name, aligned[name].counts, qrels, lambda run=run: run_query_sample(run))
            if each is not None:
                each(name, aligned[name])
            if docids_only:
                aligned[name].run = aligned[name].run.docids_only()
            advance()
    if docids_only:
        release_pool()
    return aligned


def keep_docids_only(alignments) -> None:
    """Each alignment's run without its qid, score and rank columns
    (:meth:`~judged.core.data.Run.docids_only`; a run already slimmed is left), then the
    compiled reader's pool of freed columns emptied (it would keep their memory): for a
    caller done reading run files that reads only the docids of aligned rows."""
    from .native import release_pool

    for a in alignments:
        if a.run.score is not None:
            a.run = a.run.docids_only()
    release_pool()


def named_runs(runs, on_duplicate, streamed=lambda name, path: None, ahead: bool = False, digest: bool = True):
    """(name, Run) pairs; (name, RunResult) for run files ``streamed`` could score on the way.
    ``ahead``: run files are read two at a time in threads (the tokenizer releases the GIL),
    the next one while the caller works on the one before: for callers that keep every run
    anyway (memory holds one run more meanwhile); the pairs come in the same order.
    ``digest``: as :func:`judged.io.read_run`'s."""
    if isinstance(runs, dict) and runs and all(isinstance(v, dict) for v in runs.values()) and _looks_like_run_dict(runs):
        runs = [runs]
    if isinstance(runs, dict):
        def read(name, r):
            done = streamed(name, r) if isinstance(r, (str, os.PathLike)) else None
            return done or read_run(r, name=name, on_duplicate=on_duplicate, digest=digest)
        yield from _read_ahead([str(name) for name in runs], list(runs.values()), read, ahead)
        return
    if not isinstance(runs, (list, tuple)):
        runs = [runs]
    seen = set()
    if all(isinstance(r, (str, os.PathLike)) for r in runs):
        names = [unique_name(os.fspath(r), seen) for r in runs]  # the same file twice: a.run, then a.run (2)
        yield from _read_ahead(names, runs, lambda name, r: streamed(name, r) or read_run(
            r, on_duplicate=on_duplicate, digest=digest), ahead)
        return
    for r in runs:
        if isinstance(r, (str, os.PathLike)):
            name = unique_name(os.fspath(r), seen)
            yield name, streamed(name, r) or read_run(r, on_duplicate=on_duplicate, digest=digest)
            continue
        run = read_run(r, on_duplicate=on_duplicate)
        name = unique_name(run.name, seen)
        yield name, run


def _read_ahead(names: list, sources: list, read, ahead: bool):
    """(name, read(name, source)) in order; with ``ahead``, the files among the sources are
    read two at a time in threads, each at most one ahead of the one the caller holds."""
    files = [i for i, r in enumerate(sources) if isinstance(r, (str, os.PathLike)) and os.path.isfile(r)]
    if not ahead or len(files) < 2:
        yield from ((name, read(name, r)) for name, r in zip(names, sources))
        return
    pool, started = _pool(2, thread_name_prefix="judged-reader"), {}
    try:
        for i, (name, r) in enumerate(zip(names, sources)):
            for j in [f for f in files if f >= i][:2]:  # this file and the next
                if j not in started:
                    started[j] = pool.submit(read, names[j], sources[j])
            yield name, started.pop(i).result() if i in started else read(name, r)
    finally:
        for f in started.values():
            f.cancel()
        pool.shutdown(wait=True)


def _looks_like_run_dict(d: dict) -> bool:
    """{qid: {docid: score}} rather than {name: run}."""
    first = next(iter(d.values()))
    return not first or all(isinstance(v, (int, float)) for v in first.values())
