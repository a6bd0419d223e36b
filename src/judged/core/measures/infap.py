"""``infAP``: inferred average precision exactly as trec_eval 10 computes it (m_infap.c;
Yilmaz & Aslam, "Estimating average precision with incomplete and imperfect
judgments", CIKM 2006).

The qrels mark a uniform random sample of a judgment pool: a grade >= 0 is judged
(relevant at grade >= ``rel``), a **negative grade means pooled but not judged**
(sampled out), and a document absent from the qrels is not in the pool. Walking the
whole ranking (no cutoff), at the 0-based index j of each judged relevant document:

    j = 0:  1
    j > 0:  1/(j+1) + (j/(j+1)) * ((rel + nonrel + unjudged)/j) * ((rel + eps)/(rel + nonrel + 2 eps))

with rel, nonrel, unjudged the judged relevant, judged non-relevant and pooled-unjudged
documents above it (documents not in the pool count in j only: they are taken as non-
relevant) and eps = 1e-5 (INFAP_EPSILON). The sum is divided by R, the judged relevant
documents of the query (0 when R = 0). With no negative grades infAP is AP (to within
eps). ``unjudged=condensed`` (trec_eval -J) walks the ranking with every document
without a grade >= 0 removed.

This reads the sample as uniform over the whole pool. For a stratified sample with
recorded inclusion probabilities (``judged pool --strategy sample``) the design-based
estimates of :mod:`judged.analyses.holes.inference` (xinfAP, statAP, infNDCG) apply.
"""

from __future__ import annotations

import numpy as np

from ..errors import MeasureError
from .binary import within_query_cumsum
from .dcg import ranking_for

INFAP_EPSILON = 0.00001  # trec_eval.h


def convention(measure) -> list[str]:
    if measure.unjudged == "condensed":  # trec_eval -J: nothing left to infer over
        return [f"rel>={measure.rel}", "unjudged=condensed(eps=1e-5,trec_eval)"]
    return [f"rel>={measure.rel}", "unjudged=inferred(negative-grade=pooled-unjudged,absent=not-pooled,"
                                   "uniform-sample,eps=1e-5,trec_eval)"]


def compute(measure, aligned) -> np.ndarray:
    n = aligned.n_queries
    rel_level = measure.rel
    if measure.unjudged not in ("zero", "condensed"):
        raise MeasureError(f"infAP takes unjudged=condensed (trec_eval -J) or none, not {measure.unjudged}")
    ranked = ranking_for(measure, aligned)
    R = aligned.judgments.count_at_least(rel_level).astype(np.float64)
    g = ranked.grade
    isrel = g >= rel_level  # NaN (not pooled) is not
    nonrel = (g >= 0) & (g < rel_level)
    unjudged = g < 0
    q, offsets = ranked.q, ranked.offsets
    rel_above = (within_query_cumsum(isrel, q, offsets) - isrel)[isrel].astype(np.float64)
    nonrel_above = (within_query_cumsum(nonrel, q, offsets) - nonrel)[isrel].astype(np.float64)
    unj_above = (within_query_cumsum(unjudged, q, offsets) - unjudged)[isrel].astype(np.float64)
    fj = ranked.pos[isrel].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = (1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel_above + nonrel_above + unj_above) / fj)
                * ((rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2 * INFAP_EPSILON)))
    term = np.where(fj == 0, 1.0, term)
    s = np.bincount(q[isrel], weights=term, minlength=n)
    out = np.zeros(n)
    np.divide(s, R, out=out, where=R > 0)
    return out
