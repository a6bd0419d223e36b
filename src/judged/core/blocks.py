"""The block engine: every path scores blocks of whole queries the same way.

Every measure is a function of one query's ranked documents and judgments, so a run can be
scored in blocks of whole queries: the run read in memory is one block, a streamed file
gives one block per piece (:mod:`judged.core.stream`), a file spilled to disk one per partition
(:mod:`judged.core.spill`). :func:`score_block` aligns and scores one block (``align`` and the
measure kernels, unchanged); :func:`assemble` puts the blocks of one run together in qrels
query order, adds the qrels queries the run lacks (``complete``), refuses queries with
nothing relevant (``no_relevant='error'``) and counts queries exactly as ``align`` counts
them for a whole run. :func:`query_counts` is that counting rule, shared by Spark.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from .align import Aligned, align, no_relevant_error
from .conventions import Settings
from .data import Qrels, Run
from .results import LazyRunResult, RunResult, max_depth
from .io import read_run


@dataclass(frozen=True)
class Block:
    """One block of whole queries, scored."""

    qids: np.ndarray  # the evaluated queries of the block, in qrels order
    values: dict  # measure as given -> per-query values
    counts: dict  # align()'s counts for the block (only_in_run is summed over blocks)
    run_queries: np.ndarray  # qrels codes of the queries the block's run lists
    qid_codes: np.ndarray  # qrels code of each of qids
    max_depth: int  # most documents ranked for one query


def block_settings(settings: Settings) -> Settings:
    """The settings a block is aligned with: the block's own queries only (``complete`` and
    the ``no_relevant='error'`` refusal are the run's, applied by :func:`assemble`)."""
    return replace(settings, complete=False,
                   no_relevant="zero" if settings.no_relevant == "error" else settings.no_relevant)


def score_block(qrels: Qrels, run: Run, measures: dict, settings: Settings, annotate=None) -> tuple[Aligned, Block]:
    """Align ``run`` (whole queries) with ``qrels`` under ``settings`` and compute every
    measure (given string -> Measure): the alignment and the scored :class:`Block`.
    ``annotate(aligned)`` adds side data for the kernels first (:mod:`judged.core.checks`)."""
    aligned = align(qrels, run, settings)
    if annotate is not None:
        annotate(aligned)
    values = {given: m.compute(aligned) for given, m in measures.items()}
    return aligned, Block(aligned.qids, values, aligned.counts, aligned.run_queries, aligned.qid_codes,
                          max_depth(aligned))


def query_counts(has_relevant: np.ndarray, in_run: np.ndarray, only_in_run: int, settings: Settings) -> dict:
    """The query counts of a run over the qrels' queries (``has_relevant``, ``in_run``: one
    flag per qrels query), as :func:`judged.core.align.align` counts a whole run; raises the
    ``no_relevant='error'`` refusal."""
    candidates = np.ones(len(in_run), dtype=bool) if settings.complete else in_run
    no_rel = candidates & ~has_relevant
    n_no_rel = int(no_rel.sum())
    skipped = n_no_rel if settings.no_relevant == "skip" else 0
    return {"evaluated": int(candidates.sum()) - skipped, "skipped": skipped,
            "missing_from_run": int((~in_run).sum()), "only_in_run": int(only_in_run), "no_relevant": n_no_rel}


def refuse_no_relevant(qrels: Qrels, in_run: np.ndarray, settings: Settings) -> None:
    """``no_relevant='error'``: refuse when a query the mean is over has nothing relevant."""
    if settings.no_relevant != "error":
        return
    index = qrels.index
    candidates = np.ones(len(in_run), dtype=bool) if settings.complete else in_run
    no_rel = candidates & ~index.has_relevant
    if no_rel.any():
        raise no_relevant_error(index.query_ids[no_rel].tolist())


def assemble(qrels: Qrels, blocks: list, measures: dict, settings: Settings, name: str, realign,
             source: str | None = None) -> RunResult:
    """One run's :class:`~judged.core.results.RunResult` from its scored blocks (each query in one
    block): in qrels query order, the queries the run lacks added when ``complete``, counted
    as :func:`judged.core.align.align` counts; ``realign()`` gives the whole run's alignment on
    first use."""
    index = qrels.index
    in_run = np.zeros(len(index.query_ids), dtype=bool)
    for block in blocks:
        in_run[block.run_queries] = True
    refuse_no_relevant(qrels, in_run, settings)
    qids = [b.qids for b in blocks]
    codes = [b.qid_codes for b in blocks]
    values = {g: [b.values[g] for b in blocks] for g in measures}
    if settings.complete and not in_run.all():
        empty = Run(pa.array([], pa.string()), pa.array([], pa.string()), np.zeros(0), name=name)
        empty.rank = np.zeros(0)  # (ties='rank' reads a rank column: an empty one)
        missing = align(qrels, empty, replace(block_settings(settings), complete=True))
        keep = ~in_run[missing.qid_codes]
        qids.append(missing.qids[keep])
        codes.append(missing.qid_codes[keep])
        for g, m in measures.items():
            values[g].append(m.compute(missing)[keep])
    all_qids = np.concatenate(qids) if qids else np.empty(0, dtype=object)
    order = np.argsort(np.concatenate(codes) if codes else np.zeros(0, np.int64), kind="stable")
    counts = query_counts(index.has_relevant, in_run, sum(b.counts["only_in_run"] for b in blocks), settings)
    values = {g: (np.concatenate(v) if v else np.zeros(0))[order] for g, v in values.items()}
    return LazyRunResult(name, all_qids[order].astype(object), values, counts, realign,
                         max((b.max_depth for b in blocks), default=0), source)


def file_realigner(qrels: Qrels, source: str, name: str, settings: Settings):
    """``realign()`` for :func:`assemble`: the whole run file read in memory and aligned."""

    def realign() -> Aligned:
        return align(qrels, read_run(source, name=name, on_duplicate=settings.on_duplicate), settings)

    return realign
