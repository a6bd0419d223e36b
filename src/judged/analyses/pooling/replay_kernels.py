"""The pooling wing's kernels, mostly its offline replay's (``judged meta pooling``,
:mod:`judged.analyses.pooling.policies`): each a numpy reference and its C function
(``_native_pooling.c`` beside this module, compiled into ``judged.core._native``) that gives
the same bits, bound by :func:`judged.core.kernels.kernel`.

* :func:`ts_picks` -- Thompson sampling's (and TS-NS's) whole order from no label: a turn of
  every query at a time, the draws numpy's Generator makes (the generator's state in and out).
* :func:`hedge_picks` -- the same for Hedge: per query the open pair of highest mixture
  value, the experts' weights updated by each label.
* :func:`bounds_picks` -- the ``bounds`` strategy's whole order, step by step.
* :func:`replay_dcg` -- one run's DCG@k or nDCG@k per query at each checkpoint of a replay
  (holes counted 0, the ideal over the labels gathered), as ``judged eval`` computes them
  (:mod:`judged.core.measures.dcg`: the same sums in the same order); only the queries
  that gained a label of non-zero gain are scored again.
* :func:`pair_gaps` -- per row, ``|a - b|`` summed over every pair of columns (impact's
  pairwise sum), the pairs in order.
* :func:`turn_picks` -- the pairs of each query in the order move-to-front (Cormack, Palmer
  & Clarke, SIGIR 1998) or the bandit MM (Losada, Parapar & Barreiro, SAC 2016; with a
  discount, the non-stationary MM-NS) draws them when every label arrives as soon as its
  pair is drawn. Inside a query every run is walked down its list; a labelled pair a run
  reaches is that run's outcome without a draw; the next draw comes from the run of
  highest priority (move-to-front: minus its non-relevant outcomes) or posterior mean
  (1 + a) / ((1 + a) + (1 + b)) (a, b its relevant and non-relevant outcomes, each
  multiplied by the discount before the next one is added), ties by the runs' order. The
  queries do not share state, so each query's draws are the policy's whatever turn the
  queries take.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ...core.kernels import FALLBACK, block_rows, kernel

RULES = {"mtf": 0, "mm": 1}


@kernel
def pair_gaps(values: np.ndarray) -> np.ndarray:
    """Per row of ``values`` (rows x columns, float64): the sum over the column pairs x < y,
    in order (0, 1), (0, 2), ..., (1, 2), ..., of ``|values[:, x] - values[:, y]|``, added
    one pair at a time from 0 (the pairwise sum of ``impact``,
    :func:`judged.analyses.pooling.strategies.impact_scores`)."""
    values = np.asarray(values, np.float64)
    out = np.zeros(len(values))
    columns = np.asfortranarray(values)  # each column contiguous: the same values, read faster
    for x, y in combinations(range(values.shape[1]), 2):
        out += np.abs(columns[:, x] - columns[:, y])
    return out


@pair_gaps.binding
def _(native, values):
    values = np.ascontiguousarray(values, np.float64)
    out = np.empty(len(values))
    native.pair_gaps(values, values.shape[1], out)
    return out


@kernel
def turn_picks(query_offsets: np.ndarray, list_offsets: np.ndarray, lists: np.ndarray, label: np.ndarray,
               truth: np.ndarray, rel: float, rule: str, discount: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(picks, counts): query q's pairs (``query_offsets[q]:query_offsets[q + 1]``) not yet
    labelled, in the order the policy ``rule`` ('mtf' or 'mm') draws them, stored from
    ``query_offsets[q]`` in ``picks``, ``counts[q]`` of them. ``list_offsets`` (queries x
    runs + 1, query-major) delimit each run's pair ids in ``lists``, best rank first;
    ``label`` the labels known (NaN: none); ``truth`` the label a drawn pair gets; a pair is
    relevant at grade >= ``rel``."""
    nq = len(query_offsets) - 1
    R = (len(list_offsets) - 1) // nq if nq else 0
    label = np.array(label, np.float64)
    picks = np.zeros(int(query_offsets[-1]) if nq else 0, np.int64)
    counts = np.zeros(nq, np.int64)
    mtf = rule == "mtf"
    for q in range(nq):
        lists_q = [lists[list_offsets[q * R + r]:list_offsets[q * R + r + 1]].tolist() for r in range(R)]
        ptr, prio, a, b = [0] * R, [0] * R, [0.0] * R, [0.0] * R

        def outcome(r, relevant):
            if mtf:
                prio[r] -= 1 if not relevant else 0
            else:
                a[r] = discount * a[r] + (1.0 if relevant else 0.0)
                b[r] = discount * b[r] + (0.0 if relevant else 1.0)

        def head(r):
            lst, p = lists_q[r], ptr[r]
            while p < len(lst):
                g = label[lst[p]]
                if g != g:
                    ptr[r] = p
                    return lst[p]
                outcome(r, g >= rel)
                p += 1
            ptr[r] = p
            return -1

        heads = [head(r) for r in range(R)]
        n = 0
        while True:
            arm, best = -1, 0.0
            for r in range(R):
                if heads[r] >= 0 and label[heads[r]] == label[heads[r]]:  # drawn by another run: walk on
                    heads[r] = head(r)
                if heads[r] < 0:
                    continue
                if mtf:
                    value = prio[r]
                else:
                    alpha, beta = 1.0 + a[r], 1.0 + b[r]
                    value = alpha / (alpha + beta)
                if arm < 0 or value > best:
                    arm, best = r, value
            if arm < 0:
                break
            pid = heads[arm]
            ptr[arm] += 1
            heads[arm] = head(arm)
            label[pid] = truth[pid]
            outcome(arm, truth[pid] >= rel)
            picks[query_offsets[q] + n] = pid
            n += 1
        counts[q] = n
    return picks, counts


@turn_picks.binding
def _(native, query_offsets, list_offsets, lists, label, truth, rel, rule, discount=1.0):
    nq = len(query_offsets) - 1
    if nq <= 0 or rule not in RULES or (len(list_offsets) - 1) % nq:
        return FALLBACK
    query_offsets = np.ascontiguousarray(query_offsets, np.int64)
    list_offsets = np.ascontiguousarray(list_offsets, np.int64)
    lists = np.ascontiguousarray(lists, np.int64)
    R = (len(list_offsets) - 1) // nq
    if len(lists):  # every pair in its own query's range: picks stay in place
        owner = np.repeat(np.repeat(np.arange(nq), R), np.diff(list_offsets))
        if ((lists < query_offsets[owner]) | (lists >= query_offsets[owner + 1])).any():
            return FALLBACK
    picks = np.zeros(int(query_offsets[-1]), np.int64)
    counts = np.zeros(nq, np.int64)
    native.turn_picks(query_offsets, list_offsets, lists, np.array(label, np.float64),
                      np.ascontiguousarray(truth, np.float64), float(rel), RULES[rule], float(discount), picks, counts)
    return picks, counts


@kernel
def ts_picks(list_offsets: np.ndarray, lists: np.ndarray, label: np.ndarray, truth: np.ndarray, a: np.ndarray,
             b: np.ndarray, spent: np.ndarray, rel: float, discount: float, n_runs: int, state: dict,
             limit: int = -1) -> tuple:
    """(order, label, a, b, state) of Thompson sampling (Losada, Parapar & Barreiro, SAC 2016)
    from ``label`` (NaN: unlabelled), every label answered from ``truth``: turn after turn,
    every query with the fewest draws so far (``spent``) that still has a free pair draws
    once. Per query and run (cells, query-major: ``list_offsets`` over queries x runs, the
    run's pair ids in ``lists``) a walk stands at the run's next free pair, a labelled pair
    passed on the way counting as an outcome; an outcome multiplies the cell's evidence (a
    relevant, b not) by ``discount`` and adds 1 to one of them. A turn draws Beta(1 + a,
    1 + b) for every live cell of the turn's queries in cell order, by numpy's Generator
    from ``state`` (``bit_generator.state``), and each query takes its run of highest draw
    (the first on a tie): that pair is labelled, its run's walk goes on. Until every query
    is done or, past a turn, ``limit`` (>= 0) pairs are drawn; the inputs are left as they
    are, the new label, a, b and generator state returned."""
    label, a, b, spent = (np.array(x) for x in (label, a, b, spent))
    rng = _generator(state)
    R = int(n_runs)
    end = list_offsets[1:]
    pos = np.array(list_offsets[:-1], np.int64)
    Q = len(pos) // R if R else 0
    head = np.full(Q * R, -2, np.int64)  # -2: not walked yet, -1: list done

    def outcome(cells, relevant):
        a[cells] = discount * a[cells] + np.where(relevant, 1.0, 0.0)
        b[cells] = discount * b[cells] + np.where(relevant, 0.0, 1.0)

    def walk(cells):
        while len(cells):
            p = pos[cells]
            over = p >= end[cells]
            head[cells[over]] = -1
            cells, p = cells[~over], p[~over]
            pid = lists[p]
            g = label[pid]
            free = np.isnan(g)
            head[cells[free]] = pid[free]
            cells, g = cells[~free], g[~free]
            outcome(cells, g >= rel)
            pos[cells] += 1

    done, out, n = np.zeros(Q, bool), [], 0
    runs = np.arange(R)
    while (limit < 0 or n < limit) and Q and not done.all():
        turn = spent[~done].min()
        act = np.flatnonzero(~done & (spent == turn))
        cells = (act[:, None] * R + runs).ravel()
        h = head[cells]
        stale = (h == -2) | (h >= 0) & ~np.isnan(label[np.maximum(h, 0)])
        walk(cells[stale])
        H = head[cells].reshape(len(act), R)
        live = H >= 0
        has = live.any(axis=1)
        done[act[~has]] = True
        act, H, live = act[has], H[has], live[has]
        if not len(act):
            continue
        cell = act[:, None] * R + runs
        value = np.full(H.shape, -np.inf)
        value[live] = rng.beta(1.0 + a[cell[live]], 1.0 + b[cell[live]])
        arm = value.argmax(axis=1)  # the first of the highest: the runs' order
        pid = H[np.arange(len(act)), arm]
        drawn = act * R + arm
        pos[drawn] += 1
        walk(drawn)
        label[pid] = truth[pid]
        outcome(drawn, truth[pid] >= rel)
        spent[act] += 1
        out.append(pid)
        n += len(pid)
    order = np.concatenate(out) if out else np.zeros(0, np.int64)
    return (order[:limit] if limit >= 0 else order), label, a, b, rng.bit_generator.state


def _generator(state: dict):
    """A numpy Generator over a bit generator in ``state`` (its ``bit_generator.state``)."""
    bits = getattr(np.random, state["bit_generator"])()
    bits.state = state
    return np.random.Generator(bits)


@ts_picks.binding
def _(native, list_offsets, lists, label, truth, a, b, spent, rel, discount, n_runs, state, limit=-1):
    R, P = int(n_runs), len(label)
    list_offsets, lists = np.ascontiguousarray(list_offsets, np.int64), np.ascontiguousarray(lists, np.int64)
    if (R < 1 or (len(list_offsets) - 1) % R or len(a) != len(list_offsets) - 1 or len(b) != len(a)
            or len(spent) != len(a) // R or len(truth) != P or (len(lists) and (lists.min() < 0 or lists.max() >= P))
            or list_offsets[0] != 0 or (np.diff(list_offsets) < 0).any() or list_offsets[-1] != len(lists)):
        return FALLBACK
    label, a, b = (np.array(x, np.float64) for x in (label, a, b))
    spent = np.array(spent, np.int64)
    rng = _generator(state)
    alpha, beta = np.empty(len(a)), np.empty(len(a))
    out = np.empty(P, np.int64)
    count = native.ts_replay(list_offsets, lists, label, np.ascontiguousarray(truth, np.float64), a, b, spent,
                             float(rel), float(discount), R, int(limit), alpha, beta,
                             lambda m: rng.beta(alpha[:m], beta[:m]), out)
    order = out[:count]
    return (order[:limit] if limit >= 0 else order), label, a, b, rng.bit_generator.state


@kernel
def hedge_picks(query_offsets: np.ndarray, values: np.ndarray, factor_rel: np.ndarray, factor_non: np.ndarray,
                truth: np.ndarray, rel: float, n_runs: int) -> tuple[np.ndarray, np.ndarray]:
    """(picks, counts) as :func:`turn_picks` gives them, for Hedge (Aslam, Pavlu & Savell,
    CIKM 2003) from no label: per query every run an expert of weight 1; next the open pair
    of highest mixture value sum_r w_r v_r / sum_r w_r (``values``: per query, runs x its
    pairs, row-major from ``n_runs * query_offsets[q]``; the sum over the runs in turn; ties:
    the first pair); its label multiplies each w_r by ``factor_rel`` (grade >= ``rel``) or
    ``factor_non`` at the same place (beta^loss), then w is divided by its largest."""
    nq, R = len(query_offsets) - 1, int(n_runs)
    picks = np.zeros(int(query_offsets[-1]) if nq >= 0 else 0, np.int64)
    counts = np.zeros(max(nq, 0), np.int64)
    for q in range(nq):
        s, e = int(query_offsets[q]), int(query_offsets[q + 1])
        V, Fr, Fn = (x[R * s:R * e].reshape(R, e - s) for x in (values, factor_rel, factor_non))
        w, open_ = np.ones(R), np.ones(e - s, bool)
        for n in range(e - s):
            mix = np.where(open_, (w[:, None] * V).sum(axis=0) / w.sum(), -1.0)
            j = int(np.argmax(mix))
            open_[j] = False
            picks[s + n] = s + j
            w = w * (Fr if truth[s + j] >= rel else Fn)[:, j]
            w = w / w.max()
        counts[q] = e - s
    return picks, counts


@hedge_picks.binding
def _(native, query_offsets, values, factor_rel, factor_non, truth, rel, n_runs):
    nq = len(query_offsets) - 1
    if nq <= 0 or n_runs < 1 or len(values) != n_runs * int(query_offsets[-1]):
        return FALLBACK
    picks = np.zeros(int(query_offsets[-1]), np.int64)
    counts = np.zeros(nq, np.int64)
    native.hedge_picks(np.ascontiguousarray(query_offsets, np.int64), np.ascontiguousarray(values, np.float64),
                       np.ascontiguousarray(factor_rel, np.float64), np.ascontiguousarray(factor_non, np.float64),
                       np.ascontiguousarray(truth, np.float64), float(rel), int(n_runs), picks, counts)
    return picks, counts


@kernel
def replay_dcg(cutoff: int | None, normalised: bool, offsets: np.ndarray, pos: np.ndarray, pid: np.ndarray,
               joffsets: np.ndarray, jpid: np.ndarray, pair_query: np.ndarray, gain: np.ndarray,
               denominators: np.ndarray, order: np.ndarray, start: int, at: np.ndarray,
               values: np.ndarray) -> np.ndarray:
    """Per checkpoint ``c`` (rows) the value of every query (columns) once the pairs
    ``order[:at[c]]`` are labelled, given ``values``, the queries' values with ``order[:start]``
    labelled. Query q's rows ``offsets[q]:offsets[q+1]`` (rank ``pos``, pair ``pid``, -1 for
    none) in rank order: DCG@k = sum gain / denominators[rank] over its labelled rows (a
    hole gains 0); its pairs ``jpid[joffsets[q]:joffsets[q+1]]``, by gain descending: the
    ideal sums its labelled positive gains the same way (trec_eval's ``ndcg_cut``: the
    ideal over the judgments); nDCG@k = DCG / ideal, 0 when the ideal is 0. A label of gain
    0 moves no value, so a query is scored again only when a label of non-zero gain
    (``pair_query`` its query, -1 for another's) arrives."""
    n = len(values)
    k = len(denominators) if cutoff is None else cutoff
    labelled = np.zeros(len(gain), bool)
    labelled[order[:start]] = True
    cur = np.array(values, np.float64)
    out = np.empty((len(at), n))
    counts, jcounts = np.diff(offsets), np.diff(joffsets)
    prev = start
    for c, t in enumerate(np.asarray(at).tolist()):
        new = order[prev:max(t, prev)]
        prev = max(t, prev)
        labelled[new] = True
        q = pair_query[new]
        q = q[(q >= 0) & (gain[new] != 0)]
        changed = np.flatnonzero(np.bincount(q, minlength=n))
        if len(changed):
            rows = block_rows(offsets, changed)
            p = pid[rows]
            hit = p >= 0
            hit[hit] = labelled[p[hit]]
            g = np.where(hit, gain[np.maximum(p, 0)], 0.0)
            keep = (pos[rows] < k) & (g != 0)
            which = np.repeat(np.arange(len(changed)), counts[changed])[keep]
            dcg = np.bincount(which, weights=g[keep] / denominators[pos[rows][keep]], minlength=len(changed))
            if normalised:
                jrows = block_rows(joffsets, changed)
                jp = jpid[jrows]
                ok = labelled[jp] & (gain[jp] > 0)
                jwhich = np.repeat(np.arange(len(changed)), jcounts[changed])[ok]
                rank = np.arange(len(jwhich)) - np.searchsorted(jwhich, jwhich)  # 0-based within its query
                top = rank < k
                ideal = np.bincount(jwhich[top], weights=gain[jp[ok]][top] / denominators[rank[top]],
                                    minlength=len(changed))
                dcg = np.divide(dcg, ideal, out=np.zeros(len(changed)), where=ideal > 0)
            cur[changed] = dcg
        out[c] = cur
    return out


@replay_dcg.binding
def _(native, cutoff, normalised, offsets, pos, pid, joffsets, jpid, pair_query, gain, denominators, order, start, at,
      values):
    n, P = len(values), len(gain)
    i64 = (lambda x: np.ascontiguousarray(x, np.int64))
    offsets, pos, pid, joffsets, jpid, pair_query, order, at = map(i64, (offsets, pos, pid, joffsets, jpid, pair_query,
                                                                         order, at))
    # every index in range, or numpy decides (it raises where an index is out of range)
    if (len(offsets) != n + 1 or len(joffsets) != n + 1 or len(pair_query) != P or not 0 <= start <= len(order)
            or (len(at) and (at[0] < start or at[-1] > len(order) or (np.diff(at) < 0).any()))
            or (len(order) and (order.min() < 0 or order.max() >= P))
            or (len(pid) and (pid.min() < -1 or pid.max() >= P)) or (len(jpid) and (jpid.min() < 0 or jpid.max() >= P))
            or (len(pair_query) and pair_query.max() >= n) or len(pos) != len(pid)
            or offsets[-1] > len(pos) or joffsets[-1] > len(jpid)):
        return FALLBACK
    k = -1 if cutoff is None else int(cutoff)
    read = pos if k < 0 else pos[pos < k]  # the ranks summed, and the ideal's deepest rank
    deepest = int(np.diff(joffsets).max()) if n else 0
    need = max(int(read.max()) + 1 if len(read) else 0, deepest if k < 0 else min(k, deepest))
    if (len(pos) and pos.min() < 0) or need > len(denominators):
        return FALLBACK
    out = np.empty((len(at), n))
    native.replay_dcg(k, bool(normalised), offsets, pos, pid, joffsets, jpid, pair_query,
                      np.ascontiguousarray(gain, np.float64), np.ascontiguousarray(denominators, np.float64), order,
                      int(start), at, np.ascontiguousarray(values, np.float64), out)
    return out


# ---------------------------------------------------------------------------------------
# the bounds strategy: exact nDCG@k bounds decide which run pairs are still undecided


MAX_MULTISETS = 5000  # past this many grade multisets of a run's holes, ndcg_extreme's DP gives the maximum
_MULTISETS: dict = {}


def multisets(n: int, top: int):
    """Counts of each grade top..0 (columns) over every multiset of n grades in 0..top;
    None when there are more than MAX_MULTISETS."""
    key = (n, top)
    if key not in _MULTISETS:
        from itertools import combinations_with_replacement
        from math import comb

        if comb(n + top, top) > MAX_MULTISETS:
            _MULTISETS[key] = None
        else:
            rows = [np.bincount(top - np.asarray(m, np.int64), minlength=top + 1)
                    for m in combinations_with_replacement(range(top + 1), n)]
            _MULTISETS[key] = np.array(rows, np.int64).reshape(-1, top + 1)
    return _MULTISETS[key]


def max_over_multisets(own, dcg, jg, disc, top: int):
    """max over the grades 0..top of the holes of (dcg + DCG of the holes) / IDCG@k, IDCG
    over the judged gains ``jg`` (within 1..top) and the holes' grades; linear gain,
    ``disc`` the first k discounts. ``own``: the holes' discounts, one row per run (every
    row the same number of holes), ``dcg`` per run; returns the maximum per run (a float
    for a single row). Only the multiset of grades matters to the ideal, and for a
    multiset the largest grades sit on the largest discounts (rearrangement): every
    multiset is tried. The same value as :func:`judged.core.measures.bounds.ndcg_extreme` (tested)."""
    single = np.ndim(own) == 1
    own = np.atleast_2d(np.asarray(own, np.float64))
    dcg = np.atleast_1d(np.asarray(dcg, np.float64))
    C = multisets(own.shape[1], top)  # multisets x levels (grade top first)
    grades = np.arange(top, -1, -1, dtype=np.float64)
    w = np.concatenate((np.zeros((len(own), 1)), np.cumsum(-np.sort(-own, axis=1), axis=1)), axis=1)
    end = np.cumsum(C, axis=1)
    start = end - C
    add = ((w[:, end] - w[:, start]) * grades[None, None, :]).sum(axis=2)  # runs x multisets
    jg = np.asarray(jg, np.int64)
    counts = C + np.bincount(top - jg, minlength=top + 1)[None, :] if len(jg) else C  # grades top..0
    D = np.concatenate(([0.0], np.cumsum(disc)))  # the ideal's prefix sums; flat past k
    D = np.concatenate((D, np.full(int(counts.sum(axis=1).max()) + 1, D[-1])))
    cend = np.cumsum(counts, axis=1)
    cstart = cend - counts
    ideal = (grades[None, :] * (D[cend] - D[cstart])).sum(axis=1)
    value = np.divide(dcg[:, None] + add, ideal[None, :], out=np.zeros(add.shape), where=ideal[None, :] > 0)
    best = value.max(axis=1)
    return float(best[0]) if single else best


def ideal_dcg(gains, disc: np.ndarray) -> float:
    """IDCG@k of a query's labelled gains: the k largest on the k discounts ``disc``."""
    g = np.sort(np.asarray(gains, np.float64))[::-1][: len(disc)]
    return float((g * disc[: len(g)]).sum())


def bounds_lo(W: np.ndarray, open_: np.ndarray, dcg: np.ndarray, jg, disc: np.ndarray, top: float):
    """(lo, Wo, n_own): per run, the exact minimum of nDCG@k on a query over the grades
    0..``top`` of the open holes (``open_``, over the columns of ``W``: runs x the query's
    pairs in some run's top k, a run's discount there or 0): s = 0..k of the run's own
    holes at the top grade on its s smallest discounts, every other open hole at the top
    grade (it only raises the ideal); ``Wo`` the open columns, ``n_own`` each run's own
    open holes. The ideal's sums are row sums (pairwise, as numpy sums), never BLAS."""
    k = len(disc)
    Wo = W[:, open_]
    n_open = Wo.shape[1]
    n_own = (Wo > 0).sum(axis=1)
    S = np.sort(np.where(Wo > 0, Wo, np.inf), axis=1)[:, :k]
    cols = S.shape[1]
    cum = np.concatenate((np.zeros((len(S), 1)), np.cumsum(np.where(np.isinf(S), 0.0, S), axis=1)), axis=1)
    # ideal with j more documents of the top grade (j = 0..n_open): they lead, the judged follow
    best = np.zeros(k)
    g = np.sort(np.asarray(jg, np.float64))[::-1][:k]
    best[: len(g)] = g
    j = np.arange(n_open + 1)[:, None]
    pos = j + np.arange(k)[None, :]
    shifted = np.where(pos < k, disc[np.minimum(pos, k - 1)], 0.0)
    ideal_plus = top * np.concatenate(([0.0], np.cumsum(disc)))[np.minimum(j[:, 0], k)] + (shifted * best).sum(axis=1)
    steps = np.arange(cols + 1)
    valid = steps[None, :] <= n_own[:, None]
    at = np.where(valid, n_open - n_own[:, None] + steps[None, :], 0)
    num = dcg[:, None] + top * cum
    den = ideal_plus[at]
    ratio = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    return np.where(valid, ratio, np.inf).min(axis=1), Wo, n_own


def bounds_hi(hi: np.ndarray, runs: np.ndarray, Wo: np.ndarray, n_own: np.ndarray, dcg: np.ndarray, jg,
              disc: np.ndarray, top: int, ideal: float) -> list:
    """``hi[r]`` for each run of ``runs``: the exact maximum of its nDCG@k on a query over
    the grades 0..``top`` of its own open holes (``Wo``: runs x open holes, its discounts or
    0; the other runs' holes at 0), by every grade multiset at once
    (:func:`max_over_multisets`); ``ideal`` the IDCG@k of the judged gains ``jg``. Returns
    the runs with more than MAX_MULTISETS multisets, left for
    :func:`judged.core.measures.bounds.ndcg_extreme`'s DP."""
    none = runs[n_own[runs] == 0]
    hi[none] = dcg[none] / ideal if ideal > 0 else 0.0
    left = []
    for n in np.unique(n_own[runs]).tolist():
        if n == 0:
            continue
        same = runs[n_own[runs] == n]
        if multisets(n, top) is None:
            left.extend(same.tolist())
            continue
        own = np.sort(np.where(Wo[same] > 0, Wo[same], np.inf), axis=1)[:, :n]  # every run with n holes at once
        hi[same] = max_over_multisets(own, dcg[same], jg, disc, top)
    return left


def best_hole(ids, free, move_top, deep, deep_free, move_deep: float, p_rel, s: int) -> tuple[float, int]:
    """(priority, pair) of a query's free pair of highest priority (-1.0, -1: none): a pair
    ``ids`` in some run's top k scores its chance of relevance (``p_rel``, the query's pairs
    from pair ``s``) times ``move_top``, one in no run's top k (``deep``) times
    ``move_deep``; ties: the first top pair, then the first deep one."""
    best, arg = -1.0, -1
    if len(ids):
        pr = np.where(free, p_rel[ids - s] * move_top, -1.0)
        j = int(np.argmax(pr))
        if pr[j] >= 0:
            best, arg = float(pr[j]), int(ids[j])
    if len(deep) and deep_free.any():
        pd = np.where(deep_free, p_rel[deep - s], -1.0)
        j = int(np.argmax(pd))
        if pd[j] * move_deep > best:
            best, arg = float(pd[j] * move_deep), int(deep[j])
    return best, arg


@kernel
def bounds_picks(query_offsets: np.ndarray, top_offsets: np.ndarray, top_ids: np.ndarray, top_w: np.ndarray,
                 deep_offsets: np.ndarray, deep_ids: np.ndarray, member: np.ndarray, truth: np.ndarray,
                 disc: np.ndarray, n_runs: int, maxgrade: int, rel: float, limit: int = -1) -> np.ndarray:
    """The pairs in the order the ``bounds`` strategy
    (:class:`judged.analyses.pooling.policies.Bounds`) has them judged when each label
    (``truth``) arrives as soon as its pair is handed out, from no label at all (at most
    ``limit`` of them; -1: every one). Query q's pairs are ``query_offsets[q]:[q + 1]``;
    ``top_ids[top_offsets[q]:top_offsets[q + 1]]`` those in some run's top k (ascending)
    and ``top_w`` their discounts (per query, runs x those pairs, row-major, 0 outside a
    run's top k); ``deep_ids`` (``deep_offsets``) the others; ``member`` (per query, runs x
    its pairs) whether a run has the pair in its top depth; ``disc`` the k discounts;
    grades 0..``maxgrade``, relevant from ``rel``. The policy's steps, one by one: the
    bounds of the queries whose labels moved them, the undecided run pairs, the priority
    of every query whose labels (or the undecided pairs) changed, the pair of highest
    priority next (ties: the smaller pair id)."""
    import heapq

    Q, R, k = len(query_offsets) - 1, int(n_runs), len(disc)
    top_grade = float(max(int(maxgrade), 1))
    label = np.full(int(query_offsets[-1]) if Q >= 0 else 0, np.nan)
    tops, deeps, members = [], [], []
    for q in range(Q):
        a, b = int(top_offsets[q]), int(top_offsets[q + 1])
        tops.append((top_ids[a:b], top_w[R * a:R * b].reshape(R, b - a)))
        deeps.append(deep_ids[int(deep_offsets[q]):int(deep_offsets[q + 1])])
        s, e = int(query_offsets[q]), int(query_offsets[q + 1])
        members.append(member[R * s:R * e].reshape(R, e - s).astype(bool))
    pair_query = np.repeat(np.arange(Q), np.diff(query_offsets))
    gains = [[] for _ in range(Q)]
    dcg, n_lab, n_rel = np.zeros((Q, R)), np.zeros((Q, R)), np.zeros((Q, R))
    lo, hi = np.zeros((Q, R)), np.zeros((Q, R))
    grade_counts = np.zeros(int(top_grade) + 1)
    dirty, bounds_dirty = set(range(Q)), set(range(Q))
    heap, version, undecided_was = [], np.zeros(Q, np.int64), None
    hi_stale, hi_gains, terms_of = {}, {}, {}

    def query_bounds(q):
        ids, W = tops[q]
        open_ = np.isnan(label[ids])
        jg = np.asarray(gains[q], np.float64)
        ideal = ideal_dcg(jg, disc)
        if not open_.any():
            lo[q] = hi[q] = dcg[q] / ideal if ideal > 0 else 0.0
            return
        lo[q], Wo, n_own = bounds_lo(W, open_, dcg[q], jg, disc, top_grade)
        stale = hi_stale.pop(q, None)
        key = tuple(np.sort(jg)[::-1][:k].tolist())
        if stale is None or hi_gains.get(q) != key:
            stale = range(R)
        hi_gains[q] = key
        left = bounds_hi(hi[q], np.asarray(sorted(stale), np.int64), Wo, n_own, dcg[q], jg, disc, int(top_grade),
                         ideal)
        if left:
            raise ValueError(f"bounds_picks: more than {MAX_MULTISETS} grade multisets "
                             f"(k={k}, top grade {top_grade:g})")

    def undecided():
        if R == 1:
            return np.zeros((1, 1), bool)
        LO, HI = lo.mean(axis=0), hi.mean(axis=0)
        U = (LO[:, None] < HI[None, :] - 1e-12) & (LO[None, :] < HI[:, None] - 1e-12)
        np.fill_diagonal(U, False)
        return np.triu(U)

    def update(q, ri, si, grades, weights):
        version[q] += 1
        s = int(query_offsets[q])
        I0 = ideal_dcg(gains[q], disc)
        D = dcg[q]
        base = D / I0 if I0 > 0 else np.zeros_like(D)
        ids, W = tops[q]
        move_top, move_deep = np.zeros(len(ids)), 0.0
        terms = terms_of.setdefault(q, {})
        for g, pg in zip(grades, weights):
            if g not in terms:
                I1 = ideal_dcg(gains[q] + [g], disc)
                d = (D[:, None] + g * W) / I1 - base[:, None]
                dd = D / I1 - base
                terms[g] = (np.abs(d[ri] - d[si]).sum(axis=0) + np.abs(d).sum(axis=0) / max(R, 1),
                            float(np.abs(dd[ri] - dd[si]).sum()) + float(np.abs(dd).sum()) / max(R, 1))
            top_term, deep_term = terms[g]
            move_top += pg * top_term
            move_deep += pg * deep_term
        share = (1.0 + n_rel[q]) / (2.0 + n_lab[q])
        p_rel = np.where(members[q], share[:, None], 0.0).max(axis=0) if R else np.zeros(0)
        best, arg = best_hole(ids, np.isnan(label[ids]), move_top, deeps[q], np.isnan(label[deeps[q]]), move_deep,
                              p_rel, s)
        if arg >= 0:
            heapq.heappush(heap, (-best, arg, q, int(version[q])))

    def observe(pid, grade):
        q = int(pair_query[pid])
        s = int(query_offsets[q])
        g = max(float(grade), 0.0)
        label[pid] = grade
        grade_counts[int(g)] += 1
        runs = members[q][:, pid - s]
        n_lab[q, runs] += 1
        if grade >= rel:
            n_rel[q, runs] += 1
        ids, W = tops[q]
        j = np.searchsorted(ids, pid)
        in_top = j < len(ids) and ids[j] == pid
        if in_top:
            hi_stale.setdefault(q, set()).update(np.flatnonzero(W[:, j] > 0).tolist())
            if g > 0:
                dcg[q] += g * W[:, j]
        if g > 0:
            gains[q].append(g)
            terms_of.pop(q, None)
        dirty.add(q)
        if in_top or g > 0:
            bounds_dirty.add(q)

    out = []
    while limit < 0 or len(out) < limit:
        if R > 1:  # with one run no pair is undecided: its bounds are never read
            for q in bounds_dirty:
                query_bounds(q)
        bounds_dirty.clear()
        U = undecided()
        if undecided_was is None or not np.array_equal(U, undecided_was):
            undecided_was = U
            dirty = set(range(Q))
            terms_of.clear()
            heap = []
        grades = np.arange(rel, len(grade_counts))
        if not len(grades):
            grades = np.array([rel])
        counts = np.array([grade_counts[g] if g < len(grade_counts) else 0 for g in grades]) + 1.0
        grades, weights = grades.astype(np.float64), counts / counts.sum()
        ri, si = np.nonzero(U)
        for q in dirty:
            update(q, ri, si, grades, weights)
        dirty.clear()
        pid = None
        while heap:
            _, p, q, v = heapq.heappop(heap)
            if v == version[q] and np.isnan(label[p]):
                pid = p
                break
        if pid is None:
            break
        observe(pid, float(truth[pid]))
        out.append(pid)
    return np.asarray(out, np.int64)


@bounds_picks.binding
def _(native, query_offsets, top_offsets, top_ids, top_w, deep_offsets, deep_ids, member, truth, disc, n_runs,
      maxgrade, rel, limit=-1):
    top = max(int(maxgrade), 1)
    truth = np.ascontiguousarray(truth, np.float64)
    if len(truth) and (np.isnan(truth).any() or (truth != np.floor(truth)).any() or truth.max() > top):
        return FALLBACK
    if rel < 0 or rel != int(rel) or top >= 63 or (n_runs > 1 and multisets(len(disc), top) is None):
        return FALLBACK
    out = np.zeros(len(truth), np.int64)
    n = native.bounds_picks(np.ascontiguousarray(query_offsets, np.int64), np.ascontiguousarray(top_offsets, np.int64),
                            np.ascontiguousarray(top_ids, np.int64), np.ascontiguousarray(top_w, np.float64),
                            np.ascontiguousarray(deep_offsets, np.int64), np.ascontiguousarray(deep_ids, np.int64),
                            np.ascontiguousarray(member, np.uint8), truth, np.ascontiguousarray(disc, np.float64),
                            int(n_runs), top, int(rel), int(limit), out)
    return FALLBACK if n < 0 else out[:n]
