"""The campaign's input readers and the `judged judge` commands."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest
from judge_helpers import EXAMPLE, LOOPBACK

from judged.cli import main
from judged.core.errors import ParseError
from judged.judge.db import public_url as db_url
from judged.analyses.pooling.poolfile import read_pool_file
from judged.judge.inputs import pool_pairs, read_corpus, read_judging_scale, read_topics


def test_pool_format_of_judged_pool(tmp_path):
    p = tmp_path / "pool.txt"
    p.write_text("# qid docid priority runs\nq1 d1 0.9 bm25,dense 1\n\nq1\td2\nq2 d1 extra\nq1 d1 again\n")
    pool = read_pool_file(p, pairs_only=True)
    assert pool_pairs(pool) == ([("q1", "d1"), ("q1", "d2"), ("q2", "d1")], 1)   # extra fields ignored (blind)
    assert pool.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    (tmp_path / "bad.txt").write_text("q1 d1\nq2\n")
    with pytest.raises(ParseError, match="bad.txt:2"):
        read_pool_file(tmp_path / "bad.txt", pairs_only=True)
    # the pooling wing's one reader: blind to what follows qid and docid, strict on UTF-8 (FILE:LINE)
    (tmp_path / "foreign.txt").write_text("q1 d1 0.9 bm25,dense x\n")
    assert pool_pairs(read_pool_file(tmp_path / "foreign.txt", pairs_only=True))[0] == [("q1", "d1")]
    (tmp_path / "latin1.txt").write_bytes(b"q1 d1 1 1 r\nq1 caf\xe9 2 1 r\n")
    for pairs_only in (True, False):
        with pytest.raises(ParseError, match="latin1.txt:2: not UTF-8"):
            read_pool_file(tmp_path / "latin1.txt", pairs_only=pairs_only)


def test_queries_tsv_and_beir_jsonl(tmp_path):
    # read by judged.core.io's readers of texts (texts.tsv_texts, beir.iter_jsonl): FILE:LINE errors
    texts = lambda topics: {q: t.text for q, t in topics.items()}
    (tmp_path / "q.tsv").write_text("1\tfirst query\n2\tsecond\twith tab\n")
    assert texts(read_topics(tmp_path / "q.tsv")) == {"1": "first query", "2": "second\twith tab"}
    (tmp_path / "q.tsv.gz").write_bytes(gzip.compress((tmp_path / "q.tsv").read_bytes()))
    assert texts(read_topics(tmp_path / "q.tsv.gz")) == {"1": "first query", "2": "second\twith tab"}
    (tmp_path / "queries.jsonl").write_text('{"_id": "1", "text": "a"}\n{"_id": 2, "text": "b"}\n')
    assert texts(read_topics(tmp_path / "queries.jsonl", {"2"})) == {"2": "b"}
    (tmp_path / "bad.jsonl").write_text('{"_id": "1", "text": "a"}\n{"text": "no id"}\n')
    with pytest.raises(ParseError, match='bad.jsonl:2: expected an object with an "_id"'):
        read_topics(tmp_path / "bad.jsonl")
    (tmp_path / "bad.tsv").write_text("1\tfine\n2 no tab\n")
    with pytest.raises(ParseError, match="bad.tsv:2: expected id<TAB>text"):
        read_topics(tmp_path / "bad.tsv")


def test_corpus_reads_only_wanted(tmp_path):
    docs = read_corpus(EXAMPLE / "corpus.jsonl", {"d1", "d5"})
    assert set(docs) == {"d1", "d5"} and docs["d1"][0].startswith("Vitamin D")


def test_scale_is_judged_scale_format_plus_evidence(tmp_path):
    s = read_judging_scale(None)                      # judged's default scale (judged/data/default-scale.toml)
    assert [(g["value"], g["name"]) for g in s.grades][::3] == [(0, "not relevant"), (3, "complete answer")]
    assert s.evidence_required and all(g["definition"] and g["examples"] for g in s.grades)
    assert [g["name"] for g in read_judging_scale(EXAMPLE / "scale.toml").grades][3] == "complete answer"
    (tmp_path / "s.toml").write_text('evidence = "optional"\n[[grade]]\nvalue = 1\nname = "yes"\ndefinition = "a"\n'
                                     '[[grade]]\nvalue = 0\nname = "no"\ndefinition = "b"\n')
    s = read_judging_scale(tmp_path / "s.toml")
    assert [g["value"] for g in s.grades] == [0, 1] and not s.evidence_required
    (tmp_path / "bad.toml").write_text('[[grade]]\nvalue = "high"\nname = "x"\ndefinition = "y"\n')
    with pytest.raises(ParseError, match="integer"):
        read_judging_scale(tmp_path / "bad.toml")
    (tmp_path / "ev.toml").write_text('evidence = "sometimes"\n[[grade]]\nvalue = 0\nname = "x"\ndefinition = "y"\n')
    with pytest.raises(ParseError, match="evidence"):
        read_judging_scale(tmp_path / "ev.toml")


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
    c = TestClient(create_app(db), base_url=LOOPBACK)
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
    prov = [json.loads(x) for x in (tmp_path / "new.qrels.evidence.jsonl").read_text().splitlines()]
    assert [(p["qid"], p["docid"], p["grade"]) for p in prov] == [(f[0], f[2], int(f[3])) for f in map(str.split, lines)]
    tsv = [r.split("\t") for r in (tmp_path / "new.qrels.provenance.tsv").read_text().splitlines() if not r.startswith("#")]
    assert tsv[0] == ["qid", "docid", "grade", "source", "assessor", "time", "replaced"]   # what qrels merge reads
    assert [r[4] for r in tsv[1:]] == ["alice"] * 6
    assert {p["assessor"] for p in prov} == {"alice"} and all(p["time"].endswith("Z") and p["source"] for p in prov)
    assert all(p["evidence"] for p in prov if p["grade"] > 0)
    # the exported qrels read back with judged's own reader
    from judged.core.io import read_qrels
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
    assert _init(db) == 0 and _init(db) == 2                           # a second campaign needs a name ...
    assert "--name" in capsys.readouterr().err
    assert _init(db, "--name", "second") == 0 and _init(db, "--name", "second") == 2    # ... of its own
    assert main(["judge", "status", "--db", db]) == 2 and "--campaign" in capsys.readouterr().err
    assert main(["judge", "status", "--db", db, "--campaign", "second"]) == 0


def test_the_whole_flow_pool_judge_export_merge_rejudge(tmp_path, capsys):
    """judged pool -> judge init -> an assessor judges -> export -> qrels merge -> rejudge."""
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    (tmp_path / "lexical.run").write_text("q1 Q0 a 1 9 lex\nq1 Q0 b 2 8 lex\nq2 Q0 c 1 9 lex\nq2 Q0 x 2 8 lex\n")
    (tmp_path / "dense.run").write_text("q1 Q0 h1 1 9 dn\nq1 Q0 a 2 8 dn\nq2 Q0 h2 1 9 dn\nq2 Q0 c 2 8 dn\n")
    pool = tmp_path / "pool.txt"
    assert main(["pool", str(tmp_path / "qrels.txt"), str(tmp_path / "lexical.run"), str(tmp_path / "dense.run"),
                 "--depth", "2", "-o", str(pool)]) == 0
    pairs, _ = pool_pairs(read_pool_file(pool, pairs_only=True))
    assert sorted(pairs) == [("q1", "h1"), ("q2", "h2"), ("q2", "x")]
    (tmp_path / "queries.tsv").write_text("q1\tfirst\nq2\tsecond\n")
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": d, "text": f"text {d}"}) + "\n"
                                                   for d in ("a", "b", "c", "h1", "h2", "x")))
    db = str(tmp_path / "j.db")
    assert main(["judge", "init", "--db", db, "--pool", str(pool), "--queries", str(tmp_path / "queries.tsv"),
                 "--corpus", str(tmp_path / "corpus.jsonl"), "--overlap", "0"]) == 0
    assert main(["judge", "add-assessor", "alice", "--db", db]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    from fastapi.testclient import TestClient

    from judged.judge.app import create_app
    c, h = TestClient(create_app(db), base_url=LOOPBACK), {"Authorization": f"Bearer {token}"}
    hidden_key = {"h1": 3, "h2": 2, "x": 0}     # the dense run's holes are relevant
    while (r := c.get("/api/next", headers=h)).status_code == 200:
        p = r.json()
        assert c.post("/api/judgments", headers=h, json={"qid": p["qid"], "docid": p["docid"], "grade": hidden_key[p["docid"]],
                                                         "evidence": "read it", "request_id": p["docid"]}).status_code == 201
    new = tmp_path / "new.qrels"
    assert main(["judge", "export", "--db", db, "-o", str(new)]) == 0
    merged = tmp_path / "merged.qrels"
    assert main(["qrels", "merge", str(tmp_path / "qrels.txt"), str(new), "-o", str(merged)]) == 0
    assert sorted(merged.read_text().splitlines()) == sorted(
        ["q1 0 a 1", "q1 0 b 0", "q2 0 c 2", "q1 0 h1 3", "q2 0 h2 2", "q2 0 x 0"])
    side = (tmp_path / "merged.qrels.provenance.tsv").read_text()
    row = next(r.split("\t") for r in side.splitlines() if r.startswith("q1\th1\t"))
    assert row[2:5] == ["3", f"judged judge {db_url(db)}", "alice"] and row[5].endswith("Z")  # provenance carried
    capsys.readouterr()
    assert main(["rejudge", "--qrels", str(tmp_path / "qrels.txt"), "--qrels", str(merged), "-m", "nDCG@2", "-k", "2",
                 str(tmp_path / "lexical.run"), str(tmp_path / "dense.run"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    names = {k.split("/")[-1]: k for k in report["runs"]}
    assert [[n.split("/")[-1] for n in o] for o in report["order"]] == [["lexical.run", "dense.run"],
                                                                        ["dense.run", "lexical.run"]]
    assert report["runs"][names["dense.run"]]["judged"] == [0.5, 1.0]   # its holes closed: the order flips


def test_export_over_its_own_database_is_refused(tmp_path, capsys):
    """``judged judge export --db j.db -o j.db`` truncated the campaign's database (every
    judgment and token) to the qrels of its export: refused, the database untouched."""
    db = tmp_path / "j.db"
    assert _init(str(db)) == 0
    for url in (str(db), f"sqlite:///{db}"):
        assert main(["judge", "export", "--db", url, "-o", str(db)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("judged: error: -o") and "is also an input of this command" in err
    assert main(["judge", "status", "--db", str(db)]) == 0          # truncated, it held no campaign


@pytest.mark.parametrize("kind", ["not-sqlite", "directory", "refused-port", "unknown-scheme"])
def test_a_database_that_cannot_be_opened_is_one_line(tmp_path, capsys, kind):
    """``--db`` naming a text file, a directory, a PostgreSQL nobody listens on or an unknown
    URL scheme ended in SQLAlchemy's traceback (exit 1): one line, exit 2, the file untouched."""
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "folder").mkdir()
    db = {"not-sqlite": str(tmp_path / "qrels.txt"), "directory": str(tmp_path / "folder"),
          "refused-port": "postgresql://u:secret@127.0.0.1:1/judging", "unknown-scheme": "bogus://x/y"}[kind]
    if kind == "refused-port":
        pytest.importorskip("psycopg")
    for cmd in (["status"], ["export", "-o", str(tmp_path / "out.qrels")], ["add-assessor", "alice"]):
        assert main(["judge", *cmd, "--db", db]) == 2, cmd
        err = capsys.readouterr().err
        assert err.startswith("judged: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
        assert "secret" not in err
    assert (tmp_path / "qrels.txt").read_text() == "q1 0 d1 1\n"


def test_a_missing_database_file_is_not_created_by_a_command_that_reads_it(tmp_path, capsys):
    """``judged judge status --db tpyo.db`` left an empty tpyo.db behind: only ``init`` creates
    a database; the others say the file is missing and create nothing."""
    for cmd in (["status"], ["campaigns"], ["export", "-o", str(tmp_path / "o.qrels")], ["add-assessor", "a"],
                ["serve"], ["migrate"]):
        assert main(["judge", *cmd, "--db", str(tmp_path / "tpyo.db")]) == 2, cmd
        err = capsys.readouterr().err
        assert "tpyo.db: no such database" in err and "judge init" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("port", ["99999", "-5", "0"])
def test_serve_on_a_port_out_of_range_is_one_line(tmp_path, capsys, port):
    """``judged judge serve --port 99999`` ended in asyncio's OverflowError traceback (exit 1),
    after printing the page's address; port 0 printed http://127.0.0.1:0/, which is no address."""
    db = str(tmp_path / "j.db")
    assert _init(db) == 0
    capsys.readouterr()
    assert main(["judge", "serve", "--db", db, "--port", port]) == 2
    err = capsys.readouterr().err
    assert err == f"judged: error: --port must be 1 to 65535, got {port}\n"


def test_a_pooled_query_or_document_missing_names_the_file(tmp_path, capsys):
    """``judged judge init`` / ``add-pool`` with a topics file that lacks a pooled query said
    "1 pooled qids have no query text (first: 'q2')": which file, and the plural, now right."""
    (tmp_path / "q1.tsv").write_text("q1\tonly the first query\n")
    rc = main(["judge", "init", "--db", str(tmp_path / "j.db"), "--pool", str(EXAMPLE / "pool.txt"), "--queries",
               str(tmp_path / "q1.tsv"), "--corpus", str(EXAMPLE / "corpus.jsonl")])
    assert rc == 2
    assert capsys.readouterr().err == f"judged: error: {tmp_path / 'q1.tsv'}: 1 pooled query has no topic here " \
                                      "(first: 'q2')\n"
    db = str(tmp_path / "ok.db")
    assert _init(db) == 0
    capsys.readouterr()
    (tmp_path / "more.txt").write_text("q1 d1\nq7 d1\nq8 d99\n")
    assert main(["judge", "add-pool", "--db", db, "--pool", str(tmp_path / "more.txt"), "--queries",
                 str(tmp_path / "q1.tsv"), "--corpus", str(EXAMPLE / "corpus.jsonl")]) == 2
    assert capsys.readouterr().err == f"judged: error: {tmp_path / 'q1.tsv'}: 2 pooled queries have no topic " \
                                      "here (first: 'q7')\n"
