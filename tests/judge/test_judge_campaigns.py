"""Issue #20's campaign features through the API and the CLI: topics, guidelines, practice
round, comments and flags, progress and time to finish, several campaigns in one database,
merging a new pool in, reassigning, adjudication with history, the pages' small things."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from judge_helpers import EXAMPLE, LOOPBACK, make_campaign, page_log_in

from judged.cli import main
from judged.core.errors import ParseError
from judged.judge import campaign as cp
from judged.judge.app import create_app
from judged.judge.db import Database
from judged.judge.inputs import read_judging_scale, read_topics


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def judge_all(c, token, grade=lambda p: 0, **extra):
    seen = []
    while (r := c.get("/api/next", headers=bearer(token))).status_code == 200:
        p = r.json()
        seen.append(p)
        g = grade(p)
        assert c.post("/api/judgments", headers=bearer(token), json={
            "qid": p["qid"], "docid": p["docid"], "grade": g, "evidence": "e" if g else "",
            "request_id": f"{p['qid']}-{p['docid']}", **extra}).status_code == 201
    return seen, r


# --- topics ----------------------------------------------------------------------------------

def test_topics_trec_sgml_xml_beir_metadata_and_tsv(tmp_path):
    t = read_topics(EXAMPLE / "topics.txt")
    assert list(t) == ["q1", "q2", "q3", "q4"]
    assert t["q3"].text == t["q3"].title == "do face masks reduce coronavirus transmission"
    assert t["q3"].description.startswith("Do masks worn by the public") and "laboratory" in t["q3"].narrative
    (tmp_path / "t.xml").write_text('<topics>\n<topic number="7">\n<query>masks &amp; kids</query>\n'
                                    '<question>Do masks work for children?</question>\n'
                                    '<narrative>Studies in schools.</narrative>\n</topic>\n</topics>\n')
    x = read_topics(tmp_path / "t.xml")["7"]
    assert (x.text, x.description, x.narrative) == ("masks & kids", "Do masks work for children?", "Studies in schools.")
    (tmp_path / "q.jsonl").write_text(json.dumps({"_id": "1", "text": "covid origin", "metadata": {
        "query": "covid origin", "narrative": "origin of the virus", "question": "where did it come from"}}) + "\n")
    j = read_topics(tmp_path / "q.jsonl")["1"]
    assert (j.text, j.description, j.narrative) == ("covid origin", "where did it come from", "origin of the virus")
    assert read_topics(EXAMPLE / "queries.tsv")["q1"].description == ""
    (tmp_path / "bad.txt").write_text("<top>\n<title> no number\n</top>\n")
    with pytest.raises(ParseError, match="bad.txt:1: a topic without a number"):
        read_topics(tmp_path / "bad.txt")


# --- the practice round -------------------------------------------------------------------------

def _campaign(db, overlap=0.0, assessors=("alice",), practice=True):
    from judged.analyses.pooling.poolfile import read_pool_file
    from judged.judge.inputs import pool_pairs, read_corpus, read_practice

    pairs, _ = pool_pairs(read_pool_file(EXAMPLE / "pool.txt", pairs_only=True))
    prac = read_practice(EXAMPLE / "practice.qrels") if practice else []
    ids = {q for q, _ in pairs} | {q for q, _, _ in prac}
    docs = {d for _, d in pairs} | {d for _, d, _ in prac}
    database = Database(db)
    tokens = {}
    with database.write() as s:
        c = cp.init_campaign(s, "covid", pairs, "pool.txt", "0" * 64, read_topics(EXAMPLE / "topics.txt", ids),
                             read_corpus(EXAMPLE / "corpus.jsonl", docs), read_judging_scale(EXAMPLE / "scale.toml"),
                             overlap, "# Rules\n\n<script>x()</script> **bold**", prac)
        for a in assessors:
            tokens[a] = cp.add_assessor(s, a, campaign=c)
        tokens["boss"] = cp.add_assessor(s, "boss", admin=True, campaign=c)
    database.dispose()
    return tokens


def test_practice_first_then_report_then_work_and_never_exported(sqlite_db):
    tok = _campaign(sqlite_db)
    c = TestClient(create_app(sqlite_db), base_url=LOOPBACK)
    h = bearer(tok["alice"])
    key = {"p1": 1, "p2": 3, "p3": 0}
    shown = []
    while (r := c.get("/api/next", headers=h)).status_code == 200:
        p = r.json()
        assert p["practice"] is True and p["docid"] in key
        shown.append(p["docid"])
        g = 2 if p["docid"] == "p1" else key[p["docid"]]                    # one miss
        assert c.post("/api/judgments", headers=h, json={"qid": p["qid"], "docid": p["docid"], "grade": g,
                                                         "evidence": "e", "request_id": p["docid"]}).status_code == 201
    assert r.status_code == 409 and sorted(shown) == ["p1", "p2", "p3"]
    rep = r.json()["practice"]
    assert (rep["pairs"], rep["graded"], rep["agreed"]) == (3, 3, 2) and rep["agreement"] == pytest.approx(2 / 3)
    # kappa by hand: answers (1, 3, 0), grades (2, 3, 0): p_o = 2/3; marginals over labels 0..3:
    # answers 0:1/3 1:1/3 3:1/3; grades 0:1/3 2:1/3 3:1/3 -> p_e = 1/9 + 1/9 = 2/9; kappa = (2/3-2/9)/(7/9) = 4/7
    assert rep["cohen_kappa"] == pytest.approx(4 / 7)
    assert c.get("/api/next", headers=h).status_code == 409                  # until started
    assert c.post("/api/practice/start", headers=h).json()["finished"] is True
    assert "practice" not in c.get("/api/next", headers=h).json()
    boss = bearer(tok["boss"])
    assert c.get("/api/next", headers=boss).json().get("practice") is None     # admins skip the practice round
    judge_all(c, tok["alice"])
    judge_all(c, tok["boss"])                                                  # the admin took a query too
    qrels = c.get("/api/export", headers=boss).text
    assert qrels.count("\n") == 6 and " p1 " not in qrels                      # practice pairs never exported
    st = c.get("/api/status", headers=boss).json()
    alice = next(a for a in st["assessors"] if a["assessor"] == "alice")
    assert alice["practice"]["agreed"] == 2 and alice["graded"] == 3 and st["pairs"] == 6
    assert c.post("/api/adjudications", headers=boss, json={"qid": "q1", "docid": "p1", "grade": 1, "evidence": "x",
                                                            "request_id": "a"}).status_code == 422


def test_practice_pair_in_the_pool_is_refused(tmp_path, capsys):
    (tmp_path / "p.qrels").write_text("q1 0 d1 1\n")
    rc = main(["judge", "init", "--db", str(tmp_path / "j.db"), "--pool", str(EXAMPLE / "pool.txt"), "--queries",
               str(EXAMPLE / "topics.txt"), "--corpus", str(EXAMPLE / "corpus.jsonl"), "--practice", str(tmp_path / "p.qrels")])
    assert rc == 2 and "1 practice pair is in the pool too" in capsys.readouterr().err


# --- comments, flags, progress ---------------------------------------------------------------------

def test_comment_and_flag_stored_listed_and_exported(tmp_path, capsys):
    db = str(tmp_path / "j.db")
    tok = make_campaign(db, n_queries=1, docs_per_query=3)
    c = TestClient(create_app(db), base_url=LOOPBACK)
    h = bearer(tok["alice"])
    p = c.get("/api/next", headers=h).json()
    j = {"qid": p["qid"], "docid": p["docid"], "grade": 0, "request_id": "1", "comment": "cut\toff\nhere",
         "flag": "unreadable"}
    r = c.post("/api/judgments", headers=h, json=j)
    assert r.status_code == 201 and r.json()["flag"] == "unreadable" and r.json()["comment"] == "cut\toff\nhere"
    assert c.post("/api/judgments", headers=h, json={**j, "flag": "duplicate"}).status_code == 422   # another request
    p2 = c.get("/api/next", headers=h).json()
    assert c.post("/api/skip", headers=h, json={"qid": p2["qid"], "docid": p2["docid"], "request_id": "2",
                                                "flag": "wrong-language"}).status_code == 201
    p3 = c.get("/api/next", headers=h).json()
    assert c.post("/api/judgments", headers=h, json={"qid": p3["qid"], "docid": p3["docid"], "grade": 0,
                                                     "request_id": "3", "flag": "boring"}).status_code == 422
    st = c.get("/api/status", headers=bearer(tok["boss"])).json()
    assert [(f["docid"], f["kind"], f["flag"]) for f in st["flags"]] == sorted(
        [(p["docid"], "grade", "unreadable"), (p2["docid"], "skip", "wrong-language")])
    out = tmp_path / "new.qrels"
    assert main(["judge", "export", "--db", db, "-o", str(out)]) == 0
    rows = [r.split("\t") for r in (tmp_path / "new.qrels.notes.tsv").read_text().splitlines()]
    assert rows[0] == list(cp.NOTES_COLUMNS) and len(rows) == 3
    assert rows[1][:7] == [p["qid"], p["docid"], "alice", "grade", "0", "unreadable", "cut off here"] or \
        rows[2][:7] == [p["qid"], p["docid"], "alice", "grade", "0", "unreadable", "cut off here"]
    ev = [json.loads(x) for x in (tmp_path / "new.qrels.evidence.jsonl").read_text().splitlines()]
    assert next(e for e in ev if e["docid"] == p["docid"])["flag"] == "unreadable"


def test_progress_share_left_and_time_to_finish(sqlite_db):
    # 3 queries x 4 docs, overlap 1.0: 24 copies for two judges; each can take one copy of each pair
    tok = make_campaign(sqlite_db, n_queries=3, docs_per_query=4, overlap=1.0, assessors=("alice", "bob"))
    c = TestClient(create_app(sqlite_db), base_url=LOOPBACK)
    h = bearer(tok["alice"])
    p = c.get("/api/progress", headers=h).json()
    assert (p["assigned"], p["share"], p["left"], p["median_seconds"], p["eta_seconds"]) == (0, 12, 12, None, None)
    judge_all(c, tok["alice"])
    p = c.get("/api/progress", headers=h).json()
    assert (p["graded"], p["share"], p["left"]) == (12, 12, 0) and p["median_seconds"] is not None
    st = c.get("/api/status", headers=bearer(tok["boss"])).json()
    assert (st["judgments_wanted"], st["judgments_done"], st["judgments_left"], st["active_assessors"]) == (24, 12, 12, 2)
    assert st["eta_seconds"] == round(12 * st["median_seconds"] / 2, 0) or st["eta_seconds"] is not None
    assert [q["judged"] for q in st["queries"]] == [4, 4, 4] and [q["copies"] for q in st["queries"]] == [8, 8, 8]


# --- several campaigns, merging a pool, reassigning ---------------------------------------------

def test_two_campaigns_in_one_database_stay_apart(tmp_path, capsys):
    db = str(tmp_path / "j.db")
    scale = read_judging_scale(None)
    database = Database(db)
    with database.write() as s:
        a = cp.init_campaign(s, "first", [("1", "x")], "p", "0", {"1": "the first topic"}, {"x": ("X", "x")}, scale, 0)
        b = cp.init_campaign(s, "second", [("1", "x")], "p", "0", {"1": "another topic"}, {"x": ("Y", "y")}, scale, 0)
        ta, tb = cp.add_assessor(s, "alice", campaign=a), cp.add_assessor(s, "alice", campaign=b)
        boss_a = cp.add_assessor(s, "boss", admin=True, campaign=a)
    database.dispose()
    c = TestClient(create_app(db), base_url=LOOPBACK)
    assert c.get("/api/next", headers=bearer(ta)).json()["query"] == "the first topic"     # same qid, own topic
    assert c.get("/api/next", headers=bearer(tb)).json()["title"] == "Y"
    c.post("/api/judgments", headers=bearer(tb), json={"qid": "1", "docid": "x", "grade": 0, "request_id": "r"})
    assert c.get("/api/export", headers=bearer(boss_a)).text == ""                          # b's label is b's
    assert main(["judge", "export", "--db", db, "--campaign", "second", "-o", str(tmp_path / "b.qrels")]) == 0
    assert (tmp_path / "b.qrels").read_text() == "1 0 x 0\n"
    assert main(["judge", "export", "--db", db, "-o", str(tmp_path / "x.qrels")]) == 2
    assert "name one with --campaign" in capsys.readouterr().err
    assert main(["judge", "add-assessor", "carol", "--db", db, "--campaign", "nope"]) == 2
    assert "no campaign named 'nope'" in capsys.readouterr().err


def test_add_pool_merges_new_pairs_into_a_running_campaign(tmp_path, capsys):
    db = str(tmp_path / "j.db")
    E = EXAMPLE
    assert main(["judge", "init", "--db", db, "--pool", str(E / "pool.txt"), "--queries", str(E / "topics.txt"),
                 "--corpus", str(E / "corpus.jsonl"), "--overlap", "0.5"]) == 0
    assert "judging campaign 20" in capsys.readouterr().out                 # a real default name
    alice = (main(["judge", "add-assessor", "alice", "--db", db]), capsys.readouterr().out.split()[-1])[1]
    c = TestClient(create_app(db), base_url=LOOPBACK)
    first, _ = judge_all(c, alice)
    assert len(first) == 6
    assert main(["judge", "add-pool", "--db", db, "--pool", str(E / "pool-round2.txt"), "--queries", str(E / "topics.txt"),
                 "--corpus", str(E / "corpus.jsonl")]) == 0
    assert "8 new pairs over 2 queries added (4 go to two assessors); 1 was there already" in capsys.readouterr().out
    more, _ = judge_all(c, alice)
    assert len(more) == 8 and {p["qid"] for p in more} == {"q3", "q4"} and more[0]["topic"]["narrative"]
    assert main(["judge", "add-pool", "--db", db, "--pool", str(E / "pool-round2.txt"), "--queries", str(E / "topics.txt"),
                 "--corpus", str(E / "corpus.jsonl")]) == 0
    assert "0 new pairs" in capsys.readouterr().out


def test_reassign_moves_open_pairs_releases_overlap_copies_and_deactivates(sqlite_db):
    tok = make_campaign(sqlite_db, n_queries=2, docs_per_query=3, overlap=1.0, assessors=("alice", "bob", "carol"))
    c = TestClient(create_app(sqlite_db), base_url=LOOPBACK)
    boss = bearer(tok["boss"])
    # bob claims q-something (3 pairs, one copy each); carol claims the same query's other copies or another
    pb = c.get("/api/next", headers=bearer(tok["bob"])).json()
    c.get("/api/next", headers=bearer(tok["carol"]))
    carol = c.get("/api/progress", headers=bearer(tok["carol"])).json()
    r = c.post("/api/reassign", headers=boss, json={"from": "carol", "to": "bob", "deactivate": True})
    assert r.status_code == 200
    got = r.json()
    assert got["moved"] + got["released"] == carol["open"] and got["deactivated"]
    bob = c.get("/api/progress", headers=bearer(tok["bob"])).json()
    assert bob["open"] == 3 + got["moved"]
    assert got["revoked"] and got["sessions_ended"] == 0
    assert c.get("/api/next", headers=bearer(tok["carol"])).status_code == 401          # no new work: revoked (#35)
    # nobody holds two copies of a pair, and every copy is still judged exactly once
    judge_all(c, tok["bob"])
    judge_all(c, tok["alice"])
    st = c.get("/api/status", headers=boss).json()
    assert st["judgments_done"] == st["judgments_wanted"] == 12
    assert c.post("/api/reassign", headers=boss, json={"from": "nobody"}).status_code == 422
    # revoking takes a JSON boolean: "yes", "false", 1 are refused, not read as one
    for loose in ("yes", "false", 1):
        assert c.post("/api/reassign", headers=boss, json={"from": "bob", "deactivate": loose}).status_code == 422
    assert c.post("/api/reassign", headers=bearer(tok["alice"]), json={"from": "bob"}).status_code == 403
    assert pb["qid"]


def test_adjudication_keeps_the_history_in_status_export_and_pair_history(tmp_path, capsys):
    db = str(tmp_path / "j.db")
    tok = make_campaign(db, n_queries=1, docs_per_query=1, overlap=1.0, assessors=("alice", "bob"))
    c = TestClient(create_app(db), base_url=LOOPBACK)
    judge_all(c, tok["alice"], grade=lambda p: 1)
    judge_all(c, tok["bob"], grade=lambda p: 3)
    boss = bearer(tok["boss"])
    d = c.get("/api/status", headers=boss).json()["disagreements"][0]
    assert [(e["assessor"], e["kind"], e["grade"]) for e in d["history"]] == [("alice", "grade", 1), ("bob", "grade", 3)]
    assert c.post("/api/adjudications", headers=boss, json={"qid": d["qid"], "docid": d["docid"], "grade": 2,
                                                            "evidence": "half of it", "request_id": "a"}).status_code == 201
    steps = c.get("/api/pair-history", headers=boss, params={"qid": d["qid"], "docid": d["docid"]}).json()
    assert [(s["assessor"], s["kind"], s["grade"]) for s in steps][-1] == ("boss", "adjudicate", 2)
    assert main(["judge", "export", "--db", db, "-o", str(tmp_path / "q")]) == 0
    ev = json.loads((tmp_path / "q.evidence.jsonl").read_text())
    assert ev["grade"] == 2 and ev["assessor"] == "boss" and [h["kind"] for h in ev["history"]] == ["grade", "grade", "adjudicate"]


# --- the pages' small things ----------------------------------------------------------------------

def test_pages_guidelines_favicon_and_html_errors(sqlite_db):
    tok = _campaign(sqlite_db, practice=False)
    c = TestClient(create_app(sqlite_db), base_url=LOOPBACK)
    assert c.get("/favicon.ico").status_code == 200
    assert c.get("/guidelines", follow_redirects=False).status_code == 303            # log in first
    page_log_in(c, tok["alice"])
    page = c.get("/guidelines").text
    assert "<h1>Rules</h1>" in page and "<strong>bold</strong>" in page
    assert "<script>x()" not in page and "&lt;script&gt;x()" in page                   # raw HTML shown as text
    assert 'href="/guidelines"' in c.get("/").text                                       # linked from every page
    r = c.get("/admin", headers={"Accept": "text/html"})
    assert r.status_code == 403 and "<h1" in r.text and "Not for you" in r.text          # a page, not raw JSON
    assert c.get("/api/status").json()["detail"] == "admins only"                         # JSON kept for the API


def _simultaneous_first_requests(db, serve):
    import threading

    import httpx
    from sqlalchemy import func, select

    from judged.judge.models import Assignment

    tok = _campaign(db)
    server = serve(db)
    h = bearer(tok["alice"])
    barrier, codes = threading.Barrier(8), []

    def first():
        with httpx.Client(timeout=120) as c:
            barrier.wait()
            codes.append(c.get(server.url + "/api/next", headers=h).status_code)

    threads = [threading.Thread(target=first) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes == [200] * 8
    database = Database(db)
    with database.read() as s:
        assert s.scalar(select(func.count()).select_from(Assignment)) == 3      # the practice round, once
    database.dispose()


def test_simultaneous_first_requests_sqlite(sqlite_db, serve):
    _simultaneous_first_requests(sqlite_db, serve)


def test_simultaneous_first_requests_postgresql(postgres_db, serve):
    _simultaneous_first_requests(postgres_db, serve)
