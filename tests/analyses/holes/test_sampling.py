"""`judged pool --strategy sample`: a stratified sample of the holes whose design (strata,
inclusion probabilities, the pairs not drawn) the pool file keeps."""

import numpy as np
import pytest

from judged.cli import main
from judged.core.errors import ConventionError, ParseError
from judged.judge.inputs import pool_pairs
from judged.analyses.pooling.strategies import pool
from judged.analyses.pooling.poolfile import PoolPair, read_pool_file
from judged.analyses.holes.sampling import ap_prior, draw, rank_bins


def collection(queries=6, docs=40, judged_top=3, runs=3, seed=0):
    """Runs over ``docs`` documents per query; the qrels judge only each run's top
    ``judged_top`` (so deeper ranks are holes)."""
    rng = np.random.default_rng(seed)
    qrels, rr = {}, {f"r{i}": {} for i in range(runs)}
    for q in range(queries):
        qid = f"q{q:02d}"
        for name in rr:
            scores = rng.permutation(docs).astype(float)
            rr[name][qid] = {f"d{d}": float(s) for d, s in enumerate(scores)}
        qrels[qid] = {}
        for name in rr:
            for doc in sorted(rr[name][qid], key=lambda d: -rr[name][qid][d])[:judged_top]:
                qrels[qid][doc] = int(rng.integers(0, 3))
    return qrels, rr


def cands(n_queries=5, per_query=30):
    return [PoolPair(f"q{q}", f"d{d}", 1 + d % 20, ["r"]) for q in range(n_queries) for d in range(per_query)]


def test_prior_and_bins():
    w = ap_prior(np.arange(1, 101), 100)
    assert w.sum() == pytest.approx(1.0) and (np.diff(w) < 0).all()  # a distribution, more weight on top
    assert rank_bins(1) == [(1, 1)]
    assert rank_bins(20) == [(1, 1), (2, 3), (4, 7), (8, 15), (16, 20)]
    with pytest.raises(ConventionError):
        rank_bins(10, [2, 5])


def test_design_sizes_and_inclusion():
    drawn, design = draw(cands(), 80, seed=3, depth=20)
    assert len(drawn) == 80 == sum(s.sampled for s in design.strata.values())
    assert len(design.units) == 150 and sum(u.sampled for u in design.units) == 80
    for s in design.strata.values():
        assert min(3, s.population) <= s.sampled <= s.population
    # the inclusion probabilities of the population sum to the sample size (Horvitz-Thompson's identity)
    assert sum(design.inclusion(u) for u in design.units) == pytest.approx(80)
    # more weight near the top: the stratum of rank 1 is sampled at a higher rate than the deepest one
    top = [s for s in design.strata.values() if s.ranks[0] == 1]
    deep = [s for s in design.strata.values() if s.ranks[1] == 20]
    assert len(design.strata) > 5 and not set(map(id, top)) & set(map(id, deep))
    assert min(s.inclusion for s in top) > max(s.inclusion for s in deep)
    for p in drawn:
        assert p.strategy == "sample" and p.inclusion == design.strata[int(p.stratum)].inclusion


def test_inclusion_probabilities_are_what_the_draws_do():
    # over many seeds each pair is drawn as often as its recorded inclusion probability says
    c = cands(n_queries=3, per_query=12)
    _, design0 = draw([PoolPair(p.qid, p.docid, p.best_rank, p.runs) for p in c], 10, seed=0, depth=20)
    pi = {(u.qid, u.docid): design0.inclusion(u) for u in design0.units}
    hits = dict.fromkeys(pi, 0)
    draws = 2000
    for seed in range(draws):
        drawn, design = draw([PoolPair(p.qid, p.docid, p.best_rank, p.runs) for p in c], 10, seed=seed, depth=20)
        assert {(u.qid, u.docid): design.inclusion(u) for u in design.units} == pi  # the design is fixed
        for p in drawn:
            hits[(p.qid, p.docid)] += 1
    for key, p in pi.items():
        se = np.sqrt(p * (1 - p) / draws)
        assert abs(hits[key] / draws - p) <= 4 * se + 1e-9, key


def test_seeded_and_independent_of_run_order():
    q, rr = collection()
    a = pool(q, rr, depth=10, strategy="sample", budget=20, seed=5)
    b = pool(q, dict(reversed(list(rr.items()))), depth=10, strategy="sample", budget=20, seed=5)
    c = pool(q, rr, depth=10, strategy="sample", budget=20, seed=6)
    key = (lambda p: [(x.qid, x.docid) for x in p.pairs])
    assert key(a) == key(b) and key(a) != key(c)
    assert len(a) == 20 and a.unjudged > 20


def test_budget_too_small_or_missing():
    q, rr = collection()
    with pytest.raises(ConventionError, match="needs --budget"):
        pool(q, rr, depth=10, strategy="sample")
    with pytest.raises(ConventionError, match="at least 3"):
        pool(q, rr, depth=10, strategy="sample", budget=2)
    # a budget past the population takes every pair, each with inclusion 1
    p = pool(q, rr, depth=4, strategy="sample", budget=10_000)
    assert len(p) == p.unjudged and all(x.inclusion == 1.0 for x in p.pairs)


def test_pool_file_keeps_the_design(tmp_path):
    q, rr = collection()
    p = pool(q, rr, depth=10, strategy="sample", budget=25, seed=2)
    out = tmp_path / "sample.pool"
    p.write(out)
    text = out.read_text()
    assert text.startswith("# judged pool: depth=10 strategy=sample budget=25 seed=2: 25 of ")
    assert "# stratum id=1 " in text and "\n#~ " in text
    # every existing reader sees the drawn pairs only, in judging order
    drawn = [(x.qid, x.docid) for x in p.pairs]
    assert pool_pairs(read_pool_file(out, pairs_only=True))[0] == drawn
    back = read_pool_file(str(out))
    assert back.meta["seed"] == 2 and back.meta["strategy"] == "sample" and back.runs == list(rr)
    assert back.columns[-4:] == ("strategy", "stratum", "inclusion", "ranks")
    assert [(x.qid, x.docid, x.stratum, x.inclusion, x.best_rank) for x in back.pairs] == \
        [(x.qid, x.docid, x.stratum, float(f"{x.inclusion:.10g}"), x.best_rank) for x in p.pairs]
    d0, d1 = p.design, back.design
    assert {k: (s.population, s.sampled, s.ranks) for k, s in d0.strata.items()} == \
        {k: (s.population, s.sampled, s.ranks) for k, s in d1.strata.items()}
    assert [(u.qid, u.docid, u.stratum, u.sampled) for u in d0.units] == \
        [(u.qid, u.docid, u.stratum, u.sampled) for u in d1.units]


def test_older_pool_files_still_read(tmp_path):
    old = tmp_path / "old.pool"
    old.write_text("# judged pool: depth=10 strategy=impact(nDCG@10,maxgrade=2) budget=2: 2 of 9 unjudged pairs; "
                   "runs: a b\n# qid docid priority best_rank runs impact   (priority 1 = judge first)\n"
                   "q1 d1 1 1 a 0.25\nq1 d2 2 3 a,b 0.125\n")
    f = read_pool_file(str(old))
    assert [(x.docid, x.impact, x.inclusion, x.stratum, x.strategy) for x in f.pairs] == \
        [("d1", 0.25, 1.0, None, "impact(nDCG@10,maxgrade=2)"), ("d2", 0.125, 1.0, None, "impact(nDCG@10,maxgrade=2)")]
    assert f.design is None
    bare = tmp_path / "bare.pool"
    bare.write_text("q1 d1\nq2 d7 extra\n")
    assert [(x.qid, x.docid, x.best_rank) for x in read_pool_file(str(bare)).pairs] == [("q1", "d1", None),
                                                                                       ("q2", "d7", None)]


def test_a_tampered_design_is_refused(tmp_path):
    q, rr = collection()
    out = tmp_path / "s.pool"
    pool(q, rr, depth=10, strategy="sample", budget=25, seed=2).write(out)
    lines = out.read_text().splitlines()
    cut = [x for x in lines if not x.startswith("#~")] + [x for x in lines if x.startswith("#~")][1:]
    (tmp_path / "cut.pool").write_text("\n".join(cut) + "\n")
    with pytest.raises(ParseError, match="declares population"):
        read_pool_file(str(tmp_path / "cut.pool"))


def test_cli_sample(tmp_path, capsys):
    from synth import write_qrels, write_run

    q, rr = collection()
    qp = write_qrels(tmp_path / "qrels.txt", q)
    runs = [write_run(tmp_path / f"{n}.run", d, n) for n, d in rr.items()]
    out = tmp_path / "s.pool"
    assert main(["pool", qp, *runs, "--depth", "10", "--strategy", "sample", "--budget", "12", "--seed", "4",
                 "--strata", "1,4", "-o", str(out)]) == 0
    assert "strategy sample, seed 4" in capsys.readouterr().err
    f = read_pool_file(str(out))
    assert len(f.pairs) == 12 and {s.ranks for s in f.design.strata.values()} <= {(1, 3), (4, 10), (1, 10)}
    assert main(["pool", qp, *runs, "--depth", "10", "--strategy", "sample", "-o", str(out)]) == 2
    assert capsys.readouterr().err.strip().endswith("--strategy sample needs --budget N (how many pairs to judge)")
