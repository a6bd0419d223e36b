"""Issue #34's judging-app findings on the campaign's status: a disagreement nobody decided
is not "labelled" (the export leaves it out), and `judged judge status` piped into another
program keeps its headers whole at 80 columns."""

from __future__ import annotations

from fastapi.testclient import TestClient
from judge_helpers import LOOPBACK, make_campaign

from judged.cli import main
from judged.judge.app import create_app


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def grade_everything(c, token, grade, prefix):
    n = 0
    while (r := c.get("/api/next", headers=bearer(token))).status_code == 200:
        p = r.json()
        assert c.post("/api/judgments", headers=bearer(token), json={
            "qid": p["qid"], "docid": p["docid"], "grade": grade, "evidence": "e", "request_id": f"{prefix}{n}"}
        ).status_code == 201
        n += 1
    return n


def test_unresolved_disagreements_are_not_labelled_and_labelled_is_what_export_writes(tmp_path, capsys):
    """The finding: two assessors graded all 6 pairs differently; status said "6 of 6
    labelled" and the export wrote none of them. Labelled is now what the export writes."""
    db = str(tmp_path / "j.db")
    tok = make_campaign(db, n_queries=2, docs_per_query=3, overlap=1.0, assessors=("alice", "bob"))
    c = TestClient(create_app(db), base_url=LOOPBACK)
    assert grade_everything(c, tok["alice"], 1, "a") == 6
    assert grade_everything(c, tok["bob"], 3, "b") == 6
    st = c.get("/api/status", headers=bearer(tok["boss"])).json()
    assert (st["labelled"], st["open_disagreements"], st["pairs"]) == (0, 6, 6)
    assert [q["labelled"] for q in st["queries"]] == [0, 0]
    assert c.get("/api/export", headers=bearer(tok["boss"])).text == ""
    assert c.post("/api/adjudications", headers=bearer(tok["boss"]), json={
        "qid": "q0", "docid": "q0-d1", "grade": 2, "evidence": "decided", "request_id": "adj"}).status_code == 201
    st = c.get("/api/status", headers=bearer(tok["boss"])).json()
    assert (st["labelled"], st["open_disagreements"]) == (1, 5)
    assert st["labelled"] == c.get("/api/export", headers=bearer(tok["boss"])).text.count("\n")
    assert main(["judge", "status", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "1 of 6 pairs labelled (5 disagreements wait for an admin)" in out
    assert main(["judge", "campaigns", "--db", db]) == 0
    assert "\t1 labelled\t" in capsys.readouterr().out
    assert main(["judge", "export", "--db", db, "-o", str(tmp_path / "out.qrels")]) == 0
    assert (tmp_path / "out.qrels").read_text().count("\n") == 1

