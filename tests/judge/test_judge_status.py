"""Issue #34's judging-app findings on the campaign's status: a disagreement nobody decided
is not "labelled" (the export leaves it out), and `judged judge status` piped into another
program keeps its headers whole at 80 columns."""

from __future__ import annotations

import json
import subprocess
import sys

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


def test_status_piped_keeps_every_header_whole_at_80_columns(tmp_path):
    """The finding: `judged judge status | cat` cut the headers to `asse…`. Piped (no
    terminal, no COLUMNS: 80 columns), every header word and every cell is whole."""
    db = str(tmp_path / "j.db")
    tok = make_campaign(db, n_queries=2, docs_per_query=3, overlap=1.0, assessors=("alice", "bob"))
    c = TestClient(create_app(db), base_url=LOOPBACK)
    grade_everything(c, tok["alice"], 1, "a")
    grade_everything(c, tok["bob"], 2, "b")
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("COLUMNS", "LINES")}
    out = subprocess.run([sys.executable, "-m", "judged", "judge", "status", "--db", db], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, env=env, check=True).stdout
    tables = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert tables and max(len(line) for line in tables) <= 80
    assert "…" not in out
    cells = {w for line in tables for w in line.replace("┃", " ").replace("│", " ").split()}
    for word in ("assessor", "share", "graded", "skipped", "left", "judgment", "finish", "practice", "qid",
                 "pairs", "done", "labelled", "open", "disagreements", "docid", "labels", "adjudicated",
                 "alice", "bob", "boss", "(admin)"):
        assert word in cells, (word, out)
    st = json.loads(subprocess.run([sys.executable, "-m", "judged", "judge", "status", "--db", db, "--format", "json"],
                                   capture_output=True, text=True, check=True).stdout)
    assert {"assigned", "open", "graded", "skipped", "share", "left"} <= set(st["assessors"][0])   # json: every field
