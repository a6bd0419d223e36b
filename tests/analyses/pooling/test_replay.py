"""`judged meta pooling`: replaying pooling strategies on a judged collection. The tiny
collection below is worked by hand; the replay's scores are checked against
`judged.evaluate` on a qrels holding exactly the labels judged so far."""

import json
import math

import numpy as np
import pytest

from judged import evaluate
from judged.cli import main
from judged.analyses.pooling.candidates import Candidates
from judged.analyses.pooling.replay import nice_step, pairwise_agreement, pooling_replay, replayable

# one query; a and c relevant, b and d not, e unjudged (scored 0)
QRELS = {"q1": {"a": 1, "b": 0, "c": 1, "d": 0}}
RUNS = {"A": {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}},  # nDCG@3 = (1 + 1/2) / (1 + 1/log2 3) = 0.9197
        "B": {"q1": {"c": 3.0, "a": 2.0, "d": 1.0}},  # (1 + 1/log2 3) / IDCG = 1
        "C": {"q1": {"e": 3.0, "a": 2.0, "b": 1.0}}}  # (1/log2 3) / IDCG = 0.3869
L3 = 1 / math.log2(3)
FULL = {"A": 1.5 / (1 + L3), "B": 1.0, "C": L3 / (1 + L3)}


def test_depth_from_scratch_by_hand():
    # depth order: a (rank 1 of A, in 3 runs), c (rank 1 of B, 2 runs), e (rank 1 of C), b, d.
    # After a alone: IDCG = 1, so A = 1, B = C = 1/log2 3; after c every run has its full score.
    res = pooling_replay(QRELS, RUNS, [1, 2], ["depth"], measure="nDCG@3", protocol="from-scratch", depth=3, step=1)
    s = res.strategies["depth"]
    assert np.allclose(res.full, [FULL["A"], FULL["B"], FULL["C"]])
    one = s.at_budget(1)
    errors = [1 - FULL["A"], 1 - L3, L3 - FULL["C"]]
    assert one["mean_abs_error"] == pytest.approx(np.mean(errors)) and one["max_abs_error"] == pytest.approx(1 - L3)
    assert one["tau"] == 0.0  # A above B (discordant), A above C (concordant), B tied with C
    assert one["pairwise_agreement"] == pytest.approx(1 / 3) and one["relevant_found"] == 1
    two = s.at_budget(2)
    assert two["max_abs_error"] == pytest.approx(0.0, abs=1e-15) and two["tau"] == 1.0
    assert s.recovered() == (2, "tau = 1 and every run within 0.01")
    assert s.candidates == [5]


@pytest.mark.parametrize("measure", ["nDCG@5", "DCG@5", "nDCG(gain=exp)@5", "nDCG(gains={0:0,1:1,2:5})@5", "P@5",
                                     "Judged@5", "nDCG(ideal=retrieved)@5", "nDCG(unjudged=condensed)@5", "AP",
                                     "nDCG", "DCG", "nDCG(discount=reciprocal)@3", "nDCG(gains={0:0,1:-1,2:4})@5"])
@pytest.mark.parametrize("batch", [1, 40, None])
def test_replay_scores_are_evaluate_on_the_labels_gathered(measure, batch, monkeypatch):
    # at every checkpoint; for the DCG family with holes at 0, labels of gain 0 are skipped
    # (they move nothing): the values must still be evaluate()'s, bit for bit. A measure that
    # reads past its cutoff (ideal=retrieved, condensed) is scored on the whole ranking.
    # The checkpoints' queries scored one checkpoint a call (batch 1), a few checkpoints a
    # call (40 rows; the DCG family's replay kernel: 40 query values) or all in one call (the
    # default, on this small collection).
    import judged.analyses.pooling.replay as replaying

    if batch is not None:
        monkeypatch.setattr(replaying, "BATCH_ROWS", batch)
        monkeypatch.setattr(replaying, "SNAPSHOT_VALUES", batch)
    rng = np.random.default_rng(5)
    docs = [f"d{i}" for i in range(30)]
    qrels = {f"q{j}": {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 18, replace=False)} for j in range(3)}
    runs = {f"r{i}": {f"q{j}": {d: float(s) for d, s in zip(rng.choice(docs, 15, replace=False), range(15, 0, -1))}
                      for j in range(3)} for i in range(4)}
    budgets = list(range(1, 50))
    res = pooling_replay(qrels, runs, budgets, ["mtf"], measure=measure, protocol="from-scratch", depth=6, step=1)
    s = res.strategies["mtf"]
    # rebuild the labels the policy gathered, in its order, and score them with evaluate()
    from judged.analyses.pooling.candidates import build_candidates
    from judged.analyses.pooling.strategies import make_policy

    ranked = {r: {q: sorted(d, key=lambda x: -d[x]) for q, d in per.items()} for r, per in runs.items()}
    c = build_candidates(ranked, 6, None, sorted(qrels))
    policy = make_policy("mtf", c).start()
    order = []
    while (pid := policy.select()) is not None:
        g = float(qrels[c.qids[c.pair_query[pid]]].get(c.docids[pid], 0))
        order.append((c.qids[c.pair_query[pid]], c.docids[pid], g))
        policy.observe(pid, g)
    for budget in budgets:
        labels = {}
        for q, d, g in order[:budget]:
            labels.setdefault(q, {})[d] = int(g)
        for q in qrels:  # every query scored, as the replay does (no label yet: 0)
            labels.setdefault(q, {"never-retrieved": 0})
        ev = evaluate(labels, runs, [measure])
        want = np.array([ev.aggregate(r, measure) for r in runs])
        row = min(int(np.searchsorted(s.judgments, budget)), len(s.judgments) - 1)
        assert s.judgments[row] == min(budget, len(order))
        assert np.array_equal(s.scores[row], want), budget  # bit for bit: the same kernels


def test_leave_one_run_out_pools_the_other_runs():
    res = pooling_replay(QRELS, RUNS, [100], ["depth", "mm", "hedge"], measure="nDCG@3", depth=3, step=1)
    for s in res.strategies.values():
        # A out: B and C pool c a d e b; B out: a b c e; C out: a b c d. Judged all, every run is exact here.
        assert s.candidates == [5, 4, 4]
        assert s.at_budget(100)["max_abs_error"] == pytest.approx(0.0, abs=1e-15)
        assert s.at_budget(100)["judged"] == pytest.approx(13 / 3)


def test_seeded_replays_are_identical(tmp_path, capsys):
    args = ["meta", "pooling", str(write(tmp_path, "qrels.txt", QRELS)), *runs_files(tmp_path),
            "--budget", "2", "--strategy", "ts", "--strategy", "ts-ns", "--depth", "3", "-m", "nDCG@3",
            "--seed", "4", "--format", "json", "--curve"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first
    out = json.loads(first)
    assert set(out["strategies"]) == {"ts", "ts-ns"} and out["seed"] == 4 and out["protocol"] == "leave-one-run-out"
    assert set(out["strategies"]["ts"]) == {"source", "adaptive", "recovered_at", "recovered_by", "budgets", "curve",
                                            "versus_depth", "recovery", "candidates"}
    assert set(out["strategies"]["ts"]["budgets"][0]) == {"budget", "judged", "mean_abs_error", "max_abs_error", "tau",
                                                          "pairwise_agreement", "relevant_found"}


def test_json_layout_names_every_strategy_with_its_source(tmp_path, capsys):
    from judged.analyses.pooling.strategies import BUDGET_STRATEGY, STRATEGIES

    assert main(["meta", "pooling", str(write(tmp_path, "qrels.txt", QRELS)), *runs_files(tmp_path), "--budget", "2",
                 "--depth", "3", "-m", "nDCG@3", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"qrels", "runs", "measure", "convention", "protocol", "depth", "step", "tolerance", "seed",
                        "max_judgments", "budgets", "full", "method", "default_strategy", "strategies", "query_set",
                        "warnings", "tolerances", "recommended"}
    assert out["default_strategy"] == BUDGET_STRATEGY == "depth" and out["max_judgments"] is None
    # recovery at the rule's three tolerances by default; the top-level figures at 0.01, as before
    assert out["tolerances"] == [0.005, 0.01, 0.02] and out["tolerance"] == 0.01
    assert set(out["recommended"]) == {"strategy", "tolerances", "beat_depth_everywhere", "versus_depth", "reason"}
    assert list(out["strategies"]) == replayable()
    for name, s in out["strategies"].items():
        assert s["source"] == STRATEGIES[name].summary and s["source"]  # each named with its source
    assert out["strategies"]["depth"]["versus_depth"] == 0.0 and out["strategies"]["depth"]["adaptive"] is False
    assert "Losada, Parapar & Barreiro" in out["strategies"]["mm"]["source"]
    with pytest.raises(SystemExit):
        main(["pool", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name, s in STRATEGIES.items():  # --help: every strategy with its source
        assert f"{name}: {' '.join(s.summary.split())}" in text


def test_recovery_at_several_tolerances(tmp_path, capsys):
    # depth from scratch, by hand above: no label, every run's error is its full score (largest
    # B's, 1); after a alone the largest is B's 1 - 1/log2 3 = 0.369; after c none. So recovered at
    # 2 within 0.01, at 1 within 0.4, at 0 within 1; the top-level figures at 0.01
    res = pooling_replay(QRELS, RUNS, [1], ["depth"], measure="nDCG@3", protocol="from-scratch", depth=3, step=1,
                         tolerance=[0.4, 0.01, 1.0, 0.4])
    assert res.tolerances == (0.4, 0.01, 1.0) and res.tolerance == 0.01
    assert [(r["tolerance"], r["recovered_at"], r["recovered_by"]) for r in res.recovery("depth")] == [
        (0.4, 1, "every run within 0.4"), (0.01, 2, "tau = 1 and every run within 0.01"),
        (1.0, 0, "every run within 1")]
    assert res.strategies["depth"].recovered() == (2, "tau = 1 and every run within 0.01")
    # one tolerance without 0.01 among them: the top-level figures at the first
    one = pooling_replay(QRELS, RUNS, [1], ["depth"], measure="nDCG@3", protocol="from-scratch", depth=3, step=1,
                         tolerance=0.4)
    assert one.tolerances == (0.4,) and one.tolerance == 0.4 and one.to_dict()["strategies"]["depth"]["recovered_at"] == 1
    args = ["meta", "pooling", str(write(tmp_path, "qrels.txt", QRELS)), *runs_files(tmp_path), "--budget", "1",
            "--strategy", "depth", "--strategy", "mm", "--protocol", "from-scratch", "--depth", "3", "-m", "nDCG@3",
            "--step", "1"]
    assert main(args + ["--tolerance", "0.4", "--tolerance", "1", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tolerances"] == [0.4, 1.0] and out["tolerance"] == 0.4
    assert [r["recovered_at"] for r in out["strategies"]["depth"]["recovery"]] == [1, 0]
    assert main(args + ["--tolerance", "0.4", "--tolerance", "1", "--strategy", "impact"]) == 0  # a column each
    text = capsys.readouterr().out
    assert "T = 0.4" in text and "T = 1" in text and "recovered at" not in text
    # impact judges c first: B (c at rank 1) 1, A 1/2, C 0, the full order (tau 1) with B's error
    # 1 - FULL["B"] = 0 and A's 0.92 - 0.5 = 0.42 > 0.4: recovered at 1 by tau alone (*), as depth
    impact = next(line for line in text.splitlines() if "impact" in line)
    assert "1 +0.0%*" in impact


def test_the_strategy_recommended_beat_depth_at_every_tolerance(tmp_path, capsys):
    # one query, run A's four documents relevant, B's only at rank 4 (A's rank 4 too), C's none.
    # Depth pooling takes the ranks in turn: r4 (A and B's rank 4) is its 10th judgment, and
    # B's score is exact only from then on; move-to-front keeps drawing from A while it finds
    # relevant documents: r1 r2 r3 r4 first, every run exact after 4 (-60% at every tolerance)
    qrels = {"q": {**{f"r{i}": 1 for i in range(1, 5)}, **{d: 0 for d in ("n1", "n2", "n3", "m1", "m2", "m3", "m4")}}}
    runs = {"A": {"q": {"r1": 4.0, "r2": 3.0, "r3": 2.0, "r4": 1.0}},
            "B": {"q": {"n1": 4.0, "n2": 3.0, "n3": 2.0, "r4": 1.0}},
            "C": {"q": {"m1": 4.0, "m2": 3.0, "m3": 2.0, "m4": 1.0}}}
    res = pooling_replay(qrels, runs, [4], ["depth", "mtf"], measure="nDCG@4", protocol="from-scratch", depth=4,
                         step=1)
    assert [r["recovered_at"] for r in res.recovery("depth")] == [10, 10, 10]
    assert [r["recovered_at"] for r in res.recovery("mtf")] == [4, 4, 4]
    choice = res.choice()
    assert choice.strategy == "mtf" and choice.versus["mtf"] == pytest.approx([-0.6] * 3)
    q = write(tmp_path, "qrels.txt", qrels)
    files = []
    for name, per in runs.items():
        files.append(tmp_path / f"{name}.run")
        files[-1].write_text("".join(f"q Q0 {d} {k} {s} {name}\n" for k, (d, s) in enumerate(per["q"].items(), 1)))
    base = ["meta", "pooling", str(q), *map(str, files), "--budget", "4", "--protocol", "from-scratch", "--depth", "4",
            "-m", "nDCG@4", "--step", "1", "--strategy", "depth"]
    assert main(base + ["--strategy", "mtf"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("recommended for judged pool --budget on runs like these: mtf, since it recovered the ranking with fewer "
            "judgments than depth pooling at every tolerance (0.005: -60.0%, 0.01: -60.0%, 0.02: -60.0%); give it: "
            "judged pool ... --budget N --strategy mtf") in text
    assert main(base + ["--strategy", "mtf", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["recommended"]["strategy"] == "mtf"
    # against itself depth pooling wins nothing: it stays (named for judged pool unless the default)
    from judged.analyses.pooling.strategies import BUDGET_STRATEGY

    assert main(base) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "recommended for judged pool --budget on runs like these: depth, since no strategy recovered" in text
    assert ("give it: judged pool ... --budget N --strategy depth" in text) == (BUDGET_STRATEGY != "depth")
    # without depth pooling replayed there is nothing to compare with
    assert main(base[:-2] + ["--strategy", "mtf"]) == 0
    assert "recommended for judged pool --budget: none (depth pooling was not replayed" in capsys.readouterr().out


def test_every_strategy_replays_identically_for_a_seed():
    first = pooling_replay(QRELS, RUNS, [1, 3], None, measure="nDCG@3", depth=3, step=1, seed=2).to_dict(curve=True)
    again = pooling_replay(QRELS, RUNS, [1, 3], None, measure="nDCG@3", depth=3, step=1, seed=2).to_dict(curve=True)
    assert json.dumps(first) == json.dumps(again)  # NaN (an undefined tau) included
    assert set(first["strategies"]) == set(replayable())


def test_max_judgments_stops_each_replay():
    res = pooling_replay(QRELS, RUNS, [1], ["depth"], measure="nDCG@3", protocol="from-scratch", depth=3, step=1,
                         max_judgments=2)
    s = res.strategies["depth"]
    assert s.judgments.tolist() == [0, 1, 2] and res.to_dict()["max_judgments"] == 2
    # by hand above, depth recovers at 2 judgments; a replay stopped there cannot show it holds
    assert s.recovered() == (None, None)
    res = pooling_replay(QRELS, RUNS, [1], ["depth"], measure="nDCG@3", protocol="from-scratch", depth=3, step=1,
                         max_judgments=4)
    assert res.strategies["depth"].recovered() == (2, "tau = 1 and every run within 0.01 (up to 4, where the "
                                                      "replay stopped)")


def test_table_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "pooling.png"
    assert main(["meta", "pooling", str(write(tmp_path, "qrels.txt", QRELS)), *runs_files(tmp_path), "--budget", "1",
                 "--budget", "3", "--depth", "3", "-m", "nDCG@3", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "judgments to recover the full-qrels ranking" in out and "Cormack, Palmer & Clarke" in out
    for name in replayable():
        assert name in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def write(tmp_path, name, qrels):
    path = tmp_path / name
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, per in qrels.items() for d, g in per.items()))
    return path


def runs_files(tmp_path):
    out = []
    for name, per in RUNS.items():
        path = tmp_path / f"{name}.run"
        path.write_text("".join(f"{q} Q0 {d} {i} {s} {name}\n" for q, docs in per.items()
                                for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), 1)))
        out.append(str(path))
    return out


@pytest.mark.parametrize("extra,why", [
    (["--budget", "-1"], "--budget must be 0 or more, got -1"),
    (["--budget", "5", "--strategy", "sample"], "cannot replay pooling strategy 'sample'"),
    (["--budget", "5", "--depth", "0"], "--depth must be a positive integer, got 0"),
    (["--budget", "5", "--step", "0"], "--step must be a positive integer, got 0"),
    (["--budget", "5", "--tolerance", "-0.1"], "--tolerance must be 0 or more, got -0.1"),
    (["--budget", "5", "--tolerance", "0.01", "--tolerance", "nan"], "--tolerance must be 0 or more, got nan"),
    (["--budget", "5", "--max-judgments", "0"], "--max-judgments must be a positive integer, got 0"),
    (["--budget", "5", "-m", "nope@3"], "nope"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, extra, why):
    assert main(["meta", "pooling", str(write(tmp_path, "qrels.txt", QRELS)), *runs_files(tmp_path), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("judged: error:") and why in err and err.count("\n") == 1


def test_one_run_is_refused(tmp_path, capsys):
    assert main(["meta", "pooling", str(write(tmp_path, "qrels.txt", QRELS)), runs_files(tmp_path)[0],
                 "--budget", "5"]) == 2
    assert "needs at least two runs" in capsys.readouterr().err


def reference_candidates(rankings, depth: int, known: dict | None = None, qids=None, ranks=None):
    """The candidates by dicts, pair after pair (judged's builder before PoolRows): the
    reference PoolRows is checked against."""
    runs = list(rankings)
    if qids is None:
        seen: dict = {}
        for r in runs:
            for q in rankings[r]:
                seen.setdefault(q, None)
        qids = list(seen)
    qids = list(qids)
    known = known or {}
    docids, pair_query, offsets, run_lists, run_ranks, labels = [], [], [0], [], [], []
    for qi, qid in enumerate(qids):
        first: dict = {}  # docid -> (best rank, first run)
        per_run = []
        for ri, r in enumerate(runs):
            docs = list(rankings[r].get(qid, ()))
            rk = list(ranks[r].get(qid, ())) if ranks is not None else list(range(1, len(docs) + 1))
            keep = [i for i, k in enumerate(rk) if k <= depth]
            docs, rk = [docs[i] for i in keep], [rk[i] for i in keep]
            per_run.append((docs, rk))
            for d, k in zip(docs, rk):
                b = first.get(d)
                if b is None or k < b[0]:
                    first[d] = (k, ri if b is None else b[1])
        order = sorted(first, key=lambda d: (first[d][0], first[d][1]))
        base = len(docids)
        local = {d: base + i for i, d in enumerate(order)}
        docids.extend(order)
        pair_query.extend([qi] * len(order))
        labels.extend(known.get((qid, d), np.nan) for d in order)
        offsets.append(len(docids))
        run_lists.append([np.fromiter((local[d] for d in docs), np.int64, len(docs)) for docs, _ in per_run])
        run_ranks.append([np.asarray(rk, np.int64) for _, rk in per_run])
    return Candidates(qids, docids, np.asarray(pair_query, np.int64), np.asarray(offsets, np.int64), runs,
                      run_lists, run_ranks, np.asarray(labels, np.float64), depth)


def reference_from_pairs(pairs, depth: int | None = None):
    """A pool file's pairs as candidates by :func:`reference_candidates` (their ranks as gaps)."""
    rankings: dict = {}
    ranks: dict = {}
    for p in pairs:
        for r, k in zip(p.runs, p.ranks):
            rankings.setdefault(r, {}).setdefault(p.qid, []).append((k, p.docid))
    deepest = 1
    for r, per in rankings.items():
        for q, lst in per.items():
            lst.sort()
            ranks.setdefault(r, {})[q] = [k for k, _ in lst]
            per[q] = [d for _, d in lst]
            deepest = max(deepest, ranks[r][q][-1])
    qids = list(dict.fromkeys(p.qid for p in pairs))
    return reference_candidates(rankings, depth or deepest, None, qids, ranks)


def same_candidates(got, want) -> bool:
    """Every field of two Candidates equal (labels NaN where unknown)."""
    lists = lambda c, f: [[x.tolist() for x in row] for row in getattr(c, f)]
    return (got.qids == want.qids and got.docids == want.docids and got.runs == want.runs and got.depth == want.depth
            and all(np.array_equal(getattr(got, f), getattr(want, f)) for f in ("pair_query", "query_offsets"))
            and np.array_equal(got.known, want.known, equal_nan=True)
            and all(lists(got, f) == lists(want, f) for f in ("run_lists", "run_ranks"))
            and all(np.array_equal(x, y) for f in ("pair_runs", "list_csr") for x, y in zip(getattr(got, f)(), getattr(want, f)())))


def test_pool_rows_give_build_candidates_candidates():
    # every field, for every pool of a leave-one-run-out replay and the whole pool, depth cuts
    # included; the truth is the qrels' grade (0 for a pair they do not hold) and the index
    # maps (qid, docid) to the pair id (-1 outside the pool)
    from judged.analyses.pooling.candidates import PoolRows, build_candidates
    from judged.analyses.pooling.poolfile import PoolPair

    rng = np.random.default_rng(4)
    for trial in range(30):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 30)))]
        docs = list(dict.fromkeys(docs + ["d1\0", "é", "d10"[:int(rng.integers(0, 4))]]))  # NUL, prefixes, UTF-8
        qids = [f"q{j}" for j in range(int(rng.integers(1, 5)))]
        draw = lambda: [docs[j] for j in rng.choice(len(docs), int(rng.integers(0, len(docs) + 1)), replace=False)]
        rankings = {f"r{i}": {q: draw() for q in qids + ["unscored"] if rng.random() < 0.8}
                    for i in range(int(rng.integers(1, 6)))}
        grade_of = {(q, d): float(rng.integers(0, 3)) for q in qids for d in docs if rng.random() < 0.3}
        names = list(rankings)
        flat = [(i, qids.index(q), k + 1, d, grade_of.get((q, d), np.nan)) for i, n in enumerate(names)
                for q, ranked in rankings[n].items() if q in qids for k, d in enumerate(ranked)]
        run, query, rank, docids, grade = (list(x) for x in zip(*flat)) if flat else ([], [], [], [], [])
        rows = PoolRows(names, qids, np.array(run, np.int64), np.array(query, np.int64), np.array(rank, np.int64),
                        docids, np.array(grade, np.float64))
        depth = int(rng.integers(1, 30))
        for pool in [names] + [[n for n in names if n != left] for left in names]:
            want = reference_candidates({n: rankings[n] for n in pool}, depth, None, qids)
            got, truth, index = rows.candidates(pool, depth)
            assert rows.size(pool, depth) == want.n_pairs
            assert got.qids == want.qids and got.docids == want.docids and got.runs == want.runs
            assert got.depth == want.depth and np.isnan(got.known).all() and len(got.known) == want.n_pairs
            for f in ("pair_query", "query_offsets"):
                assert getattr(got, f).dtype == np.int64 and np.array_equal(getattr(got, f), getattr(want, f))
            for f in ("run_lists", "run_ranks"):
                a, b = getattr(got, f), getattr(want, f)
                assert [[x.tolist() for x in row] for row in a] == [[x.tolist() for x in row] for row in b]
                assert all(x.dtype == np.int64 for row in a for x in row)
            for f in ("pair_runs", "list_csr"):  # given by PoolRows; built from the run lists by build_candidates
                for x, y in zip(getattr(got, f)(), getattr(want, f)()):
                    assert x.dtype == y.dtype == np.int64 and np.array_equal(x, y), f
            assert truth.tolist() == [grade_of.get((want.qids[q], d), 0.0)
                                      for q, d in zip(want.pair_query.tolist(), want.docids)]
            qrank, drank = got.string_order()  # the qids', then each query's docids' order as Python's
            assert [qids[i] for i in np.argsort(qrank)] == sorted(qids)
            for q in range(len(qids)):
                pids = list(got.pairs_of(q))
                assert sorted(pids, key=lambda p: drank[p]) == sorted(pids, key=lambda p: want.docids[p])
            every = want.index()
            for q in qids:
                for d in docs:
                    assert index.get((q, d), -1) == every.get((q, d), -1)
            for n in names:  # a run's top k rows' pair ids through the codes, as looked up
                for k in (1, depth):
                    looked_up = [index.get((q, d), -1) for q, ranked in rankings[n].items() if q in qids
                                 for d in ranked[:k]]
                    assert index.pid_of[rows.run_codes(n, k)].tolist() == looked_up
        # build_candidates (PoolRows.of_rankings): known labels, the queries as the runs list them
        for order in (qids, None):
            assert same_candidates(build_candidates(rankings, depth, grade_of, order),
                                   reference_candidates(rankings, depth, grade_of, order))
        # a pool file's pairs (PoolRows.of_pairs): each run's ranks with gaps, runs and queries as first met
        pairs = {}
        for n in names:
            for q, ranked in rankings[n].items():
                for k, d in enumerate(ranked, 1):
                    if rng.random() < 0.7:  # the others judged: not in the file
                        p = pairs.setdefault((q, d), PoolPair(q, d, k, [], ranks=[]))
                        p.runs.append(n)
                        p.ranks.append(k)
        listed = list(pairs.values())
        rng.shuffle(listed)
        assert same_candidates(PoolRows.of_pairs(listed).candidates()[0], reference_from_pairs(listed))


def test_helpers():
    assert [nice_step(n) for n in (10, 250, 24156, 49146)] == [1, 2, 200, 500]
    assert pairwise_agreement([1, 2, 3], [1, 3, 2]) == pytest.approx(2 / 3)
    assert pairwise_agreement([1, 1, 3], [1, 2, 3]) == pytest.approx(2 / 3)  # a tie under one only disagrees


def test_full_and_replayed_scores_are_the_measures_aggregate():
    # GMAP: the geometric mean of AP per query (A: 1/2 and 1/2, B: 1/6 and 1), as judged eval;
    # not their arithmetic mean (MAP: A 0.5, B 0.583), which would rank B above A
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    runs = {"A": {"q1": {"a": 2.0, "x": 1.0}, "q2": {"y": 2.0, "c": 1.0}},
            "B": {"q1": {"x": 3.0, "b": 1.0, "z": 2.0}, "q2": {"c": 1.0}}}
    res = pooling_replay(qrels, runs, [20], ["depth"], measure="GMAP", protocol="from-scratch", depth=3, step=1)
    ev = evaluate(qrels, runs, ["GMAP"])
    assert list(res.full) == [ev.aggregate(r, "GMAP") for r in runs]
    assert res.full == pytest.approx([0.5, math.sqrt(1 / 6)])
    assert list(res.strategies["depth"].scores[-1]) == list(res.full)  # everything judged: the full scores


def test_row_means_are_each_rows_aggregate():
    # the DCG family's replay takes every checkpoint's mean by one mean(axis=1): it relies on
    # numpy summing each contiguous row as it sums the row alone (pairwise, 8 lanes, blocks of 128)
    from judged.core.measures import Measure

    m = Measure.parse("nDCG@10")
    rng = np.random.default_rng(0)
    for n in [1, 2, 7, 8, 9, 127, 128, 129, 255, 256, 1000, 1025, 4097]:
        a = rng.random((5, n)) * rng.choice([1.0, 1e-3, 1e6], size=(5, 1))
        a[rng.random((5, n)) < 0.3] = 0.0
        assert a.mean(axis=1).tolist() == [m.aggregate_of(row) for row in a], n


def adversarial_files(tmp_path, seed=0):
    """Qrels and three run files grouped by query (not in qid order), with score ties,
    docid == qid rows, queries only in a run and queries a run lacks."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in range(1, 13)]
    qrels = {q: {f"d{j}": int(rng.choice([0, 0, 1, 2])) for j in rng.choice(40, 15, replace=False)} for q in qids}
    qrels["q12"] = {d: 0 for d in qrels["q12"]}  # nothing relevant
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, per in qrels.items() for d, g in per.items()))
    paths = []
    for r in range(3):
        lines = []
        for q in rng.permutation(qids + ["q99"])[: 11 + r]:  # some runs lack queries; q99 is only in runs
            docs = [f"d{j}" for j in rng.choice(40, 25, replace=False)] + ([q] if r == 1 else [])
            scores = rng.choice([1.0, 2.0, 3.0, 4.0], len(docs))  # many ties
            ranks = rng.permutation(len(docs)) + 1
            lines += [f"{q} Q0 {d} {k} {s} r{r}\n" for d, s, k in zip(docs, scores, ranks)]
        path = tmp_path / f"r{r}.run"
        path.write_text("".join(lines))
        paths.append(str(path))
    return str(tmp_path / "qrels.txt"), paths


@pytest.mark.parametrize("options", [{}, {"ties": "rank"}, {"ties": "input"}, {"no_relevant": "skip"},
                                     {"depth_cut": 7}, {"ignore_identical_ids": True}, {"complete": False},
                                     {"measure": "P@5"}, {"measure": "AP"}])
def test_streamed_run_files_replay_as_runs_read_whole(tmp_path, monkeypatch, options):
    # run files grouped by query are streamed by query blocks, each block's top ranks kept
    # (judged.core.evaluation.Scorer with Top(k)); the same runs given read (whole-run path) replay to the same bits,
    # blocks of a query or two included
    from judged.core import stream
    from judged.core.io import read_run

    from judged.core.conventions import Settings

    qrels, paths = adversarial_files(tmp_path)
    conventions = {k: v for k, v in options.items() if k != "measure"}
    options = {"measure": "nDCG@5", "depth": 6, "step": 3, "settings": Settings(**{"complete": True, **conventions}),
               **({"measure": options["measure"]} if "measure" in options else {})}
    monkeypatch.setattr(stream, "BLOCK_SIZE", 700)
    streamed = []
    real = stream.evaluate_run_file
    monkeypatch.setattr(stream, "evaluate_run_file", lambda *a, **k: streamed.append(real(*a, **k)) or streamed[-1])
    res = pooling_replay(qrels, paths, [10, 40], **options)
    whole = pooling_replay(qrels, {p: read_run(p) for p in paths}, [10, 40], **options)
    reads_whole = options["measure"] == "AP"  # it reads whole rankings: nothing to cut, the files are read whole
    assert len(streamed) == (0 if reads_whole else 3) and all(s is not None for s in streamed)
    a, b = res.to_dict(curve=True), whole.to_dict(curve=True)
    assert a["runs"] == b["runs"] == paths
    assert json.dumps(a) == json.dumps(b)  # (NaN taus of a tied start compare equal so)


def test_strategies_replayed_in_threads_give_one_threads_bits(tmp_path, monkeypatch):
    # each pool's strategies run in JUDGED_THREADS threads, the costliest first; the replays
    # and the progress reports come in strategy order, the numbers those of one thread
    qrels, paths = adversarial_files(tmp_path, seed=3)
    out = {}
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("JUDGED_THREADS", threads)
        seen = []
        res = pooling_replay(qrels, paths, [10, 40], measure="nDCG@5", depth=6, step=3,
                             progress=lambda name, k, n: seen.append((name, k)))
        assert seen == [(name, k) for k in (1, 2, 3) for name in replayable()]
        out[threads] = json.dumps(res.to_dict(curve=True))
    assert out["1"] == out["2"] == out["3"]


def test_a_failing_replay_in_a_thread_is_raised(tmp_path, monkeypatch):
    from judged.analyses.pooling import replay as pooling

    qrels, paths = adversarial_files(tmp_path, seed=3)
    monkeypatch.setenv("JUDGED_THREADS", "2")
    real = pooling.replay

    def failing(policy, *args):
        if type(policy).__name__ == "Hedge":
            raise MemoryError("hedge")
        return real(policy, *args)

    monkeypatch.setattr(pooling, "replay", failing)
    with pytest.raises(MemoryError, match="hedge"):
        pooling_replay(qrels, paths, [10], measure="nDCG@5", depth=6, step=3)


def test_the_first_run_is_read_while_the_qrels_are_and_let_go_on_an_error(tmp_path, monkeypatch):
    # as judged eval starts: the first run file tokenized in a second thread meanwhile
    # (judged.core.evaluation.first_run_reader), taken by its stream; a refusal after it started
    # (an unknown strategy, a bad qrels file) closes it: no reader thread is left
    import threading

    from judged.core import stream
    from judged.core.errors import JudgedError

    qrels, paths = adversarial_files(tmp_path, seed=5)
    taken = []
    real = stream.evaluate_run_file
    monkeypatch.setattr(stream, "evaluate_run_file", lambda *a, **k: taken.append(k.get("reader")) or real(*a, **k))
    pooling_replay(qrels, paths, [10], ["depth"], measure="nDCG@5", depth=6)
    assert [r is not None and r.source == paths[0] for r in taken] == [True, False, False]
    (tmp_path / "bad.txt").write_text("q1 0 d1 1\nq1 0\n")
    monkeypatch.setattr(stream, "BLOCK_SIZE", 64)  # many pieces: a reader not closed waits for room, alive
    for args in ([qrels, paths, [10], ["nope"]], [str(tmp_path / "bad.txt"), paths, [10], ["depth"]]):
        with pytest.raises(JudgedError):
            pooling_replay(*args, measure="nDCG@5", depth=6)
        assert not [t for t in threading.enumerate() if t.name == "judged-tokenizer"]
