"""Choosing a pooling strategy by what it saved on a judged collection.

The rule (the one that chose ``judged pool --budget``'s default, docs/pooling.md): a
strategy is chosen over depth pooling only if, replayed on a judged collection
(``judged meta pooling``), it recovered the full-qrels ranking with fewer judgments than
depth pooling at *every* tolerance measured (by default :data:`RULE_TOLERANCES`). Of the
strategies that did, the one whose worst ratio to depth pooling's judgments is lowest
(then the lowest total, then the order given); if none did, depth pooling. A saving at
one tolerance alone does not transfer: on a held-back 59-run collection ``mm`` needed
37.5% more judgments than depth pooling at 0.01 after saving 28-30% on robust03 and
TREC DL 2019.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BASELINE = "depth"
RULE_TOLERANCES = (0.005, 0.01, 0.02)  # every run within this of its full-qrels score (or Kendall's tau 1)


@dataclass(frozen=True)
class Choice:
    """The strategy chosen (``None``: the baseline was not replayed, nothing to compare
    with), the tolerances it was chosen at, every strategy's change in judgments against
    the baseline per tolerance (``None``: one of the two never recovered) and why."""

    strategy: str | None
    tolerances: tuple
    versus: dict = field(default_factory=dict)  # name -> [relative change per tolerance]
    beaten_by: tuple = ()  # the strategies that beat the baseline at every tolerance, best first
    reason: str = ""

    def to_dict(self) -> dict:
        return {"strategy": self.strategy, "tolerances": list(self.tolerances), "beat_depth_everywhere":
                list(self.beaten_by), "versus_depth": self.versus, "reason": self.reason}


def beats(at: int | None, baseline: int | None) -> bool:
    """Recovered with fewer judgments than the baseline (a baseline that never recovered
    is beaten by any recovery)."""
    return at is not None and (baseline is None or at < baseline)


def choose(recovered: dict, tolerances) -> Choice:
    """The strategy to pool with, from ``recovered``: name -> {tolerance: judgments to
    recover the ranking at that tolerance, or None (never)}, the baseline
    (:data:`BASELINE`) among them. A tolerance may be any key, e.g. (collection,
    protocol, tolerance) to choose over several replays at once."""
    tolerances = tuple(tolerances)
    if BASELINE not in recovered:
        return Choice(None, tolerances, reason=f"{BASELINE} pooling was not replayed: nothing to compare with "
                                                f"(add --strategy {BASELINE})")
    base = recovered[BASELINE]
    versus, ranked = {}, []
    for i, (name, at) in enumerate(recovered.items()):
        versus[name] = [None if at[t] is None or not base[t] else (at[t] - base[t]) / base[t] for t in tolerances]
        if name != BASELINE and all(beats(at[t], base[t]) for t in tolerances):
            worst = max(at[t] / base[t] if base[t] else 0.0 for t in tolerances)
            ranked.append((worst, sum(at[t] for t in tolerances), i, name))
    listed = ", ".join(map(_name, tolerances))
    if not ranked:
        return Choice(BASELINE, tolerances, versus, (), f"no strategy recovered the ranking with fewer judgments than "
                                                        f"{BASELINE} pooling at every tolerance ({listed})")
    ranked.sort()
    best = ranked[0][3]
    changes = ", ".join(f"{_name(t)}: {_change(v)}" for t, v in zip(tolerances, versus[best]))
    return Choice(best, tolerances, versus, tuple(r[3] for r in ranked),
                  f"it recovered the ranking with fewer judgments than {BASELINE} pooling at every tolerance "
                  f"({changes})")


def _name(cell) -> str:
    """A tolerance as printed (a cell of several collections: its parts)."""
    return f"{cell:g}" if isinstance(cell, float) else " ".join(map(_name, cell)) if isinstance(cell, tuple) else str(cell)


def _change(v: float | None) -> str:
    return "depth never recovered" if v is None else f"{v:+.1%}"
