"""Evidence completeness over a requirements file (``qid group docid``; see
:mod:`judged.core.checks.evidence`): the question needs at least one document of every group.

* ``Complete@k``  1 when every required group has a document in the top k, else 0.
* ``Coverage@k``  groups with a document in the top k / groups required.

Without a cutoff the whole ranking counts. A query without requirements needs nothing:
both are 1 there (``no-requirements=1``). Grades play no part: a required document
counts when retrieved, judged or not (an ineligible one never counts: it is not evidence
the reader may see).
"""

from __future__ import annotations

import numpy as np

from ..checks.evidence import coverage
from ..checks.sidefiles import annotation


def compute(measure, aligned) -> np.ndarray:
    requirements = annotation(aligned, "requirements", measure, "requirements= (--requirements FILE)")
    cov = coverage(aligned, requirements, measure.cutoff)
    return cov.complete if measure.name == "Complete" else cov.share


def convention(measure) -> list[str]:
    return ["evidence=every-group-in-top-k", "no-requirements=1"]
