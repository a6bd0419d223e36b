"""What the estimate of several runs predicts, chosen on the collection itself.

Judging is done for a pool: when several runs are estimated, judging their holes together
raises each run's ideal (and R) with the others' relevant holes. The estimate can draw that
pool (``'pool'``), each run's own holes alone (``'run'``), or the mean of the two
(``'midpoint'``); on three collections none of the three was nearest the truth of judging
the pool everywhere (docs/holes.md, "What the estimate predicts"). Target ``'auto'`` chooses
on the given runs, in the way the collection will be used:

1. **Held out together.** Of the units that contributed judged documents alone (those with
   pseudo-holes), as many as the runs estimated (counting runs with one top k once; at least
   2, at most half) are held out together, group by group of a seeded partition, repeated to
   about :data:`DRAWS` groups (at half, 5 x 2 cross-validation: Dietterich, Neural Computation
   1998), so that every unit is held out as often as the others. The judgments only
   their top ranks brought in (down to the ranks the estimate draws) are removed: what a pool
   of the others would have judged. The grade model is refitted without them; the held-out
   runs are estimated together three ways (features read where the model was fitted), and
   scored in the full qrels, where their holes are judged together: the truth of judging
   their pool. Holes the qrels never judged count as not relevant in both, as in any truth.
2. **The one-standard-error rule** (Breiman, Friedman, Olshen & Stone, *Classification and
   Regression Trees*, 1984; Hastie, Tibshirani & Friedman, *The Elements of Statistical
   Learning*, 2nd ed., 7.10): of :data:`ORDER`, the first whose mean absolute error is within
   one standard error of the lowest, the standard error taken over the draws (each draw's MAE
   paired with the lowest one's). ``'run'`` stays unless the collection shows another better
   beyond the draws' noise.

Holes counted as not relevant are measured beside them (``mae['zero']``), to read, not to
abstain on: holding out pooled runs is a harsher test than most uses (when the runs
estimated are the pooled ones, with few holes), and the estimate's own check is
leave-one-unit-out (:func:`~.estimate.estimate_runs`).

``'run'`` without holding anything out, said as such: one run estimated (its pool is its own
holes), a measure with no ideal or R (P@k, RR: other runs' holes cannot move it), fewer than
:data:`MIN_UNITS` units with pseudo-holes. Units without pseudo-holes are never held out and
do not keep a document judged (the new runs of a shift contributed no judgment).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.measures import Measure
from ...core.measures.bounds import sorted_distinct
from ...core.words import counted
from .collection import World, features, make_world, pseudo_holes
from .drawn_scores import Case, fill_depth, holes_read_as_zero, pool_hole_rows, score_cases
from .grade_model import GradeDesign

AUTO = "auto"
ORDER = ("run", "midpoint", "pool")  # the one-standard-error rule keeps the first within reach of the best
DRAWS = 10  # groups of units held out, about (repeated partitions)
MIN_UNITS = 4  # units with pseudo-holes needed: two held out, two to fit on
TARGET_TEXT = {"run": "judging each run's own holes",
               "pool": "judging the holes of every run given together",
               "midpoint": "the midpoint of judging each run's own holes and judging every run's together, "
                           "its interval holding both"}
RULE = ("runs that contributed judgments held out and judged together; the first of run, midpoint, pool within "
        "one standard error (over the draws) of the lowest MAE (Breiman et al. 1984)")


@dataclass
class OverChoice:
    """What the estimate predicts, and the held-out figures it was chosen on."""

    chosen: str
    reason: str | None = None  # why nothing was held out (None: chosen on the figures)
    mae: dict | None = None  # 'run', 'midpoint', 'pool', 'zero' -> MAE over the held-out runs
    se: dict | None = None  # standard error over the draws of each one's MAE minus the lowest's
    runs: int = 0  # held-out run estimates (over every draw)
    units: int = 0  # units held out from
    held: int = 0  # units held out in each draw

    def describe(self) -> dict:
        """The JSON ``estimate.fit.over_choice``."""
        return {"chosen": self.chosen, "predicts": TARGET_TEXT[self.chosen], "rule": RULE, "reason": self.reason,
                "draws": DRAWS, "units": self.units, "held": self.held, "runs": self.runs, "mae": self.mae,
                "se": self.se}


def describe_choice(d: dict) -> str:
    """One clause of the estimate's line: what it predicts and how that was chosen (``d``:
    :meth:`OverChoice.describe`)."""
    what = f"it predicts {TARGET_TEXT[d['chosen']]} ({d['chosen']}"
    if d.get("mae") is None:
        return f"{what}: {d['reason']})"
    figs = ", ".join(f"{k} {d['mae'][k]:.4f}" for k in (*ORDER, "zero"))
    return (f"{what}, chosen by holding out {d['held']} of the {d['units']} runs that contributed judgments, "
            f"{d['draws']} times, and judging them together; MAE over {counted(d['runs'], 'held-out run')}: {figs})")


def held_out_world(pool, world: World, held: np.ndarray, kept: np.ndarray, depth: int) -> World:
    """``world`` without the judgments that only the ``held`` units' top ``depth`` brought in:
    judged documents in their top ``depth`` and in no ``kept`` unit's top pool depth
    (``depth``: the ranks the estimate draws, so that the truth holds no relevant document it
    could not draw)."""
    rows = np.flatnonzero(pool.pos < max(depth, pool.depth))
    unit = pool.unit[pool.run[rows]]
    by_kept = np.zeros(pool.n_pids, bool)
    by_kept[pool.pid[rows[_marked(pool.n_units, kept)[unit] & (pool.pos[rows] < pool.depth)]]] = True
    by_held = np.zeros(pool.n_pids, bool)
    by_held[pool.pid[rows[_marked(pool.n_units, held)[unit] & (pool.pos[rows] < depth)]]] = True
    return make_world(pool, world.removed | (by_held & ~by_kept & (pool.pid_level >= 0)))


def _marked(n: int, units) -> np.ndarray:
    """A mask of ``n`` units, True at ``units`` (np.isin imports numpy.ma: tests/cli/test_workflow_imports.py)."""
    mark = np.zeros(n, bool)
    mark[np.asarray(units, np.int64)] = True
    return mark


def choose_over(measure, pool, world: World, targets: list, source=None, *, seed: int = 0,
                maxgrade: int | None = None, draws: int = 64, min_pseudo_holes: int = 20) -> OverChoice:
    """:class:`OverChoice` for ``targets`` (module doc). ``source``: the grade source (None: the
    grade model, refitted per draw; else used as it is, as :func:`~.estimate.estimate_runs`).
    Each draw holds out as many units as ``targets`` has (at least 2), at most half of them."""
    measure = holes_read_as_zero(Measure.parse(measure))
    target_units = len(sorted_distinct(pool.unit[np.asarray(targets, np.int64)])) if len(targets) else 0
    if target_units < 2:
        return OverChoice("run", "one run (or runs with one top k): its pool is its own holes")
    if measure.family.normaliser is None:  # no ideal, no R: other runs' holes enter nothing it reads
        return OverChoice("run", f"{measure.family.name} reads no ideal or R: other runs' holes cannot move it")
    depth = fill_depth(measure, pool)
    units = sorted_distinct(pool.unit[pool.run[pseudo_holes(pool, world, depth)]])
    if len(units) < MIN_UNITS:
        return OverChoice("run", f"{counted(len(units), 'run')} contributed judged documents alone; holding out "
                                 f"needs {MIN_UNITS}", units=int(len(units)))
    size = max(2, min(target_units, len(units) // 2))
    errors = {k: [] for k in (*ORDER, "zero")}
    drawn_in = []  # the draw each held-out estimate came from
    judged = world.row_level >= 0  # holes are drawn only where the truth judged them: the rest count 0 in both
    # the truth of judging a held-out run's holes is its score in the full qrels, whatever the draw
    candidates = np.flatnonzero(_marked(pool.n_units, units)[pool.unit]).tolist()
    truth = dict(zip(candidates, (c.mean for c in score_cases(measure, pool, world, [Case(i) for i in candidates],
                                                               seed, maxgrade))))
    for s, held in enumerate(held_out_groups(units, size, seed)):
        wh = held_out_world(pool, world, held, units[~_marked(pool.n_units, held)[units]], depth)
        model = source
        if source is None:
            r = pseudo_holes(pool, wh, depth)
            owner = pool.unit[pool.run[r]]
            if len(sorted_distinct(owner)) < 2 or len(r) < min_pseudo_holes:
                continue
            model = GradeDesign(features(pool, wh, r, owner), wh.row_level[r], pool.levels, owner).fit()
        t = np.flatnonzero(_marked(pool.n_units, held)[pool.unit]).tolist()
        ideal = pool_hole_rows(measure, pool, wh, t)
        cases = ([Case(i, -1, model, draws, ideal_rows=ideal.get(i), drawn=judged) for i in t]
                 + [Case(i, -1, model, draws, drawn=judged) for i in t] + [Case(i) for i in t])
        got = score_cases(measure, pool, wh, cases, seed, maxgrade)
        n = len(t)
        for j in range(n):
            p, r_, z, tv = got[j].median, got[n + j].median, got[2 * n + j].mean, truth[t[j]]
            errors["pool"].append(abs(p - tv))
            errors["run"].append(abs(r_ - tv))
            errors["midpoint"].append(abs((p + r_) / 2 - tv))
            errors["zero"].append(abs(z - tv))
            drawn_in.append(s)
    if len(set(drawn_in)) < 2:
        return OverChoice("run", "fewer than two draws left two runs with enough pseudo-holes to fit on",
                          units=int(len(units)))
    chosen, se = one_standard_error(errors, drawn_in)
    mae = {k: float(np.mean(v)) for k, v in errors.items()}
    return OverChoice(chosen, None, mae, se, len(errors["run"]), int(len(units)), size)


def held_out_groups(units: np.ndarray, size: int, seed: int) -> list:
    """Repeated partitions of ``units`` into groups of ``size`` (5 x 2 cross-validation when
    size is half: Dietterich, Neural Computation 1998): each repetition a seeded shuffle, every
    unit held out once in it; about :data:`DRAWS` groups in all."""
    per = max(1, len(units) // size)
    out = []
    for r in range(max(1, math.ceil(DRAWS / per))):
        perm = np.random.default_rng([seed, r]).permutation(units)
        out += [np.sort(perm[c * size:(c + 1) * size]) for c in range(per)]
    return out


def one_standard_error(errors: dict, folds, order=ORDER) -> tuple:
    """The first of ``order`` whose mean absolute error is within one standard error of the
    lowest (``errors[c]``: absolute errors; ``folds``: the draw each came from). As in Hastie,
    Tibshirani & Friedman (7.10), the standard error is the folds': each fold's MAE, paired
    with the lowest one's in the same fold, sd(difference) / sqrt(folds). Returns it and each
    one's standard error."""
    folds = np.asarray(folds)
    labels = sorted(set(folds.tolist()))
    per = {k: np.array([np.mean(np.asarray(errors[k], np.float64)[folds == f]) for f in labels]) for k in order}
    best = min(order, key=lambda k: np.mean(errors[k]))
    g = len(labels)
    se = {k: float((per[k] - per[best]).std(ddof=1) / math.sqrt(g)) if g > 1 else 0.0 for k in order}
    return next(k for k in order if np.mean(errors[k]) <= np.mean(errors[best]) + se[k]), se
