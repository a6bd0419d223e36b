"""Inter-assessor agreement: Cohen's kappa and Krippendorff's alpha.

Both return NaN where they are undefined (no pairable data, or no disagreement expected by
chance: every value the same).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval")


def cohen_kappa(a: Sequence, b: Sequence, weights: str | None = None, labels: Sequence | None = None) -> float:
    """Cohen's kappa of two raters over the same items (Cohen 1960; weighted: Cohen 1968).

    ``kappa = 1 - sum(w * O) / sum(w * E)`` with O the observed joint proportions, E the
    product of the two raters' marginals, and disagreement weights ``w_ij`` = ``[i != j]``
    (unweighted: ``(p_o - p_e) / (1 - p_e)``), ``|i - j|`` (linear) or ``(i - j)^2``
    (quadratic) over the positions of the sorted labels, as scikit-learn's
    ``cohen_kappa_score``.
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}")
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError("the two raters must rate the same items")
    if not a:
        return float("nan")
    labels = sorted(set(a) | set(b)) if labels is None else list(labels)
    index = {v: i for i, v in enumerate(labels)}
    k = len(labels)
    observed = np.zeros((k, k))
    for x, y in zip(a, b):
        observed[index[x], index[y]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    w = {None: (i != j).astype(float), "linear": np.abs(i - j).astype(float),
         "quadratic": ((i - j) ** 2).astype(float)}[weights]
    denom = (w * expected).sum()
    return float("nan") if denom == 0 else float(1.0 - (w * observed).sum() / denom)


def krippendorff_alpha(data, level: str = "ordinal") -> float:
    """Krippendorff's alpha for any number of coders with missing values (Krippendorff 2011,
    "Computing Krippendorff's Alpha-Reliability").

    ``data``: units x coders (rows are items; NaN or None = not coded). Only units with two or
    more values count. ``alpha = 1 - (n - 1) * sum(o_ck * d_ck) / sum(n_c * n_k * d_ck)`` with
    ``o`` the coincidence matrix (each unit's ordered value pairs weighted ``1/(m_u - 1)``),
    ``n_c`` its marginals, and the squared difference ``d_ck``: nominal ``[c != k]``, interval
    ``(c - k)^2``, ordinal ``(sum_{g=c..k} n_g - (n_c + n_k)/2)^2``.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}")
    m = np.array(data, dtype=float)
    if m.ndim != 2:
        raise ValueError("data must be a units x coders matrix")
    units = [row[~np.isnan(row)] for row in m]
    units = [u for u in units if len(u) >= 2]
    if not units:
        return float("nan")
    values = np.unique(np.concatenate(units))
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    o = np.zeros((k, k))
    for u in units:
        counts = np.zeros(k)
        for v in u:
            counts[index[v]] += 1
        o += (np.outer(counts, counts) - np.diag(counts)) / (len(u) - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        d = 1.0 - np.eye(k)
    elif level == "interval":
        d = np.subtract.outer(values, values) ** 2
    else:
        cum = np.cumsum(n_c)
        lo, hi = np.minimum.outer(np.arange(k), np.arange(k)), np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[hi] - np.where(lo > 0, cum[lo - 1], 0.0)   # sum of n_g for g in [lo, hi]
        d = (between - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    expected = (np.outer(n_c, n_c) * d).sum()
    if expected == 0:
        return float("nan")
    return float(1.0 - (n - 1) * (o * d).sum() / expected)
