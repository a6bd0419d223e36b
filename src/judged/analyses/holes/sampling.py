"""Judging a sample of the holes: a stratified random sample whose inclusion
probabilities are recorded, so that measures can be estimated from it without bias
(:mod:`judged.analyses.holes.inference`).

The design (``judged pool --strategy sample --budget N --seed S``):

* **Population**: the unjudged (query, document) pairs in the runs' top ``depth`` (the
  holes of a depth pool), each with its best rank over the runs.
* **Weights** (more near the top): statAP's sampling prior at the best rank r of a pool
  of depth D, w(r) = (1 + H_D - H_(r-1)) / (2D), H the harmonic numbers (Aslam, Pavlu &
  Yilmaz, "A statistical method for system evaluation using incomplete judgments",
  SIGIR 2006). Target inclusion probabilities pi_i = min(1, lambda * w_i), lambda set so
  that they sum to the budget.
* **Strata**: cells (query, best-rank bin), bins 1, 2-3, 4-7, 8-15, ... (or ``strata=``
  bin starts); within a query, bins are merged from the top down until each stratum
  expects at least three judgments; queries that expect fewer than three in all share
  strata by rank bin (merged the same way). As in the stratified designs of Yilmaz,
  Kanoulas & Aslam, "A simple and efficient sampling method for estimating AP and NDCG"
  (SIGIR 2008).
* **Allocation**: n_h = the stratum's expected count rounded to the budget (largest
  remainder), at least min(3, N_h): with one left out by the jackknife, two remain.
* **Draw**: simple random sampling without replacement of n_h of the N_h pairs of each
  stratum (numpy's ``default_rng(seed)``); every pair of stratum h is included with
  probability pi_h = n_h / N_h, two distinct pairs of it with n_h (n_h - 1) / (N_h (N_h - 1)),
  pairs of different strata independently. The judging order is a random permutation of
  the sample, so the pairs judged by the time judging stops are still a random sample of
  each stratum (missing at random).

The pool file keeps the whole design: one ``# stratum`` header line per stratum, the
sampled pairs as the pool's lines (with ``strategy stratum inclusion``), and the pairs of
the population that were not drawn as ``#~`` lines, which every reader of pool files
skips as comments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core.words import counted
from ...core.errors import ConventionError, ParseError

MIN_PER_STRATUM = 3  # judgments per stratum: with one left out (the jackknife) two remain, so the
# within-stratum joint inclusion probabilities (statAP) and the stratum's variance can still be estimated
EXPECTED_PER_STRATUM = 3  # bins are merged until a stratum expects this many judgments
METHOD = ("stratified random sampling without replacement of the holes in the runs' top depth; strata: "
          "(query, best-rank bin) cells merged top-down to >= 3 expected judgments, queries expecting fewer "
          "share rank-bin strata; allocation by statAP's prior weight at the best rank (Aslam, Pavlu & Yilmaz "
          "2006), >= 3 per stratum; inclusion probability n_h/N_h")
UNSAMPLED_PREFIX = "#~"


def ap_prior(rank, depth: int) -> np.ndarray:
    """statAP's sampling prior at ``rank`` of a depth-``depth`` list: (1 + H_D - H_(r-1)) / (2D)
    (Aslam, Pavlu & Yilmaz, SIGIR 2006); it sums to 1 over ranks 1..D.

    >>> [round(float(x), 4) for x in ap_prior([1, 2, 10], 10)]
    [0.1964, 0.1464, 0.055]
    >>> round(float(ap_prior(range(1, 11), 10).sum()), 12)
    1.0
    """
    rank = np.asarray(rank, np.int64)
    harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, depth + 1))))
    return (1.0 + harmonic[depth] - harmonic[np.clip(rank - 1, 0, depth)]) / (2.0 * depth)


def rank_bins(depth: int, starts=None) -> list[tuple[int, int]]:
    """Best-rank bins ``[(first, last), ...]`` covering 1..depth: 1, 2-3, 4-7, 8-15, ... by
    default, or starting at the given ranks.

    >>> rank_bins(10)
    [(1, 1), (2, 3), (4, 7), (8, 10)]
    >>> rank_bins(100, [1, 11, 31])
    [(1, 10), (11, 30), (31, 100)]
    """
    if starts is None:
        starts, s = [], 1
        while s <= depth:
            starts.append(s)
            s *= 2
    starts = sorted({int(s) for s in starts})
    if not starts or starts[0] != 1 or any(s < 1 for s in starts):
        raise ConventionError(f"--strata must be rank bin starts beginning with 1, e.g. 1,2,4,8; got {starts}")
    starts = [s for s in starts if s <= depth]
    ends = [s - 1 for s in starts[1:]] + [depth]
    return list(zip(starts, ends))


def water_fill(weights: np.ndarray, total: float) -> np.ndarray:
    """Probabilities min(1, lambda * w) summing to ``total`` (every w > 0, total <= len(w)).

    >>> water_fill(np.array([4.0, 1.0, 1.0]), 2.0).round(3).tolist()
    [1.0, 0.5, 0.5]
    """
    pi = np.zeros(len(weights))
    capped = np.zeros(len(weights), bool)
    if total >= len(weights):
        return np.ones(len(weights))
    while True:
        free = ~capped
        lam = (total - capped.sum()) / weights[free].sum()
        pi = np.where(capped, 1.0, lam * weights)
        over = free & (pi >= 1.0)
        if not over.any():
            return pi
        capped |= over


@dataclass
class Stratum:
    """One stratum: its rank bins, its queries, its population N and sample size n."""

    id: int
    ranks: tuple  # (first, last) best rank
    queries: str  # a qid, or "shared(Q)" for Q queries sharing the stratum
    population: int
    sampled: int

    @property
    def inclusion(self) -> float:
        """pi_h = n_h / N_h: every pair's probability of being drawn."""
        return self.sampled / self.population if self.population else 0.0

    def line(self) -> str:
        return (f"# stratum id={self.id} best_rank={self.ranks[0]}-{self.ranks[1]} queries={self.queries} "
                f"population={self.population} sampled={self.sampled} inclusion={self.inclusion:.10g}")


@dataclass
class DesignUnit:
    """A pair of the population: drawn (``sampled``) or left to be inferred."""

    qid: str
    docid: str
    best_rank: int
    runs: list
    stratum: int
    sampled: bool


@dataclass
class SampleDesign:
    """The population, its strata and which pairs were drawn."""

    strata: dict  # id -> Stratum
    units: list  # DesignUnit, the whole population
    seed: int | None = None
    method: str = METHOD
    extra: dict = field(default_factory=dict)

    @property
    def sampled(self) -> list:
        return [u for u in self.units if u.sampled]

    def inclusion(self, unit: DesignUnit) -> float:
        return self.strata[unit.stratum].inclusion

    def header_lines(self) -> list[str]:
        return ([f"# design: {self.method}"] + [s.line() for s in self.strata.values()])

    def unsampled_lines(self) -> list[str]:
        rest = [u for u in self.units if not u.sampled]
        if not rest:
            return []
        out = [f"# not drawn ({counted(len(rest), 'pair')} of the population, inferred from the sample): "
               "qid docid best_rank runs stratum inclusion"]
        out += [f"{UNSAMPLED_PREFIX} {u.qid} {u.docid} {u.best_rank} {','.join(u.runs)} {u.stratum} "
                f"{self.strata[u.stratum].inclusion:.10g}" for u in rest]
        return out


def draw(candidates, budget: int, seed: int, depth: int, starts=None):
    """(the drawn pairs in judging order, :class:`SampleDesign`) for ``candidates``
    (objects with ``qid``, ``docid``, ``best_rank``, ``runs``): the design of the module
    docstring. The drawn candidates get ``strategy``, ``stratum`` and ``inclusion`` set."""
    cands, strata, members = allocate(candidates, budget, seed, depth, starts)
    if not cands:
        return [], SampleDesign({}, [], int(seed))
    rng = np.random.default_rng(int(seed))
    units, drawn = [], []
    for (sid, stratum), idx in zip(strata.items(), members):
        chosen = set(rng.choice(idx, size=stratum.sampled, replace=False).tolist())
        for i in idx.tolist():
            p = cands[i]
            units.append(DesignUnit(p.qid, p.docid, p.best_rank, list(p.runs), sid, i in chosen))
            if i in chosen:
                p.strategy, p.stratum, p.inclusion = "sample", str(sid), stratum.inclusion
                drawn.append(p)
    order = rng.permutation(len(drawn))
    units.sort(key=lambda u: (u.stratum, u.qid, u.docid))
    return [drawn[i] for i in order], SampleDesign(strata, units, int(seed))


def draw_many(members: list, sizes, seeds) -> list:
    """For each seed, the candidate indices :func:`draw` would draw (the same generator
    calls), for repeated samples of one design."""
    out = []
    for seed in seeds:
        rng = np.random.default_rng(int(seed))
        out.append(np.concatenate([rng.choice(m, size=int(n), replace=False) for m, n in zip(members, sizes)]
                                  or [np.zeros(0, np.int64)]))
    return out


def allocate(candidates, budget: int, seed, depth: int, starts=None):
    """(candidates sorted by qid and docid, {id: Stratum}, [candidate indices per
    stratum]): the strata and sample sizes, which do not depend on the seed."""
    if budget is None:
        raise ConventionError("--strategy sample needs --budget N (how many pairs to judge)")
    if budget < MIN_PER_STRATUM:
        raise ConventionError(f"--strategy sample needs --budget of at least {MIN_PER_STRATUM}, got {budget}")
    if seed is None or isinstance(seed, bool) or int(seed) != seed or seed < 0:
        raise ConventionError(f"--seed must be a non-negative integer, got {seed}")
    bins = rank_bins(depth, starts)
    cands = sorted(candidates, key=lambda p: (p.qid, p.docid))  # independent of the runs' order
    if not cands:
        return cands, {}, []
    best = np.array([p.best_rank for p in cands], np.int64)
    pi = water_fill(ap_prior(best, depth), float(min(budget, len(cands))))
    bin_of = np.searchsorted([b[0] for b in bins], best, side="right") - 1
    qids = [p.qid for p in cands]
    cells: dict = {}  # (qid, bin) -> list of candidate indices
    for i, (q, b) in enumerate(zip(qids, bin_of.tolist())):
        cells.setdefault((q, b), []).append(i)
    per_query: dict = {}
    for (q, b), members in cells.items():
        per_query.setdefault(q, []).append((b, members))
    groups = []  # (queries label, [(bins, members)]) before merging
    shared: dict = {}
    for q in sorted(per_query):
        cell_list = sorted(per_query[q])
        if sum(pi[m].sum() for _, m in cell_list) >= EXPECTED_PER_STRATUM:
            groups.append((q, cell_list))
        else:
            for b, m in cell_list:
                shared.setdefault(b, []).extend(m)
    shared_queries = sorted({qids[i] for m in shared.values() for i in m})
    if shared:
        groups.append((f"shared({len(shared_queries)})", sorted(shared.items())))
    strata_members = []
    for label, cell_list in groups:
        for lo_bin, hi_bin, members in _merge_top_down(cell_list, pi):
            strata_members.append((label, (bins[lo_bin][0], bins[hi_bin][1]), members))
    sizes = _allocate([len(m) for _, _, m in strata_members], [pi[m].sum() for _, _, m in strata_members],
                      min(budget, len(cands)))
    strata = {sid: Stratum(sid, ranks, label, len(members), int(n))
              for sid, ((label, ranks, members), n) in enumerate(zip(strata_members, sizes), 1)}
    return cands, strata, [np.asarray(m) for _, _, m in strata_members]


def _merge_top_down(cell_list, pi):
    """[(first bin, last bin, members)]: consecutive bins joined from the top until each
    group expects >= EXPECTED_PER_STRATUM judgments; a short remainder joins the group above."""
    out, cur, first = [], [], None
    for b, members in cell_list:
        if first is None:
            first = b
        cur = cur + list(members)
        if pi[cur].sum() >= EXPECTED_PER_STRATUM:
            out.append([first, b, cur])
            cur, first = [], None
    if cur:
        if out:
            out[-1][1] = cell_list[-1][0]
            out[-1][2] = out[-1][2] + cur
        else:
            out.append([first, cell_list[-1][0], cur])
    return [tuple(x) for x in out]


def _allocate(population, expected, budget: int) -> np.ndarray:
    """Integer sample sizes: at least min(MIN_PER_STRATUM, N_h), at most N_h, summing to
    ``budget``; the rest by largest remainder of the expected counts."""
    N = np.asarray(population, np.int64)
    e = np.asarray(expected, np.float64)
    n = np.minimum(N, MIN_PER_STRATUM)
    if n.sum() > budget:
        raise ConventionError(f"the design has {counted(len(N), 'stratum', 'strata')} and needs at least "
                              f"{counted(int(n.sum()), 'judgment')} "
                              f"({MIN_PER_STRATUM} per stratum); --budget {budget} is too small")
    left = budget - int(n.sum())
    extra = np.maximum(e - n, 0.0)
    if extra.sum() > 0 and left > 0:
        share = extra / extra.sum() * left
        add = np.minimum(np.floor(share).astype(np.int64), N - n)
        n = n + add
        left = budget - int(n.sum())
        rem = share - np.floor(share)
        while left > 0:
            room = N > n
            if not room.any():
                break
            cand = np.where(room, rem, -np.inf)
            i = int(np.argmax(cand))
            n[i] += 1
            rem[i] = -1.0 if rem[i] >= 0 else rem[i] - 1.0
            left -= 1
    while left > 0:  # no expected mass left anywhere: fill the strata with room, top first
        room = np.flatnonzero(N > n)
        if not len(room):
            break
        n[room[0]] += 1
        left -= 1
    return n


# ---------------------------------------------------------------------------
# reading the design back from a pool file


def parse_design(path: str, header: list, unsampled: list, drawn: list, seed) -> SampleDesign | None:
    """The design of a pool file: ``header`` its ``# stratum`` lines (lineno, text),
    ``unsampled`` its ``#~`` lines (lineno, fields), ``drawn`` its pairs with a stratum."""
    strata = {}
    for lineno, text in header:
        kv = dict(tok.split("=", 1) for tok in text.split()[2:] if "=" in tok)
        try:
            sid = int(kv["id"])
            lo, hi = (int(x) for x in kv["best_rank"].split("-"))
            strata[sid] = Stratum(sid, (lo, hi), kv.get("queries", ""), int(kv["population"]), int(kv["sampled"]))
        except (KeyError, ValueError):
            raise ParseError(path, lineno, "a '# stratum' line needs id=, best_rank=A-B, population= and sampled=")
    if not strata:
        return None
    units = []
    for lineno, f in unsampled:
        if len(f) < 5:
            raise ParseError(path, lineno, "a '#~' line needs qid docid best_rank runs stratum")
        try:
            units.append(DesignUnit(f[0], f[1], int(f[2]), f[3].split(","), int(f[4]), False))
        except ValueError:
            raise ParseError(path, lineno, "best_rank and stratum must be integers")
    for lineno, p in drawn:
        units.append(DesignUnit(p.qid, p.docid, p.best_rank, list(p.runs), int(p.stratum), True))
    counts: dict = {}
    for lineno_u, u in zip([x[0] for x in unsampled] + [x[0] for x in drawn], units):
        if u.stratum not in strata:
            raise ParseError(path, lineno_u, f"stratum {u.stratum} is not declared in a '# stratum' line")
        c = counts.setdefault(u.stratum, [0, 0])
        c[0] += 1
        c[1] += u.sampled
    for sid, s in strata.items():
        N, n = counts.get(sid, (0, 0))
        if (N, n) != (s.population, s.sampled):
            raise ParseError(path, None, f"stratum {sid} declares population {s.population} and sampled {s.sampled} "
                                         f"but the file lists {counted(N, 'pair')} of it, {n} drawn")
    units.sort(key=lambda u: (u.stratum, u.qid, u.docid))
    return SampleDesign(strata, units, seed)
