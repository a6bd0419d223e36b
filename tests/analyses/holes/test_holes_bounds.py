"""Bounds over the holes' grades, checked against brute force (every assignment)."""

from dataclasses import replace
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judged.core.evaluation import evaluate
from judged.core.align import Judgments, Ranked, align, block_offsets
from judged.core.errors import ConventionError, MeasureError
from judged.analyses.holes.unjudged import bounds
from judged.core.io import read_qrels, read_run
from judged.core.measures import Measure
from judged.core.measures.bounds import fill, ndcg_extreme, ranked_list


def replicate(aligned, top, copies: int):
    """``copies`` stacked copies of the aligned list (query index + copy * n_queries): every
    assignment of grades scored in one kernel call (the bounds' brute-force checks)."""
    nq = aligned.n_queries
    shift = (np.arange(copies)[:, None] * nq)
    q = (shift + top.q[None, :]).ravel()
    ranked = Ranked(nq * copies, q, np.tile(top.pos, copies), np.tile(top.grade, copies),
                    np.tile(top.row, copies), block_offsets(q, nq * copies))
    j = aligned.judgments
    jq = (shift + j.q[None, :]).ravel()
    judgments = Judgments(nq * copies, jq, np.tile(j.grade, copies), block_offsets(jq, nq * copies))
    return replace(aligned, qids=np.tile(aligned.qids, copies), ranked=ranked, judgments=judgments), ranked


def brute_force(measure, qrels, run, extras=0, maxgrade=None):
    """min and max of the zero-filled measure over every grade of every hole (and extras)."""
    m = Measure.parse(measure)
    a = align(read_qrels(qrels), read_run(run))
    M = maxgrade if maxgrade is not None else int(max(a.qrels.grade.max(), 0))
    top = a.ranked  # the whole ranking (ideal=retrieved reads it); holes only in the measure's top k
    holes = np.flatnonzero(np.isnan(top.grade) & (top.pos < (m.cutoff or len(top.pos) + 1)))
    n = len(holes) + extras
    combos = np.array(list(product(range(M + 1), repeat=n)), dtype=np.float64).reshape(-1, n) if n else np.zeros((1, 0))
    stacked, stop = replicate(a, top, len(combos))
    grade = stop.grade.copy()
    idx = (np.arange(len(combos))[:, None] * len(top.q) + holes[None, :]).ravel()
    grade[idx] = combos[:, : len(holes)].ravel()
    eq = np.repeat(np.arange(len(combos)), extras)
    eg = combos[:, len(holes):].ravel()
    vals = m.compute(fill(stacked, stop, grade, eq, eg))
    return vals.min(), vals.max()


labels = st.one_of(st.none(), st.integers(0, 3))  # None: a hole


@st.composite
def one_query(draw, max_k=6):
    k = draw(st.integers(1, max_k))
    ranked = draw(st.lists(labels, min_size=0, max_size=k + 2))
    unretrieved = draw(st.lists(st.integers(0, 3), max_size=3))
    qrels = {f"d{i}": g for i, g in enumerate(ranked) if g is not None}
    qrels.update({f"u{i}": g for i, g in enumerate(unretrieved)})
    if not qrels:
        qrels = {"u-none": 0}
    run = {f"d{i}": float(100 - i) for i in range(len(ranked))} or {"x": 1.0}
    return k, {"q": qrels}, {"q": run}


@settings(max_examples=120, deadline=None)
@given(one_query(), st.sampled_from(["nDCG", "nDCG(gain=exp)", "AP", "P", "RR", "DCG", "R", "Success", "ERR",
                                     "RBP(p=0.6)", "SDCG(max_rel=3)", "SDCG(max_rel=2,min_rel=1)"]),
       st.integers(0, 2))
def test_bounds_equal_brute_force(case, family, extras):
    k, qrels, run = case
    measure = f"{family}@{k}"
    holes = sum(1 for d in run["q"] if d not in qrels["q"] and d.startswith("d") and int(d[1:]) < k)
    if holes + extras > 6:
        extras = 0
    a = align(read_qrels(qrels), read_run(run))
    lo, hi = bounds(measure, a, np.array([extras]))
    blo, bhi = brute_force(measure, qrels, run, extras)
    assert lo[0] == pytest.approx(blo, abs=1e-9)
    assert hi[0] == pytest.approx(bhi, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(one_query(max_k=5), st.integers(0, 4))
def test_maxgrade_parameter(case, maxgrade):
    k, qrels, run = case
    m = f"nDCG(unjudged=max,maxgrade={maxgrade})@{k}"
    hi = evaluate(qrels, run, [m]).runs["run"].values[m][0]
    assert hi == pytest.approx(brute_force(f"nDCG@{k}", qrels, run, maxgrade=maxgrade)[1], abs=1e-9)


def test_min_can_lie_below_the_zero_filled_score():
    # a judged 3 at rank 1, three judged 0s, a hole at rank 5: zero-filled nDCG@5 = 1; the
    # hole labelled 3 adds 3/log2(6) to DCG but 3/log2(3) to IDCG, and the score drops to 0.850
    qrels = {"q": {"a": 3, "b": 0, "c": 0, "d": 0}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "hole": 1.0}}
    r = evaluate(qrels, run, ["nDCG@5", "nDCG(unjudged=min)@5", "nDCG(unjudged=max)@5"]).mean()
    assert r.loc["run", "nDCG@5"] == 1.0
    # min: hole = 3 -> DCG = 3 + 3/log2(6), IDCG = 3 + 3/log2(3)
    expected = (3 + 3 / np.log2(6)) / (3 + 3 / np.log2(3))
    assert r.loc["run", "nDCG(unjudged=min)@5"] == pytest.approx(expected, abs=1e-12)
    assert r.loc["run", "nDCG(unjudged=min)@5"] < r.loc["run", "nDCG@5"]
    assert r.loc["run", "nDCG(unjudged=max)@5"] == 1.0


def test_max_can_need_an_intermediate_grade():
    """The max is not always at holes in {0, maxgrade} (a witness found by random search):
    ranked grades 1, 2, hole, 2, 3 at k=5. A 3 at rank 3 lifts IDCG too much; a 2 is best."""
    qrels = {"q": {"a": 1, "b": 2, "d": 2, "e": 3}}
    run = {"q": {"a": 5.0, "b": 4.0, "hole": 3.0, "d": 2.0, "e": 1.0}}
    hi = evaluate(qrels, run, ["nDCG(unjudged=max)@5"]).mean().iloc[0, 0]
    by_grade = [evaluate({"q": {**qrels["q"], "hole": g}}, run, ["nDCG@5"]).mean().iloc[0, 0]
                for g in range(4)]
    assert hi == pytest.approx(max(by_grade), abs=1e-12) == pytest.approx(0.8116310199, abs=1e-9)
    assert int(np.argmax(by_grade)) == 2 and by_grade[2] > max(by_grade[0], by_grade[3])


@settings(max_examples=80, deadline=None)
@given(one_query())
def test_min_needs_only_the_endpoint_grades(case):
    """nDCG is quasi-concave in one hole's gain (linear over convex IDCG), so the minimum
    puts every hole at gain 0 or the top gain."""
    k, qrels, run = case
    a = align(read_qrels(qrels), read_run(run))
    lo_all = bounds(f"nDCG(maxgrade=3,unjudged=min)@{k}", a)[0]
    blo, _ = brute_force(f"nDCG@{k}", qrels, run, maxgrade=3)
    assert lo_all[0] == pytest.approx(blo, abs=1e-9)
    m = Measure.parse(f"nDCG@{k}")
    top = ranked_list(m, a)
    g = top.grade
    hw = [1 / np.log2(p + 2) for p, x in zip(top.pos, g) if np.isnan(x)]
    judged_g = read_qrels(qrels).grade.astype(float)
    dfix = sum(x / np.log2(p + 2) for p, x in zip(top.pos, g) if not np.isnan(x))
    disc = np.array([1 / np.log2(i + 2) if i < k else 0 for i in range(len(judged_g) + len(hw))])
    ends = ndcg_extreme(hw, dfix, judged_g[judged_g > 0], disc, np.array([0.0, 3.0]), "min")
    assert ends == pytest.approx(blo, abs=1e-9)


def test_twenty_holes_at_k20():
    # 20 holes at k=20, grades 0..3: 4^20 assignments, solved by the DP without enumerating
    run = {"q": {f"h{i}": float(100 - i) for i in range(20)}}
    qrels = {"q": {"r1": 3, "r2": 1, "n": 0}}
    r = evaluate(qrels, run, ["nDCG(unjudged=min)@20", "nDCG(unjudged=max)@20"]).mean()
    # max: every hole a 3 -> the ranking is ideal (the judged 3 and 1 fall below rank 20)
    assert r.loc["run", "nDCG(unjudged=max)@20"] == pytest.approx(1.0)
    # min: every hole 0 -> DCG 0 with IDCG > 0
    assert r.loc["run", "nDCG(unjudged=min)@20"] == 0.0


def test_measure_strings_and_conventions():
    m = Measure.parse("nDCG(unjudged=max,maxgrade=2)@10")
    assert str(m) == "nDCG(unjudged=max,maxgrade=2)@10"
    assert "unjudged=max(grades=0..2,ideal-recomputed)" in m.convention()
    assert "grades=0..qrels-max" in Measure.parse("AP(unjudged=min)").convention()
    with pytest.raises(MeasureError):
        Measure.parse("Bpref(unjudged=min)")
    with pytest.raises(MeasureError):
        Measure.parse("Rprec(unjudged=max)")
    with pytest.raises(MeasureError):
        Measure.parse("nDCG(unjudged=max)")  # needs a cutoff
    with pytest.raises(MeasureError):
        Measure.parse("nDCG(maxgrade=2)@10")  # maxgrade without min/max


def test_ap_is_not_monotone_in_a_hole():
    # one relevant judged at rank 1; a hole at rank 10 labelled relevant raises R to 2:
    # AP = (1 + 2/10) / 2 = 0.6 < 1, so AP's minimum is below the zero-filled AP
    run = {"q": {f"d{i}": float(100 - i) for i in range(10)}}
    qrels = {"q": {"d0": 1, **{f"d{i}": 0 for i in range(1, 9)}}}
    r = evaluate(qrels, run, ["AP", "AP(unjudged=min)", "AP(unjudged=max)"]).mean()
    assert r.loc["run", "AP"] == 1.0
    assert r.loc["run", "AP(unjudged=min)"] == pytest.approx(0.6)
    assert r.loc["run", "AP(unjudged=max)"] == 1.0


def brute_force_pair(measure, qrels, run_a, run_b, maxgrade):
    """min and max of mean(A) - mean(B) over one grade per hole of either run (shared)."""
    m = Measure.parse(measure)
    q = read_qrels(qrels)
    aligned = [align(q, read_run(r)) for r in (run_a, run_b)]
    holes = {}
    for a in aligned:
        top = ranked_list(m, a)
        for row in np.flatnonzero(np.isnan(top.grade)):
            holes.setdefault(a.docids(top.row[[row]])[0], None)
    union = sorted(holes)
    combos = np.array(list(product(range(maxgrade + 1), repeat=len(union))), dtype=np.float64).reshape(-1, len(union)) \
        if union else np.zeros((1, 0))
    means = []
    for a in aligned:
        top = ranked_list(m, a)
        stacked, stop = replicate(a, top, len(combos))
        grade = stop.grade.copy()
        docs = a.docids(top.row)
        eq, eg = [], []
        for u, d in enumerate(union):
            rows = [i for i, x in enumerate(docs) if x == d and np.isnan(top.grade[i])]
            if rows:
                grade[np.arange(len(combos)) * len(top.q) + rows[0]] = combos[:, u]
            else:  # judged elsewhere: only the ideal / R see it
                eq.append(np.arange(len(combos)) * a.n_queries + 0)
                eg.append(combos[:, u])
        eq = np.concatenate(eq) if eq else None
        eg = np.concatenate(eg) if eg else None
        means.append(m.compute(fill(stacked, stop, grade, eq, eg)).reshape(len(combos), -1).mean(axis=1))
    d = means[0] - means[1]
    return d.min(), d.max()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.lists(labels, max_size=5), st.lists(labels, max_size=5),
       st.sampled_from(["nDCG", "DCG", "AP", "P", "RR"]), st.integers(1, 3))
def test_pair_interval_against_brute_force(k, ranked_a, ranked_b, family, maxgrade):
    from judged.analyses.holes.unjudged import RunHoles, pair_flip

    # two runs over one shared document space: d0..d6; None = a hole (same docid = same hole)
    grades = {}
    for i, g in enumerate(ranked_a + ranked_b):
        grades.setdefault(f"d{i % 7}", g)
    qrels = {"q": {d: g for d, g in grades.items() if g is not None} or {"other": 1}}
    run_a = {"q": {f"d{i % 7}": float(10 - i) for i in range(len(ranked_a))} or {"x": 1.0}}
    run_b = {"q": {f"d{(i + len(ranked_a)) % 7}": float(10 - i) for i in range(len(ranked_b))} or {"x": 1.0}}
    measure = replace(Measure.parse(f"{family}@{k}"), maxgrade=maxgrade)
    runs = []
    for name, r in (("A", run_a), ("B", run_b)):
        a = align(read_qrels(qrels), read_run(r))
        lo, hi = bounds(measure, a)
        runs.append(RunHoles(name, a, None, None, measure.compute(a), lo, hi, None, (0, 0)))
    p = pair_flip(measure, *runs)
    blo, bhi = brute_force_pair(f"{family}@{k}", qrels, run_a, run_b, maxgrade)
    if p.exact:
        assert (p.low, p.high) == (pytest.approx(blo, abs=1e-9), pytest.approx(bhi, abs=1e-9))
    else:
        assert p.low <= blo + 1e-9 and bhi <= p.high + 1e-9


@settings(max_examples=40, deadline=None)
@given(one_query(), st.sampled_from(["nDCG(ideal=retrieved)", "nDCG(discount=reciprocal)", "AP(rel=2)", "P(rel=2)"]))
def test_other_conventions_against_brute_force(case, family):
    k, qrels, run = case
    measure = f"{family}@{k}"
    lo, hi = bounds(measure, align(read_qrels(qrels), read_run(run)))
    blo, bhi = brute_force(measure, qrels, run)
    assert (lo[0], hi[0]) == (pytest.approx(blo, abs=1e-9), pytest.approx(bhi, abs=1e-9))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["AP", "P@5", "R@3", "RR"]))
def test_extra_holes_by_keys_equal_the_sets(seed, measure):
    """The other run's holes a run lacks, per query (the fast path of the conservative pair
    interval), equal the count over docid sets: compiled, and by the numpy reference whether
    it takes the queries all at once or a few holes at a time."""
    from judged.analyses.holes.unjudged import _extra_holes, _hole_keys
    from judged.core.measures import bounds as kernel
    from judged.core.native import pure

    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(12)]
    qrels = {f"q{q}": {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 4, replace=False)} for q in range(4)}
    runs = [{f"q{q}": {d: float(rng.random()) for d in rng.choice(docs, int(rng.integers(1, 9)), replace=False)}
             for q in range(4) if rng.random() < 0.8 or q == 0} for _ in range(2)]
    qr = read_qrels(qrels)
    a, b = (align(qr, read_run(r)) for r in runs)
    m = Measure.parse(measure)
    got = _extra_holes(m, a, b)
    with pure():
        ways = [_extra_holes(m, a, b)]
        chunk = kernel.HOLE_CHUNK
        try:
            kernel.HOLE_CHUNK = 3  # ranges of one or two queries
            ways.append(_extra_holes(m, a, b))
        finally:
            kernel.HOLE_CHUNK = chunk
    for other in ways:
        assert [c.tolist() for c in other] == [c.tolist() for c in got]
    ka, kb = _hole_keys(m, a), _hole_keys(m, b)
    for al, keys_self, keys_other, other, counts in ((a, ka, kb, b, got[0]), (b, kb, ka, a, got[1])):
        index = {q: i for i, q in enumerate(other.qids.tolist())}
        want = [len(keys_other[index[q]] - keys_self[i]) if q in index else 0 for i, q in enumerate(al.qids.tolist())]
        assert counts.tolist() == want


def test_holes_only_in_counts_docids_not_hashes():
    """Two docids of one query sharing a hash are two holes (the reference counts that
    range on sets; the compiled sets confirm every match on the bytes); a docid a run
    holds twice is one."""
    import pyarrow as pa

    from judged.core.measures.bounds import holes_only_in
    from judged.core.native import pure

    a_doc, b_doc = pa.array(["x", "y", "y", "z"]), pa.array(["x", "w", "v"])
    a_hash = np.array([1, 2, 2, 3], np.uint64)
    b_hash = np.array([1, 2, 3], np.uint64)  # "w" shares "y"'s hash, "v" shares "z"'s
    a_grade, b_grade = np.full(5, np.nan), np.full(4, np.nan)
    a_grade[4] = b_grade[3] = 1.0  # a judged document ("u") is no hole
    a_doc, b_doc = pa.array(["x", "y", "y", "z", "u"]), pa.array(["x", "w", "v", "u"])
    a_hash, b_hash = np.append(a_hash, 9).astype(np.uint64), np.array([1, 2, 3, 8], np.uint64)
    args = (np.array([0, 5]), a_grade, np.arange(5), a_hash, a_doc, np.array([0, 4]), b_grade, np.arange(4), b_hash,
            b_doc)
    for way in (holes_only_in, holes_only_in.reference):
        only_a, only_b = way(*args)
        assert only_a.tolist() == [2] and only_b.tolist() == [2]  # y, z; w, v
    with pure():
        assert [c.tolist() for c in holes_only_in(*args)] == [[2], [2]]


# ---------------------------------------------------------------------------
# nERR: conservative bounds (ERR and the ideal's ERR both rise with the holes' grades)


@settings(max_examples=150, deadline=None)
@given(one_query(), st.integers(0, 2))
def test_nerr_bounds_hold_every_assignment(case, extras):
    """nERR's bounds are conservative, not exact: the nERR of every assignment of grades to
    the holes (and to another run's holes, ``extras``, which move only the ideal) lies inside."""
    k, qrels, run = case
    holes = sum(1 for d in run["q"] if d not in qrels["q"] and d.startswith("d") and int(d[1:]) < k)
    if holes + extras > 6:
        extras = 0
    lo, hi = bounds(f"nERR@{k}", align(read_qrels(qrels), read_run(run)), np.array([extras]))
    blo, bhi = brute_force(f"nERR@{k}", qrels, run, extras)
    assert 0.0 <= lo[0] <= blo + 1e-12 and bhi - 1e-12 <= hi[0] <= 1.0


def generated_queries(depth, max_docs=14, max_ranked=8):
    """(seed, qrels, run, bounds, brute force) of every one-query case of generated collections
    (grades 0..3) with at most 4 holes in the top ``depth`` (None: the whole ranking), as a
    function of the measure."""
    from synth import make_collection

    for seed in range(10):
        c = make_collection(seed, max_docs=max_docs, max_ranked=max_ranked, negative=False)
        for q, docs in c.run.items():
            qrels, run = {q: c.qrels.get(q) or {"u-none": 0}}, {q: docs}
            if sum(d not in qrels[q] for d in sorted(docs, key=lambda d: -docs[d])[:depth]) <= 4:
                yield seed, qrels, run, lambda m, qrels=qrels, run=run: (
                    bounds(m, align(read_qrels(qrels), read_run(run))), brute_force(m, qrels, run))


def test_nerr_bounds_hold_on_generated_collections():
    """Per query of generated collections (grades 0..3, at most 4 holes in the top 5): every
    assignment's nERR@5 lies inside the bounds, which are often tighter than [0, 1]."""
    checked = tighter = 0
    for seed, _, _, both in generated_queries(5):
        (lo, hi), (blo, bhi) = both("nERR@5")
        assert lo[0] <= blo + 1e-12 and bhi <= hi[0] + 1e-12, seed
        checked += 1
        tighter += bool(lo[0] > 0 or hi[0] < 1)
    assert checked >= 30 and tighter >= 10, (checked, tighter)


def test_nerr_bounds_by_hand():
    """A judged 2, a hole, a judged 0 at k=3 (holes get 0..2, max_rel 4: chance 3/16 for a 2).
    ERR_min = 3/16 (the hole at 0); the ideal with the hole at 2 is 3/16 + 13/16 * 3/16 / 2
    = 135/512, so unjudged=min = (96/512) / (135/512) = 96/135; unjudged=max = min(1, ...) = 1.
    Every real assignment gives 1 (the ranking is ideal whatever the hole's grade): inside,
    and the minimum is conservative, not exact."""
    qrels = {"q": {"a": 2, "b": 0}}
    run = {"q": {"a": 3.0, "hole": 2.0, "b": 1.0}}
    r = evaluate(qrels, run, ["nERR@3", "nERR(unjudged=min)@3", "nERR(unjudged=max)@3"]).mean()
    assert r.loc["run", "nERR(unjudged=min)@3"] == pytest.approx(96 / 135, abs=1e-15)
    assert r.loc["run", "nERR(unjudged=max)@3"] == 1.0 == r.loc["run", "nERR@3"]
    assert brute_force("nERR@3", qrels, run) == (1.0, 1.0)
    # nothing judged relevant (holes get 0..2): the ideal of the holes at 0 is 0, so the maximum is 1
    # (the truth: 0.5, the hole at 2 below a judged 0); the minimum, with every hole at 0, is 0
    qrels, run = {"q": {"b": 0}}, {"q": {"b": 2.0, "hole": 1.0}}
    lo, hi = bounds("nERR(maxgrade=2,unjudged=max)@2", align(read_qrels(qrels), read_run(run)))
    assert (lo[0], hi[0]) == (0.0, 1.0) and brute_force("nERR@2", qrels, run, maxgrade=2) == (0.0, 0.5)


def test_err_bounds_refuse_grades_above_max_rel():
    """A grade above max_rel makes ERR's stopping chance exceed 1, and ERR is no longer
    monotone: the bounds refuse rather than give a wrong interval."""
    a = align(read_qrels({"q": {"a": 2}}), read_run({"q": {"a": 2.0, "hole": 1.0}}))
    for m in ("nERR(max_rel=1)@2", "ERR(max_rel=1)@2", "nERR(maxgrade=5,unjudged=max)@2"):
        with pytest.raises(ConventionError, match="up to max_rel"):
            bounds(m, a)
    assert bounds("nERR(max_rel=2)@2", a)[1][0] == 1.0


# ---------------------------------------------------------------------------
# INST, INSQ (exact: monotone) and Compat (conservative) over the whole ranking


@settings(max_examples=80, deadline=None)
@given(one_query(max_k=3), st.sampled_from(["INST(max_rel=3)", "INST(max_rel=2,T=0.5)", "INST(max_rel=3,min_rel=1,T=2)",
                                            "INSQ(max_rel=3)", "INSQ(max_rel=2,T=0.3)"]))
def test_inst_and_insq_bounds_equal_brute_force(case, measure):
    """INST (T >= 1/2) and INSQ rise with every gain: every hole of the ranking at grade 0
    and at the top grade are the least and greatest value over every assignment."""
    _, qrels, run = case
    if sum(1 for d in run["q"] if d not in qrels["q"]) > 4:
        return
    lo, hi = bounds(measure, align(read_qrels(qrels), read_run(run)))
    blo, bhi = brute_force(measure, qrels, run)
    assert lo[0] == pytest.approx(blo, abs=1e-12) and hi[0] == pytest.approx(bhi, abs=1e-12)


def test_inst_below_half_a_target_is_refused():
    """INST with T < 1/2 is not monotone: gains 2/3 then 1/3 more at rank 1 of a one-document
    ranking lowers it (T = 0.1); its bounds refuse rather than give a wrong interval."""
    from judged.core.measures.beyond import _inst

    assert _inst(np.array([1.0]), 0.1) < _inst(np.array([2 / 3]), 0.1)
    a = align(read_qrels({"q": {"a": 2}}), read_run({"q": {"a": 2.0, "hole": 1.0}}))
    with pytest.raises(ConventionError, match="T >= 0.5"):
        bounds("INST(max_rel=3,T=0.1)", a)
    assert bounds("INST(max_rel=3,T=0.5)", a)[0][0] < bounds("INST(max_rel=3,T=0.5)", a)[1][0]


@settings(max_examples=150, deadline=None)
@given(one_query(max_k=4), st.sampled_from(["Compat", "Compat(p=0.5)", "Compat(normalize=False)"]), st.integers(0, 2),
       st.sampled_from([None, 1, 2]))
def test_compat_bounds_hold_every_assignment(case, measure, extras, maxgrade):
    """Compat's bounds are conservative: the value of every assignment of grades 0..maxgrade
    to the holes (and to another run's holes, ``extras``, which join only the ideal) lies
    inside; a maxgrade below the qrels' largest leaves the documents above it unmoved."""
    _, qrels, run = case
    holes = sum(1 for d in run["q"] if d not in qrels["q"])
    if holes > 4:
        return
    extras = min(extras, 5 - holes)
    given = measure if maxgrade is None else (f"Compat(unjudged=max,maxgrade={maxgrade}," + measure[7:]
                                              if "(" in measure else f"Compat(unjudged=max,maxgrade={maxgrade})")
    lo, hi = bounds(given, align(read_qrels(qrels), read_run(run)), np.array([extras]))
    blo, bhi = brute_force(measure, qrels, run, extras, maxgrade=maxgrade)
    assert lo[0] <= blo + 1e-12 and bhi <= hi[0] + 1e-12


def test_compat_bounds_on_generated_collections():
    """Per query of generated collections (at most 4 holes in the ranking): every assignment's
    Compat lies inside, the bounds tighter than [0, 1] on some queries, and the zero-filled
    value is not always the minimum (a relevant hole can push the others down the ideal)."""
    checked = tighter = below = 0
    for seed, qrels, run, both in generated_queries(None, max_docs=12, max_ranked=6):
        (lo, hi), (blo, bhi) = both("Compat")
        assert lo[0] <= blo + 1e-12 and bhi <= hi[0] + 1e-12, seed
        checked += 1
        tighter += bool(lo[0] > 0 or hi[0] < 1)
        below += bool(blo < evaluate(qrels, run, ["Compat"]).runs["run"].values["Compat"][0] - 1e-12)
    assert checked >= 30 and tighter >= 10 and below >= 1, (checked, tighter, below)


def test_docs_figures_of_inst_and_compat():
    """docs/measures.md's figures: dense.run of docs/examples, INST(max_rel=3) 0.5390 .. 0.9133
    (its zero-filled value the minimum), Compat 0.4649 in [0.3474, 0.8739]."""
    from pathlib import Path

    ex = Path(__file__).resolve().parents[3] / "docs" / "examples"
    a = align(read_qrels(str(ex / "qrels.txt")), read_run(str(ex / "dense.run")))
    for measure, expected in (("INST(max_rel=3)", (0.5390, 0.5390, 0.9133)), ("Compat", (0.4649, 0.3474, 0.8739))):
        lo, hi = bounds(measure, a)
        value = Measure.parse(measure).compute(a)
        assert (round(value.mean(), 4), round(lo.mean(), 4), round(hi.mean(), 4)) == expected, measure
