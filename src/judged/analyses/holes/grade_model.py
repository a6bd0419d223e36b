"""The grade model of holes: a continuation-ratio logistic regression (Agresti,
*Categorical Data Analysis*, 8.3.5), one ridge-penalised logistic regression per grade level
fitted by Newton's method on standardised features, with leave-one-group-out refits
(one Newton step, Rad & Maleki, JRSS-B 2020) for the estimate's conformal interval.

A hole's features are read inside the range of the pseudo-holes the model was fitted on
(each clipped to that range): the model is not extrapolated beyond its data (Harrell,
*Regression Modeling Strategies*, 2nd ed. 2015). New runs' holes often fall outside it:
another new run may rank them higher than any other unit ranked a pseudo-hole (only one unit
put a pseudo-hole in the pool), and a new run's judged top k may be more relevant than any
pooled run's. Measured in docs/holes.md ("New systems on an old pool"). One range serves
every level, though the regression for level l is fitted on the pseudo-holes at l - 1 or
above: per-level ranges moved no protocol cell's MAE by more than 0.001 (2026-12-02)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .collection import FEATURES, HolePool, World, features

RIDGE = 1.0
LARGE_GROUP = 0.05  # leave-out fits of a group above this share of the pseudo-holes are iterated to convergence

# ---------------------------------------------------------------------------
# The grade model


@dataclass
class HoleModel:
    """P(grade level) of a hole from its features: a continuation-ratio logistic model,
    one ridge-penalised logistic regression per level l for P(level >= l | level >= l-1)."""

    levels: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # (levels - 1, 1 + features)
    low: np.ndarray | None = None  # the fitted pseudo-holes' feature range: features are clipped to it
    high: np.ndarray | None = None

    def probabilities(self, X: np.ndarray) -> np.ndarray:
        """(holes, levels) grade distribution of each hole."""
        Z = self._design(X)
        out = np.zeros((len(X), len(self.levels)))
        reach = np.ones(len(X))
        for l in range(1, len(self.levels)):
            p = _sigmoid(Z @ self.coef[l - 1])
            out[:, l - 1] = reach * (1 - p)
            reach = reach * p
        out[:, -1] = reach
        return out

    def grade_probabilities(self, pool: "HolePool", world: "World", rows: np.ndarray, minus: np.ndarray) -> np.ndarray:
        """:meth:`probabilities` of pool ``rows`` as holes (their :func:`features` in ``world``
        without the judgments of units ``minus``): a grade source of :func:`score_cases`."""
        return self.probabilities(features(pool, world, rows, minus))

    def _design(self, X):
        if self.low is not None:
            X = np.clip(X, self.low, self.high)
        return np.column_stack([np.ones(len(X)), (X - self.center) / self.scale])

    def to_dict(self) -> dict:
        """The fitted coefficients, per level, on features standardised by ``center`` and ``scale``."""
        return {"features": list(FEATURES), "levels": [int(v) for v in self.levels],
                "center": self.center.tolist(), "scale": self.scale.tolist(),
                "range": None if self.low is None else {"low": self.low.tolist(), "high": self.high.tolist()},
                "coefficients": {f"P(grade>={int(self.levels[l])} | grade>={int(self.levels[l - 1])})":
                                 dict(zip(["intercept", *FEATURES], self.coef[l - 1].tolist()))
                                 for l in range(1, len(self.levels))}}


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def fit_model(X: np.ndarray, y: np.ndarray, levels: np.ndarray, ridge: float | None = None) -> HoleModel:
    """Fit :class:`HoleModel` to features ``X`` and level indices ``y`` (Newton's method,
    to convergence, on standardised features)."""
    return GradeDesign(X, y, levels, ridge=ridge).fit()


class GradeDesign:
    """The standardised design of one set of pseudo-holes: fitted whole (:meth:`fit`,
    Newton's method to convergence) and without one group of them (:meth:`fit_without`:
    the calibration's leave-one-unit-out fits). A leave-out fit is one Newton step from
    the whole fit, with the group's gradient and Hessian taken out (the approximate
    leave-one-out of Rad & Maleki, JRSS-B 2020), continued to convergence when the group
    holds more than :data:`LARGE_GROUP` of the pseudo-holes."""

    def __init__(self, X: np.ndarray, y: np.ndarray, levels: np.ndarray, groups: np.ndarray | None = None,
                 ridge: float | None = None):
        self.levels = levels
        self.ridge = RIDGE if ridge is None else ridge
        n = len(X)
        self.center = X.mean(axis=0) if n else np.zeros(X.shape[1])
        scale = X.std(axis=0) if n else np.ones(X.shape[1])
        self.scale = np.where(scale > 1e-9, scale, 1.0)
        Z = np.column_stack([np.ones(n), (X - self.center) / self.scale])
        self.groups = np.zeros(n, np.int64) if groups is None else np.asarray(groups, np.int64)
        self._ranges(X)
        # level l: the pseudo-holes that reached level l-1, and whether they reached l
        self.parts = []
        for l in range(1, len(levels)):
            at = np.flatnonzero(y >= l - 1)
            self.parts.append((at, np.ascontiguousarray(Z[at]), (y[at] >= l).astype(np.float64)))
        self.whole = None
        self._by_group = None

    def fit(self) -> HoleModel:
        """The fit on every pseudo-hole."""
        if self.whole is None:
            coef = np.zeros((len(self.parts), len(self.center) + 1))
            for l, (_, Z, t) in enumerate(self.parts):
                coef[l] = _newton(Z, t, np.ones(len(t)), self.ridge)
            self.whole = HoleModel(self.levels, self.center, self.scale, coef, self.low, self.high)
        return self.whole

    def fit_without(self, group: int) -> HoleModel:
        """The fit without the pseudo-holes of ``group``."""
        whole = self.fit()
        if self._by_group is None:
            self._by_group = [self._group_parts(l) for l in range(len(self.parts))]
        coef = whole.coef.copy()
        for l, (labels, n_g, pos_g, grad, hess, H, n, pos) in enumerate(self._by_group):
            at = np.searchsorted(labels, group)
            if at >= len(labels) or labels[at] != group:
                continue  # the group never reached this level: the whole fit stands
            n_keep, pos_keep = n - n_g[at], pos - pos_g[at]
            if n_keep == 0 or pos_keep == 0 or pos_keep == n_keep or pos == 0 or pos == n:
                coef[l] = 0.0  # nothing to separate: the smoothed base rate, as _newton gives it
                coef[l, 0] = math.log((pos_keep + 0.5) / (n_keep - pos_keep + 0.5))
                continue
            coef[l] = whole.coef[l] - np.linalg.solve(H - hess[at], grad[at])
            if n_g[at] > LARGE_GROUP * n:  # a large share moves the fit far: Newton's method on from there
                rows, Z, t = self.parts[l]
                coef[l] = _newton(Z, t, (self.groups[rows] != group).astype(np.float64), self.ridge, coef[l])
        return HoleModel(self.levels, self.center, self.scale, coef, *self._range_without(group))

    def _ranges(self, X):
        """The features' range over every pseudo-hole, and per group (sorted labels)."""
        self.low = self.high = None
        self.group_labels = np.zeros(0, np.int64)
        if not len(X):
            return
        self.low, self.high = X.min(axis=0), X.max(axis=0)
        order = np.argsort(self.groups, kind="stable")
        gs = self.groups[order]
        starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
        self.group_labels = gs[starts]
        self.group_low = np.minimum.reduceat(X[order], starts, axis=0)
        self.group_high = np.maximum.reduceat(X[order], starts, axis=0)

    def _range_without(self, group: int):
        """The features' range over the pseudo-holes of the other groups (the whole range
        when no other group has any)."""
        keep = self.group_labels != group
        if not keep.any() or keep.all():
            return self.low, self.high
        return self.group_low[keep].min(axis=0), self.group_high[keep].max(axis=0)

    def _group_parts(self, l: int):
        """Per group (sorted labels): its count, positives, gradient and Hessian of the
        log-likelihood at the whole fit; the whole penalised Hessian; the totals."""
        at, Z, t = self.parts[l]
        b = self.whole.coef[l]
        p = _sigmoid(Z @ b)
        W = p * (1 - p)
        d = Z.shape[1]
        penalty = np.full(d, self.ridge)
        penalty[0] = 0.0
        H = (Z * W[:, None]).T @ Z + np.diag(penalty) + 1e-9 * np.eye(d)
        g = self.groups[at]
        order = np.argsort(g, kind="stable")
        gs = g[order]
        if not len(gs):
            empty = np.zeros(0)
            return (np.zeros(0, np.int64), empty, empty, np.zeros((0, d)), np.zeros((0, d, d)), H, 0.0, 0.0)
        starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
        Zs, ts, ps, Ws = Z[order], t[order], p[order], W[order]
        grad = np.add.reduceat(Zs * (ts - ps)[:, None], starts, axis=0)
        # the Hessians' upper triangles, mirrored: z_i z_j = z_j z_i, so the same bits as the whole
        iu, ju = np.triu_indices(d)
        upper = np.add.reduceat(Zs[:, iu] * Zs[:, ju] * Ws[:, None], starts, axis=0)
        hess = np.empty((len(starts), d, d))
        hess[:, iu, ju] = upper
        hess[:, ju, iu] = upper
        n_g = np.add.reduceat(np.ones(len(gs)), starts)
        pos_g = np.add.reduceat(ts, starts)
        return gs[starts], n_g, pos_g, grad, hess, H, float(len(t)), float(t.sum())


def _newton(Z, t, w, ridge, start=None, iterations: int = 50, tolerance: float = 1e-8) -> np.ndarray:
    """Ridge-penalised logistic regression with row weights ``w`` (intercept not penalised)."""
    d = Z.shape[1]
    n = float(w.sum())
    pos = float((w * t).sum())
    b = np.zeros(d)
    b[0] = math.log((pos + 0.5) / (n - pos + 0.5))
    if n == 0 or pos == 0 or pos == n:  # nothing to separate: the smoothed base rate
        return b
    if start is not None:
        b = start.copy()
    penalty = np.full(d, ridge)
    penalty[0] = 0.0
    penalty_matrix = np.diag(penalty) + 1e-9 * np.eye(d)
    wt = w * t
    for _ in range(iterations):
        p = _sigmoid(Z @ b)
        H = (Z * (w * p * (1 - p))[:, None]).T @ Z + penalty_matrix
        step = np.linalg.solve(H, Z.T @ (wt - w * p) - penalty * b)
        b = b + step
        if np.abs(step).max() < tolerance:
            break
    return b


