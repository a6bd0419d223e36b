"""What the estimate of several runs predicts, chosen by holding out halves of the units that
contributed judgments (judged.analyses.holes.over_choice): the held-out world is the pool of
the other half, the rule is the one-standard-error rule, and a grade source that knows every
hole's grade makes 'pool' exact, so the choice must be 'pool'."""

import json

import numpy as np
import pytest

from judged.analyses.holes.collection import build_pool, make_world
from judged.analyses.holes.drawn_scores import Case, score_cases
from judged.analyses.holes.estimate import estimate_runs
from judged.analyses.holes.over_choice import (DRAWS, ORDER, held_out_groups, choose_over, held_out_world,
                                               one_standard_error)
from judged.analyses.meta.synthetic import pooled_collection
from judged.cli import main
from judged.core.align import align
from judged.core.conventions import Settings
from judged.core.io import read_qrels, read_run
from synth import write_qrels

from test_estimate_pool import Oracle


def shift_collection(seed: int, systems: int = 14, pooled: int = 8, depth: int = 10):
    """Runs of which ``pooled`` made the depth-``depth`` qrels; the pool of all of them."""
    coll = pooled_collection(systems, 20, 20, pool_depth=depth, pooled_runs=pooled, seed=seed)
    q = read_qrels(coll.qrels())
    runs = coll.runs()
    named = [(n, align(q, read_run(r, name=n), Settings(complete=True))) for n, r in runs.items()]
    return coll, runs, build_pool(named, depth)


@pytest.mark.parametrize("seed, drawn", [(1, 10), (2, 10), (1, 5)])
def test_the_held_out_world_is_the_pool_of_the_other_half(seed, drawn):
    """The held-out runs' judgments down to the drawn ranks go, unless a kept run has the
    document in its top pool depth (10)."""
    coll, runs, pool = shift_collection(seed)
    world = make_world(pool)
    held, kept = np.array([0, 2, 5]), np.array([1, 3, 4, 6, 7])
    got = held_out_world(pool, world, held, kept, drawn)
    names = list(runs)
    top = lambda i, k: {(q, d) for q, docs in runs[names[i]].items()
                        for d in sorted(docs, key=lambda x: (-docs[x], x))[:k]}
    by_held = set().union(*(top(i, drawn) for i in np.flatnonzero(np.isin(pool.unit, held))))
    by_kept = set().union(*(top(i, pool.depth) for i in np.flatnonzero(np.isin(pool.unit, kept))))
    qrels = coll.qrels()
    expect = {(q, d) for q, d in by_held - by_kept if d in qrels.get(q, {})}
    qids = {}
    for i, a in enumerate(pool.aligned):  # pid -> (qid, docid), read off every run's rows
        rows = pool.rows_of(i)
        q = a.qids.astype(str)[a.ranked.q[pool.rrow[rows]]]
        d = a.docids(a.ranked.row[pool.rrow[rows]])
        qids.update(zip(pool.pid[rows].tolist(), zip(q.tolist(), list(d))))
    removed = {qids[p] for p in np.flatnonzero(got.removed).tolist()}
    assert removed == expect and expect  # a half held out leaves holes in its runs


def test_holes_the_qrels_never_judged_are_not_drawn():
    coll, runs, pool = shift_collection(3)
    world = make_world(pool)
    new = [i for i in range(pool.n_runs) if (world.row_level[pool.list_rows(i, 10)] < 0).any()]
    assert new  # runs never pooled have holes
    oracle = Oracle({})  # every hole not relevant: drawn or not, the same score...
    judged = world.row_level >= 0  # what over_choice draws: only holes the truth judged
    drawn = score_cases("nDCG@10", pool, world, [Case(i, -1, oracle, 5, drawn=judged) for i in new])
    zero = score_cases("nDCG@10", pool, world, [Case(i) for i in new])
    assert [d.holes for d in drawn] == [0] * len(new)  # ...but none is drawn: they are judged not relevant
    assert [d.mean for d in drawn] == [z.mean for z in zero]


def test_the_one_standard_error_rule_keeps_the_first_within_reach():
    """The standard error is the folds' (Hastie et al. 7.10): each draw's MAE, paired."""
    folds = [0, 0, 1, 1, 2, 2]
    run = [0.020, 0.030, 0.025, 0.028, 0.022, 0.026]
    close = [0.010, 0.024, 0.040, 0.033, 0.012, 0.028]  # lower on average, by less than a standard error
    far = [0.002, 0.003, 0.001, 0.002, 0.002, 0.001]
    assert one_standard_error({"run": run, "midpoint": close, "pool": close}, folds)[0] == "run"
    assert one_standard_error({"run": run, "midpoint": close, "pool": far}, folds)[0] == "pool"
    assert one_standard_error({"run": run, "midpoint": far, "pool": far}, folds)[0] == "midpoint"
    # the lowest mean alone would move off 'run' on noise
    assert min(ORDER, key=lambda k: np.mean({"run": run, "midpoint": close, "pool": close}[k])) != "run"


@pytest.mark.parametrize("seed", [1, 2])
def test_a_source_that_knows_every_grade_chooses_the_pool(seed):
    """Judging the held-out half's holes together is what 'pool' draws: with the true grades
    its error is 0, and the others' are not."""
    coll, runs, pool = shift_collection(seed)
    oracle = Oracle(coll.qrels())
    got = choose_over("nDCG@10", pool, make_world(pool), list(range(pool.n_runs)), oracle, draws=2)
    assert got.mae["pool"] == pytest.approx(0.0, abs=1e-12)
    assert got.mae["run"] > 0 and got.chosen == "pool" and got.reason is None
    assert got.runs > 0 and got.units >= 4


@pytest.mark.parametrize("measure", ["nDCG@10", "AP@10"])
def test_the_pool_is_exact_with_the_true_grades_deeper_than_the_cutoff(measure):
    """k and the pool at 20, the measure at 10: the held-out world removes judgments only down
    to the ranks the estimate draws, and a document another target ranks above 10 enters a
    run's ideal even if the run ranks it below 10."""
    coll, runs, pool = shift_collection(2, depth=20)  # seed 1: 3 runs with pseudo-holes above 10
    got = choose_over(measure, pool, make_world(pool), list(range(pool.n_runs)), Oracle(coll.qrels()), draws=2)
    assert got.mae["pool"] == pytest.approx(0.0, abs=1e-12) and got.chosen == "pool"


def test_as_many_are_held_out_as_runs_are_estimated():
    coll, runs, pool = shift_collection(1)
    two = choose_over("nDCG@10", pool, make_world(pool), [8, 9], draws=4)
    every = choose_over("nDCG@10", pool, make_world(pool), list(range(pool.n_runs)), draws=4)
    assert two.held == 2 and every.held == every.units // 2 and two.runs < every.runs


def test_nothing_to_hold_out_keeps_the_runs_own_holes():
    coll, runs, pool = shift_collection(1)
    one = choose_over("nDCG@10", pool, make_world(pool), [9])
    assert one.chosen == "run" and "one run" in one.reason and one.mae is None
    flat = choose_over("P@10", pool, make_world(pool), list(range(pool.n_runs)))
    assert flat.chosen == "run" and "no ideal or R" in flat.reason
    coll, runs, pool = shift_collection(1, systems=6, pooled=3)
    few = choose_over("nDCG@10", pool, make_world(pool), list(range(pool.n_runs)))
    assert few.chosen == "run" and "needs 4" in few.reason


@pytest.mark.parametrize("seed", [1, 2])
def test_auto_is_the_chosen_target_and_says_how(seed):
    coll, runs, pool = shift_collection(seed)
    targets = list(range(8, 14))  # the runs never pooled
    kw = dict(targets=targets, samples=20, check=False)
    auto = estimate_runs("nDCG@10", pool, over="auto", **kw)
    choice = auto.info["fit"]["over_choice"]
    assert auto.info["fit"]["over"] == choice["chosen"] in ORDER
    assert set(choice["mae"]) == {*ORDER, "zero"} and choice["draws"] == 10 and "Breiman" in choice["rule"]
    same = estimate_runs("nDCG@10", pool, over=choice["chosen"], **kw)
    assert [auto.runs[i].value for i in targets] == [same.runs[i].value for i in targets]
    assert (f"({choice['chosen']}, chosen by holding out {choice['held']} of the {choice['units']} runs that "
            f"contributed judgments, 10 times") in auto.sentence()


def test_holes_json_states_what_the_estimate_predicts(tmp_path, capsys):
    coll, runs, pool = shift_collection(3)  # seeds 1, 2, 4: the estimate fails its leave-one-run-out check
    q = write_qrels(tmp_path / "qrels.txt", coll.qrels())
    paths = []
    for name, r in runs.items():
        path = tmp_path / f"{name}.run"
        path.write_text("".join(f"{qid} Q0 {d} {i + 1} {s} {name}\n" for qid, docs in r.items()
                                for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: (-x[1], x[0])))))
        paths.append(str(path))
    assert main(["holes", str(q), *paths, "--samples", "20", "--format", "json"]) == 0
    fit = json.loads(capsys.readouterr().out)["estimate"]["fit"]
    assert fit["over"] == fit["over_choice"]["chosen"] in ORDER
    assert main(["holes", str(q), *paths, "--samples", "20", "--estimate-over", "midpoint", "--format", "json"]) == 0
    fit = json.loads(capsys.readouterr().out)["estimate"]["fit"]
    assert fit["over"] == "midpoint" and "over_choice" not in fit


class Recorder(Oracle):
    """The true grades, recording the worlds it reads features in."""

    def __init__(self, truth):
        super().__init__(truth)
        self.worlds = []

    def grade_probabilities(self, pool, world, rows, minus):
        self.worlds.append(world)
        return super().grade_probabilities(pool, world, rows, minus)


def test_features_are_read_where_the_model_was_fitted():
    """Holes the qrels never judged are not drawn, but the grade source reads its features in
    the held-out world, where they are unjudged, as in the estimate itself."""
    coll, runs, pool = shift_collection(3)
    world = make_world(pool)
    source = Recorder(coll.qrels())
    choose_over("nDCG@10", pool, world, list(range(pool.n_runs)), source, draws=2)
    never = world.row_level < 0
    assert never.any() and source.worlds
    assert all((w.row_level[never] < 0).all() for w in source.worlds)


@pytest.mark.parametrize("n, size", [(8, 4), (16, 2), (9, 4), (5, 2)])
def test_every_unit_is_held_out_as_often_as_the_others(n, size):
    """Repeated partitions (5 x 2 cross-validation at half): in each repetition a unit is held
    out at most once, and over all of them the counts differ by at most the repetitions."""
    units = np.arange(100, 100 + n)
    groups = held_out_groups(units, size, seed=3)
    assert all(len(g) == size and len(set(g.tolist())) == size for g in groups)
    per = n // size
    assert len(groups) >= DRAWS and len(groups) % per == 0
    for r in range(len(groups) // per):  # one repetition: disjoint groups
        rep = np.concatenate(groups[r * per:(r + 1) * per])
        assert len(set(rep.tolist())) == len(rep)
    counts = np.bincount(np.concatenate(groups) - 100, minlength=n)
    if n % size == 0:
        assert (counts == counts[0]).all()
    other = held_out_groups(units, size, seed=4)  # another seed, other groups
    assert np.concatenate(groups).tolist() != np.concatenate(other).tolist()


@pytest.mark.parametrize("seed", [1, 2])
def test_leave_one_out_residuals_draw_only_the_holes_their_truth_judged(seed):
    """A leave-one-out residual compares the estimate with the run's score in the qrels, where
    holes the qrels never judged count as not relevant: so the estimate draws only the
    judgments it removed. Pool depth 5, k 10: the pooled runs have real holes at ranks 6-10.
    With a source that knows every grade (even of documents the qrels never judged) the
    residuals are exactly 0; drawing those real holes too gave a residual that was no error
    (DL 2019, three neural runs on qrels pooled from the traditional ones: leave-one-run-out
    MAE 0.21 against 0.04 for holes as zero, so the check set aside an estimate whose error
    was 0.034 against 0.166)."""
    coll = pooled_collection(10, 20, 20, pool_depth=5, seed=seed)
    q = read_qrels(coll.qrels())
    named = [(n, align(q, read_run(r, name=n), Settings(complete=True))) for n, r in coll.runs().items()]
    pool = build_pool(named, 10, 5)
    world = make_world(pool)
    assert (world.row_level[np.concatenate([pool.list_rows(i, 10) for i in range(pool.n_runs)])] < 0).any()
    est = estimate_runs("nDCG@10", pool, world, source=Oracle(coll.qrels(complete=True)), samples=5, over="run")
    lo = est.info["loro"]
    assert lo["runs"] >= 4 and lo["mae_zero"] > 0
    assert lo["mae_estimate"] == pytest.approx(0.0, abs=1e-12)
