"""Which estimate to use on a collection, measured there: each configuration of the hole
estimate (``method:what it predicts``, ``judged holes --estimate`` and ``--estimate-over``)
replayed under one protocol of ``judged meta holdout`` on the collection's own judged runs,
and the rule judged's own default follows (docs/holes.md, "New systems on an old pool"):
a configuration is recommended only if, in every cell where it estimates, its mean absolute
error is below both holes-as-zero's and condensed's (Sakai, SIGIR 2007) over the runs it
estimated, and it abstains on at most :data:`MAX_ABSTAINED` of the runs of a cell (``few``
cells excepted: three new runs alone may give the grade model nothing to learn from); the
lowest mean MAE over the cells among those. Else none is: the estimate is then a number to
read beside its exact bounds, not one to rank by. The analogue of ``judged meta pooling``'s
recommendation for ``judged pool --budget``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ...core.errors import ConventionError
from .holdout import holdout

METHODS = ("loro-logit", "run-prior", "auto")
OVER = ("auto", "run", "pool", "midpoint")
CONFIGS = tuple(f"{m}:{o}" for m in METHODS for o in OVER)
DEFAULT_CONFIG = "loro-logit:auto"  # judged holes' default: --estimate loro-logit --estimate-over auto
MAX_ABSTAINED = 0.25  # share of a cell's runs (with a truth) an estimator may abstain on, but in `few`


def parse_configs(text: str) -> list:
    """``all`` or comma-separated ``method:over`` (:data:`CONFIGS`), the default first if given."""
    if text.strip() == "all":
        return list(CONFIGS)
    out = [c.strip() for c in text.split(",") if c.strip()]
    bad = [c for c in out if c not in CONFIGS]
    if bad or not out:
        raise ConventionError(f"--estimates: {', '.join(bad) or 'nothing given'}: each must be one of "
                              f"{', '.join(CONFIGS)} (method:what it predicts), or 'all'")
    return list(dict.fromkeys(out))


@dataclass
class EstimateChoice:
    """Each configuration's summary per cell of one protocol, and the one recommended."""

    protocol: str
    measure: str
    cells: dict  # config -> {cell name: the protocol's summary of that cell}
    choice: str | None  # None: no configuration beat both baselines in every cell
    reason: str
    lost: dict = field(default_factory=dict)  # config -> cells where it did not beat both baselines

    def to_dict(self) -> dict:
        """The JSON: per configuration and cell the MAE of zero, condensed and the estimate over
        the runs it estimated, how many it estimated and abstained on; the choice and why."""
        keep = ("mae_zero", "mae_condensed", "mae_estimate", "estimated", "abstained", "beats")
        return {"protocol": self.protocol, "measure": self.measure, "rule": __doc__.split("\n\n")[0].replace("\n", " "),
                "configs": {c: {name: {k: v for k, v in row_of(s, self.protocol).items() if k in keep}
                                for name, s in cells.items()} for c, cells in self.cells.items()},
                "choice": self.choice, "reason": self.reason, "lost": self.lost}


def row_of(summary: dict, protocol: str) -> dict:
    """A cell's figures for the rule: MAE of each scoring, runs estimated and abstained on,
    and whether the estimate beat both baselines there (None: it estimated no run)."""
    mae = summary["mae"]
    z, c, e = mae["zero"], mae["condensed"], mae["estimate"]
    abstained = len(summary["abstained"]) if isinstance(summary.get("abstained"), list) else int(
        summary.get("abstained") or 0)
    estimated = int(summary["estimated"])
    beats = None if not estimated or math.isnan(e) else bool(e < z and e < c)
    too_many = protocol != "few" and abstained > MAX_ABSTAINED * max(estimated + abstained, 1)
    return {"mae_zero": z, "mae_condensed": c, "mae_estimate": e, "estimated": estimated, "abstained": abstained,
            "beats": beats, "too_many_abstained": too_many}


def choose(cells: dict, protocol) -> tuple:
    """(choice or None, reason, lost): the rule of the module doc over ``cells`` (config ->
    {cell: summary}); ``protocol``: the cells' protocol, or {cell: protocol} (several at once)."""
    passed, lost = [], {}
    of = protocol if isinstance(protocol, dict) else {}
    for config, by_cell in cells.items():
        rows = {name: row_of(s, of.get(name, protocol)) for name, s in by_cell.items()}
        lost[config] = [name for name, r in rows.items() if r["beats"] is False or r["too_many_abstained"]]
        scored = [r["mae_estimate"] for r in rows.values() if r["beats"]]
        if scored and not lost[config]:
            passed.append((sum(scored) / len(scored), config))
    if not passed:
        worst = ", ".join(f"{c} lost {len(v)} of {len(cells[c])}" for c, v in lost.items())
        return None, (f"no configuration beat holes-as-zero and condensed in every cell ({worst}): read the "
                      f"estimate beside its exact bounds"), lost
    mean, best = min(passed)
    return best, (f"its MAE was below holes-as-zero's and condensed's in every cell where it estimated (mean "
                  f"{mean:.4f} over the cells){'' if best == DEFAULT_CONFIG else f'; the default is {DEFAULT_CONFIG}'}"), lost


def cells_of(result) -> dict:
    """{cell name: summary} of a ``holdout`` result (one cell for loro and group)."""
    if hasattr(result, "cells"):
        return {c.name: c.summary() for c in result.cells}
    return {result.protocol: result.summary()}


def compare_estimates(qrels, runs, configs, *, measure=None, protocol: str | None = None, **holdout_args) -> EstimateChoice:
    """Replay ``judged meta holdout`` (:func:`judged.analyses.meta.holdout.holdout`, same
    arguments) once per configuration in ``configs`` and choose by the module's rule."""
    cells, name, proto = {}, None, protocol
    for config in configs:
        method, over = config.split(":")
        res = holdout(qrels, runs, measure=measure, protocol=protocol, estimate=method, estimate_over=over,
                      **holdout_args)
        cells[config], name, proto = cells_of(res), res.measure, res.protocol
    choice, reason, lost = choose(cells, proto)
    return EstimateChoice(proto, name, cells, choice, reason, lost)
