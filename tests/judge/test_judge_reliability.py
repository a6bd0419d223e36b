"""Reliability against a real server process: an acknowledged judgment survives kill -9;
20 concurrent assessors posting 5,000 judgments lose and duplicate nothing (SQLite and
PostgreSQL), replayed request_ids included."""

from __future__ import annotations

import os
import threading
import time

import httpx
from judge_helpers import log_in, make_campaign
from sqlalchemy import func, select

from judged.judge.db import Database
from judged.judge.models import GRADE, Judgment, Pair

ASSESSORS = 20
JUDGMENTS = 5_000          # the acceptance figure: 20 assessors x 5,000 judgments
DOCS_PER_QUERY = 20
REPLAY_EVERY = 10          # every 10th judgment is sent twice (a client retry)


def test_acknowledged_judgment_survives_kill_9(sqlite_db, serve):
    tok = make_campaign(sqlite_db, n_queries=2, docs_per_query=3)
    server = serve(sqlite_db)
    h = {"Authorization": f"Bearer {tok['alice']}"}
    acked = []
    for i in range(3):
        p = httpx.get(server.url + "/api/next", headers=h).json()
        r = httpx.post(server.url + "/api/judgments", headers=h, json={
            "qid": p["qid"], "docid": p["docid"], "grade": 2, "evidence": f"ev{i}", "request_id": f"k{i}"})
        assert r.status_code == 201
        acked.append((p["qid"], p["docid"], f"k{i}"))
    server.kill9()                          # no shutdown, no checkpoint: SIGKILL right after the 201
    assert server.proc.returncode == -9
    with Database(sqlite_db).read() as s:
        stored = {(j.pair.qid, j.pair.docid, j.request_id) for j in s.scalars(select(Judgment))}
    assert stored == set(acked)
    # and a restarted server knows them: replays answer 200, the next pair is a new one
    again = serve(sqlite_db)
    qid, docid, rid = acked[-1]
    r = httpx.post(again.url + "/api/judgments", headers=h, json={
        "qid": qid, "docid": docid, "grade": 2, "evidence": "ev2", "request_id": rid})
    assert r.status_code == 200
    assert (httpx.get(again.url + "/api/next", headers=h).json()["docid"]) not in {d for _, d, _ in acked}
    with httpx.Client(base_url=again.url) as c:
        assert log_in(c, tok["alice"]).status_code == 303
    again.stop()
    for s in (server, again):                  # no token in the server's logs
        assert tok["alice"] not in s.log_path.read_text()


def _assessor_loop(url: str, name: str, token: str, out: dict, errors: list) -> None:
    h = {"Authorization": f"Bearer {token}"}
    acked = out[name] = []
    try:
        with httpx.Client(base_url=url, headers=h, timeout=120) as c:
            n = 0
            while True:
                r = c.get("/api/next")
                if r.status_code == 204:
                    return
                assert r.status_code == 200, r.text
                p = r.json()
                body = {"qid": p["qid"], "docid": p["docid"], "grade": n % 4, "evidence": f"{name} says {n}",
                        "request_id": f"{name}-{n}"}
                r = c.post("/api/judgments", json=body)
                assert r.status_code == 201, r.text
                if n % REPLAY_EVERY == 0:
                    assert c.post("/api/judgments", json=body).status_code == 200
                acked.append((p["qid"], p["docid"], body["request_id"]))
                n += 1
    except BaseException as exc:  # noqa: BLE001
        errors.append(f"{name}: {exc!r}")


def _hammer(db: str, serve) -> None:
    names = [f"a{i:02d}" for i in range(ASSESSORS)]
    tok = make_campaign(db, n_queries=JUDGMENTS // DOCS_PER_QUERY, docs_per_query=DOCS_PER_QUERY,
                        assessors=names, admins=())
    server = serve(db)
    out, errors = {}, []
    threads = [threading.Thread(target=_assessor_loop, args=(server.url, n, tok[n], out, errors)) for n in names]
    t0, cpu0, srv0 = time.perf_counter(), time.process_time(), _cpu_seconds(server.proc.pid)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    client_cpu, server_cpu = time.process_time() - cpu0, _cpu_seconds(server.proc.pid) - srv0
    assert not errors, errors[:3]
    acked = [a for v in out.values() for a in v]
    database = Database(db)
    with database.read() as s:
        rows = s.execute(select(Pair.qid, Pair.docid, Judgment.request_id).join(Pair, Judgment.pair_id == Pair.id)
                         .where(Judgment.kind == GRADE)).all()
        pairs = s.scalar(select(func.count()).select_from(Pair))
    database.dispose()
    assert len(acked) == JUDGMENTS == pairs                    # every pair judged once, by someone
    assert len(rows) == JUDGMENTS                              # no duplicate rows, replays included
    assert set(rows) == set(acked)                             # nothing acknowledged was lost
    assert len({(q, d) for q, d, _ in rows}) == JUDGMENTS      # no pair judged twice
    assert sum(len(v) > 0 for v in out.values()) == ASSESSORS  # all twenty took part
    print(f"\n{ASSESSORS} assessors, {JUDGMENTS} judgments (+{JUDGMENTS // REPLAY_EVERY} replays) "
          f"on {db.split(':')[0]}: {seconds:.1f} s wall, {JUDGMENTS / seconds:.0f} judgments/s; "
          f"CPU: server {server_cpu:.1f} s, clients {client_cpu:.1f} s")


def _cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of a process (Linux /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_twenty_assessors_five_thousand_judgments_sqlite(sqlite_db, serve):
    _hammer(sqlite_db, serve)


def test_twenty_assessors_five_thousand_judgments_postgresql(postgres_db, serve):
    _hammer(postgres_db, serve)


def _simultaneous_replays(db: str, serve) -> None:
    """Ten copies of one request at the same moment: one 201, nine 200, one row."""
    tok = make_campaign(db, n_queries=1, docs_per_query=2, admins=())
    server = serve(db)
    h = {"Authorization": f"Bearer {tok['alice']}"}
    p = httpx.get(server.url + "/api/next", headers=h).json()
    body = {"qid": p["qid"], "docid": p["docid"], "grade": 1, "evidence": "same", "request_id": "once"}
    barrier, codes = threading.Barrier(10), []

    def post():
        with httpx.Client(timeout=60) as c:
            barrier.wait()
            codes.append(c.post(server.url + "/api/judgments", headers=h, json=body).status_code)

    threads = [threading.Thread(target=post) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200] * 9 + [201]
    database = Database(db)
    with database.read() as s:
        assert s.scalar(select(func.count()).select_from(Judgment)) == 1
    database.dispose()


def test_simultaneous_replays_sqlite(sqlite_db, serve):
    _simultaneous_replays(sqlite_db, serve)


def test_simultaneous_replays_postgresql(postgres_db, serve):
    _simultaneous_replays(postgres_db, serve)
