"""Kernels of the pooling policies' offline replay (``judged meta pooling``,
:mod:`judged.analyses.pooling.policies`): each a numpy reference and the C function of
``judged._native`` that gives the same bits.

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

import numpy as np

from . import FALLBACK, kernel

RULES = {"mtf": 0, "mm": 1}


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
