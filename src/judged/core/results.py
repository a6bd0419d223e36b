"""One run's scores: :class:`RunResult`, the record every engine (in memory, streamed,
spilled, Spark) hands to :class:`judged.core.evaluation.Result`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .align import Aligned


@dataclass
class RunResult:
    """Per-query values of one run.

    ``qids`` are the evaluated queries in qrels order; ``values`` maps each measure as given
    to its per-query values (float64, aligned with ``qids``); ``counts`` are the query counts
    of :func:`judged.core.align.align` (evaluated, skipped, missing_from_run, only_in_run,
    no_relevant); ``aligned`` the whole run's alignment (None from Spark); ``max_depth``
    the most documents ranked (and scored) for one query, None when not known."""

    name: str
    qids: np.ndarray
    values: dict
    counts: dict
    aligned: Aligned = field(repr=False, default=None)
    max_depth: int | None = None


class LazyRunResult(RunResult):
    """A :class:`RunResult` whose ``aligned`` (the whole run's alignment, which the streamed
    and spilled engines never hold) is computed on first use by ``realign()``; ``source``
    is the run file."""

    def __init__(self, name, qids, values, counts, realign, max_depth=None, source=None):
        self._realign, self.source = realign, source
        super().__init__(name, qids, values, counts, None, max_depth)

    @property
    def aligned(self):
        if self._aligned is None:
            self._aligned = self._realign()
        return self._aligned

    @aligned.setter
    def aligned(self, value):
        self._aligned = value


def max_depth(aligned: Aligned) -> int:
    """The most documents an aligned run ranks for one of its evaluated queries."""
    return int(aligned.ranked.count.max()) if len(aligned.ranked.count) else 0
