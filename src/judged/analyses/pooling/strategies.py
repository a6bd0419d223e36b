"""The registry of ``judged pool``'s strategies (:data:`STRATEGIES`) and what a strategy
reads (:class:`PoolContext`, the candidate :class:`~.poolfile.PoolPair`) and returns
(:class:`Selection`); the strategies live in :mod:`judged.pool` and :mod:`judged.machine_pool`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass
class PoolContext:
    """What a strategy may read: the qrels, every run aligned with them, the pool depth,
    the budget and the options (``maxgrade``, ``seed``, strategy-specific ones)."""

    qrels: object
    aligned: dict  # run name -> Aligned
    depth: int
    budget: int | None
    maxgrade: int | None = None
    seed: int | None = None
    options: dict = field(default_factory=dict)


@dataclass
class Selection:
    """A strategy's answer: the pairs to judge in order (at most the budget), how the
    header names the strategy, its extra columns and, for a sample, its design."""

    pairs: list
    label: str | None = None  # header text, e.g. impact(nDCG@10,maxgrade=3); default the name
    columns: tuple = ()  # strategy-specific columns (PoolPair attribute or fields key)
    design: object = None  # judged.sampling.SampleDesign for --strategy sample
    meta: dict = field(default_factory=dict)  # extra key=value for the header (e.g. seed)


@dataclass(frozen=True)
class Strategy:
    name: str
    summary: str  # one line for --help
    select: Callable  # (pairs: list[PoolPair], ctx: PoolContext) -> Selection
    source: str = ""  # a header line of the pool file: the source and what the columns mean


STRATEGIES: dict = {}


def register_strategy(name: str, summary: str, source: str = ""):
    """Decorator: register ``select(pairs, ctx) -> Selection`` as ``--strategy name``."""
    def wrap(select):
        STRATEGIES[name] = Strategy(name, summary, select, source)
        return select
    return wrap
