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
    return float(kappa_from_confusion(observed, weights))


def kappa_from_confusion(confusion, weights: str | None = None):
    """Cohen's kappa from a confusion matrix of counts (rows: first rater, columns: second,
    both over the same sorted labels); a stack ``(..., k, k)`` gives one kappa per matrix
    (NaN where undefined). The formula and weights of :func:`cohen_kappa`."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}")
    c = np.asarray(confusion, dtype=float)
    k = c.shape[-1]
    total = c.sum(axis=(-2, -1), keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = c / total
        expected = observed.sum(axis=-1, keepdims=True) * observed.sum(axis=-2, keepdims=True)
        i, j = np.indices((k, k))
        w = {None: (i != j).astype(float), "linear": np.abs(i - j).astype(float),
             "quadratic": ((i - j) ** 2).astype(float)}[weights]
        denom = (w * expected).sum(axis=(-2, -1))
        out = 1.0 - (w * observed).sum(axis=(-2, -1)) / denom
    return np.where((denom > 0) & np.isfinite(denom), out, np.nan)


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
    return float(alpha_from_coincidences(o, values, level))


def alpha_from_coincidences(o, values, level: str = "ordinal"):
    """Krippendorff's alpha from a coincidence matrix ``o`` over the sorted ``values`` (for
    two coders and no missing value, ``o = C + C.T`` with C their confusion matrix); a stack
    ``(..., k, k)`` gives one alpha per matrix (NaN where undefined). The formula and
    distances of :func:`krippendorff_alpha`."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}")
    o = np.asarray(o, dtype=float)
    values = np.asarray(values, dtype=float)
    k = len(values)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    if level == "nominal":
        d = np.broadcast_to(1.0 - np.eye(k), o.shape)
    elif level == "interval":
        d = np.broadcast_to(np.subtract.outer(values, values) ** 2, o.shape)
    else:
        cum = np.cumsum(n_c, axis=-1)
        lo, hi = np.minimum.outer(np.arange(k), np.arange(k)), np.maximum.outer(np.arange(k), np.arange(k))
        below = np.where(lo > 0, cum[..., np.maximum(lo - 1, 0)], 0.0)
        between = cum[..., hi] - below   # sum of n_g for g in [lo, hi]
        d = (between - (n_c[..., lo] + n_c[..., hi]) / 2.0) ** 2
    expected = (n_c[..., :, None] * n_c[..., None, :] * d).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = 1.0 - (n - 1) * (o * d).sum(axis=(-2, -1)) / expected
    return np.where(expected > 0, out, np.nan)
