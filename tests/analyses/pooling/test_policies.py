"""Pooling policies on small hand-made rankings: the order each strategy proposes and the
state it learns, worked by hand in the comments."""

import numpy as np
import pytest

from judged.core.errors import ConventionError
from judged.analyses.pooling.candidates import build_candidates
from judged.analyses.pooling.policies import BayesianBandit, Depth, Hedge, MoveToFront
from judged.analyses.pooling.poolfile import read_pool_file
from judged.analyses.pooling.strategies import STRATEGIES, make_policy, pool

POLICIES = [name for name, s in STRATEGIES.items() if s.policy is not None]


def walk(policy, truth, c):
    """Judge every proposal at once with ``truth`` (docid -> grade); the docids in order."""
    out = []
    policy.start()
    while (pid := policy.select()) is not None:
        out.append(c.docids[pid])
        policy.observe(pid, truth.get(c.docids[pid], 0))
    return out


# ---------------------------------------------------------------------------
# candidates


def test_candidates_number_pairs_per_query_in_depth_order():
    c = build_candidates({"A": {"q1": ["a", "b", "c"], "q2": ["z"]}, "B": {"q1": ["b", "d"]}}, depth=2)
    assert c.qids == ["q1", "q2"]
    assert c.docids == ["a", "b", "d", "z"]  # q1: a (rank 1 of A), b (rank 1 of B), d (rank 2 of B); c is past depth
    assert c.query_offsets.tolist() == [0, 3, 4]
    assert [x.tolist() for x in c.run_lists[0]] == [[0, 1], [1, 2]]
    assert c.ranks_of(1) == [("A", 2), ("B", 1)] and c.best_rank().tolist() == [1, 1, 2, 1]


# ---------------------------------------------------------------------------
# move-to-front


MTF_RUNS = {"A": {"q": ["a1", "a2", "a3", "x"]}, "B": {"q": ["b1", "x", "b2", "b3"]}}
MTF_TRUTH = {"a1": 1, "a2": 0, "a3": 1, "x": 1, "b1": 1, "b2": 0, "b3": 1}


def test_mtf_switches_run_after_a_non_relevant_document():
    # A is first (equal priorities, the runs' order): a1 relevant, stay; a2 not: A drops to -1.
    # B (priority 0) now leads: b1, x relevant, b2 not: B drops to -1. Tie at -1: A again,
    # a3 relevant; A's next, x, is already judged (relevant, no cost) and A runs out; B: b3.
    c = build_candidates(MTF_RUNS, 4)
    mtf = MoveToFront(c)
    assert walk(mtf, MTF_TRUTH, c) == ["a1", "a2", "b1", "x", "b2", "a3", "b3"]
    assert mtf.priority.tolist() == [[-1, -1]]


def test_mtf_learns_from_known_labels_and_proposes_without_feedback():
    # a1 and a2 known from the qrels: A has already failed once, so B leads.
    c = build_candidates(MTF_RUNS, 4, known={("q", "a1"): 1, ("q", "a2"): 0})
    mtf = MoveToFront(c).start()
    # no label arrives: B is drawn to its end (nothing lowers it), then A
    assert [c.docids[p] for p, _ in mtf.propose()] == ["b1", "x", "b2", "b3", "a3"]
    assert [s for _, s in MoveToFront(c).start().propose(2)] == [0.0, 0.0]


# ---------------------------------------------------------------------------
# bandits


BANDIT_RUNS = {"A": {"q": ["a1", "a2"]}, "B": {"q": ["b1", "b2", "b3"]}}
BANDIT_TRUTH = {"a1": 0, "a2": 1, "b1": 1, "b2": 0, "b3": 1}


def test_mm_follows_the_highest_posterior_mean():
    # Beta(1+rel, 1+non): A and B at 1/2, A first: a1 not relevant -> A 1/3. B 1/2: b1
    # relevant -> 2/3; b2 not -> 2/4; still above A's 1/3: b3. Then A: a2.
    c = build_candidates(BANDIT_RUNS, 3)
    mm = BayesianBandit(c, rule="mm")
    assert walk(mm, BANDIT_TRUTH, c) == ["a1", "b1", "b2", "b3", "a2"]
    assert mm.a.tolist() == [[1.0, 2.0]] and mm.b.tolist() == [[1.0, 1.0]]


def test_non_stationary_bandit_discounts_earlier_outcomes():
    # discount 0.5 on B's outcomes relevant, not, relevant: a = (1 * .5 + 0) * .5 + 1 = 1.25,
    # b = (0 * .5 + 1) * .5 + 0 = 0.5
    c = build_candidates(BANDIT_RUNS, 3)
    ns = BayesianBandit(c, rule="mm", discount=0.5)
    walk(ns, BANDIT_TRUTH, c)
    assert ns.a[0, 1] == pytest.approx(1.25) and ns.b[0, 1] == pytest.approx(0.5)


def test_thompson_sampling_is_deterministic_with_a_seed():
    rng = np.random.default_rng(7)
    runs = {f"r{i}": {f"q{j}": [f"d{k}" for k in rng.permutation(30)[:12]] for j in range(4)} for i in range(5)}
    truth = {f"d{k}": int(k % 3 == 0) for k in range(30)}
    c = build_candidates(runs, 12)

    def order(seed):
        return walk(BayesianBandit(c, rule="ts", seed=seed), truth, c)

    assert order(1) == order(1)
    assert order(1) != order(2)
    assert sorted(order(1)) == sorted(c.docids)  # every candidate once


# ---------------------------------------------------------------------------
# Hedge


def test_hedge_weight_updates_by_hand():
    # depth 3: a document at rank i is worth (H_3 - H_{i-1}) / H_3 to its run: 1, 5/11, 2/11.
    # mixture with equal weights: y (5/11 and 1) = 8/11 leads x (1 and 2/11) = 13/22.
    # y not relevant: losses (1 + v)/2: A 8/11, B 1; weights 0.1^(8/11) and 0.1^1, rescaled
    # to A = 1, B = 0.1^(3/11). Next: x = (1 + .534 * 2/11) / 1.534 = .715 beats w and z.
    c = build_candidates({"A": {"q": ["x", "y", "z"]}, "B": {"q": ["y", "w", "x"]}}, 3)
    h = Hedge(c, beta=0.1).start()
    first = h.select()
    assert c.docids[first] == "y" and h.last_score == pytest.approx(8 / 11)
    h.observe(first, 0)
    assert h.w[0].tolist() == pytest.approx([1.0, 0.1 ** (3 / 11)])
    second = h.select()
    wb = 0.1 ** (3 / 11)
    assert c.docids[second] == "x" and h.last_score == pytest.approx((1 + wb * 2 / 11) / (1 + wb))


def test_hedge_relevant_label_raises_the_run_that_ranked_it_higher():
    c = build_candidates({"A": {"q": ["x", "y"]}, "B": {"q": ["y", "x"]}}, 2)
    h = Hedge(c).start()
    pid = c.index()[("q", "x")]
    h.observe(pid, 1)  # x relevant: A (rank 1, v = 1) loses 0, B (rank 2, v = 1/3) loses 1/3
    assert h.w[0, 0] == 1.0 and h.w[0, 1] == pytest.approx(0.1 ** (1 / 3))


# ---------------------------------------------------------------------------
# shared behaviour


@pytest.mark.parametrize("name", POLICIES)
def test_every_strategy_proposes_each_free_pair_once(name):
    rng = np.random.default_rng(3)
    runs = {f"r{i}": {f"q{j}": [f"d{k}" for k in rng.permutation(20)[:8]] for j in range(3)} for i in range(4)}
    known = {("q0", "d1"): 1, ("q1", "d2"): 0}
    c = build_candidates(runs, 8, known=known)
    p = make_policy(name, c, seed=0).start()
    got = [pid for pid, _ in p.propose()]
    assert len(got) == len(set(got)) == c.n_pairs - sum(1 for k in known if k in c.index())
    assert not set(got) & {c.index()[k] for k in known if k in c.index()}
    assert [x for x, _ in make_policy(name, c, seed=0).start().propose(5)] == got[:5]  # deterministic


def test_depth_policy_is_the_rank_by_rank_walk():
    c = build_candidates({"A": {"q1": ["a", "b"], "q2": ["c"]}, "B": {"q1": ["b", "e"], "q2": ["f", "c"]}}, 2)
    # best rank 1 first, more runs first among equals (b and c by two runs, then a and f by one)
    assert [c.docids[p] for p, _ in Depth(c).start().propose()] == ["b", "c", "a", "f", "e"]


def test_unknown_strategy_is_refused():
    c = build_candidates({"A": {"q": ["a"]}}, 1)
    with pytest.raises(ConventionError, match="unknown pooling policy 'nope'"):
        make_policy("nope", c)
    with pytest.raises(ConventionError, match="discount"):
        BayesianBandit(c, discount=0)
    with pytest.raises(ConventionError, match="beta"):
        Hedge(c, beta=1.5)


# ---------------------------------------------------------------------------
# judged pool with the adaptive strategies, and the pool file


QRELS = {"q": {"a1": 1, "a2": 0}}
RUNS = {"A": {"q": {"a1": 4.0, "a2": 3.0, "a3": 2.0, "x": 1.0}}, "B": {"q": {"b1": 4.0, "x": 3.0, "b2": 2.0, "b3": 1.0}}}


def test_pool_with_mtf_learns_from_the_qrels(tmp_path):
    p = pool(QRELS, RUNS, depth=4, strategy="mtf")
    assert [x.docid for x in p.pairs] == ["b1", "x", "b2", "b3", "a3"] and p.unjudged == 5
    assert [x.fields["score"] for x in p.pairs] == [0.0, 0.0, 0.0, 0.0, -1.0]  # B's priority, then A's
    assert all(x.strategy == "mtf" and x.inclusion == 1.0 for x in p.pairs)
    assert "Cormack, Palmer & Clarke" in "\n".join(p.header())
    path = tmp_path / "pool.txt"
    p.write(path)
    back = read_pool_file(path)
    assert back.columns == ("qid", "docid", "priority", "best_rank", "runs", "score", "strategy", "stratum",
                            "inclusion", "ranks")
    assert [(x.qid, x.docid, x.strategy, x.fields["score"], x.inclusion) for x in back.pairs] == \
        [("q", x.docid, "mtf", x.fields["score"], 1.0) for x in p.pairs]
    assert back.pairs[1].runs == ["A", "B"] and back.pairs[1].ranks == [4, 2] and back.pairs[1].best_rank == 2


def test_randomised_adaptive_strategy_has_no_known_inclusion_probability(tmp_path):
    p = pool(QRELS, RUNS, depth=4, strategy="ts", seed=3)
    assert all(x.inclusion is None for x in p.pairs) and p.meta == {"seed": 3}
    path = tmp_path / "pool.txt"
    p.write(path)
    assert all(line.split()[8] == "-" for line in path.read_text().splitlines() if not line.startswith("#"))
    assert all(x.inclusion is None for x in read_pool_file(path).pairs)


@pytest.mark.parametrize("line,why", [
    ("q1 d1 1 1 A - mtf - 1.5 1", "inclusion must be a probability in (0, 1], got 1.5"),
    ("q1 d1 1 1 A - mtf - - 1,2", "1 run but 2 ranks"),
    ("q1 d1 1 1 A x mtf - - 1", "best_rank must be an integer, impact, score and inclusion numbers"),
    ("q1 d1 1 1 A - mtf - - 1,x", "ranks must be comma-separated integers, got '1,x'"),
])
def test_bad_pool_lines_name_file_and_line(tmp_path, line, why):
    from judged.core.errors import ParseError

    path = tmp_path / "bad.txt"
    path.write_text("# qid docid priority best_rank runs score strategy stratum inclusion ranks\n" + line + "\n")
    with pytest.raises(ParseError) as e:
        read_pool_file(path)
    assert str(e.value) == f"{path}:2: {why}"


# ---------------------------------------------------------------------------
# judged's own: the bounds


def test_bounds_judges_the_hole_that_can_flip_the_pair_first():
    # k = 2. A ranks h1, j1; B ranks j1, h2; j1 is known relevant. With h1 relevant the
    # ideal becomes 1 + 1/log2 3 and A overtakes B; the intervals of A and B overlap.
    # h1 relevant moves A by 1 - 1/log2 3 = .369 and B by 1/(1 + 1/log2 3) - 1 = -.387;
    # h2 relevant moves A by -.244 and B by 0. Both have chance 2/3 (A's and B's one
    # labelled document is relevant: (1 + 1)/(2 + 1)), so h1 goes first with priority
    # 2/3 * (|.369 + .387| + (.369 + .387)/2).
    from judged.analyses.pooling.policies import Bounds

    c = build_candidates({"A": {"q": ["h1", "j1"]}, "B": {"q": ["j1", "h2"]}}, 2, known={("q", "j1"): 1})
    b = Bounds(c, k=2, maxgrade=1).start()
    first = b.select()
    assert c.docids[first] == "h1"
    L3 = 1 / np.log2(3)
    dA, dB = 1 - L3, 1 / (1 + L3) - 1
    assert b.last_score == pytest.approx(2 / 3 * (abs(dA - dB) + (abs(dA) + abs(dB)) / 2))
    assert b.undecided().tolist() == [[False, True], [False, False]]
    assert b.lo[0].tolist() == pytest.approx([L3 / (1 + L3), 1 / (1 + L3)]) and b.hi[0].tolist() == pytest.approx([1, 1])
    b.observe(first, 1)  # h1 relevant: A = 1, B = 1 / (1 + 1/log2 3); with h2 either way A stays ahead
    assert c.docids[b.select()] == "h2"
    assert not b.undecided().any()


@pytest.mark.parametrize("seed", range(6))
def test_bounds_are_exact_against_brute_force(seed):
    # every assignment of grades 0..2 to the open holes of any run's top k, each run's
    # nDCG@k with the ideal over every label of the query: its min and max are the
    # bounds, before and after labels arrive
    import itertools

    from judged.analyses.pooling.policies import Bounds

    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(8)]
    runs = {f"r{i}": {"q": list(rng.permutation(docs)[:5])} for i in range(3)}
    known = {("q", d): int(rng.integers(0, 3)) for d in rng.choice(docs, 2, replace=False)}
    c = build_candidates(runs, 5, known=known)
    b = Bounds(c, k=3, maxgrade=2).start()
    k, disc = 3, 1 / np.log2(np.arange(2, 5))
    top = sorted({p for r in range(3) for p in c.run_lists[0][r][:k].tolist()})
    for _ in range(3):
        pid = b.select()  # computes the bounds for the labels so far
        labels = b.label.copy()
        open_ = [p for p in top if np.isnan(labels[p])]
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        for grades in itertools.product(range(3), repeat=len(open_)):
            g = labels.copy()
            g[open_] = grades
            judged = g[~np.isnan(g)]
            ideal = float((np.sort(judged)[::-1][:k] * disc[: min(k, len(judged))]).sum())
            for r in range(3):
                lst = c.run_lists[0][r][:k]
                dcg = float((np.nan_to_num(g[lst]) * disc[: len(lst)]).sum())
                v = dcg / ideal if ideal > 0 else 0.0
                lo[r], hi[r] = min(lo[r], v), max(hi[r], v)
        assert b.lo[0] == pytest.approx(lo) and b.hi[0] == pytest.approx(hi)
        if pid is None:
            break
        b.observe(pid, int(rng.integers(0, 3)))


@pytest.mark.parametrize("seed", range(20))
def test_max_over_multisets_is_ndcg_extreme(seed):
    from judged.core.measures.bounds import ndcg_extreme
    from judged.analyses.pooling.replay_kernels import max_over_multisets as _max_over_multisets

    rng = np.random.default_rng(seed)
    k, top = 10, int(rng.integers(1, 4))
    disc = 1 / np.log2(np.arange(2, k + 2))
    slots = rng.permutation(k)  # the run's top k: some holes, some judged documents
    own = disc[slots[: int(rng.integers(1, 6))]]
    jg = rng.integers(1, top + 1, int(rng.integers(0, 14))).astype(float)
    mine = slots[len(own): len(own) + min(len(jg), int(rng.integers(0, 5)))]  # judged ones the run has
    dcg = float((jg[: len(mine)] * disc[mine]).sum())
    full = np.zeros(len(jg) + len(own))
    full[:k] = disc[: len(full)]
    want = ndcg_extreme(own, dcg, jg, full, np.arange(top + 1, dtype=float), "max")
    assert _max_over_multisets(own, dcg, jg, disc, top) == pytest.approx(want)


# ---------------------------------------------------------------------------
# the offline replay: a policy's whole order at once


def _random_candidates(rng, known: bool):
    nd, R, Q = int(rng.integers(3, 30)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
    docs = [f"d{i}" for i in range(nd)]
    rankings = {f"r{r}": {f"q{q}": list(rng.choice(docs, int(rng.integers(0, nd)), replace=False))
                          for q in range(Q) if rng.random() < 0.9} for r in range(R)}
    labels = {(f"q{q}", d): float(rng.integers(0, 3)) for q in range(Q) for d in docs if rng.random() < 0.2}
    c = build_candidates(rankings, int(rng.integers(1, 25)), labels if known else None, [f"q{q}" for q in range(Q)])
    return c, rng.integers(0, 4, c.n_pairs).astype(float)


@pytest.mark.parametrize("name", POLICIES)
def test_replay_gives_the_order_of_select_then_observe(name, backend):
    """``replay`` (the kernel's draws per query and the queries' turns, Thompson sampling turn
    by turn, a static order as one array) hands out the pairs in the order the policy's
    select/observe loop does, labels known or not, stopped or not: pair by pair the same."""
    from judged.analyses.pooling.policies import PoolingPolicy

    rng = np.random.default_rng(11)
    for trial in range(25):
        c, truth = _random_candidates(rng, known=trial % 2 == 1)
        for limit in (None, int(rng.integers(1, 8))):
            want = PoolingPolicy.replay(make_policy(name, c, maxgrade=3).start(), truth, limit)
            got = make_policy(name, c, maxgrade=3).start().replay(truth, limit)
            assert got.dtype == np.int64 and got.tolist() == want.tolist(), (trial, limit)


def test_bounds_replay_takes_the_policys_steps(backend):
    """The bounds strategy's whole order (:func:`judged.analyses.pooling.replay_kernels.bounds_picks`, in C
    when compiled) is its select/observe loop's, pair by pair: up to six runs (so pairs of
    them undecided and decided along the way), cutoffs 1..11, grades up to 3, relevant
    labels rare or common, the hole bounds' maxima recomputed only for the runs whose
    holes changed."""
    from judged.analyses.pooling.policies import Bounds, PoolingPolicy

    rng = np.random.default_rng(5)
    for trial in range(60):
        nd, R, Q = int(rng.integers(3, 40)), int(rng.integers(1, 7)), int(rng.integers(1, 6))
        docs = [f"d{i}" for i in range(nd)]
        rankings = {f"r{r}": {f"q{q}": list(rng.choice(docs, int(rng.integers(0, nd)), replace=False))
                              for q in range(Q) if rng.random() < 0.9} for r in range(R)}
        c = build_candidates(rankings, int(rng.integers(1, 25)), None, [f"q{q}" for q in range(Q)])
        top, k = int(rng.integers(1, 4)), int(rng.integers(1, 12))
        truth = rng.integers(0, top + 1, c.n_pairs).astype(float) * (rng.random(c.n_pairs) < rng.random())
        limit = None if trial % 3 else int(rng.integers(0, 20))
        want = PoolingPolicy.replay(Bounds(c, k=k, maxgrade=top).start(), truth, limit)
        got = Bounds(c, k=k, maxgrade=top).start().replay(truth, limit)
        assert got.dtype == np.int64 and got.tolist() == want.tolist(), trial


def test_replay_interleaves_the_queries_turns():
    # q1 holds a label already: its first draw comes in the second turn, after q2's
    c = build_candidates({"A": {"q1": ["a", "b", "c"], "q2": ["x", "y"]}}, 3, {("q1", "a"): 1.0})
    order = make_policy("mm", c).start().replay(np.zeros(c.n_pairs))
    assert [c.docids[p] for p in order] == ["x", "b", "y", "c"]


def test_string_ranks_are_pythons_order():
    # NULs (numpy's strings drop trailing ones), prefixes, code points past the BMP, a lone surrogate
    from judged.analyses.pooling.candidates import string_ranks

    for strings in (["b", "a", "c", "a"], ["a\0", "a", "b\0c", "b", "", "a"], ["x\0y", "x"], ["d1"], [],
                    ["\U0001F600", "\uffff", "é", "e", "abcdefghij", "abcdefgh", "abcdefghi\0"], ["\ud800", "a"]):
        order = {v: i for i, v in enumerate(sorted(set(strings)))}
        assert string_ranks(strings).tolist() == [order[v] for v in strings]
        assert string_ranks(strings).dtype == np.int64
