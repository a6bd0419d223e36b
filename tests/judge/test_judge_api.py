"""The JSON API contract of issue #5: status codes, idempotency, append-only history,
blind per-assessor order, overlap and agreement, auth and security headers."""

from __future__ import annotations

import pytest
from judge_helpers import LOOPBACK, log_in, make_campaign, page_log_in
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from judged.judge.app import create_app
from judged.judge.auth import LoginLimiter
from judged.judge.db import Database, normalise_url
from judged.judge.models import Assessor, Judgment


def client(db, **kw) -> TestClient:
    return TestClient(create_app(db, **kw), base_url=LOOPBACK)


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def judge_all(c, token, grade=1, prefix="r"):
    """Judge everything assigned to this assessor; returns the (qid, docid) order seen."""
    seen = []
    while True:
        r = c.get("/api/next", headers=bearer(token))
        if r.status_code == 204:
            return seen
        p = r.json()
        seen.append((p["qid"], p["docid"]))
        r = c.post("/api/judgments", headers=bearer(token), json={
            "qid": p["qid"], "docid": p["docid"], "grade": grade, "evidence": "note", "request_id": f"{prefix}{len(seen)}"})
        assert r.status_code == 201, r.text


def count(db, kind=None):
    with Database(db).read() as s:
        q = select(func.count()).select_from(Judgment)
        return s.scalar(q if kind is None else q.where(Judgment.kind == kind))


def test_auth_status_codes(sqlite_db):
    tok = make_campaign(sqlite_db)
    c = client(sqlite_db)
    assert c.get("/api/next").status_code == 401                                  # no token
    assert c.get("/api/next", headers=bearer("wrong")).status_code == 401         # wrong token
    assert c.get("/api/next", headers={"Authorization": "Basic " + tok["alice"]}).status_code == 401
    assert c.get("/api/export", headers=bearer(tok["alice"])).status_code == 403  # assessor on admin endpoint
    assert c.get("/api/status", headers=bearer(tok["alice"])).status_code == 403
    assert c.get("/api/export", headers=bearer(tok["boss"])).status_code == 200
    assert c.get("/api/next", headers=bearer(tok["alice"])).status_code == 200


def test_next_gives_exactly_the_pair_and_nothing_about_runs(sqlite_db):
    tok = make_campaign(sqlite_db, texts={"q0-d0": "<b>raw</b> & text"})
    c = client(sqlite_db)
    body = c.get("/api/next", headers=bearer(tok["alice"])).json()
    assert set(body) == {"qid", "docid", "query", "title", "text", "topic"}   # nothing about runs, ranks, scores
    assert set(body["topic"]) == {"title", "description", "narrative"}
    if body["docid"] == "q0-d0":
        assert body["text"] == "<b>raw</b> & text"  # raw in the JSON; the page escapes it


def test_judgment_201_replay_200_and_nothing_twice(sqlite_db):
    tok = make_campaign(sqlite_db)
    c = client(sqlite_db)
    p = c.get("/api/next", headers=bearer(tok["alice"])).json()
    j = {"qid": p["qid"], "docid": p["docid"], "grade": 2, "evidence": "“quoted”", "request_id": "abc"}
    first = c.post("/api/judgments", headers=bearer(tok["alice"]), json=j)
    assert first.status_code == 201
    again = c.post("/api/judgments", headers=bearer(tok["alice"]), json=j)
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert count(sqlite_db) == 1
    # the same request_id for a different judgment is refused, nothing stored
    assert c.post("/api/judgments", headers=bearer(tok["alice"]), json={**j, "grade": 3}).status_code == 422
    assert count(sqlite_db) == 1


@pytest.mark.parametrize("change, why", [
    ({"grade": 7}, "off the scale"),
    ({"grade": -1}, "off the scale"),
    ({"grade": "2"}, "not an integer"),
    ({"grade": 2, "evidence": "  "}, "evidence required above 0"),
    ({"docid": "q1-d0"}, "not assigned to this assessor (another query)"),
    ({"docid": "nope"}, "not in the pool"),
])
def test_422_stores_nothing(sqlite_db, change, why):
    tok = make_campaign(sqlite_db)
    c = client(sqlite_db)
    p = c.get("/api/next", headers=bearer(tok["alice"])).json()
    other_q = "q1" if p["qid"] == "q0" else "q0"
    j = {"qid": p["qid"], "docid": p["docid"], "grade": 1, "evidence": "n", "request_id": "x", **change}
    if j["docid"] == "q1-d0":
        j["qid"], j["docid"] = other_q, f"{other_q}-d0"
    r = c.post("/api/judgments", headers=bearer(tok["alice"]), json=j)
    assert r.status_code == 422, why
    assert count(sqlite_db) == 0


def test_evidence_optional_when_the_campaign_says_so(sqlite_db):
    tok = make_campaign(sqlite_db, evidence="optional")
    c = client(sqlite_db)
    p = c.get("/api/next", headers=bearer(tok["alice"])).json()
    r = c.post("/api/judgments", headers=bearer(tok["alice"]),
               json={"qid": p["qid"], "docid": p["docid"], "grade": 3, "evidence": "", "request_id": "x"})
    assert r.status_code == 201


def test_grade_zero_needs_no_evidence_and_204_when_done(sqlite_db):
    tok = make_campaign(sqlite_db, n_queries=1, docs_per_query=2)
    c = client(sqlite_db)
    for i in range(2):
        p = c.get("/api/next", headers=bearer(tok["alice"])).json()
        assert c.post("/api/judgments", headers=bearer(tok["alice"]), json={
            "qid": p["qid"], "docid": p["docid"], "grade": 0, "request_id": f"r{i}"}).status_code == 201
    assert c.get("/api/next", headers=bearer(tok["alice"])).status_code == 204


def test_undo_and_revision_append_history(sqlite_db):
    tok = make_campaign(sqlite_db, n_queries=1, docs_per_query=2)
    c, h = client(sqlite_db), bearer(tok["alice"])
    p1 = c.get("/api/next", headers=h).json()
    c.post("/api/judgments", headers=h, json={"qid": p1["qid"], "docid": p1["docid"], "grade": 2, "evidence": "a", "request_id": "1"})
    p2 = c.get("/api/next", headers=h).json()
    assert p2["docid"] != p1["docid"]
    u = c.post("/api/undo", headers=h, json={"request_id": "u1"})
    assert u.status_code == 201 and u.json()["docid"] == p1["docid"]
    assert c.post("/api/undo", headers=h, json={"request_id": "u1"}).status_code == 200  # replay
    assert c.get("/api/next", headers=h).json()["docid"] == p1["docid"]                   # the undone pair is back
    r = c.post("/api/judgments", headers=h, json={"qid": p1["qid"], "docid": p1["docid"], "grade": 3, "evidence": "b", "request_id": "2"})
    assert r.json()["revision"] == 2
    hist = c.get("/api/history", headers=h, params={"qid": p1["qid"], "docid": p1["docid"]}).json()
    assert [(x["kind"], x["grade"]) for x in hist] == [("grade", 2), ("undo", None), ("grade", 3)]
    assert c.post("/api/undo", headers=h, json={"request_id": "u2"}).json()["docid"] == p1["docid"]
    assert c.post("/api/undo", headers=h, json={"request_id": "u3"}).status_code == 422  # nothing left to undo
    assert count(sqlite_db) == 4  # grade, undo, grade, undo; the refused undo stored nothing
    assert count(sqlite_db, "grade") == 2


def test_skip_is_not_offered_again_and_undo_restores_it(sqlite_db):
    tok = make_campaign(sqlite_db, n_queries=1, docs_per_query=2)
    c, h = client(sqlite_db), bearer(tok["alice"])
    p1 = c.get("/api/next", headers=h).json()
    assert c.post("/api/skip", headers=h, json={"qid": p1["qid"], "docid": p1["docid"], "request_id": "s"}).status_code == 201
    assert c.get("/api/next", headers=h).json()["docid"] != p1["docid"]
    c.post("/api/undo", headers=h, json={"request_id": "u"})
    assert c.get("/api/next", headers=h).json()["docid"] == p1["docid"]


def test_blind_order_shuffled_per_assessor_queries_together(sqlite_db):
    names = [f"a{i}" for i in range(6)]
    tok = make_campaign(sqlite_db, n_queries=8, docs_per_query=5, overlap=1.0, assessors=names)
    c = client(sqlite_db)
    orders = {n: judge_all(c, tok[n]) for n in names[:2]}
    for order in orders.values():
        qids = [q for q, _ in order]
        blocks = [q for i, q in enumerate(qids) if i == 0 or qids[i - 1] != q]
        assert len(blocks) == len(set(blocks)) == 8   # each query's pairs come together
        assert len(order) == 40
    assert orders["a0"] != orders["a1"]                # each assessor has their own order
    assert sorted(orders["a0"]) == sorted(orders["a1"])  # overlap 1.0: both judge everything
    assert c.get("/api/next", headers=bearer(tok["a2"])).status_code == 204  # two copies each, no third


def test_overlap_agreement_disagreements_adjudication_export(sqlite_db):
    tok = make_campaign(sqlite_db, n_queries=2, docs_per_query=2, overlap=1.0, assessors=("alice", "bob"))
    c = client(sqlite_db)
    judge_all(c, tok["alice"], grade=1, prefix="a")
    # bob agrees except on q0-d0
    h = bearer(tok["bob"])
    while (r := c.get("/api/next", headers=h)).status_code == 200:
        p = r.json()
        g = 3 if p["docid"] == "q0-d0" else 1
        c.post("/api/judgments", headers=h, json={**{k: p[k] for k in ("qid", "docid")}, "grade": g,
                                                  "evidence": "n", "request_id": p["docid"]})
    st = c.get("/api/status", headers=bearer(tok["boss"])).json()
    assert st["agreement"]["pairs"] == 4
    # kappa by hand: labels (1,1),(1,1),(1,1),(1,3): p_o = 3/4; marginals A: all 1; B: 1 x3, 3 x1
    # p_e = 1 * 3/4 = 3/4 -> kappa = (3/4 - 3/4) / (1 - 3/4) = 0
    assert st["agreement"]["cohen_kappa"] == pytest.approx(0.0)
    assert [(d["qid"], d["docid"]) for d in st["disagreements"]] == [("q0", "q0-d0")]
    qrels = c.get("/api/export", headers=bearer(tok["boss"])).text
    assert "q0 0 q0-d0" not in qrels and qrels.count("\n") == 3   # unadjudicated: left out
    assert "q0 0 q0-d0 3" in c.get("/api/export", params={"disagreement": "max"}, headers=bearer(tok["boss"])).text
    assert c.post("/api/adjudications", headers=bearer(tok["alice"]), json={
        "qid": "q0", "docid": "q0-d0", "grade": 2, "evidence": "x", "request_id": "adj"}).status_code == 403
    assert c.post("/api/adjudications", headers=bearer(tok["boss"]), json={
        "qid": "q0", "docid": "q0-d0", "grade": 2, "evidence": "both halves", "request_id": "adj"}).status_code == 201
    qrels = c.get("/api/export", headers=bearer(tok["boss"])).text
    assert "q0 0 q0-d0 2\n" in qrels and qrels.count("\n") == 4


def test_browser_session_needs_its_page_key_and_wrong_tokens_are_limited(sqlite_db):
    tok = make_campaign(sqlite_db)
    c = client(sqlite_db, limiter=LoginLimiter(allowed=3, window=60, slow=0))
    plain = client(sqlite_db)
    # a form post without the page's script: 303 and a cookie that opens the pages, not the API
    assert log_in(plain, tok["alice"], follow_redirects=False).status_code == 303
    assert plain.get("/").status_code == 200 and plain.post("/api/next").status_code == 401
    r = page_log_in(c, tok["alice"])
    assert r.status_code == 200 and r.json()["session_key"]                  # the page key, to this page once
    cookie = r.headers["set-cookie"].lower()
    assert cookie.startswith("judged_session_") and "httponly" in cookie and "samesite=strict" in cookie
    key = c.headers.pop("X-Session-Key")
    assert key not in cookie and key not in c.get("/").text                  # never in a cookie or a page
    for headers in ({}, {"X-Session-Key": "forged"}):                        # the cookie alone opens no API
        r = c.get("/api/progress", headers=headers)
        assert r.status_code == 401 and r.json()["session"] == "replaced"
        assert c.post("/api/next", headers=headers).status_code == 401
    h = {"X-Session-Key": key}
    p = c.post("/api/next", headers=h).json()                                # POST claims
    r = c.get("/api/next", headers=h)
    assert r.status_code == 405 and r.headers["allow"] == "POST"             # GET changes nothing
    j = {"qid": p["qid"], "docid": p["docid"], "grade": 0, "request_id": "c1"}
    assert c.post("/api/judgments", json=j, headers=h).status_code == 201
    fresh = client(sqlite_db, limiter=LoginLimiter(allowed=3, window=60, slow=0))
    r = [page_log_in(fresh, f"guess{i}") for i in range(4)]
    assert [x.status_code for x in r] == [401, 401, 401, 429] and int(r[-1].headers["retry-after"]) > 0
    assert page_log_in(fresh, tok["alice"]).status_code == 200     # a right token is checked, and opens (#35)
    assert fresh.get("/api/next", headers=bearer(tok["alice"])).status_code == 200


def test_security_headers_and_escaping(sqlite_db):
    tok = make_campaign(sqlite_db)
    c = client(sqlite_db)
    r = c.get("/")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    with Database(sqlite_db).write() as s:
        s.add(Assessor(campaign_id=1, name="<script>alert(1)</script>", token_hash="h" * 64))
    page_log_in(c, tok["boss"])
    page = c.get("/admin").text          # the shell: names come from the API, shown with textContent
    assert "<script>alert(1)</script>" not in page and "alert(1)" not in page
    st = c.get("/api/status").json()
    assert "<script>alert(1)</script>" in [a["assessor"] for a in st["assessors"]]


def test_tokens_are_stored_only_as_hashes(sqlite_db):
    tok = make_campaign(sqlite_db)
    raw = open(sqlite_db, "rb").read() + (open(sqlite_db + "-wal", "rb").read() if __import__("os").path.exists(sqlite_db + "-wal") else b"")
    assert tok["alice"].encode() not in raw
    import hashlib
    assert hashlib.sha256(tok["alice"].encode()).hexdigest().encode() in raw


def test_sqlite_runs_wal_with_synchronous_full(sqlite_db):
    from sqlalchemy import text
    database = Database(sqlite_db)
    with database.write() as s:
        assert s.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert s.execute(text("PRAGMA synchronous")).scalar() == 2       # 2 = FULL
    database.dispose()
    assert normalise_url("j.db").startswith("sqlite:////")                        # a path: a SQLite file
    assert normalise_url("postgresql://u:p@127.0.0.1/j") == "postgresql+psycopg://u:p@127.0.0.1/j"
