"""Qrels + runs + measures + conventions -> :class:`Result`: the :class:`Scorer`, the one way
into the engine, and :func:`evaluate`, its sugar."""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from dataclasses import dataclass, fields, replace

from . import DISPLAY
from .align import align, top_rows, top_run
from .blocks import score_block
from .checks import Checks, SideFiles
from .conventions import Settings
from .data import Qrels, stack_runs
from .errors import UsageError
from .io import file_kind, read_qrels, read_run
from .measures import named_measures
from .native import release_pool
from .progress import progress as progress_bar
from .results import LazyRunResult, RunResult  # noqa: F401  (judged.core.evaluation.RunResult, as before)
from .runnames import unique_name
from .words import counted

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
    checks: "Checks | None" = None  # side data and checks beyond the score (judged.core.checks)

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

    def alignments(self) -> dict:
        """Run name -> its :class:`~judged.core.align.Aligned` (made again for a run that kept only its values)."""
        return {name: rr.aligned for name, rr in self.runs.items()}

    @property
    def query_set(self):
        """Which queries the means are over (:mod:`judged.core.querysets`)."""
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


@dataclass(frozen=True)
class Keep:
    """What each run a :class:`Scorer` scores keeps beside its per-query values:
    ``alignment`` (its :class:`~judged.core.align.Aligned`, ``RunResult.aligned``; else it is
    made again on first use), ``top`` (only each query's first ``top`` ranks of it, the
    run's other rows let go: :func:`judged.core.align.top_rows`), ``docids_only`` (the
    alignment's run keeps its docids, not its qid, score and rank columns:
    :meth:`~judged.core.data.Run.docids_only`)."""

    alignment: bool = False
    top: int | None = None
    docids_only: bool = False


VALUES = Keep()  # the values only: what judged eval prints
ALIGNMENT = Keep(alignment=True)  # the whole alignment too: for callers that read it (holes, regressions)


def Top(k: int, docids_only: bool = False) -> Keep:  # noqa: N802  (a value, as VALUES and ALIGNMENT)
    """The alignment of each query's top ``k`` ranks only: for callers that read no deeper."""
    return Keep(True, int(k), docids_only)


class Scorer:
    """The one way into the engine: runs scored against one ``qrels`` with ``measures``
    (strings, or given string -> Measure) under ``settings`` (default :class:`Settings`).
    The qrels (a path, DataFrame, dict or Qrels) are read on first use, with their
    subtopics when a diversity measure is asked for; ``side`` (:class:`SideFiles`) applies
    the checks beyond the score (:mod:`judged.core.checks`; ``Result.checks``), None none."""

    def __init__(self, qrels, measures=DEFAULT_MEASURES, settings: Settings | None = None,
                 side: SideFiles | None = None):
        self.measures = measures if isinstance(measures, dict) else named_measures(measures)
        self.settings = Settings() if settings is None else settings
        self.side, self.source, self._qrels, self.checks = side, qrels, None, None

    @property
    def qrels(self) -> Qrels:
        """The qrels, read once (and checked against the side files)."""
        if self._qrels is None:
            qrels = read_qrels(self.source, on_duplicate=self.settings.on_duplicate,
                               subtopics=any(m.family.subtopics for m in self.measures.values()))
            if self.side is not None:
                self.checks, qrels = Checks.load(qrels, self.side)
            self._qrels = qrels
        return self._qrels

    def runs(self, runs, keep: Keep = VALUES, versions=(), *, each=None, progress: bool = False,
             digests: bool = True):
        """Score ``runs`` (a run: path, DataFrame, dict of dicts, Run; a list of them; or a
        dict name -> run): one :class:`Result`; with ``versions`` (more Scorers: other qrels
        versions, the same settings) one per Scorer, this one first, each run read once.

        The path each run takes (the numbers are the same on every one): a plain TREC run
        file grouped by query is streamed by query blocks (:mod:`judged.core.stream`, the
        first one tokenized while the qrels are read) unless ``keep`` holds whole
        alignments or a side file reads whole runs; a larger one not grouped by query (over
        ``JUDGED_SPILL_BYTES``, default 1 GiB) is partitioned by query on disk
        (:mod:`judged.core.spill`) when only the values are kept; every other run is read
        into memory (two files at a time when whole alignments are kept), several scored in
        threads (:func:`scoring_threads`) unless ``each``, ``versions`` or no measure take
        them one at a time. ``each(name, run_result)`` is called in run order as each run is scored
        (and kept as ``keep`` says). ``progress``: a progress bar on stderr.
        ``digests``: False, a plain TREC run file read whole is not hashed."""
        scorers = [self, *versions]
        reader = None
        if self._qrels is None and (not keep.alignment or keep.top is not None) \
                and isinstance(self.source, (str, os.PathLike)):
            reader = first_run_reader(runs)  # the first run file tokenized while the qrels are read
        try:
            for scorer in scorers:
                scorer.qrels
            results = self._score_runs(scorers, runs, keep, each, progress, digests, reader)
        finally:
            if reader is not None:
                reader.close()
        out = [Result(s.qrels, s.measures, s.settings, got, s.checks) for s, got in zip(scorers, results)]
        return out if versions else out[0]

    def _score_runs(self, scorers, runs, keep: Keep, each, progress, digests, reader) -> list:
        whole = any(s.checks is not None and s.checks.needs_whole_run for s in scorers)
        stream = None if whole or keep.alignment and keep.top is None else (
            lambda name, path: self._streamed(scorers, name, path, keep, progress, reader))
        results = [{} for _ in scorers]
        count = len(runs) if isinstance(runs, (list, tuple, dict)) else None
        # one run is scored in this thread (concurrent.futures, 0.01 s to import, only for more); runs
        # only aligned (no measure) one after the other, as their readers go ahead
        alone = whole or each is not None or len(scorers) > 1 or (count or 1) < 2 or not self.measures
        workers = 1 if alone else scoring_threads()
        with _pool(workers) if workers > 1 else contextlib.nullcontext() as pool, \
                progress_bar(count, "reading and scoring runs", enabled=progress) as advance:
            try:
                # runs kept whole (their alignments too): read two at a time, ahead of the scoring
                for i, (name, run) in enumerate(named_runs(
                        runs, self.settings.on_duplicate, streamed=stream or (lambda name, path: None),
                        ahead=keep.alignment and keep.top is None or len(scorers) > 1 and stream is None,
                        digest=digests)):
                    if keep.docids_only and i + 1 == count:
                        release_pool()  # every file read: the columns dropped so far are not reused
                    if pool is not None and not isinstance(run, list):
                        self.qrels.index  # built once (on the first run read whole), before the threads share it
                        results[0][name] = pool.submit(lambda name=name, run=run: _slim(self._score(name, run, keep),
                                                                                         keep))
                        results[0][name].add_done_callback(lambda _: advance())
                        continue
                    got = run if isinstance(run, list) else [s._score(name, run, keep) for s in scorers]
                    for out, rr in zip(results, got):
                        out[name] = rr
                    _slim(got[0], keep)
                    if each is not None:
                        each(name, got[0])
                    advance()
            except BaseException:
                _in_order(results[0], pool)  # a run scored before the failure raises first, as in one thread
                raise
            _in_order(results[0], pool)
        if keep.docids_only:
            run = None  # the last run's columns freed before the reader's pool is
            release_pool()
        return results

    def _score(self, name: str, run, keep: Keep) -> RunResult:
        """One run read into memory: one block, aligned with the run's settings (complete,
        no_relevant) and scored."""
        checks = self.checks
        if checks is not None:
            run = checks.prepare_run(name, run, self.settings)
        aligned, block = score_block(self.qrels, run, self.measures, self.settings,
                                     annotate=None if checks is None else checks.attach)
        if not keep.alignment:
            # the alignment (four numbers per ranked row) is not kept for callers that read only the
            # values: it is made again on first use, as for a streamed run
            return LazyRunResult(name, block.qids, block.values, block.counts, lambda: self._aligned(run),
                                 block.max_depth)
        if keep.top is not None:
            aligned = top_rows(aligned, keep.top)
        return RunResult(name, block.qids, block.values, block.counts, aligned, block.max_depth)

    def _aligned(self, run):
        """The alignment a run read into memory was scored with, made again."""
        aligned = align(self.qrels, run, self.settings)
        if self.checks is not None:
            self.checks.attach(aligned)
        return aligned

    def _streamed(self, scorers, name, path, keep: Keep, progress, reader) -> "list | None":
        """The run file scored by query blocks under every scorer (one RunResult each, the
        first keeping its top ranks with ``keep.top``), or None when it must be read whole."""
        if file_kind(os.fspath(path)) != "text" or not os.path.isfile(path):
            return None
        from . import stream

        source, large = os.fspath(path), os.path.getsize(path) > 64 << 20
        if reader is not None and (reader.used or reader.source != source):
            reader = None
        if reader is not None:
            reader.used = True
        parts: list = []
        got = stream.evaluate_run_file([(s.qrels, s.measures) for s in scorers], source, self.settings, name=name,
                                       progress=progress and large, reader=reader,
                                       each=None if keep.top is None else lambda a: parts.append(top_run(a, keep.top)))
        if got is None:  # not grouped by query: partitioned on disk when large (judged.core.spill)
            if keep.alignment or len(scorers) > 1:
                return None
            from . import spill

            got = [spill.evaluate_run_file(self.qrels, source, self.measures, self.settings, name=name,
                                           progress=progress and large)]
            return None if got[0] is None else got
        if keep.top is not None:
            # the top rows come in rank order under the run's tie order: ranked as they come (no sort by score)
            top = stack_runs(parts, name=name, source=source)
            aligned = replace(align(self.qrels, top, replace(self.settings, ties="input")), settings=self.settings,
                              counts=dict(got[0].counts))  # the whole run's (only_in_run: rows not kept)
            if self.checks is not None:
                self.checks.attach(aligned)
            got[0].aligned = aligned
        return got


def _slim(rr: RunResult, keep: Keep) -> RunResult:
    """``keep.docids_only``: the run's alignment without its run's qid, score and rank columns."""
    if keep.docids_only and rr.aligned.run.score is not None:
        rr.aligned.run = rr.aligned.run.docids_only()
    return rr


def evaluate(qrels, runs, measures=DEFAULT_MEASURES, *, settings: Settings | None = None,
             side: SideFiles | None = None, keep: Keep = VALUES, progress: bool = False, digests: bool = True,
             **conventions) -> Result:
    """Score runs against qrels: :meth:`Scorer.runs`, with keyword sugar.

    Parameters
    ----------
    qrels : path, DataFrame, dict or Qrels
    runs : a run (path, DataFrame, dict of dicts, Run), a list of them, or a dict name -> run
    measures : measure strings such as ``"nDCG@10"``, ``"AP(rel=2)"``, ``"nDCG(gain=exp)@10"``
    settings : the engine-wide conventions as one :class:`judged.core.conventions.Settings`
        (which queries a mean is over: :mod:`judged.core.querysets`)
    side : the side files as one :class:`judged.core.checks.SideFiles` (grade scale,
        requirements, eligibility, unanswerable queries; the results are in
        ``Result.checks`` and ``to_dict()``)
    keep : what each run keeps beside its values (:class:`Keep`: ``VALUES``, the default,
        ``ALIGNMENT`` or ``Top(k)``); a run read into memory keeps only its values, its
        ``RunResult.aligned`` made again on first use, unless ``keep`` holds it
    progress : show a progress bar (stderr) while streaming large run files
    digests : False: a plain TREC run file read whole is not hashed (``Run.sha256`` None)
    conventions : the sugar: each field of Settings (``ties``, ``complete``,
        ``no_relevant``, ``ignore_identical_ids``, ``depth_cut``, ``on_duplicate``,
        ``negative``) and of
        SideFiles (``scale``, ``requirements``, ``eligibility``, ``principal``,
        ``unanswerable``, ``abstain_marker``, ``score_unanswerable``) as a keyword.
        ``whole_runs=True`` and ``keep_ranks=N`` are deprecated (until 2027-06-01):
        ``keep=ALIGNMENT`` and ``keep=Top(N)``.

    Runs that share few or no query ids with the qrels, miss qrels queries, cover
    different queries or rank different depths are named in ``Result.checks.warnings``
    (the commands refuse a run sharing no query id: :func:`judged.core.querysets.refuse_disjoint_runs`).
    Which path each run takes (in memory, streamed, spilled): :meth:`Scorer.runs`.

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
    whole, ranks = conventions.pop("whole_runs", False), conventions.pop("keep_ranks", None)
    if whole or ranks is not None:
        warnings.warn("evaluate(whole_runs=True, keep_ranks=N) is deprecated until 2027-06-01: "
                      "pass keep=ALIGNMENT or keep=Top(N)", DeprecationWarning, stacklevel=2)
        keep = (ALIGNMENT if ranks is None else Top(ranks)) if whole else keep
    settings, side = sugared("evaluate", settings, side, conventions)
    return Scorer(qrels, measures, settings, side).runs(runs, keep, progress=progress, digests=digests)


SETTINGS_FIELDS = frozenset(f.name for f in fields(Settings))  # the outer API's keyword sugar
SIDE_FIELDS = frozenset(f.name for f in fields(SideFiles))


def sugared(entry: str, settings: Settings | None, side: SideFiles | None, given: dict) -> tuple:
    """(Settings, SideFiles) of a call to the outer API ``entry`` (``evaluate``, ``compare``):
    ``settings`` and ``side``, or the keywords ``given``, each a field of one of them
    (:meth:`Settings.of` checks a convention given both ways), validated. Any other keyword
    is a TypeError, as Python's own."""
    unknown = sorted(set(given) - SETTINGS_FIELDS - SIDE_FIELDS)
    if unknown:
        raise TypeError(f"{entry}() got an unexpected keyword argument {unknown[0]!r}")
    sides = {name: value for name, value in given.items() if name in SIDE_FIELDS}
    if side is not None and sides:
        raise UsageError(f"side={side!r} and {', '.join(sides)}=: give the side files once")
    settings = Settings.of(settings, None, **{name: v for name, v in given.items() if name in SETTINGS_FIELDS})
    return settings, SideFiles(**sides) if side is None else side


def first_run_reader(runs):
    """The first run file, tokenized in a second thread while the qrels are read
    (:class:`judged.core.stream.PieceReader`), or None."""
    first = runs[0] if isinstance(runs, (list, tuple)) and runs else runs
    if isinstance(runs, dict):
        first = next(iter(runs.values()), None)
    if not isinstance(first, (str, os.PathLike)) or isinstance(first, str) and first.startswith("irds:"):
        return None
    from .stream import PieceReader

    return PieceReader.start(first) if file_kind(os.fspath(first)) == "text" else None


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


def named_runs(runs, on_duplicate, streamed=lambda name, path: None, ahead: bool = False, digest: bool = True):
    """(name, Run) pairs; (name, RunResult) for run files ``streamed`` could score on the way.
    ``ahead``: run files are read two at a time in threads (the tokenizer releases the GIL),
    the next one while the caller works on the one before: for callers that keep every run
    anyway (memory holds one run more meanwhile); the pairs come in the same order.
    ``digest``: as :func:`judged.core.io.read_run`'s."""
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
