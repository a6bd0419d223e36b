"""``Judged@k``: the share of the top min(k, retrieved) documents that carry a judgment
of any grade for this query (as ir_measures' Judged; 0 when nothing is retrieved).

A document judged only for another query counts as unjudged here (a hole), unlike
BEIR's Hole@k, which counts any judged document and so understates holes.
"""

from __future__ import annotations

import numpy as np


def compute(measure, aligned) -> np.ndarray:
    top = aligned.ranked.top(measure.cutoff)
    judged = np.bincount(top.q[top.judged], minlength=aligned.n_queries).astype(np.float64)
    shown = top.count.astype(np.float64)
    out = np.zeros(aligned.n_queries)
    np.divide(judged, shown, out=out, where=shown > 0)
    return out
