"""New systems against an old pool (judged.analyses.meta.protocols): the shift and few
protocols of `judged meta holdout`, and what the loro summary leaves out."""

import json

import numpy as np
import pytest

from judged.cli import main
from judged.core.conventions import Settings
from judged.core.errors import ConventionError
from judged.core.evaluation import evaluate
from judged.analyses.meta.holdout import holdout, run_groups
from judged.analyses.meta.protocols import FEW, TRUTH_WIDTH, abstains, pool_splits, summarize
from judged.analyses.meta.synthetic import pooled_collection
from synth import write_qrels


def collection(seed=3, systems=8):
    return pooled_collection(systems, 15, 20, pool_depth=10, seed=seed)


def write(tmp_path, coll):
    from synth import write_run

    q = write_qrels(tmp_path / "qrels.txt", coll.qrels())
    return q, [write_run(tmp_path / f"{name}.run", run, tag=name) for name, run in coll.runs().items()]


def test_pool_splits_weaker_half_random_halves_and_few():
    names = [f"r{i}" for i in range(7)]
    scores = {n: float(i) for i, n in enumerate(names)}
    splits = pool_splits(names, scores, protocol="shift", seeds=2)
    assert [s[0] for s in splits] == ["weaker half", "random half 1", "random half 2"]
    assert splits[0][1] == ["r0", "r1", "r2"] and splits[0][2] == ["r3", "r4", "r5", "r6"]
    assert all(len(pool) == 3 and set(pool).isdisjoint(scored) and len(scored) == 4 for _, pool, scored in splits)
    few = pool_splits(names, scores, protocol="few", seeds=0)
    assert few[0][2] == ["r6", "r5", "r4"][:FEW]  # the strongest scored runs
    given = pool_splits(["a/x.run", "a/y.run.gz", "a/z.run"], {"a/x.run": 0, "a/y.run.gz": 1, "a/z.run": 2},
                        protocol="shift", pool_runs=["y"])
    assert given == [("pool runs given", ["a/y.run.gz"], ["a/x.run", "a/z.run"])]
    with pytest.raises(ConventionError, match="no run named"):
        pool_splits(names, scores, protocol="shift", pool_runs=["nope"])


def test_shift_truth_is_the_cut_plus_the_scored_runs_judged(tmp_path):
    """The truth of each scored run is its score on the cut qrels plus the judgments of every
    scored run's top k (written out and scored by `evaluate`), and it lies within the pool's
    bounds for the mean and for every query."""
    coll = collection(seed=4)  # both cells estimated (with seed 3 the weaker half's estimate fails its check)
    qrels, runs = coll.qrels(), coll.runs()
    res = holdout(qrels, runs, k=10, protocol="shift", seeds=1, samples=20)
    assert [c.name for c in res.cells] == ["weaker half", "random half 1"]
    for cell in res.cells:
        top = lambda name, depth: {q: sorted(d, key=lambda x: (-d[x], x))[:depth] for q, d in runs[name].items()}
        cut = {}
        for name in cell.pool_runs:
            for q, docs in top(name, 10).items():
                cut.setdefault(q, {}).update({d: qrels[q][d] for d in docs if d in qrels.get(q, {})})
        truth = {q: dict(v) for q, v in cut.items()}
        for name in cell.scored:
            for q, docs in top(name, 10).items():
                if q in truth:
                    truth[q].update({d: qrels[q][d] for d in docs if d in qrels.get(q, {})})
        expected = evaluate(truth, {n: runs[n] for n in cell.scored}, ["nDCG@10"], complete=True).mean()
        for r in cell.runs:
            assert r.truth == pytest.approx(float(expected.loc[r.run, "nDCG@10"]), abs=1e-12)
            assert not r.violation and r.cell_violations == 0
            # judging its own holes alone: the cut plus its own top k
            own = {q: dict(v) for q, v in cut.items()}
            for q, docs in top(r.run, 10).items():
                if q in own:
                    own[q].update({d: qrels[q][d] for d in docs if d in qrels.get(q, {})})
            alone = evaluate(own, {r.run: runs[r.run]}, ["nDCG@10"], complete=True).mean()
            assert r.truth_own == pytest.approx(float(alone.loc[r.run, "nDCG@10"]), abs=1e-12)
        assert any(abs(r.truth_own - r.truth) > 1e-6 for r in cell.runs)  # the others' holes move the ideal
        for r in cell.runs:  # its holes on the cut that the full qrels judge relevant
            relevant = sum(1 for q, docs in top(r.run, 10).items() if q in cut
                           for d in docs if d not in cut[q] and qrels.get(q, {}).get(d, 0) > 0)
            assert r.truth_relevant_holes == relevant
            assert r.estimate_relevant_holes is None or 0 <= r.estimate_relevant_holes <= r.holes
        s = cell.summary()
        assert s["violations"] == 0
        kept = [r for r in cell.runs if r.truth_width <= TRUTH_WIDTH and not abstains(r)]
        assert s["mae_own"]["zero"] == pytest.approx(np.mean([abs(r.zero - r.truth_own) for r in kept]))
        conformal = [r for r in kept if r.interval == "conformal"]
        assert s["covered_own"] == sum(r.low - 1e-9 <= r.truth_own <= r.high + 1e-9 for r in conformal)
        read = [r for r in kept if r.estimate_relevant_holes is not None]
        holes = sum(r.holes for r in read)
        assert holes > 0 and s["holes_relevant"]["holes"] == holes
        assert s["holes_relevant"]["truth"] == pytest.approx(sum(r.truth_relevant_holes for r in read) / holes)
        assert s["holes_relevant"]["estimate"] == pytest.approx(sum(r.estimate_relevant_holes for r in read) / holes)


def test_few_scores_the_strongest_alone(tmp_path):
    coll = collection(seed=5)
    res = holdout(coll.qrels(), coll.runs(), k=10, protocol="few", seeds=0, samples=20)
    full = evaluate(coll.qrels(), coll.runs(), ["nDCG@10"], complete=True).mean()["nDCG@10"]
    cell = res.cells[0]
    assert len(cell.scored) == FEW
    assert cell.scored == sorted([n for n in full.index if n not in cell.pool_runs], key=lambda n: -full[n])[:FEW]


def test_summary_leaves_out_runs_without_a_truth():
    class Row:
        def __init__(self, run, width, err):
            self.run, self.truth_width, self.truth = run, width, 0.5
            self.zero = self.condensed = self.estimate = 0.5 + err
            self.low, self.high, self.interval, self.min, self.max = 0.0, 1.0, "conformal", 0.0, 1.0
            self.violation, self.covered, self.cell_violations, self.queries, self.abstain = False, True, 0, 10, None
            self.method = "loro-logit"

    s = summarize([Row("a", 0.0, 0.01), Row("b", TRUTH_WIDTH * 2, 0.5)])
    assert s["mae"]["zero"] == pytest.approx(0.01) and s["mae_all"]["zero"] == pytest.approx(0.255)
    assert s["left_out"] == [{"run": "b", "truth_width": TRUTH_WIDTH * 2}] and s["counted"] == 1


def test_shift_through_the_cli(tmp_path, capsys):
    q, runs = write(tmp_path, collection(seed=7, systems=6))
    assert main(["meta", "holdout", q, *runs, "--protocol", "shift", "--seeds", "1", "--samples", "10",
                 "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["protocol"] == "shift" and len(d["cells"]) == 2
    assert set(d["cells"][0]["runs"][0]) >= {"run", "truth", "truth_width", "zero", "condensed", "min", "max",
                                             "estimate", "low", "high", "interval", "cell_violations", "covered",
                                             "truth_own"}
    assert set(d["summary"]["all"]["mae_own"]) == {"zero", "condensed", "estimate"}
    assert set(d["summary"]["all"]["holes_relevant"]) == {"holes", "estimate", "truth"}
    assert d["summary"]["all"]["violations"] == 0 and d["summary"]["all"]["cell_violations"] == 0
    # what each cell's estimate predicted: chosen on held-out halves (fewer than 4 pooled units: run)
    assert {c["estimate"]["over"] for c in d["cells"]} <= {"run", "midpoint", "pool", "auto"}
    assert all(set(c["estimate"]) == {"method", "fallback", "over"} for c in d["cells"])
    assert main(["meta", "holdout", q, *runs, "--protocol", "few", "--pool-runs", "teama-1", "teamb-1", "--samples",
                 "10"]) == 0
    out = capsys.readouterr().out
    assert "few — pool runs given: 2 pool runs, 3 scored" in " ".join(out.split())
    assert "holes read / judged relevant: the share of the estimated runs' holes" in " ".join(out.split())
    # three runs alone: every interval is the bounds, said so, not a 0/0 coverage of width nan
    summary_row = next(line for line in out.splitlines() if "all cells" in line)
    assert "bounds" in summary_row and "0/0" not in summary_row and "nan" not in summary_row
    assert main(["meta", "holdout", q, *runs, "--pool-runs", "teama-1"]) == 2
    assert "--pool-runs, --scored-runs and --seeds go with --protocol shift or few" in capsys.readouterr().err
    # your new systems on your old qrels: every run named scored (four, past few's three), one cell
    assert main(["meta", "holdout", q, *runs, "--protocol", "few", "--pool-runs", "teama-1", "teamb-1",
                 "--scored-runs", "teama-3", "teama-2", "teamb-2", "teamb-3", "--samples", "10", "--format",
                 "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in d["cells"]] == ["runs given"] and d["cells"][0]["scored"] == [
        r for n in ("teama-3", "teama-2", "teamb-2", "teamb-3") for r in runs if r.endswith(f"/{n}.run")]
    assert main(["meta", "holdout", q, *runs, "--protocol", "shift", "--pool-runs", "teama-1", "--scored-runs",
                 "teama-1"]) == 2
    assert "--scored-runs and --pool-runs share" in capsys.readouterr().err
    assert main(["meta", "holdout", q, *runs, "--protocol", "few", "--scored-runs", "nope"]) == 2
    assert "--scored-runs: no run named 'nope'" in capsys.readouterr().err
    # --seeds draws random halves: with the runs named it has nothing to draw, and says so
    assert main(["meta", "holdout", q, *runs, "--protocol", "few", "--scored-runs", "teama-3", "--seeds", "3",
                 "--samples", "10", "--format", "json"]) == 0
    got = capsys.readouterr()
    assert "--seeds" in got.err and "no effect" in got.err and len(json.loads(got.out)["cells"]) == 1


def test_scored_runs_are_pooled_from_every_other_run_unless_pool_runs_say():
    names = [f"r{i}" for i in range(5)]
    scores = {n: float(i) for i, n in enumerate(names)}
    assert pool_splits(names, scores, protocol="few", scored_runs=["r0", "r4"]) == [
        ("runs given", ["r1", "r2", "r3"], ["r0", "r4"])]  # the weakest too: named, not chosen
    assert pool_splits(names, scores, protocol="shift", pool_runs=["r1"], scored_runs=["r2"]) == [
        ("runs given", ["r1"], ["r2"])]
    with pytest.raises(ConventionError, match="no run is left"):
        pool_splits(names, scores, protocol="few", scored_runs=names)


def test_a_run_named_twice_is_pooled_or_scored_once():
    """`--pool-runs a a` is one pool run, not two (the cell's header counted 2 pool runs)."""
    names = [f"r{i}" for i in range(5)]
    scores = {n: float(i) for i, n in enumerate(names)}
    assert pool_splits(names, scores, protocol="few", pool_runs=["r1", "r1"], scored_runs=["r2", "r2"]) == [
        ("runs given", ["r1"], ["r2"])]
    assert pool_splits(names, scores, protocol="shift", pool_runs=["r1", "r1"])[0][1] == ["r1"]


def test_loro_reports_cell_violations_and_the_old_spelling_agrees(tmp_path):
    coll = collection(seed=2)
    a = holdout(coll.qrels(), coll.runs(), k=10, samples=20)
    b = holdout(coll.qrels(), coll.runs(), k=10, samples=20, protocol="loro")
    assert json.dumps(a.to_dict(), sort_keys=True) == json.dumps(b.to_dict(), sort_keys=True) and a.protocol == "loro"
    assert all(r.queries == 15 and r.cell_violations == 0 for r in a.runs)
    assert a.summary()["cell_violations"] == 0


def test_group_regex_default_keeps_runs_without_letters_and_refuses_before_reading(tmp_path):
    assert run_groups(["1", "2", "ab3"]) == {"1": "1", "2": "2", "ab3": "ab"}
    with pytest.raises(ConventionError, match="does not match run"):  # no file is read: they do not exist
        holdout(str(tmp_path / "q.txt"), [str(tmp_path / "1"), str(tmp_path / "2")], protocol="group",
                group_regex="[a-z]+")
