"""The kernel layer (judged.core.kernels): every kernel's compiled binding gives its numpy
reference's result bit for bit, on the very arguments the engine passes it.

Each kernel call made while evaluating generated collections (every measure family, two
tie orders, condensed rankings, grades past the compiled gain table) is replayed
on both back ends: ``kernel.bound(native, ...)`` (unless it declines: FALLBACK) and
``kernel.reference(...)``. A kernel the collections never reach fails the test, so a new
kernel must come with inputs that exercise it."""

import numpy as np
import pyarrow as pa
import pytest

import judged
import judged.core.kernels as kernels
from judged.core.kernels import FALLBACK, KERNELS, Kernel
from judged.core.conventions import Settings

from synth import make_collection

native = judged.core.native.compiled()
pytestmark = pytest.mark.skipif(native is None, reason="the compiled back end is not built or turned off")

MEASURES = ["nDCG@10", "nDCG", "DCG@5", "nDCG(gain=exp)@5", "nDCG(unjudged=condensed)@10", "nDCG(ideal=retrieved)@5",
            "AP", "AP(rel=2)", "P@5", "R@10", "RR", "Rprec", "Bpref", "Success@3", "NumRet", "NumRelRet", "NumRel",
            "infAP", "AP(unjudged=condensed)", "Judged@10", "nDCG(gains={0:0,1:1,2:3,3:70000})@5", "GMAP", "GMBpref",
            "Rprec(mult=0.4)", "SetF", "IPrec(recall=0.2)", "AP11", "G", "RnDCG", "nDCGRel", "BinG", "ERR@5", "nERR@10",
            "RBP", "RBPResidual", "SDCG(max_rel=3)@5", "INST(max_rel=3)", "Compat",
            # the compiled set_*, iprec, ERR and RBP kernels: every kind, cutoffs, condensed rankings
            "SetP", "SetR", "SetAP", "SetRelP", "SetF(beta=0.5)", "SetP(rel=2,unjudged=condensed)",
            "SetF(unjudged=condensed)", "IPrec(recall=0.0)", "IPrec(recall=1.0,rounding=trec9)",
            "IPrec(recall=0.3,unjudged=condensed)", "AP11(rel=2)", "AP11(rounding=trec9,unjudged=condensed)",
            "ERR", "ERR(max_rel=2)@3", "ERR(unjudged=condensed)@10", "nERR", "nERR(unjudged=condensed)@5",
            "RBP@5", "RBP(p=0.95,rel=2)", "RBP(unjudged=condensed)", "RBPResidual(p=0.5)",
            "RBPResidual(unjudged=condensed)"]


BOUNDS = ["ERR(unjudged=max)@10", "RBP(unjudged=min)", "RBP(unjudged=max,p=0.9)", "nDCG(unjudged=min)@10", "nDCG(unjudged=max)@5", "nDCG(gain=exp,unjudged=max)@20", "AP(unjudged=min)",
          "AP(unjudged=max)", "AP(rel=2,unjudged=max)", "nDCG(unjudged=max,maxgrade=0)@3",
          "nERR(unjudged=min)@10", "nERR(unjudged=max)@5", "INST(max_rel=3,unjudged=max)",
          "INSQ(max_rel=3,unjudged=min)", "Compat(unjudged=min)", "Compat(unjudged=max,p=0.8)"]


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        if not isinstance(b, np.ndarray) or a.shape != b.shape:
            return False
        return a.size == 0 or a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if a is None or b is None:
        return a is b
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, pa.Array):
        return isinstance(b, pa.Array) and a.type == b.type and a.equals(b)
    if hasattr(a, "__dataclass_fields__"):  # Ranked (its own fields), Tokens (all)
        fields = ("n_queries", "q", "pos", "row", "offsets") if hasattr(a, "n_queries") else a.__dataclass_fields__
        return type(a) is type(b) and all(_same(getattr(a, f), getattr(b, f)) for f in fields)
    return a == b


def _collections():
    for seed in range(12):
        c = make_collection(seed, max_queries=10, max_docs=40)
        yield c.qrels, c.run
    yield {"q1": {"a": 20000, "b": 3}}, {"q1": {"a": 1.0, "b": 2.0, "c": 2.0}}  # grades past the gain table
    # many qrels queries, few in the run: query ids looked up by hash, confirmed on the strings
    yield {f"q{i}": {"a": 1, "b": 0} for i in range(40)}, {"q3": {"a": 1.0, "c": 0.5}, "q7": {"b": 2.0}}


def test_every_kernel_gives_its_references_bits(monkeypatch, tmp_path):
    calls = {}
    real = Kernel.__call__

    def record(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        if self.bound is not None:
            compiled_out = self.bound(native, *args, **kwargs)
            reference = self.reference(*args, **kwargs)
            if compiled_out is not FALLBACK:
                assert _same(compiled_out, reference), self
            calls[self] = calls.get(self, 0) + (compiled_out is not FALLBACK)
        return out

    monkeypatch.setattr(Kernel, "__call__", record)
    for qrels, run in _collections():
        top = max(g for docs in qrels.values() for g in docs.values())
        # 2^grade - 1 (exp gain, ERR's chance) has no float64 past grade 1023: refused there
        measures = MEASURES if top <= 1023 else [m for m in MEASURES if "gain=exp" not in m and "ERR" not in m]
        for ties in ("trec", "input"):
            judged.evaluate(qrels, {"a": run}, measures, ties=ties, on_duplicate="first")
            judged.evaluate(qrels, {"a": run}, measures, ties=ties, complete=True, on_duplicate="first")
        # a run file with a repeated pair, read in memory (gzip) and streamed
        lines = [f"{q} Q0 {d} 1 {s!r} t\n" for q, docs in run.items() for d, s in docs.items()]
        path = tmp_path / "run.txt"
        path.write_text("".join(lines + lines[-1:]))
        judged.evaluate(qrels, str(path), measures, on_duplicate="first")
        judged.evaluate(qrels, judged.read_run(str(path), on_duplicate="first"), measures)
        # the exact hole bounds (judged.core.kernels.bound_kernels): each run alone, then a pair's
        # signed weights (nDCG) and the other run's holes as extras (AP)
        if top > 1000:  # past the bounds' grades
            continue
        judged.evaluate(qrels, {"a": run}, BOUNDS, on_duplicate="first")
        other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
        judged.compare(qrels, {"a": run, "b": other}, ["nDCG@5", "AP", "nDCG(gain=exp)@10"], permutations=200,
                       on_duplicate="first")
        # a pair's conservative interval over its two runs' holes alone (each the other's as extras:
        # holes_only_in), as `judged holes --bounds-over run` bounds them
        from judged.analyses.holes.unjudged import holes_report

        holes_report(qrels, {"a": run, "b": other}, k=5, measure="AP@5", bounds_over="run", samples=1,
                     settings=Settings(complete=True, on_duplicate="first"))
    # a pooling replay's draws per query (judged.analyses.pooling.replay_kernels): move-to-front, MM, MM-NS, Hedge; the
    # bounds strategy's and Thompson sampling's (TS, TS-NS) whole orders; impact's pairwise sums
    from judged.analyses.pooling.replay import pooling_replay

    for qrels, run in list(_collections())[:4]:
        other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
        pooling_replay(qrels, {"a": run, "b": other, "c": {q: docs for q, docs in list(run.items())[::2]}}, [5],
                       ["mtf", "mm", "mm-ns", "hedge", "bounds", "ts", "ts-ns", "impact"], measure="nDCG@5", depth=8,
                       settings=Settings(complete=True, on_duplicate="first"), protocol="from-scratch")
        # pools of one run (leave-one-run-out of two): Hedge's one weight stays 1
        pooling_replay(qrels, {"a": run, "b": other}, [5], ["hedge"], measure="nDCG@5", depth=8,
                       settings=Settings(complete=True, on_duplicate="first"))
    # the hole estimate's draws summed per draw and query (judged.core.kernels.draws.drawn_sums): nDCG's
    # gains and ideal keys, DCG's gains
    from judged.analyses.holes.unjudged import holes_report
    from judged.analyses.meta.synthetic import pooled_collection

    c = pooled_collection(8, 12, 20, pool_depth=5, seed=4)
    for measure in ("nDCG@5", "DCG@5"):
        assert holes_report(c.qrels(), c.runs(), k=5, measure=measure, samples=30).estimates.method == "loro-logit"
    # ranx objects (judged.core.io.ranx_objects.ranx_columns: numba over ranx's typed dicts), when ranx is installed
    from judged.core.io.ranx_objects import ranx_columns

    try:
        import ranx
    except ImportError:
        ranx = None
    if ranx is not None:
        c = make_collection(2, max_queries=10, max_docs=40)
        judged.evaluate(ranx.Qrels(c.qrels), ranx.Run(c.run), ["nDCG@10", "AP"])
    bound = {k for k in KERNELS.values() if k.bound is not None and (ranx is not None or k is not ranx_columns)}
    assert {k for k, n in calls.items() if n} == bound  # every binding ran (and matched) at least once


def test_the_fallback_rule_is_in_one_wrapper(monkeypatch):
    used = []
    k = Kernel(lambda x: ("reference", x))
    k.binding(lambda native, x: FALLBACK if x < 0 else ("compiled", x))
    assert k(1) == ("compiled", 1) and k(-1) == ("reference", -1)
    with judged.core.native.pure():
        assert k(1) == ("reference", 1)
    KERNELS.pop(next(name for name, v in KERNELS.items() if v is k))
    assert kernels.compiled is judged.core.native.compiled and not used


def test_drawn_sums_counts_the_levels_each_uniform_passes_and_sums_in_hole_order():
    """Two draws of three holes (queries 0, 1, 0) over levels 0..2: a hole's level is how many
    of its cumulative probabilities (the last one aside) its uniform exceeds; each sum adds
    the holes' weights at their levels per draw and query, on both paths."""
    from judged.core.kernels.draws import drawn_sums

    cum = np.array([[0.5, 0.8, 1.0], [0.1, 0.2, 1.0], [0.9, 0.95, 1.0]])
    u = np.array([[0.6, 0.05, 0.99], [0.3, 0.5, 0.92]])  # levels [1, 0, 2] and [0, 2, 1]
    weights = np.array([[[0.0, 1.0, 2.0], [0.0, 10.0, 20.0], [0.0, 100.0, 200.0]],
                        [[1.0, 3.0, 9.0]] * 3])
    want = np.array([[[201.0, 0.0], [12.0, 1.0]], [[100.0, 20.0], [4.0, 9.0]]])
    got = drawn_sums(u, cum, np.array([0, 1, 0]), weights, 2)
    with judged.core.native.pure():
        ref = drawn_sums(u, cum, np.array([0, 1, 0]), weights, 2)
    assert np.array_equal(got, want) and np.array_equal(ref, want)


def test_pair_gaps_adds_each_column_pairs_gap_in_order():
    """impact's pairwise sum (judged.analyses.pooling.replay_kernels.pair_gaps): per row, |a - b| over the
    column pairs (0, 1), (0, 2), ..., (1, 2), ... added one at a time from 0, as a Python loop
    adds them, on both back ends; a partial block of 16 rows and more than one of 256."""
    from itertools import combinations

    from judged.analyses.pooling.replay_kernels import pair_gaps

    rng = np.random.default_rng(5)
    for rows, cols in ((0, 3), (3, 0), (2, 1), (5, 2), (17, 4), (600, 37)):
        values = rng.normal(size=(rows, cols)) * 10.0 ** rng.integers(-8, 8, size=(rows, cols))
        want = []
        for row in values.tolist():
            total = 0.0
            for x, y in combinations(range(cols), 2):
                total += abs(row[x] - row[y])
            want.append(total)
        got = pair_gaps(values)
        with judged.core.native.pure():
            ref = pair_gaps(values)
        assert got.dtype == ref.dtype == np.float64
        assert got.tolist() == ref.tolist() == want


@pytest.mark.parametrize("values", ["falling", "ties", "rising", "negative", "mixed"])
def test_hedge_with_one_run_draws_as_the_loop(values):
    # one expert: its weight stays exactly 1 and the mixture is its value, so values falling
    # along the pairs are drawn in pair order without the loop; any other values take the loop
    from judged.analyses.pooling.replay_kernels import hedge_picks

    if hedge_picks.bound is None or native is None:
        pytest.skip("compiled extension not built")
    rng = np.random.default_rng(3)
    offsets = np.array([0, 1, 6, 6, 20, 45], np.int64)
    P = int(offsets[-1])
    v = {"falling": -np.sort(-rng.random(P)), "ties": np.repeat([0.9, 0.5, 0.5, 0.1, 0.0], 9)[:P],
         "rising": np.sort(rng.random(P)), "negative": -rng.random(P) * 3,
         "mixed": np.concatenate([-np.sort(-rng.random(20)), rng.random(P - 20)])}[values]  # queries of both kinds
    for beta in (0.1, 0.9):
        f_rel, f_non = beta ** ((1.0 - v) / 2.0), beta ** ((1.0 + v) / 2.0)
        for truth in (rng.integers(0, 3, P).astype(float), np.full(P, np.nan)):
            args = (offsets, v, f_rel, f_non, truth, 1.0, 1)
            picks, counts = hedge_picks.bound(native, *args)
            ref_picks, ref_counts = hedge_picks.reference(*args)
            assert picks.tolist() == ref_picks.tolist() and counts.tolist() == ref_counts.tolist()
