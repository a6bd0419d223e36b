"""`judged judge init --order STRATEGY`: /api/next serves the pairs one at a time in the
pooling policy's order, learning from each grade (issue #16)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from judge_helpers import LOOPBACK

from judged.cli import main
from judged.judge.app import create_app
from judged.analyses.pooling.poolfile import read_pool_file
from judged.analyses.pooling.candidates import PoolRows
from judged.analyses.pooling.strategies import make_policy

# run A: a1 relevant, a2 not, a3 relevant; run B: b1, x relevant, b2 not, b3 relevant
KEY = {"a1": 1, "a2": 0, "a3": 2, "x": 1, "b1": 3, "b2": 0, "b3": 1}


def campaign(tmp_path, capsys, order: str, overlap: str = "0", extra=()):
    (tmp_path / "qrels.txt").write_text("q 0 seen 0\n")
    (tmp_path / "a.run").write_text("".join(f"q Q0 {d} {i} {9 - i} A\n" for i, d in enumerate(["a1", "a2", "a3", "x"], 1)))
    (tmp_path / "b.run").write_text("".join(f"q Q0 {d} {i} {9 - i} B\n" for i, d in enumerate(["b1", "x", "b2", "b3"], 1)))
    pool = tmp_path / "pool.txt"
    assert main(["pool", str(tmp_path / "qrels.txt"), str(tmp_path / "a.run"), str(tmp_path / "b.run"),
                 "--depth", "4", "--strategy", "mtf", "-o", str(pool)]) == 0
    (tmp_path / "queries.tsv").write_text("q\tthe query\n")
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": d, "text": d}) + "\n" for d in KEY))
    db = str(tmp_path / "j.db")
    assert main(["judge", "init", "--db", db, "--pool", str(pool), "--queries", str(tmp_path / "queries.tsv"),
                 "--corpus", str(tmp_path / "corpus.jsonl"), "--overlap", overlap, "--scale", str(scale(tmp_path)),
                 "--order", order, *extra]) == 0
    assert f"served one at a time in {order} order" in capsys.readouterr().out
    tokens = {}
    for name in ("alice", "bob"):
        assert main(["judge", "add-assessor", name, "--db", db]) == 0
        tokens[name] = capsys.readouterr().out.strip().splitlines()[-1]
    return db, pool, tokens


def scale(tmp_path):
    path = tmp_path / "scale.toml"
    path.write_text('evidence = "optional"\n' + "".join(f'[[grade]]\nvalue = {g}\nname = "g{g}"\ndefinition = "d"\n'
                                                         for g in range(4)))
    return path


def judge(c, token, request_prefix="r"):
    seen = []
    h = {"Authorization": f"Bearer {token}"}
    while (r := c.get("/api/next", headers=h)).status_code == 200:
        p = r.json()
        seen.append(p["docid"])
        assert c.post("/api/judgments", headers=h, json={"qid": p["qid"], "docid": p["docid"], "grade": KEY[p["docid"]],
                                                         "request_id": f"{request_prefix}{len(seen)}"}).status_code == 201
    assert r.status_code == 204
    return seen


def test_next_serves_move_to_front_order_as_labels_arrive(tmp_path, capsys):
    db, pool, tok = campaign(tmp_path, capsys, "mtf")
    c = TestClient(create_app(db), base_url=LOOPBACK)
    # MTF by hand: A first (a1 relevant, a2 not: A drops), B (b1, x relevant, b2 not), tie: A's a3, then b3
    assert judge(c, tok["alice"]) == ["a1", "a2", "b1", "x", "b2", "a3", "b3"]
    # the same as the policy replayed offline on the pool file
    cands = PoolRows.of_pairs(read_pool_file(pool).pairs).candidates()[0]
    policy = make_policy("mtf", cands).start()
    offline = []
    while (pid := policy.select()) is not None:
        offline.append(cands.docids[pid])
        policy.observe(pid, KEY[cands.docids[pid]])
    assert offline == ["a1", "a2", "b1", "x", "b2", "a3", "b3"]


def test_two_assessors_never_get_the_same_pair_and_the_order_adapts(tmp_path, capsys):
    db, _, tok = campaign(tmp_path, capsys, "mtf")
    c = TestClient(create_app(db), base_url=LOOPBACK)
    ha, hb = ({"Authorization": f"Bearer {tok[n]}"} for n in ("alice", "bob"))
    first_a = c.get("/api/next", headers=ha).json()["docid"]
    first_b = c.get("/api/next", headers=hb).json()["docid"]
    assert (first_a, first_b) == ("a1", "a2")  # a1 is out with alice and unlabelled: A goes on
    assert c.post("/api/judgments", headers=hb, json={"qid": "q", "docid": "a2", "grade": 0, "request_id": "b1"}).status_code == 201
    assert c.get("/api/next", headers=hb).json()["docid"] == "b1"  # a2 not relevant: B now leads


def test_pool_order_and_overlap_second_copies(tmp_path, capsys):
    db, pool, tok = campaign(tmp_path, capsys, "pool", overlap="1")
    c = TestClient(create_app(db), base_url=LOOPBACK)
    ha, hb = ({"Authorization": f"Bearer {tok[n]}"} for n in ("alice", "bob"))
    file_order = [p.docid for p in read_pool_file(pool).pairs]
    a1 = c.get("/api/next", headers=ha).json()["docid"]
    assert a1 == file_order[0]
    assert c.get("/api/next", headers=hb).json()["docid"] == file_order[0]  # its second copy goes out first
    assert judge(c, tok["alice"], "x") == file_order
    assert judge(c, tok["bob"], "y") == file_order


def test_order_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "pool.txt").write_text("q a1\nq b1\n")  # no runs and ranks
    (tmp_path / "queries.tsv").write_text("q\tthe query\n")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "a1", "text": "t"}\n{"_id": "b1", "text": "t"}\n')
    base = ["judge", "init", "--db", str(tmp_path / "j.db"), "--pool", str(tmp_path / "pool.txt"), "--queries",
            str(tmp_path / "queries.tsv"), "--corpus", str(tmp_path / "corpus.jsonl")]
    for order, why in (("nope", "unknown --order 'nope'"), ("mtf", "--order mtf needs the runs and ranks")):
        capsys.readouterr()
        assert main(base + ["--order", order]) == 2
        err = capsys.readouterr().err
        assert err.startswith("judged: error:") and why in err and err.count("\n") == 1
    assert main(base + ["--order", "pool"]) == 0  # the file's priority order needs no ranks


@pytest.mark.parametrize("order", ["mm", "mm-ns", "ts", "hedge"])
def test_every_adaptive_order_serves_each_pair_once(tmp_path, capsys, order):
    db, _, tok = campaign(tmp_path, capsys, order)
    seen = judge(TestClient(create_app(db), base_url=LOOPBACK), tok["alice"])
    assert sorted(seen) == sorted(KEY)


def test_each_campaign_in_one_database_follows_its_own_order(tmp_path, capsys):
    # two campaigns over the same pool in one database: "adaptive" serves in mtf order,
    # learning from its own labels; "fixed" in the pool file's order, whatever the other
    # campaign's assessors do
    db, pool, tok = campaign(tmp_path, capsys, "mtf", extra=["--name", "adaptive"])
    assert main(["judge", "init", "--db", db, "--pool", str(pool), "--queries", str(tmp_path / "queries.tsv"),
                 "--corpus", str(tmp_path / "corpus.jsonl"), "--scale", str(scale(tmp_path)), "--order", "pool",
                 "--name", "fixed"]) == 0
    assert main(["judge", "add-assessor", "carol", "--db", db, "--campaign", "fixed"]) == 0
    carol = capsys.readouterr().out.strip().splitlines()[-1]
    c = TestClient(create_app(db), base_url=LOOPBACK)
    assert judge(c, tok["alice"]) == ["a1", "a2", "b1", "x", "b2", "a3", "b3"]
    assert judge(c, carol, "c") == [p.docid for p in read_pool_file(pool).pairs]


@pytest.mark.parametrize("order", ["mm", "bounds"])
def test_adaptive_orders_serve_the_policy_offline_order(tmp_path, capsys, order):
    db, pool, tok = campaign(tmp_path, capsys, order)
    seen = judge(TestClient(create_app(db), base_url=LOOPBACK), tok["alice"])
    cands = PoolRows.of_pairs(read_pool_file(pool).pairs).candidates()[0]  # the same order as the policy offline
    policy = make_policy(order, cands, maxgrade=3).start()
    offline = []
    while (pid := policy.select()) is not None:
        offline.append(cands.docids[pid])
        policy.observe(pid, KEY[cands.docids[pid]])
    assert seen == offline and sorted(seen) == sorted(KEY)
