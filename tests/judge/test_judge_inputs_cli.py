"""The campaign's input readers and the `judged judge` commands."""

from __future__ import annotations

import hashlib
import json

import pytest
from judge_helpers import EXAMPLE

from judged.cli import main
from judged.errors import ParseError
from judged.judge.inputs import read_corpus, read_pool, read_queries, read_scale


def test_pool_format_of_judged_pool(tmp_path):
    p = tmp_path / "pool.txt"
    p.write_text("# qid docid priority runs\nq1 d1 0.9 bm25,dense 1\n\nq1\td2\nq2 d1 extra\nq1 d1 again\n")
    pool = read_pool(p)
    assert pool.pairs == [("q1", "d1"), ("q1", "d2"), ("q2", "d1")]   # extra fields ignored (blind)
    assert pool.duplicates == 1
    assert pool.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    (tmp_path / "bad.txt").write_text("q1 d1\nq2\n")
    with pytest.raises(ParseError, match="bad.txt:2"):
        read_pool(tmp_path / "bad.txt")


def test_queries_tsv_and_beir_jsonl(tmp_path):
    (tmp_path / "q.tsv").write_text("1\tfirst query\n2\tsecond\twith tab\n")
    assert read_queries(tmp_path / "q.tsv") == {"1": "first query", "2": "second\twith tab"}
    (tmp_path / "queries.jsonl").write_text('{"_id": "1", "text": "a"}\n{"_id": 2, "text": "b"}\n')
    assert read_queries(tmp_path / "queries.jsonl", {"2"}) == {"2": "b"}
    (tmp_path / "bad.jsonl").write_text('{"text": "no id"}\n')
    with pytest.raises(ParseError, match="_id"):
        read_queries(tmp_path / "bad.jsonl")


def test_corpus_reads_only_wanted(tmp_path):
    docs = read_corpus(EXAMPLE / "corpus.jsonl", {"d1", "d5"})
    assert set(docs) == {"d1", "d5"} and docs["d1"][0].startswith("Vitamin D")


def test_scale_default_and_toml(tmp_path):
    s = read_scale(None)
    assert [g["value"] for g in s.grades] == [0, 1, 2, 3] and s.evidence_required
    assert [g["name"] for g in read_scale(EXAMPLE / "scale.toml").grades][3] == "complete answer"
    (tmp_path / "s.toml").write_text('evidence = "optional"\n[[grade]]\nvalue = 1\nname = "yes"\n[[grade]]\nvalue = 0\nname = "no"\n')
    s = read_scale(tmp_path / "s.toml")
    assert [g["value"] for g in s.grades] == [0, 1] and not s.evidence_required
    (tmp_path / "bad.toml").write_text('[[grade]]\nvalue = "high"\nname = "x"\n')
    with pytest.raises(ParseError, match="integer"):
        read_scale(tmp_path / "bad.toml")


def _init(db, *extra):
    return main(["judge", "init", "--db", db, "--pool", str(EXAMPLE / "pool.txt"), "--queries",
                 str(EXAMPLE / "queries.tsv"), "--corpus", str(EXAMPLE / "corpus.jsonl"), *extra])


def test_cli_init_add_assessor_export_status(tmp_path, capsys):
    db = str(tmp_path / "j.db")
    assert _init(db, "--overlap", "0") == 0
    assert "6 pairs over 2 queries" in capsys.readouterr().out
    assert main(["judge", "add-assessor", "alice", "--db", db]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]          # the token is the last line
    assert len(token) >= 40
    assert main(["judge", "add-assessor", "alice", "--db", db]) == 2  # a name once
    assert "exists already" in capsys.readouterr().err
    from fastapi.testclient import TestClient

    from judged.judge.app import create_app
    c = TestClient(create_app(db))
    h = {"Authorization": f"Bearer {token}"}
    n = 0
    while (r := c.get("/api/next", headers=h)).status_code == 200:
        p = r.json()
        c.post("/api/judgments", headers=h, json={"qid": p["qid"], "docid": p["docid"], "grade": n % 2,
                                                  "evidence": f"because {n}", "request_id": str(n)})
        n += 1
    out = tmp_path / "new.qrels"
    assert main(["judge", "export", "--db", db, "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 6 and all(len(line.split()) == 4 and line.split()[1] == "0" for line in lines)
    prov = [json.loads(x) for x in (tmp_path / "new.qrels.provenance.jsonl").read_text().splitlines()]
    assert [(p["qid"], p["docid"], p["grade"]) for p in prov] == [(f[0], f[2], int(f[3])) for f in map(str.split, lines)]
    assert {p["assessor"] for p in prov} == {"alice"} and all(p["time"].endswith("Z") and p["source"] for p in prov)
    assert all(p["evidence"] for p in prov if p["grade"] > 0)
    # the exported qrels read back with judged's own reader
    from judged.io import read_qrels
    back = read_qrels(str(out))
    assert len(back) == 6 and sorted(back.grade.tolist()) == sorted(int(f.split()[3]) for f in lines)
    capsys.readouterr()
    assert main(["judge", "status", "--db", db, "--format", "json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["labelled"] == 6 and st["assessors"][0]["graded"] == 6 and st["agreement"]["cohen_kappa"] is None
    assert main(["judge", "status", "--db", db]) == 0
    assert "alice" in capsys.readouterr().out


def test_cli_errors_are_one_line(tmp_path, capsys):
    db = str(tmp_path / "j.db")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "title": "t", "text": "x"}\n')
    rc = main(["judge", "init", "--db", db, "--pool", str(EXAMPLE / "pool.txt"), "--queries",
               str(EXAMPLE / "queries.tsv"), "--corpus", str(tmp_path / "corpus.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("judged: error:") and "not in the corpus" in err and err.count("\n") == 1
    for cmd in ("status", "serve"):
        assert main(["judge", cmd, "--db", str(tmp_path / "empty.db")]) == 2
        assert "judge init" in capsys.readouterr().err
    assert _init(db) == 0 and _init(db) == 2                           # one campaign per database
