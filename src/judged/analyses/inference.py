"""Estimates by inference from a judged sample of the holes: what judging every pair of the
sampling design would show, with design-based intervals (docs/holes.md, "Judging a sample,
inferring the rest", states the method in full and checks it).

A sample drawn by ``judged pool --strategy sample`` (:mod:`judged.sampling`) gives each hole
its stratum h, N_h and n_h. A ranked document is then judged outside the design (known),
drawn and judged (known, inclusion pi_h = n_h/N_h), not drawn (unknown, in stratum h) or
outside the pool (not relevant, as a depth pool's full judgment counts it).

* Estimators (:class:`Estimator`), per query, then averaged: ``statAP`` and ``statNDCG@k``,
  Horvitz-Thompson ratios (Aslam, Pavlu & Yilmaz, SIGIR 2006); ``xinfAP`` and ``infNDCG@k``
  (Yilmaz, Kanoulas & Aslam, SIGIR 2008; ``xinfAP`` is trec_eval's infAP for one uniform
  stratum per query).
* Intervals: the stratified jackknife with the finite-population correction and
  Satterthwaite's degrees of freedom (Wolter, *Introduction to Variance Estimation*, 2007,
  ch. 4), a stratum's variance floored where its sample drew nothing relevant
  (:meth:`Estimates.floor`); simultaneous over the runs of one estimator by the simulated
  max-|Z| critical value (Hothorn, Bretz & Westfall, Biometrical Journal 2008), Bonferroni
  where no correlation can be formed (:meth:`Estimates.simultaneous`).
* When to stop (:func:`judgments_to_decide`): the variance projected to a larger sample,
  v_h(n') = (1 - n'_h/N_h) S_h^2 / n'_h, and the fewest more judgments deciding the order
  with probability ``power`` (Cochran, *Sampling Techniques*, 1977, ch. 4-5).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from statistics import NormalDist

import numpy as np

from ..core.words import counted
from ..core.conventions import Settings
from ..core.errors import ConventionError, MeasureError
from ..core.measures import Measure
from ..core.align import align
from ..core.data import Qrels

EPS = 0.00001  # trec_eval's INFAP_EPSILON
OUTSIDE = -2  # stratum code of a document outside the pool (not judged, not in the design)
JUDGED = -1  # stratum code of a judgment outside the design (certainty)

METHODS = {
    "statAP": "statAP (Aslam, Pavlu & Yilmaz, SIGIR 2006): Horvitz-Thompson R and AP numerator with joint "
              "inclusion probabilities, their ratio, jackknife bias-corrected",
    "statNDCG": "statNDCG (statAP's construction for nDCG): Horvitz-Thompson DCG@k over Horvitz-Thompson counts "
                "per grade for the ideal, their ratio, jackknife bias-corrected",
    "xinfAP": "xinfAP (Yilmaz, Kanoulas & Aslam, SIGIR 2008): expected precision at each known relevant document "
              "from the drawn documents above it per stratum ((rel + eps)/(drawn + 2 eps), eps 1e-5 as trec_eval), "
              "over Horvitz-Thompson R; not bias-corrected",
    "infNDCG": "infNDCG (Yilmaz, Kanoulas & Aslam, SIGIR 2008): not-drawn documents get the mean gain of their "
               "stratum's drawn documents in the run's top k (else the query's, else the stratum's); ideal from "
               "Horvitz-Thompson counts per grade; not bias-corrected",
}
INTERVAL_METHOD = ("stratified jackknife over the drawn units with finite-population correction (Wolter 2007, "
                   "ch. 4), t interval with Satterthwaite degrees of freedom; a stratum whose sample holds no relevant "
                   "document gets the variance of a relevant share borrowed from its rank's other strata (Jeffreys' "
                   "prior)")
INTERVALS = ("simultaneous", "marginal")
DEFAULT_INTERVALS = "simultaneous"  # a table of runs is read as a whole: the intervals hold for all at once
SIMULTANEOUS_METHOD = ("simultaneous intervals (Hothorn, Bretz & Westfall, Biometrical Journal 2008): the runs' "
                       "joint covariance from the same jackknife replicates over the shared sample (cross terms "
                       "included), the level quantile c of max |Z| for Z normal with its correlation (50,000 "
                       "simulated draws, seed 0), each run's interval estimate +- t_(df, 1 - p/2) se with "
                       "p = 2 (1 - Phi(c)); Bonferroni's c where the correlation cannot be estimated")
TARGET = {"statNDCG": "nDCG", "infNDCG": "nDCG", "statAP": "AP", "xinfAP": "AP"}
BIAS_CORRECTED = ("statAP", "statNDCG")  # estimate - jackknife bias (Quenouille; Wolter 2007, 4.2)


@dataclass(frozen=True)
class Estimator:
    """An estimator (statAP, xinfAP, infNDCG) and the measure it estimates."""

    name: str
    measure: Measure

    @staticmethod
    def parse(text: "str | Estimator") -> "Estimator":
        """``statNDCG@10``, ``infNDCG(gain=exp)@10``, ``statAP``, ``xinfAP(rel=2)``, ``statAP@100``.

        >>> str(Estimator.parse("infNDCG(gain=exp)@10").measure)
        'nDCG(gain=exp)@10'
        """
        if isinstance(text, Estimator):
            return text
        s = str(text).strip()
        for name, target in TARGET.items():
            if s.lower().startswith(name.lower()):
                rest = s[len(name):]
                m = Measure.parse(target + rest)
                if target == "nDCG" and m.cutoff is None:
                    raise MeasureError(f"{s!r} needs a cutoff, e.g. {name}@10")
                if m.unjudged != "zero" or (target == "nDCG" and m.ideal != "judged"):
                    raise MeasureError(f"{s!r}: an estimator takes gain=, discount= and rel= only")
                return Estimator(name, m)
        raise MeasureError(f"unknown estimator {s!r} (choose from statNDCG@k, statAP, infNDCG@k, xinfAP)")

    def __str__(self) -> str:
        return self.name + str(self.measure)[len(self.measure.name):]

    @property
    def method(self) -> str:
        return f"estimate of {self.measure}: {METHODS[self.name]}"


def default_estimators(k: int = 10) -> list:
    return [Estimator.parse(f"statNDCG@{k}"), Estimator.parse("statAP")]


# ---------------------------------------------------------------------------
# The population: every query's documents that matter, the strata and the units


@dataclass
class QueryItems:
    """One query's judged documents and design units: ``stratum`` JUDGED (-1) for a
    judgment outside the design, else the stratum index; ``grade`` NaN where unknown."""

    index: dict  # docid -> item
    stratum: np.ndarray
    grade: np.ndarray


@dataclass
class Population:
    """The design as the labels returned it: strata (N_h), units (design pairs) and which
    of them are known in each *state* (one state: the labels merged; a simulation: one
    state per sample)."""

    queries: dict  # qid -> QueryItems
    N: np.ndarray  # per stratum
    unit_query: list  # per unit: qid
    unit_item: np.ndarray  # per unit: item index within its query
    unit_stratum: np.ndarray
    known: np.ndarray  # states x units: drawn and judged
    notes: list = field(default_factory=list)
    stratum_rank: np.ndarray | None = None  # per stratum: its first best rank (the strata of one rank bin)

    @property
    def n(self) -> np.ndarray:
        """states x strata: judged drawn units."""
        H = len(self.N)
        return np.stack([np.bincount(self.unit_stratum[k], minlength=H) for k in self.known]) if len(self.known) \
            else np.zeros((0, H), np.int64)


def population_from_sample(qrels, design) -> Population:
    """The population of a :class:`~judged.sampling.SampleDesign` with the labels of
    ``qrels`` (the merged qrels). A drawn pair without a label is treated as not drawn
    (missing at random inside its stratum: n_h counts the judged ones); a label on a pair
    the design did not draw is not used (it would bias the design); judgments of pairs
    outside the design are known with certainty; negative grades count as outside."""
    from ..core.io import read_qrels

    qrels = read_qrels(qrels)
    ids = sorted(design.strata)
    code = {sid: i for i, sid in enumerate(ids)}
    N = np.array([design.strata[s].population for s in ids], np.int64)
    judged: dict = {}
    for q, d, g in zip(qrels.qid.to_pylist(), qrels.docid.to_pylist(), qrels.grade.tolist()):
        if g >= 0:
            judged.setdefault(q, {})[d] = float(g)
    units_by_query: dict = {}
    missing = unused = 0
    for u in design.units:
        g = judged.get(u.qid, {}).pop(u.docid, None)
        if u.sampled and g is None:
            missing += 1
        if not u.sampled and g is not None:
            unused += 1
        units_by_query.setdefault(u.qid, []).append((u.docid, code[u.stratum], g if u.sampled else None))
    queries, uq, ui, us, known = {}, [], [], [], []
    for q in sorted(set(judged) | set(units_by_query)):
        docs = judged.get(q, {})
        items = list(docs)
        strata = [JUDGED] * len(items)
        grades = [docs[d] for d in items]
        for docid, h, g in units_by_query.get(q, []):
            uq.append(q)
            ui.append(len(items))
            us.append(h)
            known.append(g is not None)
            items.append(docid)
            strata.append(h)
            grades.append(np.nan if g is None else g)
        queries[q] = QueryItems({d: i for i, d in enumerate(items)}, np.array(strata, np.int64),
                                np.array(grades, np.float64))
    notes = []
    if missing:
        notes.append(f"{counted(missing, 'drawn pair has', 'drawn pairs have')} no label yet: treated as not drawn "
                     "(missing at random within "
                     "their strata)")
    if unused:
        notes.append(f"{counted(unused, 'label')} on pairs the sample did not draw {'was' if unused == 1 else 'were'} "
                     "not used (they would bias the design)")
    pop = Population(queries, N, uq, np.array(ui, np.int64), np.array(us, np.int64),
                     np.array([known], bool).reshape(1, -1), notes,
                     np.array([design.strata[s].ranks[0] for s in ids], np.int64))
    n = pop.n[0]
    empty = [ids[h] for h in range(len(N)) if n[h] == 0 and N[h] > 0]
    if empty:
        notes.append(f"{counted(len(empty), 'stratum has', 'strata have')} no judged pair yet "
                     f"({', '.join(map(str, empty[:5]))}{', ...' if len(empty) > 5 else ''}): "
                     f"their {counted(int(N[[code[s] for s in empty]].sum()), 'pair')} "
                     "count as not relevant, a bias downwards")
    single = [ids[h] for h in range(len(N)) if n[h] == 1 and N[h] > 1]
    if single:
        notes.append(f"{counted(len(single), 'stratum has', 'strata have')} a single judged pair: their variance is not estimated "
                     "(the interval is too narrow)")
    return pop


# ---------------------------------------------------------------------------
# Runs as item indices


def run_items(pop: Population, aligned) -> dict:
    """qid -> item index of each ranked document (-1: outside the pool), in rank order,
    for every query the run is evaluated on."""
    r = aligned.ranked
    docids = aligned.docids(r.row)
    out = {}
    for qi, qid in enumerate(aligned.qids.tolist()):
        s, e = int(r.offsets[qi]), int(r.offsets[qi + 1])
        items = pop.queries.get(qid)
        if items is None:
            out[qid] = np.full(e - s, -1, np.int64)
        else:
            out[qid] = np.array([items.index.get(d, -1) for d in docids[s:e]], np.int64)
    return out


# ---------------------------------------------------------------------------
# Kernels: one query, one run, a batch of rows (each row: which items are known, and
# the inclusion probabilities of its design)


@dataclass
class Rows:
    """A batch of designs for one query: ``known`` rows x items (the query's items and a
    last sentinel item standing for every document outside the pool), ``pi`` and ``pi2``
    (joint, within a stratum) per item under each row's design, and the stratum-wide
    means the infNDCG fallback reads."""

    known: np.ndarray
    pi: np.ndarray
    pi2: np.ndarray
    stratum: np.ndarray  # per item (+ sentinel OUTSIDE)
    grade: np.ndarray  # rows x items (+ sentinel 0): NaN unknown; a pseudo-relevant row sets one unit's
    fallback: dict  # (stratum, 'gain') -> rows-vector of the stratum-wide mean gain (infNDCG)


def _excl_cumsum(a: np.ndarray) -> np.ndarray:
    return np.cumsum(a, axis=-1) - a


def _stratum_share(rows: Rows, h: int, values: np.ndarray, kind: str) -> np.ndarray:
    """Per row: the mean of ``values`` (rows x items) over the query's known items of
    stratum h, else the stratum-wide fallback."""
    m = rows.stratum == h
    k = rows.known[:, m]
    cnt = k.sum(1)
    tot = (k * values[:, m]).sum(1)
    fb = rows.fallback[(h, kind)]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, tot / np.maximum(cnt, 1), fb)


def _relevant(rows: Rows, rel: int) -> np.ndarray:
    """rows x items: known and relevant (grade >= rel)."""
    return rows.known & (np.nan_to_num(rows.grade, nan=-1.0) >= rel)


def statap(rows: Rows, idx: np.ndarray, rel: int) -> np.ndarray:
    xk = _relevant(rows, rel)
    w = xk / rows.pi
    Rhat = w[:, :-1].sum(1)
    some = xk[:, idx].any(0)  # only relevant documents add terms or counts
    ranks = np.flatnonzero(some) + 1.0
    idx = idx[some]
    XR, WR, PR, P2R = xk[:, idx], w[:, idx], rows.pi[:, idx], rows.pi2[:, idx]
    st = rows.stratum[idx]
    A = _excl_cumsum(WR)
    Bp = np.zeros_like(WR)
    for h in np.unique(st[st >= 0]).tolist():
        m = st == h
        Bp += _excl_cumsum(XR * m) * m
    with np.errstate(divide="ignore", invalid="ignore"):
        coef = np.where((st[None, :] >= 0) & (P2R > 0), PR / P2R - 1.0 / PR, 0.0)
    term = XR / (ranks * PR) * (1.0 + A + Bp * coef)
    num = term.sum(1)
    return np.divide(num, Rhat, out=np.zeros(len(num)), where=Rhat > 0)


def xinfap(rows: Rows, idx: np.ndarray, rel: int) -> np.ndarray:
    xk = _relevant(rows, rel)
    Rhat = (xk / rows.pi)[:, :-1].sum(1)
    XR, KR, PR = xk[:, idx], rows.known[:, idx], rows.pi[:, idx]
    st = rows.stratum[idx]
    acc = _excl_cumsum(XR * (st == JUDGED)).astype(np.float64)
    for h in np.unique(st[st >= 0]).tolist():
        m = st == h
        pooled = _excl_cumsum(m.astype(np.float64))
        drawn = _excl_cumsum(KR * m)
        relv = _excl_cumsum(XR * m)
        acc += pooled * ((relv + EPS) / (drawn + 2 * EPS))
    ranks = np.arange(1, len(idx) + 1, dtype=np.float64)
    pc = (1.0 + acc) / ranks
    s = (XR * pc / PR).sum(1)
    return np.divide(s, Rhat, out=np.zeros(len(s)), where=Rhat > 0)


def ndcg(rows: Rows, idx: np.ndarray, measure: Measure, fill: bool) -> np.ndarray:
    """statNDCG (``fill`` False: Horvitz-Thompson DCG) or infNDCG (``fill``: not-drawn
    documents get their stratum's mean drawn gain) over the ideal from estimated counts."""
    k = measure.cutoff
    idx = idx[:k]
    R = rows.known.shape[0]
    gains = np.where(rows.known, measure.gain(np.nan_to_num(rows.grade, nan=0.0)), 0.0)  # rows x items
    gains[:, rows.stratum == OUTSIDE] = 0.0
    KR = rows.known[:, idx]
    st = rows.stratum[idx]
    G = gains[:, idx]
    if not fill:
        G = G / rows.pi[:, idx]
    for h in (np.unique(st[st >= 0]).tolist() if fill else []):
        m = st == h
        cnt = (KR & m).sum(1)
        tot = (G * m).sum(1)
        mean = np.where(cnt > 0, tot / np.maximum(cnt, 1), _stratum_share(rows, h, gains, "gain"))
        G = np.where(m[None, :] & ~KR, mean[:, None], G)
    L = len(idx)
    disc = measure.discount.divide(np.ones(k), np.arange(1, k + 1, dtype=np.float64))
    dcg = (G * disc[:L]).sum(1)
    # ideal: Horvitz-Thompson counts per positive gain, placed by linear interpolation
    item_gain = gains[:, :-1]
    levels = np.unique(item_gain[item_gain > 0])[::-1]
    if not len(levels):
        return np.zeros(R)
    w = (rows.known / rows.pi)[:, :-1]
    counts = np.stack([(w * (item_gain == g)).sum(1) for g in levels], axis=1)  # R x levels
    bounds = np.concatenate((np.zeros((R, 1)), np.cumsum(counts, axis=1)), axis=1)
    x = np.arange(k + 1, dtype=np.float64)
    filled = np.clip(x[None, None, :] - bounds[:, :-1, None], 0.0, counts[:, :, None])  # R x levels x k+1
    cum = (filled * levels[None, :, None]).sum(1)  # cumulative gain at x
    idcg = (np.diff(cum, axis=1) * disc[None, :]).sum(1)
    return np.divide(dcg, idcg, out=np.zeros(R), where=idcg > 0)


def _kernel(est: Estimator, rows: Rows, idx: np.ndarray) -> np.ndarray:
    if est.measure.cutoff is not None:
        idx = idx[:est.measure.cutoff]
    if est.name == "statAP":
        return statap(rows, idx, est.measure.rel)
    if est.name == "xinfAP":
        return xinfap(rows, idx, est.measure.rel)
    return ndcg(rows, idx, est.measure, fill=est.name == "infNDCG")


# ---------------------------------------------------------------------------
# The engine: estimates and jackknife contributions for every state, run, estimator


SIMULTANEOUS_DRAWS = 50_000  # normal draws for the max-|t| critical value (Monte Carlo SE about 0.007)
PSEUDO_UNITS = 8  # per (query, stratum): not-drawn units tried as relevant, for the variance floor
FLOOR_PRIOR = 0.5  # Jeffreys' prior for the relevant rate behind a stratum with none drawn


def jeffreys_rate(r, m) -> np.ndarray:
    """The rate of an event seen ``r`` times in ``m`` draws, with Jeffreys' prior: (r + 1/2)/(m + 1).

    >>> float(jeffreys_rate(0, 9))
    0.05
    """
    return (np.asarray(r, np.float64) + FLOOR_PRIOR) / (np.asarray(m, np.float64) + 2 * FLOOR_PRIOR)


def unseen_share_variance(n, N, rate, effect2) -> np.ndarray:
    """The variance floor of a stratum whose sample never showed an event (so its sample
    variance is 0) though its N - n undrawn units may hold some: the variance of the
    stratum's Horvitz-Thompson total for a 0/1 variable of share P = (1 - n/N) rate (the
    drawn units are known to be without it, the others have it at ``rate``), each event
    moving a unit's value by sqrt(``effect2``) (its mean square):
    (1 - n/N) N^2/n P effect2 (Cochran, *Sampling Techniques*, 1977, 3.2 and 5.3). 0 where
    n < 1 or n >= N. Used by statAP/statNDCG's strata with no relevant drawn and by the
    prediction-powered strata with no human-machine disagreement drawn (judged.ppi).

    >>> float(unseen_share_variance(4, 40, 0.1, 1.0))
    32.4
    """
    n = np.asarray(n, np.float64)
    N = np.asarray(N, np.float64)
    ok = (n >= 1) & (n < N)
    kept = np.where(ok, 1 - n / np.where(ok, N, 1.0), 0.0)
    return np.where(ok, kept * N * N / np.maximum(n, 1.0) * kept * rate * effect2, 0.0)


def satterthwaite_df(v_h, n) -> np.ndarray:
    """Satterthwaite's (Welch's) degrees of freedom of a sum of stratum variances v_h with
    n_h drawn: (sum v_h)^2 / sum v_h^2/(n_h - 1) over the last axis; inf when it is 0
    (Satterthwaite, Biometrics Bulletin 1946; Cochran 1977, 5.4).

    >>> float(satterthwaite_df([1.0, 1.0], [11, 11]))
    20.0
    """
    v_h = np.asarray(v_h, np.float64)
    n = np.broadcast_to(np.asarray(n, np.float64), v_h.shape)
    den = np.where(n >= 2, v_h ** 2 / np.maximum(n - 1, 1), 0.0).sum(-1)
    num = v_h.sum(-1) ** 2
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)


@dataclass
class Estimates:
    """For each state s, run r, estimator e: the mean over the run's queries
    (``mean[e][r][s]``, jackknife bias-corrected for statAP and statNDCG; ``plain[e][r][s]``
    without), the per-query values (``per_query[e][r]``: states x queries, plain), the
    jackknife contributions (``contrib[e][r]``: states x units) and, for strata whose
    sample holds no relevant document, the changes a relevant one would have made
    (``pseudo_delta[e][r]``, rows of ``pseudo[e]``)."""

    estimators: list
    runs: list
    qids: dict  # run -> evaluated qids
    mean: dict
    plain: dict
    per_query: dict
    contrib: dict
    N: np.ndarray
    n: np.ndarray  # states x strata
    unit_stratum: np.ndarray
    usable: np.ndarray  # states x units: known and in a stratum with 2 <= n_h < N_h
    none_relevant: dict = field(default_factory=dict)  # e -> states x strata: sample of h holds no relevant
    relevant: dict = field(default_factory=dict)  # e -> states x strata: relevant documents drawn
    rank_group: np.ndarray | None = None  # per stratum: its first best rank
    pseudo: dict = field(default_factory=dict)  # e -> (state, stratum, weight) arrays of the pseudo rows
    pseudo_delta: dict = field(default_factory=dict)  # e -> run -> change of the mean per pseudo row

    def stratum_ss(self, c: np.ndarray) -> np.ndarray:
        """states x strata: sum over the stratum's usable units of (c - mean_h c)^2."""
        S, H = self.n.shape
        U = len(self.unit_stratum)
        if not U:
            return np.zeros((S, H))
        code = (np.arange(S)[:, None] * H + self.unit_stratum[None, :]).ravel()
        w = self.usable.ravel().astype(np.float64)
        cv = c.ravel() * w
        cnt = np.bincount(code, weights=w, minlength=S * H).reshape(S, H)
        tot = np.bincount(code, weights=cv, minlength=S * H).reshape(S, H)
        sq = np.bincount(code, weights=cv * c.ravel(), minlength=S * H).reshape(S, H)
        out = np.where(cnt > 0, sq - tot ** 2 / np.maximum(cnt, 1), 0.0)
        return np.maximum(out, 0.0)

    def floor_rate(self, e) -> np.ndarray:
        """states x strata: q_h, the relevant rate of a not-drawn document of a stratum
        whose sample holds none: (r + 1/2)/(m + 1) over the drawn documents of every
        stratum starting at the same best rank (m drawn, r relevant; Jeffreys' prior,
        the data borrowed from the other queries' strata of that rank bin)."""
        key = str(e)
        S, H = self.n.shape
        groups, g = np.unique(self.rank_group if self.rank_group is not None else np.zeros(H, np.int64),
                              return_inverse=True)
        rate = np.zeros((S, H))
        for s in range(S):
            m = np.bincount(g, weights=self.n[s], minlength=len(groups))
            r = np.bincount(g, weights=self.relevant[key][s], minlength=len(groups))
            rate[s] = jeffreys_rate(r, m)[g]
        return rate

    def floor(self, e, delta: np.ndarray) -> np.ndarray:
        """states x strata: for a stratum whose sample holds no relevant document (its
        jackknife variance is 0), the variance of its Horvitz-Thompson term had its
        relevant share been P_h = (1 - n_h/N_h) q_h (the drawn are known not relevant,
        the others relevant at the rate q_h of :meth:`floor_rate`): for a 0/1 variable
        (1 - f) N^2 P/n times the effect of one relevant document, written with Delta
        (the change of the estimate had one not-drawn unit been drawn and relevant,
        Delta = effect N/n; mean of Delta^2 over up to PSEUDO_UNITS not-drawn units per
        query): (1 - f) n P mean(Delta^2), f = n_h/N_h (Cochran 1977, 5.3 and 3.2)."""
        key = str(e)
        S, H = self.n.shape
        out = np.zeros((S, H))
        if key not in self.pseudo or not len(delta):
            return out
        state, stratum, weight = self.pseudo[key]
        sums = np.bincount(state * H + stratum, weights=weight * delta ** 2, minlength=S * H).reshape(S, H)
        n, N = self.n.astype(np.float64), self.N.astype(np.float64)[None, :]
        effect2 = sums / np.maximum(N - n, 1.0) * (n / np.maximum(N, 1)) ** 2  # mean(Delta^2) (n/N)^2
        return np.where(self.none_relevant[key], unseen_share_variance(n, N, self.floor_rate(e), effect2), 0.0)

    def stratum_variance(self, e, c: np.ndarray, delta=None) -> np.ndarray:
        """states x strata: the jackknife's v_h = (1 - n_h/N_h) (n_h - 1)/n_h SS_h, or, in
        a stratum whose sample holds no relevant document, the :meth:`floor` if larger."""
        n, N = self.n.astype(np.float64), self.N.astype(np.float64)
        f = np.where(N > 0, n / np.maximum(N, 1), 1.0)
        factor = np.where(n >= 2, (1 - f) * (n - 1) / np.maximum(n, 1), 0.0)
        v = factor * self.stratum_ss(c)
        return v if delta is None else np.maximum(v, self.floor(e, delta))

    def run_variance(self, e, run) -> np.ndarray:
        """states x strata: the variance components of a run's mean."""
        key = str(e)
        return self.stratum_variance(e, self.contrib[key][run], self.pseudo_delta.get(key, {}).get(run))

    def variance(self, e, run) -> np.ndarray:
        return self.run_variance(e, run).sum(1)

    def difference(self, e, a, b):
        """(difference of means per state, stratum variances states x strata)."""
        key = str(e)
        d = self.mean[key][a] - self.mean[key][b]
        pd = self.pseudo_delta.get(key, {})
        delta = pd[a] - pd[b] if a in pd and b in pd else None
        return d, self.stratum_variance(e, self.contrib[key][a] - self.contrib[key][b], delta)

    def df(self, v_h: np.ndarray) -> np.ndarray:
        return satterthwaite_df(v_h, self.n)

    def clip(self, e, *values):
        """``values`` clipped to the range of the measure ``e`` estimates (its registry
        record's ``value_range``: [0, 1] for AP and nDCG)."""
        low, high = self.estimator(e).measure.family.value_range
        return tuple(np.clip(v, low, high) for v in values)

    def estimator(self, e) -> "Estimator":
        return next(x for x in self.estimators if str(x) == str(e))

    def interval(self, e, run, level: float = 0.95):
        """(estimate, se, low, high, df) per state: estimate -+ t_(df) se, the estimate and
        the ends clipped to the measure's range (:meth:`clip`)."""
        v_h = self.run_variance(e, run)
        est = self.mean[str(e)][run]
        se = np.sqrt(v_h.sum(1))
        df = self.df(v_h)
        t = t_quantile(1 - (1 - level) / 2, df)
        est, low, high = self.clip(e, est, est - t * se, est + t * se)
        return est, se, low, high, df

    def covariance(self, e, runs=None) -> np.ndarray:
        """states x runs x runs: the joint covariance of the runs' means, from the same
        replicates as their variances (cross terms included): per stratum
        (1 - n_h/N_h) (n_h - 1)/n_h sum_i (c_(a,hi) - mean c_(a,h.)) (c_(b,hi) - mean c_(b,h.)),
        plus, in a stratum whose sample holds no relevant document, the floor's
        (1 - f) n P mean(Delta_a Delta_b) (:meth:`floor`). Its diagonal is the jackknife
        variance plus the floor where :meth:`run_variance` takes the larger of the two;
        the two differ only where both are positive (xinfAP, infNDCG)."""
        key = str(e)
        runs = list(self.runs if runs is None else runs)
        S, H = self.n.shape
        R = len(runs)
        cov = np.zeros((S, R, R))
        if not R:
            return cov
        U = len(self.unit_stratum)
        if U:
            n, N = self.n.astype(np.float64), self.N.astype(np.float64)
            f = np.where(N > 0, n / np.maximum(N, 1), 1.0)
            factor = np.where(n >= 2, (1 - f) * (n - 1) / np.maximum(n, 1), 0.0)  # S x H
            code = (np.arange(S)[:, None] * H + self.unit_stratum[None, :]).ravel()
            w = self.usable.astype(np.float64)
            cnt = np.bincount(code, weights=w.ravel(), minlength=S * H).reshape(S, H)
            scale = np.sqrt(factor)[:, self.unit_stratum] * w  # S x U
            centred = np.empty((R, S, U))
            for j, r in enumerate(runs):
                c = self.contrib[key][r]
                tot = np.bincount(code, weights=(c * w).ravel(), minlength=S * H).reshape(S, H)
                mean_h = np.where(cnt > 0, tot / np.maximum(cnt, 1), 0.0)
                centred[j] = (c - mean_h[:, self.unit_stratum]) * scale
            cov += np.einsum("asu,bsu->sab", centred, centred)
        if key in self.pseudo and len(self.pseudo[key][0]):
            state, stratum, weight = self.pseudo[key]
            n, N = self.n.astype(np.float64), self.N.astype(np.float64)[None, :]
            kept = 1 - n / np.maximum(N, 1)
            coef = np.where(self.none_relevant[key] & (n >= 1) & (n < N),
                            kept * n * kept * self.floor_rate(e) / np.maximum(N - n, 1.0), 0.0)  # S x H
            root = np.sqrt(coef[state, stratum] * weight)
            delta = np.stack([self.pseudo_delta[key][r] * root for r in runs])  # R x P
            for s in np.unique(state).tolist():
                d = delta[:, state == s]
                cov[s] += d @ d.T
        return cov

    def simultaneous(self, e, level: float = 0.95, runs=None, draws: int = SIMULTANEOUS_DRAWS,
                     seed: int = 0) -> "Simultaneous":
        """Intervals holding for every run of ``runs`` at once with probability ``level``
        (docs/holes.md, *Simultaneous intervals*): estimate -+ t_(df_r, 1 - p/2) se_r,
        p = 2 (1 - Phi(c)), c the ``level`` quantile of max_r |Z_r| for Z normal with the
        correlation of :meth:`covariance` (simulated, ``draws`` draws of ``seed``); where
        that correlation cannot be formed, Bonferroni's c = z_(1 - (1 - level)/(2m))."""
        runs = list(self.runs if runs is None else runs)
        key = str(e)
        S = self.n.shape[0]
        cols = [self.interval(e, r, level) for r in runs]
        est = np.stack([self.mean[key][r] for r in runs], 1) if runs else np.zeros((S, 0))
        se = np.stack([c[1] for c in cols], 1) if runs else np.zeros((S, 0))
        df = np.stack([c[4] for c in cols], 1) if runs else np.zeros((S, 0))
        cov = self.covariance(key, runs)
        z = np.zeros(S)
        method, family = [], np.zeros(S, np.int64)
        base = None
        for s in range(S):
            vary = np.flatnonzero(se[s] > 0)
            m = len(vary)
            family[s] = m
            if m <= 1:
                z[s] = NormalDist().inv_cdf(1 - (1 - level) / 2)
                method.append("max-t" if m else "exact")
                continue
            C = cov[s][np.ix_(vary, vary)]
            d = np.sqrt(np.diag(C))
            if not (np.isfinite(C).all() and (d > 0).all()):
                z[s] = NormalDist().inv_cdf(1 - (1 - level) / (2 * m))
                method.append("bonferroni")
                continue
            if base is None or base.shape[1] != m:
                base = np.random.default_rng(seed).standard_normal((draws, m))
            z[s] = max_abs_normal_quantile(C / np.outer(d, d), level, base)
            method.append("max-t")
        p = 2 * (1 - np.vectorize(NormalDist().cdf)(z)) if S else z
        t = np.stack([t_quantile(1 - p[s] / 2, df[s]) for s in range(S)]) if S and runs else np.zeros((S, len(runs)))
        est, low, high = self.clip(e, est, est - t * se, est + t * se)
        return Simultaneous(runs, est, se, low, high, df, z, family, method, level)


def max_abs_normal_quantile(corr: np.ndarray, level: float, base: np.ndarray) -> float:
    """The ``level`` quantile of max_j |Z_j|, Z ~ N(0, ``corr``), from standard normal
    draws ``base`` (draws x m) mapped through a square root of ``corr`` (its eigen
    decomposition, so a singular correlation is fine): the critical value of simultaneous
    intervals (Hothorn, Bretz & Westfall, "Simultaneous inference in general parametric
    models", Biometrical Journal 2008, who integrate instead of simulating).

    >>> I = np.eye(3); b = np.random.default_rng(0).standard_normal((200_000, 3))
    >>> round(max_abs_normal_quantile(I, 0.95, b), 2)  # independent: (0.95^(1/3)) two-sided quantile
    2.39
    >>> round(max_abs_normal_quantile(np.ones((3, 3)), 0.95, b), 2)  # identical: one interval
    1.96
    """
    w, V = np.linalg.eigh((corr + corr.T) / 2)
    root = V * np.sqrt(np.clip(w, 0.0, None))
    m = np.abs(np.einsum("dk,jk->dj", base, root)).max(1)  # einsum: BLAS threads do not pay at this size
    k = int(np.ceil(level * len(m))) - 1
    return float(np.partition(m, k)[k])


@dataclass
class Simultaneous:
    """Simultaneous intervals of one estimator's runs, per state: ``low``/``high``
    states x runs; ``critical`` the normal critical value c per state (1.96 at 95% for a
    single run); ``family`` how many runs' intervals are random (se > 0); ``method``
    per state: ``max-t``, ``bonferroni`` (the fallback) or ``exact`` (nothing random)."""

    runs: list
    estimate: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    df: np.ndarray
    critical: np.ndarray
    family: np.ndarray
    method: list
    level: float

    def covers(self, truth: dict) -> np.ndarray:
        """states: every run's interval holds its ``truth[run]``."""
        t = np.array([truth[r] for r in self.runs])[None, :]
        return ((self.low <= t) & (t <= self.high)).all(1)


def estimate_states(pop: Population, runs: dict, estimators) -> Estimates:
    """Every estimator for every run (``runs``: name -> {qid: item indices}) in every
    state of ``pop``, with the jackknife replicates of each drawn unit.

    Replicates: deleting drawn unit i of stratum h changes the estimate of i's query
    (f_q(-i)) and, through n_h - 1, of every query with units in h (f_q(h)). So
    theta_(hi) - theta = (D_h + e_i)/Q with D_h = sum_q (f_q(h) - f_q) and e_i = f_q(-i)
    - f_q(h): the variance needs the e_i only; the bias correction
    theta - sum_h (1 - n_h/N_h)(n_h - 1)(D_h + mean_i e_i)/Q needs D_h too (the
    stratum-wide fallback shares are held fixed across queries, an approximation).
    Where a stratum's sample holds no relevant document, up to PSEUDO_UNITS not-drawn
    units of each query are tried as relevant, for the variance floor."""
    estimators = [Estimator.parse(e) for e in estimators]
    S, U = pop.known.shape
    H = len(pop.N)
    n = pop.n  # S x H
    N = pop.N
    usable = pop.known & (n[:, pop.unit_stratum] >= 2) & (n[:, pop.unit_stratum] < N[pop.unit_stratum])
    unit_grade = np.array([pop.queries[q].grade[i] for q, i in zip(pop.unit_query, pop.unit_item.tolist())],
                          np.float64) if U else np.zeros(0)
    by_query: dict = {}
    for u, q in enumerate(pop.unit_query):
        by_query.setdefault(q, []).append(u)
    qids_all = sorted(set(pop.queries) | {q for r in runs.values() for q in r})
    keys = [str(e) for e in estimators]
    per_query = {k: {r: np.zeros((S, len(runs[r]))) for r in runs} for k in keys}
    contrib = {k: {r: np.zeros((S, U)) for r in runs} for k in keys}
    shift = {k: {r: np.zeros((S, H)) for r in runs} for k in keys}  # D_h per state
    pseudo = {k: ([], [], []) for k in keys}
    pseudo_delta = {k: {r: [] for r in runs} for k in keys}
    qpos = {r: {q: j for j, q in enumerate(runs[r])} for r in runs}
    code = (np.arange(S)[:, None] * H + pop.unit_stratum[None, :]).ravel()
    totals, none_relevant, relevant_count = {}, {}, {}
    for e in estimators:
        for kind, vals in _fallback_values(e, unit_grade).items():
            tot = np.bincount(code, weights=(pop.known * vals[None, :]).ravel(), minlength=S * H).reshape(S, H) \
                if U else np.zeros((S, H))
            totals[(str(e), kind)] = (tot, vals)
        relevant = (np.nan_to_num(unit_grade, nan=-1.0) >= e.measure.rel)[None, :] & pop.known
        relevant_count[str(e)] = (np.bincount(code, weights=relevant.ravel(), minlength=S * H).reshape(S, H)
                                  if U else np.zeros((S, H)))
        none_relevant[str(e)] = relevant_count[str(e)] == 0
    for q in qids_all:
        wanted = [r for r in runs if q in runs[r]]
        if not wanted:
            continue
        items = pop.queries.get(q, QueryItems({}, np.zeros(0, np.int64), np.zeros(0)))
        units = np.array(by_query.get(q, []), np.int64)
        for e in estimators:
            key = str(e)
            plan = _plan(pop, units, n, usable, none_relevant[key])
            rows = _rows(pop, items, units, plan, n, e, totals)
            ps = plan["pseudo_row"]
            pseudo[key][0].append(plan["state"][ps])
            pseudo[key][1].append(plan["pseudo_stratum"])
            pseudo[key][2].append(plan["pseudo_weight"])
            for r in runs:
                if r not in wanted:
                    pseudo_delta[key][r].append(np.zeros(len(ps)))
                    continue
                lists = runs[r]
                idx = np.where(lists[q] < 0, len(items.stratum), lists[q])
                vals = _kernel(e, rows, idx)
                per_query[key][r][:, qpos[r][q]] = vals[plan["full"]]
                if len(plan["del_row"]):
                    contrib[key][r][plan["del_state"], plan["del_unit"]] = vals[plan["del_row"]] - vals[plan["del_scale"]]
                if len(plan["scale_row"]):
                    np.add.at(shift[key][r], (plan["scale_state"], plan["scale_stratum"]),
                              vals[plan["scale_row"]] - vals[plan["full"][plan["scale_state"]]])
                pseudo_delta[key][r].append(vals[ps] - vals[plan["full"][plan["state"][ps]]])
    nf = n.astype(np.float64)
    Nf = N.astype(np.float64)[None, :]
    factor = np.where((n >= 2) & (n < N[None, :]), (1 - nf / np.maximum(Nf, 1)) * (nf - 1), 0.0)  # S x H
    mean, plain = {k: {} for k in keys}, {k: {} for k in keys}
    flat = (lambda parts, dtype: np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype))
    for k in keys:
        pseudo[k] = (flat(pseudo[k][0], np.int64), flat(pseudo[k][1], np.int64), flat(pseudo[k][2], np.float64))
        for r in runs:
            Q = max(len(runs[r]), 1)
            plain[k][r] = per_query[k][r].sum(1) / Q
            c = contrib[k][r]
            esum = np.bincount(code, weights=(c * usable).ravel(), minlength=S * H).reshape(S, H) if U \
                else np.zeros((S, H))
            ebar = np.where(nf > 0, esum / np.maximum(nf, 1), 0.0)
            if k.split("(")[0].split("@")[0] in BIAS_CORRECTED:
                mean[k][r] = plain[k][r] - (factor * (shift[k][r] + ebar)).sum(1) / Q
            else:
                mean[k][r] = plain[k][r]
            contrib[k][r] = c / Q
            pseudo_delta[k][r] = flat(pseudo_delta[k][r], np.float64) / Q
    return Estimates(estimators, list(runs), {r: list(runs[r]) for r in runs}, mean, plain, per_query, contrib,
                     N, n, pop.unit_stratum, usable, none_relevant=none_relevant, relevant=relevant_count,
                     rank_group=pop.stratum_rank, pseudo=pseudo, pseudo_delta=pseudo_delta)


def _fallback_values(e: Estimator, unit_grade: np.ndarray) -> dict:
    """Per unit, what a stratum-wide fallback averages (infNDCG: the gain)."""
    g = np.nan_to_num(unit_grade, nan=0.0)
    return {"gain": e.measure.gain(g)} if e.name == "infNDCG" else {}


def _plan(pop: Population, units: np.ndarray, n: np.ndarray, usable: np.ndarray, none_relevant: np.ndarray) -> dict:
    """The rows of one query, for every state at once: a full row per state; a row per
    (state, stratum of the query with a usable unit here) with n_h - 1 drawn; a row per
    (state, usable unit) with that unit removed; and, per (state, stratum whose sample
    holds no relevant document), up to PSEUDO_UNITS rows each with one not-drawn unit of
    the query drawn and relevant (``pseudo``: its unit; ``pseudo_weight``: how many
    not-drawn units of the query it stands for)."""
    S = pop.known.shape[0]
    full = np.arange(S)
    state, scaled, deleted, pseudo = [full], [np.full(S, -1)], [np.full(S, -1)], [np.full(S, -1)]
    empty = np.zeros(0, np.int64)
    out = {"full": full, "scale_row": empty, "scale_state": empty, "scale_stratum": empty, "del_row": empty,
           "del_state": empty, "del_unit": empty, "del_scale": empty, "pseudo_row": empty,
           "pseudo_stratum": empty, "pseudo_weight": np.zeros(0)}
    if len(units):
        ust = pop.unit_stratum[units]
        hs = np.unique(ust)
        use = usable[:, units]  # S x units
        has = np.stack([use[:, ust == h].any(1) for h in hs], axis=1)  # S x strata of q
        ss, hh = np.nonzero(has)
        start = S
        scale_index = np.full((S, len(hs)), -1)
        scale_index[ss, hh] = start + np.arange(len(ss))
        state.append(ss)
        scaled.append(hs[hh])
        deleted.append(np.full(len(ss), -1))
        pseudo.append(np.full(len(ss), -1))
        ds, du = np.nonzero(use)
        dstart = start + len(ss)
        state.append(ds)
        scaled.append(ust[du])
        deleted.append(units[du])
        pseudo.append(np.full(len(ds), -1))
        hpos = np.searchsorted(hs, ust[du])
        out.update(scale_row=start + np.arange(len(ss)), scale_state=ss, scale_stratum=hs[hh],
                   del_row=dstart + np.arange(len(ds)), del_state=ds, del_unit=units[du],
                   del_scale=scale_index[ds, hpos])
        # the variance floor's rows
        pstart = dstart + len(ds)
        p_state, p_unit, p_stratum, p_weight = [], [], [], []
        known = pop.known[:, units]
        for j, h in enumerate(hs.tolist()):
            in_h = ust == h
            open_ = none_relevant[:, h] & (n[:, h] >= 1) & (n[:, h] < pop.N[h])
            for s in np.flatnonzero(open_).tolist():
                cand = units[in_h & ~known[s]]
                if not len(cand):
                    continue
                pick = cand[np.linspace(0, len(cand) - 1, min(PSEUDO_UNITS, len(cand))).round().astype(int)]
                p_state.append(np.full(len(pick), s))
                p_unit.append(pick)
                p_stratum.append(np.full(len(pick), h))
                p_weight.append(np.full(len(pick), len(cand) / len(pick)))
        if p_state:
            ps = np.concatenate(p_state)
            state.append(ps)
            scaled.append(np.full(len(ps), -1))
            deleted.append(np.full(len(ps), -1))
            pseudo.append(np.concatenate(p_unit))
            out.update(pseudo_row=pstart + np.arange(len(ps)), pseudo_stratum=np.concatenate(p_stratum),
                       pseudo_weight=np.concatenate(p_weight))
    out["state"] = np.concatenate(state).astype(np.int64)
    out["scaled"] = np.concatenate(scaled).astype(np.int64)
    out["deleted"] = np.concatenate(deleted).astype(np.int64)
    out["pseudo"] = np.concatenate(pseudo).astype(np.int64)
    return out


def _rows(pop, items: QueryItems, units, plan, n, e: Estimator, totals) -> Rows:
    state, scaled, deleted, pseudo = plan["state"], plan["scaled"], plan["deleted"], plan["pseudo"]
    R = len(state)
    I = len(items.stratum)
    known = np.ones((R, I + 1), bool)
    pi = np.ones((R, I + 1))
    pi2 = np.ones((R, I + 1))
    grade = np.broadcast_to(np.append(items.grade, 0.0), (R, I + 1)).copy()
    if len(units):
        uitem = pop.unit_item[units]
        ust = pop.unit_stratum[units]
        k = pop.known[state][:, units]  # R x units
        as_relevant = pseudo[:, None] == units[None, :]
        known[:, uitem] = (k & (deleted[:, None] != units[None, :])) | as_relevant
        g = grade[:, uitem]
        grade[:, uitem] = np.where(as_relevant, float(max(e.measure.rel, 1)), g)
        nn = n[state][:, ust].astype(np.float64) - (scaled[:, None] == ust[None, :])
        NN = pop.N[ust].astype(np.float64)[None, :]
        p = nn / NN
        pi[:, uitem] = np.where(p > 0, p, 1.0)  # never read where 0 (no known unit then)
        pi2[:, uitem] = np.where(NN > 1, nn * (nn - 1) / np.maximum(NN * (NN - 1), 1), 0.0)
    stratum = np.append(items.stratum, OUTSIDE)
    fallback = {}
    d = deleted >= 0
    del_stratum = np.where(d, pop.unit_stratum[np.where(d, deleted, 0)] if len(pop.unit_stratum) else -1, -1)
    for h in np.unique(items.stratum[items.stratum >= 0]).tolist():
        key = (str(e), "gain")
        if key not in totals:
            continue
        tot_sn, vals = totals[key]
        tot = tot_sn[state, h].copy()
        cnt = n[state, h].astype(np.float64)
        in_h = del_stratum == h
        tot[in_h] -= vals[deleted[in_h]]
        cnt[in_h] -= 1
        fallback[(h, "gain")] = np.where(cnt > 0, tot / np.maximum(cnt, 1), 0.0)
    return Rows(known, pi, pi2, stratum, grade, fallback)


def t_quantile(p: float, df) -> np.ndarray:
    """Student's t quantile by the Cornish-Fisher expansion in 1/df (Abramowitz & Stegun
    26.7.5; error below 1e-4 for df >= 3); the normal quantile for infinite df.

    >>> round(float(t_quantile(0.975, 10)), 3), round(float(t_quantile(0.975, np.inf)), 3)
    (2.228, 1.96)
    """
    z = NormalDist().inv_cdf(p)
    v = np.maximum(np.asarray(df, np.float64), 1.0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        g1 = (z ** 3 + z) / 4
        g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
        g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
        g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
        t = z + g1 / v + g2 / v ** 2 + g3 / v ** 3 + g4 / v ** 4
    return np.where(np.isinf(v), z, t)


# ---------------------------------------------------------------------------
# When to stop judging


def projected_variance(v_h: np.ndarray, n: np.ndarray, N: np.ndarray, scale: float) -> tuple[float, float]:
    """(variance, extra judgments) when every stratum's sample grows by the factor
    1 + ``scale`` (capped at N_h): v_h(n') = (1 - n'/N) S_h^2 / n', S_h^2 = v_h n/(1 - n/N)."""
    n = n.astype(np.float64)
    N = N.astype(np.float64)
    ok = (n >= 2) & (n < N)
    n1 = np.where(ok, np.minimum(N, n * (1.0 + scale)), n)
    with np.errstate(invalid="ignore", divide="ignore"):
        S2 = np.where(ok, v_h * n / (1.0 - n / N), 0.0)
        v = np.where(ok, (1.0 - n1 / N) * S2 / n1, v_h)
    return float(v.sum()), float((n1 - n).sum())


def judgments_to_decide(difference: float, v_h: np.ndarray, n: np.ndarray, N: np.ndarray,
                        level: float = 0.95, power: float = 0.8, df: float = np.inf) -> dict:
    """Whether the sign of ``difference`` is decided at ``level`` (its interval excludes
    0) and, if not, the extra sampled judgments m for which |difference| >=
    (z_level + z_power) sqrt(v(m)) (docs/holes.md, *When to stop judging*). ``more`` is None
    when judging every remaining pair of the design is needed (``remaining`` of them)."""
    n = np.asarray(n)
    N = np.asarray(N)
    za = NormalDist().inv_cdf(1 - (1 - level) / 2)
    zb = NormalDist().inv_cdf(power)
    ta = float(t_quantile(1 - (1 - level) / 2, df))  # the interval now; projections are large-sample
    var, _ = projected_variance(v_h, n, N, 0.0)
    remaining = int(np.maximum(N - n, 0).sum())
    se = float(np.sqrt(var))
    out = {"difference": float(difference), "se": se, "low": float(difference - ta * se),
           "high": float(difference + ta * se), "level": level, "power": power, "remaining": remaining}
    if abs(difference) > ta * se:
        return {**out, "decided": True, "more": 0}
    target = (abs(difference) / (za + zb)) ** 2
    if difference == 0 or target <= 0:
        return {**out, "decided": False, "more": None}
    ok = (n >= 2) & (n < N)
    top = float(np.max(np.where(ok, N / np.maximum(n, 1), 1.0))) - 1.0
    if top <= 0 or projected_variance(v_h, n, N, top)[0] > target:
        return {**out, "decided": False, "more": None}
    lo, hi = 0.0, top
    for _ in range(60):
        mid = (lo + hi) / 2
        if projected_variance(v_h, n, N, mid)[0] <= target:
            hi = mid
        else:
            lo = mid
    more = int(np.ceil(projected_variance(v_h, n, N, hi)[1] - 1e-9))
    if more >= remaining:  # only judging everything left settles it
        return {**out, "decided": False, "more": None}
    return {**out, "decided": False, "more": max(more, 1)}


def decision_sentence(a: str, b: str, est: str, d: dict) -> str:
    pct = f"{d['level']:.0%}"
    head = f"{a} vs {b} ({est}): difference {d['difference']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]"
    if d["decided"]:
        return f"{head}: order decided at {pct}"
    if d["more"] is None:
        return (f"{head}: not decided at {pct}; the sample cannot settle it: judge the {d['remaining']} remaining "
                "pairs of the design")
    return (f"{head}: not decided at {pct}; about {d['more']} more sampled judgments (of {d['remaining']} left) "
            f"to decide it with {d['power']:.0%} probability if the difference is as estimated")


# ---------------------------------------------------------------------------
# The API: judged infer


@dataclass
class Inference:
    """Estimates from a judged sample, labelled as such: per run and estimator the
    estimate, its standard error and interval; per pair of runs the difference and
    whether the sample decides their order."""

    estimates: Estimates
    level: float
    power: float
    sample: dict
    notes: list
    conventions: dict
    qrels: object = None
    query_set: object = None  # judged.querysets.QuerySet when the runs were read here (judged infer)
    intervals: str = DEFAULT_INTERVALS  # "simultaneous" or "marginal": the intervals shown
    _joint: dict = field(default_factory=dict, repr=False)

    @property
    def warnings(self) -> list:
        return self.query_set.warnings() if self.query_set is not None else []

    def simultaneous(self, estimator) -> Simultaneous:
        """The runs' simultaneous intervals for ``estimator`` (:meth:`Estimates.simultaneous`)."""
        key = str(estimator)
        if key not in self._joint:
            self._joint[key] = self.estimates.simultaneous(key, self.level)
        return self._joint[key]

    def shown(self, estimator, run) -> tuple[float, float]:
        """(low, high) of the interval the output shows: simultaneous or marginal (``intervals``)."""
        if self.intervals == "simultaneous":
            j = self.simultaneous(estimator)
            i = j.runs.index(run)
            return float(j.low[0, i]), float(j.high[0, i])
        _, _, lo, hi, _ = self.estimates.interval(estimator, run, self.level)
        return float(lo[0]), float(hi[0])

    def table(self) -> dict:
        """{estimator: {run: {estimate, se, low, high, df, queries}}}: ``low``/``high`` the
        marginal interval (each run alone at ``level``); with ``intervals="simultaneous"``
        also ``simultaneous_low``/``simultaneous_high`` (every run at once at ``level``)."""
        out = {}
        E = self.estimates
        for e in E.estimators:
            out[str(e)] = {}
            joint = self.simultaneous(e) if self.intervals == "simultaneous" else None
            for j, r in enumerate(E.runs):
                est, se, lo, hi, df = E.interval(e, r, self.level)
                out[str(e)][r] = {"estimate": float(est[0]), "se": float(se[0]), "low": float(lo[0]),
                                  "high": float(hi[0]), "df": float(df[0]) if np.isfinite(df[0]) else None,
                                  "queries": len(E.qids[r])}
                if joint is not None:
                    out[str(e)][r].update(simultaneous_low=float(joint.low[0, j]),
                                          simultaneous_high=float(joint.high[0, j]))
        return out

    def interval_summary(self) -> dict:
        """For the header: which intervals are shown and, when simultaneous, per estimator
        the method (max-t, or bonferroni as the fallback), the normal critical value c,
        the marginal one it replaces and how many runs form the family."""
        out = {"intervals": self.intervals}
        if self.intervals != "simultaneous":
            return out
        z = NormalDist().inv_cdf(1 - (1 - self.level) / 2)
        out["simultaneous_method"] = SIMULTANEOUS_METHOD
        out["simultaneous"] = {str(e): {"method": j.method[0], "critical_value": float(j.critical[0]),
                                        "marginal_critical_value": z, "family": int(j.family[0]),
                                        "runs": len(j.runs)}
                               for e in self.estimates.estimators for j in [self.simultaneous(e)]}
        return out

    def interval_sentence(self) -> str:
        """One line naming the intervals shown."""
        pct = f"{self.level:.0%}"
        if self.intervals != "simultaneous":
            return f"{pct} intervals, each run's alone (marginal)"
        parts = []
        for e in self.estimates.estimators:
            j = self.simultaneous(e)
            how = {"max-t": f"max-|t| critical value {j.critical[0]:.2f} for {j.family[0]} correlated runs",
                   "bonferroni": f"Bonferroni's {j.critical[0]:.2f} for {j.family[0]} runs (fallback: the "
                                 "correlation could not be estimated)",
                   "exact": "nothing random"}[j.method[0]]
            parts.append(f"{e}: {how}")
        return f"{pct} simultaneous intervals: every run inside at once with {pct} confidence ({'; '.join(parts)})"

    def decide(self, estimator, a: str, b: str) -> dict:
        """Is the order of ``a`` and ``b`` decided (:func:`judgments_to_decide`)?"""
        E = self.estimates
        d, vh = E.difference(estimator, a, b)
        df = E.df(vh)[0]
        dec = judgments_to_decide(float(d[0]), vh[0], E.n[0], E.N, self.level, self.power, df)
        return {"a": a, "b": b, "estimator": str(estimator), **dec,
                "sentence": decision_sentence(a, b, str(estimator), dec)}

    def pairs(self) -> list:
        E = self.estimates
        return [self.decide(e, a, b) for e in E.estimators for i, a in enumerate(E.runs) for b in E.runs[i + 1:]]

    def per_query(self):
        """DataFrame run, qid, estimator, estimate (per query, before the bias correction)."""
        import pandas as pd

        E = self.estimates
        frames = [pd.DataFrame({"run": r, "qid": E.qids[r], "estimator": str(e), "estimate": E.per_query[str(e)][r][0]})
                  for e in E.estimators for r in E.runs]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def header(self) -> dict:
        return {"kind": "estimate", "qrels": {"path": getattr(self.qrels, "source", None),
                                              "sha256": getattr(self.qrels, "sha256", None)},
                "sample": self.sample, "level": self.level, "power": self.power,
                "methods": {str(e): e.method for e in self.estimates.estimators},
                "interval": INTERVAL_METHOD, **self.interval_summary(), "stop_rule": STOP_RULE,
                "conventions": self.conventions, "notes": self.notes}

    def to_dict(self) -> dict:
        return {**self.header(), "estimates": self.table(),
                "pairs": [{k: v for k, v in p.items() if k != "sentence"} for p in self.pairs()],
                **({"query_set": self.query_set.to_dict()} if self.query_set is not None else {}),
                "warnings": self.warnings}


STOP_RULE = ("decided: the level's interval of the difference excludes 0; else the fewest more sampled judgments "
             "(every stratum's sample grown in proportion, variance projected per stratum as (1 - n/N) S^2/n, "
             "Cochran 1977 ch. 5) after which |difference| >= (z_level + z_power) se: the order is then decided "
             "with probability power if the difference is as estimated")


def infer(qrels, runs, sample, estimators=None, *, k: int = 10, level: float = 0.95, power: float = 0.8,
          ties: str = "trec", complete: bool = True, no_relevant: str = "zero", on_duplicate: str = "error",
          ignore_identical_ids: bool = False, depth_cut: int | None = None,
          intervals: str = DEFAULT_INTERVALS, settings: Settings | None = None) -> Inference:
    """Estimate what judging every pair of ``sample``'s design would give, from ``qrels``
    holding the judged sample (merged as usual). ``sample``: a pool file written by
    ``judged pool --strategy sample`` (or a :class:`~judged.pool.PoolFile`).
    ``estimators``: strings like ``statNDCG@10``, ``statAP``, ``infNDCG@10``, ``xinfAP``
    (default statNDCG@k and statAP). Never changes what :func:`judged.evaluate` reports.
    Runs are scored over every qrels query (``complete=True``, the query-set rule of every
    command comparing runs, :mod:`judged.querysets`); a run sharing no query id with the
    qrels is refused."""
    from ..core.evaluation import aligned_runs
    from ..core.io import read_qrels
    from ..core.querysets import of_aligned

    settings = Settings.of(settings, infer, ties=ties, complete=complete, no_relevant=no_relevant,
                           on_duplicate=on_duplicate, ignore_identical_ids=ignore_identical_ids, depth_cut=depth_cut)
    qrels = read_qrels(qrels, on_duplicate=settings.on_duplicate)
    aligned = aligned_runs(qrels, runs, settings)
    ests = estimators or default_estimators(k)
    query_set = of_aligned(settings, qrels, aligned, measures=[Estimator.parse(e).measure for e in ests])
    out = infer_aligned(qrels, aligned, sample, ests, level=level, power=power, settings=settings,
                        intervals=intervals)
    out.query_set = query_set
    return out


def infer_aligned(qrels, aligned: dict, sample, estimators, *, level: float = 0.95, power: float = 0.8,
                  settings=None, intervals: str = DEFAULT_INTERVALS) -> Inference:
    """:func:`infer` for runs already aligned with ``qrels`` (name -> Aligned)."""
    from .pool import PoolFile, read_pool_file

    if not 0 < level < 1:
        raise ConventionError(f"--level must be between 0 and 1, got {level}")
    if not 0 < power < 1:
        raise ConventionError(f"--power must be between 0 and 1, got {power}")
    if intervals not in INTERVALS:
        raise ConventionError(f"--intervals must be one of {', '.join(INTERVALS)}, got {intervals!r}")
    pf = sample if isinstance(sample, PoolFile) else read_pool_file(sample)
    if pf.design is None:
        raise ConventionError(f"{pf.path}: not a sample (no '# stratum' lines): draw one with "
                              "judged pool --strategy sample --budget N")
    if str(pf.meta.get("strategy", "")).startswith("sample-queries"):
        raise ConventionError(f"{pf.path}: a sample of whole queries; these estimators take pairs drawn one by "
                              "one (judged pool --strategy sample). Estimate from it with a machine judge's labels "
                              "(--machine LABELS: prediction-powered, queries as units)")
    ests = [Estimator.parse(e) for e in estimators]
    settings = settings or Settings()
    pop = population_from_sample(qrels, pf.design)
    lists = {name: run_items(pop, a) for name, a in aligned.items()}
    E = estimate_states(pop, lists, ests)
    n = E.n[0]
    sample_info = {"path": pf.path, "sha256": pf.sha256, "seed": pf.meta.get("seed"), "depth": pf.meta.get("depth"),
                   "runs": pf.runs, "strata": len(pop.N), "population": int(pop.N.sum()),
                   "drawn": int(sum(s.sampled for s in pf.design.strata.values())), "judged": int(n.sum())}
    notes = list(pop.notes)
    pooled = set(pf.runs)
    outside = [r for r in lists if pooled and r not in pooled]
    if outside:
        notes.append(f"runs not in the sample's pool ({', '.join(outside)}): their unjudged documents outside the "
                     "design count as not relevant")
    conventions = {str(e): f"{e} estimates {e.measure.convention(settings)} with every pair of the design judged"
                   for e in ests}
    return Inference(E, level, power, sample_info, notes, conventions, qrels, intervals=intervals)


def estimator_for(measure) -> "Estimator | None":
    """The sampled estimator of a measure: statNDCG for nDCG@k (ideal=judged), statAP for
    AP (its rel= and cutoff kept); None for the others."""
    m = replace(Measure.parse(measure), unjudged="zero", maxgrade=None)
    if m.name == "nDCG" and m.cutoff is not None and m.ideal == "judged":
        return Estimator("statNDCG", m)
    if m.name == "AP":
        return Estimator("statAP", m)
    return None


@dataclass
class SampleDecisions:
    """For ``judged holes`` and ``judged compare``: the sampled estimates of their
    measures and, per pair of runs, whether the sample decides the order."""

    inference: Inference
    measures: dict  # measure as given -> estimator string, or None (no estimator)
    decisions: list  # dicts: measure, a, b, estimator, decided, more, difference, low, high, ...

    def decision(self, measure: str, a: str, b: str) -> "dict | None":
        for d in self.decisions:
            if d["measure"] == measure and d["a"] == a and d["b"] == b:
                return d
        return None

    def to_dict(self) -> dict:
        return {**self.inference.header(), "measures": dict(self.measures), "estimates": self.inference.table(),
                "decisions": [{k: v for k, v in d.items() if k != "sentence"} for d in self.decisions]}


def sample_decisions(qrels, aligned: dict, sample, measures, pairs, *, level: float = 0.95,
                     power: float = 0.8, settings=None, intervals: str = DEFAULT_INTERVALS) -> SampleDecisions:
    """``measures`` (as given) mapped to their estimators (:func:`estimator_for`) and for
    each (a, b) of ``pairs`` and each estimated measure, the decision on their order."""
    mapping = {str(m): estimator_for(m) for m in measures}
    ests = list(dict.fromkeys(str(e) for e in mapping.values() if e is not None))
    if not ests:
        raise ConventionError(f"no sampled estimator for {', '.join(map(str, measures))}: --sample estimates nDCG@k "
                              "and AP")
    inf = infer_aligned(qrels, aligned, sample, ests, level=level, power=power, settings=settings,
                        intervals=intervals)
    decisions = []
    for given, e in mapping.items():
        if e is None:
            continue
        for a, b in pairs:
            decisions.append({"measure": given, **inf.decide(e, a, b)})
    return SampleDecisions(inf, {g: (str(e) if e else None) for g, e in mapping.items()}, decisions)


# ---------------------------------------------------------------------------
# Repeated samples: the estimators' sampling distribution on a collection with known truth


def repeated_samples(base_qrels, full_qrels, runs, depth: int, budget: int, seeds, estimators=None, *,
                     k: int = 10, strata=None, ties: str = "trec", estimate=None, grow: float = 0.0,
                     settings: Settings | None = None):
    """Draw ``judged pool --strategy sample`` samples of the holes of ``base_qrels`` (one
    per seed), "judge" them with ``full_qrels`` (a hole it does not judge is not
    relevant), and estimate with every sample at once. Returns (:class:`Estimates` with
    one state per seed, truth: {estimator: {run: mean with every pair of the design
    judged}}, the design). The truth equals the score on ``full_qrels`` when every
    judgment missing from ``base_qrels`` is a hole in the runs' top ``depth``. The pool
    is drawn from every run; ``estimate`` (run names) limits the runs estimated. ``grow``:
    every stratum's sample is ``1 + grow`` times the design's (rounded, capped at N_h), the
    same strata: the larger sample :func:`judgments_to_decide` projects to."""
    from ..core.evaluation import named_runs, evaluate
    from ..core.io import read_qrels
    from .pool import candidates
    from .sampling import DesignUnit, SampleDesign, allocate, draw_many

    ests = [Estimator.parse(e) for e in (estimators or default_estimators(k))]
    base, full = read_qrels(base_qrels), read_qrels(full_qrels)
    settings = Settings.of(settings, repeated_samples, ties=ties)
    named = list(named_runs(runs, settings.on_duplicate))
    aligned = {name: align(base, run, settings) for name, run in named}
    seeds = list(seeds)
    cands, strata, members = allocate(candidates(aligned, depth), budget, seeds[0], depth, strata)
    units = [DesignUnit(cands[i].qid, cands[i].docid, cands[i].best_rank, list(cands[i].runs), sid, True)
             for sid, idx in zip(strata, members) for i in idx.tolist()]
    units.sort(key=lambda u: (u.stratum, u.qid, u.docid))
    d0 = SampleDesign(strata, units, seeds[0])
    truth_grade = dict(zip(zip(full.qid.to_pylist(), full.docid.to_pylist()), full.grade.tolist()))
    labelled = {(u.qid, u.docid): max(int(truth_grade.get((u.qid, u.docid), 0)), 0) for u in units}
    bq, bd, bg = base.qid.to_pylist(), base.docid.to_pylist(), base.grade.tolist()
    keys = list(labelled)
    merged = Qrels(bq + [q for q, _ in keys], bd + [d for _, d in keys],
                   np.array(bg + [labelled[x] for x in keys], np.int64), source="design-complete")
    pop = population_from_sample(merged, d0)  # every unit labelled with its truth, known per state below
    pop.notes = []
    position = {}
    for u, (q, item) in enumerate(zip(pop.unit_query, pop.unit_item.tolist())):
        position[(q, item)] = u
    unit_of_cand = np.array([position[(p.qid, pop.queries[p.qid].index[p.docid])] for p in cands], np.int64)
    known = np.zeros((len(seeds), len(pop.unit_query)), bool)
    sizes = [min(st.population, int(round(st.sampled * (1.0 + grow)))) for st in strata.values()]
    for s, chosen in enumerate(draw_many(members, sizes, seeds)):
        known[s, unit_of_cand[chosen]] = True
    pop.known = known
    wanted = [name for name in aligned if estimate is None or name in estimate]
    lists = {name: run_items(pop, aligned[name]) for name in wanted}
    E = estimate_states(pop, lists, ests)
    truth_res = evaluate(merged, {name: run for name, run in named if name in wanted},
                         [str(e.measure) for e in ests], settings=settings)
    means = truth_res.mean()
    truth = {str(e): {name: float(means.loc[name, str(e.measure)]) for name in lists} for e in ests}
    return E, truth, d0

