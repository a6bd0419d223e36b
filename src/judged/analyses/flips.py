"""What judging the holes could flip among many runs, summed up: how many pairs of runs can
flip, the runs whose rank can change, and the flip matrix (runs in rank order), for
``judged holes`` and the report's first screen.

A pair *can flip* when the interval of its mean difference over the holes' grades
(:class:`judged.analyses.holes.unjudged.PairFlip`) reaches the other side of 0; a run's rank *can
change* when it is in such a pair (its rank among the runs is decided otherwise: judging
cannot move it past any other run).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.words import counted


@dataclass
class FlipSummary:
    """The pairs of ``runs`` (names, best score first) and whether each can flip."""

    runs: list  # run names, rank order: the measure's mean with the holes as not relevant, best first
    scores: dict  # run -> that mean
    pairs: list  # PairFlip of every pair given, as given

    def __post_init__(self):
        self._flips = {frozenset((p.a, p.b)): p for p in self.pairs}

    @property
    def flippable(self) -> list:
        """The pairs that can flip, in rank order (the better run's rank, then the other's)."""
        return [p for p in self.ranked_pairs() if p.can_flip]

    def ranked_pairs(self) -> list:
        """Every pair, in rank order: (1, 2), (1, 3), ..., (2, 3), ..."""
        rank = {name: i for i, name in enumerate(self.runs)}
        return sorted(self.pairs, key=lambda p: tuple(sorted((rank[p.a], rank[p.b]))))

    def pair(self, a: str, b: str):
        """The PairFlip of runs ``a`` and ``b`` (either order), or None."""
        return self._flips.get(frozenset((a, b)))

    def movable(self) -> list:
        """The runs whose rank can change (in some pair that can flip), in rank order."""
        moving = {name for p in self.pairs if p.can_flip for name in (p.a, p.b)}
        return [name for name in self.runs if name in moving]

    def matrix(self) -> list:
        """Row i, column j (rank order): True when runs i and j can flip, False when not,
        None on the diagonal and for a pair not given."""
        out = []
        for a in self.runs:
            row = []
            for b in self.runs:
                p = None if a == b else self.pair(a, b)
                row.append(None if p is None else bool(p.can_flip))
            out.append(row)
        return out

    def sentence(self, shown: dict | None = None) -> str:
        """'22 of 136 pairs of runs can flip; runs whose rank can change (12 of 17): a, b, ...'
        (``shown``: name -> how to print it)."""
        name = (lambda n: (shown or {}).get(n, n))
        n, flips, moving = len(self.pairs), len(self.flippable), self.movable()
        pairs = f"{flips} of {counted(n, 'pair')} of runs can flip (⇄)"
        if not moving:
            return pairs + "; judging the holes cannot change the rank of any run"
        fixed = [r for r in self.runs if r not in moving]
        if not fixed:
            return pairs + f"; the rank of every run can change ({len(moving)} of {len(self.runs)})"
        if len(fixed) < len(moving):  # the shorter list: the runs whose rank cannot change
            return (pairs + f"; runs whose rank can change: {len(moving)} of {len(self.runs)}, all but "
                    + ", ".join(name(r) for r in fixed))
        return (pairs + f"; runs whose rank can change ({len(moving)} of {len(self.runs)}): "
                + ", ".join(name(r) for r in moving))

    def to_dict(self) -> dict:
        return {"order": list(self.runs), "pairs": len(self.pairs), "can_flip": len(self.flippable),
                "runs_whose_rank_can_change": self.movable()}


def flip_summary(scores: dict, pairs: list) -> FlipSummary:
    """The :class:`FlipSummary` of runs scored ``scores`` (run -> mean; the order given breaks
    ties, NaN last) and the PairFlips ``pairs`` among them."""
    order = sorted(scores, key=lambda name: (scores[name] != scores[name],  # NaN last
                                             -scores[name] if scores[name] == scores[name] else 0.0))
    return FlipSummary(order, dict(scores), list(pairs))
