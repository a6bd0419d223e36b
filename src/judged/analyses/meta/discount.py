"""Wang et al. (COLT 2013) on synthetic rankers: nDCG drifts toward 1, the log discount
still separates rankers, and the speed of the discount decides whether that lasts.

The model is the paper's: a collection of n items with features x ~ Uniform(0, 1) and
binary relevance y ~ Bernoulli(eta(x)), eta(x) = 0.8 x (so even the best items are a coin
flip, if a biased one). The ``better`` ranker orders items by x (the Bayes-optimal order);
the ``worse`` ranker by x + Uniform(-noise, noise) (bounded noise: in a large collection it
too puts items with x near 1 first, so the two differ below the top). For each
collection size n, ``trials`` collections are drawn and both rankers scored by nDCG over
the whole ranking (no cutoff) under each discount. Two numbers per cell:

* the mean nDCG of each ranker (with the log discount both drift toward 1 as n grows);
* separation: the share of collections on which the better ranker scores higher (ties
  count half). A measure is *consistently distinguishing* (the paper's term) when
  separation tends to 1 as n grows.

The paper's characterisation: the log discount and every polynomial discount 1/r^p with
p < 1 are consistently distinguishing; 1/r is the critical point; a discount decaying
faster than 1/r (sum of D(r) finite, e.g. 1/r^2) is not, because nDCG then depends on the
top few items only and stays a coin toss between two rankers that both place good items
first. (A discount that does not decay at all, D(r) = 1, gives nDCG = 1 to every full
ranking.) See docs/meta-evaluation.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.words import counted
from ...core.conventions import Discount
from ...core.errors import JudgedError
from .plot import pyplot, save

DEFAULT_SIZES = (10, 100, 1000, 10000)
DEFAULT_TRIALS = 200
DEFAULT_NOISE = 0.3
DEFAULT_SEED = 0
TOP_RELEVANCE = 0.8  # eta(x) = 0.8 x: even the best items are relevant with probability 0.8
DEFAULT_DISCOUNTS = ("log2", "power:0.5", "reciprocal", "power:2")
_BLOCK_ITEMS = 2_000_000  # items per vectorised block (bounds memory)


def parse_discount(text: str) -> Discount:
    """``log2``, ``reciprocal``, ``power:P`` (1/r^P) or ``jk2002:B``."""
    kind, _, arg = str(text).partition(":")
    if kind == "power":
        return Discount.parse("power", p=float(arg) if arg else None)
    if kind == "jk2002":
        return Discount.parse("jk2002", base=float(arg) if arg else None)
    if arg:
        raise JudgedError(f"discount {kind!r} takes no parameter ({text!r})")
    return Discount.parse(kind)


@dataclass
class DiscountSimulation:
    sizes: list
    discounts: list  # canonical discount strings
    trials: int
    noise: float
    seed: int
    mean_better: np.ndarray  # discounts x sizes
    mean_worse: np.ndarray
    separation: np.ndarray

    def rows(self) -> list[dict]:
        return [{"discount": d, "n": n, "ndcg_better": float(self.mean_better[i, k]),
                 "ndcg_worse": float(self.mean_worse[i, k]), "separation": float(self.separation[i, k])}
                for i, d in enumerate(self.discounts) for k, n in enumerate(self.sizes)]

    def to_dict(self) -> dict:
        return {"model": {"items": f"x ~ U(0,1), y ~ Bernoulli({TOP_RELEVANCE:g} x)", "better": "rank by x",
                          "worse": f"rank by x + U(-{self.noise:g}, {self.noise:g})", "measure": "nDCG, whole ranking, binary gain",
                          "trials": self.trials, "seed": self.seed},
                "rows": self.rows()}


def simulate_discount(sizes=DEFAULT_SIZES, discounts=DEFAULT_DISCOUNTS, *, trials: int = DEFAULT_TRIALS,
                      noise: float = DEFAULT_NOISE, seed: int = DEFAULT_SEED) -> DiscountSimulation:
    """Mean nDCG of a better and a worse ranker, and how often the better one wins, as
    the collection grows (see the module docstring for the model)."""
    sizes = [int(n) for n in sizes]
    if not sizes or min(sizes) < 2:
        raise JudgedError("collection sizes must be integers >= 2")
    if trials < 1 or noise <= 0:
        raise JudgedError("trials must be positive and noise > 0")
    parsed = [parse_discount(d) for d in discounts]
    rng = np.random.default_rng(seed)
    shape = (len(parsed), len(sizes))
    mean_b, mean_w, sep = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    for k, n in enumerate(sizes):
        ranks = np.arange(1, n + 1, dtype=np.float64)
        weights = [d.divide(np.ones(n), ranks) for d in parsed]
        ideal = [np.concatenate(([0.0], np.cumsum(w))) for w in weights]  # IDCG for R relevant = ideal[R]
        better, worse = [[] for _ in parsed], [[] for _ in parsed]
        block = max(1, _BLOCK_ITEMS // n)
        for lo in range(0, trials, block):
            t = min(block, trials - lo)
            x = np.sort(rng.random((t, n)), axis=1)[:, ::-1]  # the better ranker's order: x descending
            y = (rng.random((t, n)) < TOP_RELEVANCE * x).astype(np.float64)
            order = np.argsort(-(x + rng.uniform(-noise, noise, size=(t, n))), axis=1, kind="stable")
            y_worse = np.take_along_axis(y, order, axis=1)
            rel = y.sum(axis=1).astype(np.int64)
            for i, w in enumerate(weights):
                idcg = ideal[i][rel]
                with np.errstate(invalid="ignore", divide="ignore"):
                    better[i].append(np.where(idcg > 0, (y @ w) / idcg, 0.0))
                    worse[i].append(np.where(idcg > 0, (y_worse @ w) / idcg, 0.0))
        for i in range(len(parsed)):
            b, w = np.concatenate(better[i]), np.concatenate(worse[i])
            mean_b[i, k], mean_w[i, k] = b.mean(), w.mean()
            sep[i, k] = ((b > w).sum() + 0.5 * (b == w).sum()) / len(b)
    return DiscountSimulation(sizes, [str(d) for d in parsed], int(trials), float(noise), int(seed),
                              mean_b, mean_w, sep)


def plot_discount_simulation(sim: DiscountSimulation, path) -> None:
    """Two panels against collection size: mean nDCG of both rankers, and separation."""
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(10, 4))
    for i, d in enumerate(sim.discounts):
        line, = left.plot(sim.sizes, sim.mean_better[i], marker="o", label=f"{d} better")
        left.plot(sim.sizes, sim.mean_worse[i], marker="x", linestyle="--", color=line.get_color(),
                  label=f"{d} worse")
        right.plot(sim.sizes, sim.separation[i], marker="o", label=d)
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("items per collection (n)")
    left.set_ylabel("mean nDCG (whole ranking)")
    left.legend(fontsize="x-small", ncol=2)
    right.set_ylabel("better ranker wins (share of collections)")
    right.axhline(1.0, color="grey", linewidth=0.8)
    right.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
    right.set_ylim(0.4, 1.02)
    right.legend(fontsize="small")
    fig.suptitle(f"Wang et al. (COLT 2013) on synthetic rankers: {counted(sim.trials, 'collection')} per size, seed {sim.seed}")
    fig.tight_layout()
    save(fig, path)
