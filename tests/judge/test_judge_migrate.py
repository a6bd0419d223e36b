"""A database made by judged 0.1 (schema 1: one campaign) is refused with instructions until
`judged judge migrate` upgrades it; the upgrade loses nothing (campaign, tokens, sessions,
assignments, judgments), the same on SQLite and PostgreSQL, and work goes on after it."""

from __future__ import annotations

import hashlib
import os
from datetime import datetime, timedelta

from fastapi.testclient import TestClient
from judge_helpers import LOOPBACK, page_log_in

from judged.cli import main
from judged.judge.app import create_app
from judged.judge.db import make_engine
from judged.judge.migrate import V1

TOKEN, BOSS, SESSION = "alice-token-" + "x" * 31, "boss-token-" + "y" * 32, "s" * 43
T0 = datetime(2026, 11, 1, 9, 0, 0)


def sha(s: str) -> str:
    return hashlib.sha256(s.encode()).hexdigest()


def make_v1(url: str) -> None:
    """A judged 0.1 campaign in the middle of its work."""
    engine = make_engine(url)
    V1.create_all(engine)
    scale = {"evidence": "required", "grade": [{"value": v, "name": n, "definition": n, "examples": []}
                                               for v, n in ((0, "no"), (1, "yes"))]}
    rows = {
        "campaign": [dict(id=1, name="pool.txt", created_at=T0, scale=scale, evidence_required=True, overlap=0.0,
                          seed="0" * 32, pool_source="pool.txt", pool_sha256="f" * 64)],
        "query": [dict(qid="10", text="ten"), dict(qid="9", text="nine")],
        "document": [dict(docid=d, title=f"title {d}", text=f"text {d}") for d in ("a", "b", "c")],
        "pair": [dict(id=1, qid="9", docid="a", copies_wanted=1, copies_assigned=1),
                 dict(id=2, qid="9", docid="b", copies_wanted=1, copies_assigned=1),
                 dict(id=3, qid="10", docid="c", copies_wanted=1, copies_assigned=0)],
        "assessor": [dict(id=1, name="alice", token_hash=sha(TOKEN), is_admin=False, created_at=T0, claims=1),
                     dict(id=2, name="boss", token_hash=sha(BOSS), is_admin=True, created_at=T0, claims=0)],
        "login_session": [dict(id_hash=sha(SESSION), assessor_id=1, csrf="c" * 43, created_at=T0,
                               expires_at=datetime.utcnow() + timedelta(hours=6))],
        "assignment": [dict(id=1, assessor_id=1, pair_id=1, order_key="00000000:aa", state="graded"),
                       dict(id=2, assessor_id=1, pair_id=2, order_key="00000000:bb", state="open")],
        "judgment": [dict(id=1, assessor_id=1, pair_id=1, kind="grade", grade=1, evidence="“quoted”", request_id="r1",
                          revision=1, elapsed_ms=None, created_at=T0),
                     dict(id=2, assessor_id=1, pair_id=2, kind="skip", grade=None, evidence="", request_id="r2",
                          revision=1, elapsed_ms=None, created_at=T0 + timedelta(seconds=30)),
                     dict(id=3, assessor_id=1, pair_id=2, kind="undo", grade=None, evidence="", request_id="r3",
                          revision=1, elapsed_ms=None, created_at=T0 + timedelta(seconds=40))],
    }
    with engine.begin() as conn:
        for table in V1.sorted_tables:
            conn.execute(table.insert(), rows[table.name])
    engine.dispose()


def _upgrade(db: str, capsys, tmp_path) -> None:
    make_v1(db)
    for cmd in (["status"], ["export", "-o", str(tmp_path / "x.qrels")], ["add-assessor", "carol"], ["serve"]):
        assert main(["judge", *cmd, "--db", db]) == 2, cmd
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "judged judge migrate --db" in err and "nothing was changed" in err, err
    assert main(["judge", "migrate", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "schema 1 -> 2" in out and "'pool.txt' kept (3 pair rows, 2 assessor rows, 3 judgment rows)" in out
    if "://" not in db:
        assert os.path.exists(db + ".schema1.bak")
    assert main(["judge", "migrate", "--db", db]) == 0 and "already at schema 2" in capsys.readouterr().out

    c = TestClient(create_app(db), base_url=LOOPBACK)
    h = {"Authorization": f"Bearer {TOKEN}"}
    assert c.get("/api/progress", headers=h).json()["graded"] == 1          # the token still opens alice's work
    assert c.get("/api/next", headers=h).json()["docid"] == "b"              # the pair she had open
    c.cookies.set("judged_session", SESSION)
    assert c.get("/api/progress").status_code == 401     # an old browser session ends: she logs in again (#35)
    assert page_log_in(c, TOKEN).status_code == 200 and c.post("/api/next").json()["docid"] == "b"
    r = c.post("/api/judgments", headers=h, json={"qid": "9", "docid": "b", "grade": 0, "request_id": "r4"})
    assert r.status_code == 201 and r.json()["id"] == 4, r.text                     # ids go on after the old ones
    assert c.post("/api/judgments", headers=h, json={"qid": "9", "docid": "a", "grade": 1, "evidence": "“quoted”",
                                                     "request_id": "r1"}).status_code == 200   # an old replay
    assert c.get("/api/next", headers=h).json()["docid"] == "c"              # claims go on too
    st = c.get("/api/status", headers={"Authorization": f"Bearer {BOSS}"}).json()
    assert st["campaign"] == "pool.txt" and [q["qid"] for q in st["queries"]] == ["9", "10"]
    out = tmp_path / "new.qrels"
    assert main(["judge", "export", "--db", db, "-o", str(out)]) == 0
    assert out.read_text() == "9 0 a 1\n9 0 b 0\n"
    # a second campaign now fits in the same database
    capsys.readouterr()
    assert main(["judge", "campaigns", "--db", db]) == 0 and "pool.txt" in capsys.readouterr().out


def test_a_schema_1_sqlite_database_is_refused_then_upgraded(tmp_path, capsys):
    _upgrade(str(tmp_path / "old.db"), capsys, tmp_path)


def test_a_schema_1_postgresql_database_is_refused_then_upgraded(postgres_db, tmp_path, capsys):
    _upgrade(postgres_db, capsys, tmp_path)


def test_a_failed_upgrade_changes_nothing(tmp_path, capsys):
    db = str(tmp_path / "old.db")
    make_v1(db)
    engine = make_engine(db)
    with engine.begin() as conn:       # a second campaign row: schema 1 never held one, the upgrade refuses
        conn.execute(V1.tables["campaign"].insert(), [dict(id=2, name="other", created_at=T0, scale={}, seed="1",
                                                           pool_source="p", pool_sha256="0")])
    engine.dispose()
    before = open(db, "rb").read()
    assert main(["judge", "migrate", "--db", db]) == 2
    assert "holds 2" in capsys.readouterr().err
    assert main(["judge", "status", "--db", db]) == 2 and "migrate" in capsys.readouterr().err
    assert len(open(db, "rb").read()) == len(before)
