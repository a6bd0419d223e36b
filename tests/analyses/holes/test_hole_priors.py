"""The run-based prior of hole grades (judged.analyses.holes.priors, ``--estimate run-prior``)."""

import json

import numpy as np
import pytest

from judged.cli import main
from judged.core.align import align
from judged.core.conventions import Settings
from judged.core.io import read_qrels, read_run
from judged.analyses.holes.collection import build_pool, make_world
from judged.analyses.holes.priors import RunPrior
from judged.analyses.holes.unjudged import holes_report
from synth import write_qrels, write_run


def test_probabilities_by_hand():
    """Run A ranks, for q1, judged grades 2, 0, 2 and a hole; for q2 a 1 and a hole. Over both
    queries its judged grades are 0:1, 1:1, 2:2 (4 documents), so p_A = ((1, 1, 2) + 1/3) / 5;
    q1's hole gets ((1, 0, 2) + 2 p_A) / 5 and q2's ((0, 1, 0) + 2 p_A) / 3 (alpha 2)."""
    qrels = read_qrels({"q1": {"a": 2, "b": 0, "c": 2}, "q2": {"d": 1}})
    run = read_run({"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "h1": 1.0}, "q2": {"d": 2.0, "h2": 1.0}}, name="A")
    other = read_run({"q1": {"a": 1.0}, "q2": {"d": 1.0}}, name="B")
    pool = build_pool([(n, align(qrels, r, Settings())) for n, r in (("A", run), ("B", other))], k=10)
    world = make_world(pool)
    holes = np.flatnonzero((pool.run == 0) & (world.row_level < 0))
    probs = RunPrior(window=100, alpha=2.0, center="run").grade_probabilities(pool, world, holes,
                                                                              np.full(len(holes), -1))
    p_a = (np.array([1, 1, 2]) + 1 / 3) / 5
    by_query = {pool.aligned[0].qrels.index.query_ids[c]: p for c, p in zip(pool.qcode[holes], probs)}
    np.testing.assert_allclose(by_query["q1"], (np.array([1, 0, 2]) + 2 * p_a) / 5)
    np.testing.assert_allclose(by_query["q2"], (np.array([0, 1, 0]) + 2 * p_a) / 3)
    assert all(abs(p.sum() - 1) < 1e-12 for p in probs)
    # the default centre: the query's judgments (q1: grades 2, 0, 2; q2: one 1), the pool's prior
    probs = RunPrior(window=100, alpha=2.0).grade_probabilities(pool, world, holes, np.full(len(holes), -1))
    by_query = {pool.aligned[0].qrels.index.query_ids[c]: p for c, p in zip(pool.qcode[holes], probs)}
    p_q1, p_q2 = (np.array([1, 0, 2]) + 1 / 3) / 4, (np.array([0, 1, 0]) + 1 / 3) / 2
    np.testing.assert_allclose(by_query["q1"], (np.array([1, 0, 2]) + 2 * p_q1) / 5)
    np.testing.assert_allclose(by_query["q2"], (np.array([0, 1, 0]) + 2 * p_q2) / 3)


def test_window_and_leave_out():
    """Judged documents below the window are not read; a unit's own contributions are left
    out when it is held out (minus)."""
    qrels = read_qrels({"q": {"a": 2, "z": 0}})
    run = read_run({"q": {"a": 3.0, "h": 2.0, "z": 1.0}}, name="A")
    pool = build_pool([("A", align(qrels, run, Settings())), ("B", align(qrels, read_run({"q": {"x": 1.0}},
                                                                                          name="B"), Settings()))],
                      k=10)
    world = make_world(pool)
    hole = np.flatnonzero((pool.run == 0) & (world.row_level < 0))
    top2 = RunPrior(window=2, alpha=1.0, center="run").grade_probabilities(pool, world, hole, [-1])[0]
    assert len(top2) == 2  # the qrels' levels: 0 and 2; in the top 2 only 'a' (grade 2) is judged, 'z' is deeper
    np.testing.assert_allclose(top2, (np.array([0, 1]) + (np.array([0, 1]) + 1 / 2) / 2) / 2)
    without = RunPrior(window=2, alpha=1.0, center="run").grade_probabilities(pool, world, hole, [0])[0]  # A's own 'a' gone
    np.testing.assert_allclose(without, [0.5, 0.5])


def test_run_prior_estimates_where_the_model_falls_back():
    """One run alone: no leave-one-run-out evidence, the grade model falls back to holes as
    zero; the run prior estimates, and its interval is the bounds, called so."""
    qrels = {"q": {"a": 2, "b": 2, "c": 0}}
    run = {"q": {"a": 5.0, "h": 4.0, "b": 3.0, "i": 2.0, "c": 1.0}}
    model = holes_report(qrels, {"r": run}, k=5, samples=50)
    prior = holes_report(qrels, {"r": run}, k=5, samples=50, estimate="run-prior")
    assert model.estimates.method == "holes-as-zero" and prior.estimates.method == "run-prior"
    e = prior.runs["r"].summary()["estimate"]
    assert e["mean"] > prior.runs["r"].summary()["score"]  # 2 of its 3 judged documents are relevant
    assert (e["low"], e["high"]) == (prior.runs["r"].summary()["min"], prior.runs["r"].summary()["max"])
    assert "not an estimate interval" in prior.estimates.sentence()


def test_run_prior_through_the_cli(tmp_path, capsys):
    q = write_qrels(tmp_path / "q.txt", {"q": {"a": 2, "b": 1, "c": 0}})
    r = write_run(tmp_path / "r.run", {"q": {"a": 3.0, "h": 2.0, "c": 1.0}})
    s = write_run(tmp_path / "s.run", {"q": {"b": 3.0, "g": 2.0, "a": 1.0}})
    assert main(["holes", q, r, s, "-k", "3", "--estimate", "run-prior", "--format", "json", "--samples", "20"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["estimate"]["method"] == "run-prior" and "Fröbe" in d["estimate"]["source"]
    with pytest.raises(SystemExit) as exit_:
        main(["holes", q, r, "--estimate", "nope"])
    assert exit_.value.code == 2 and "invalid choice: 'nope'" in capsys.readouterr().err
