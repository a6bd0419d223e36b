"""``Leak@k``: ineligible documents retrieved in the top k (see :mod:`judged.core.checks.eligibility`).

A count per query; its aggregate is the sum over queries, so a run's ``Leak@10`` is its
number of leaks and any value above 0 flags the run. Without a cutoff the whole ranking
counts. Every other measure already treats an ineligible document as not relevant.
"""

from __future__ import annotations

import numpy as np

from ..checks.eligibility import ineligible_rows
from ..checks.sidefiles import annotation


def compute(measure, aligned) -> np.ndarray:
    annotation(aligned, "eligibility", measure, "eligibility= (--eligibility FILE)")
    top = aligned.ranked.top(measure.cutoff)
    return np.bincount(top.q[ineligible_rows(aligned, top)], minlength=aligned.n_queries).astype(np.float64)


def convention(measure) -> list[str]:
    return ["leak=ineligible-retrieved", "unlisted=eligible"]
