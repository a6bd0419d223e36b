"""Machine labels are never mixed into the qrels silently (issue #16, item 3): one test per
command. For every command that takes ``--machine LABELS`` the output with it is the output
without it plus parts of its own, each named machine-filled (or prediction-powered); every
judged number, count and qrels statistic is unchanged. ``qrels merge`` takes no machine
labels and refuses a pool file (whose ``machine`` column is the machine's grade), ``pool``
leaves the pairs the machine labelled in the pool, and the judging app never shows or
exports the machine's grades."""

from __future__ import annotations

import csv
import io
import json

import pytest

from judged.analyses.pooling.poolfile import read_pool_file

# q1: the people judged a (2), b (0), c (0); the run ranks x, a, y, b, z, c: x, y, z are holes.
# q2: the people judged e (1); holes u, v. q3: judged k (1); hole w.
QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 0\nq2 0 e 1\nq3 0 k 1\n"
RUN = ("q1 Q0 x 1 9 r\nq1 Q0 a 2 8 r\nq1 Q0 y 3 7 r\nq1 Q0 b 4 6 r\nq1 Q0 z 5 5 r\nq1 Q0 c 6 4 r\n"
       "q2 Q0 u 1 9 r\nq2 Q0 e 2 8 r\nq2 Q0 v 3 7 r\nq3 Q0 w 1 9 r\nq3 Q0 k 2 8 r\n")
RUN2 = "q1 Q0 a 1 5 s\nq1 Q0 y 2 4 s\nq2 Q0 e 1 2 s\nq2 Q0 u 2 1 s\nq3 Q0 w 1 1 s\n"
# the machine calls every hole relevant but x and u, and disagrees with the people on b (1, not 0)
MACHINE = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 e 1\nq1 0 x 0\nq1 0 y 2\nq1 0 z 1\nq2 0 u 0\nq2 0 v 2\nq3 0 w 1\n"
HOLES = {("q1", "x"), ("q1", "y"), ("q1", "z"), ("q2", "u"), ("q2", "v"), ("q3", "w")}


@pytest.fixture
def f(tmp_path):
    out = {}
    for name, text in (("qrels", QRELS), ("run", RUN), ("run2", RUN2), ("machine", MACHINE)):
        out[name] = tmp_path / f"{name}.txt"
        out[name].write_text(text)
    out["dir"] = tmp_path
    return out


def with_and_without(cli, *argv):
    """The command's output without and with ``--machine`` (both must succeed)."""
    *args, machine = argv
    plain = cli(*args)
    assert plain[0] == 0, plain[2]
    filled = cli(*args, "--machine", machine)
    assert filled[0] == 0, filled[2]
    return plain[1], filled[1]


def added_keys(plain, filled, path=""):
    """The JSON paths ``filled`` has and ``plain`` lacks; fails on any value that differs."""
    if isinstance(plain, dict) and isinstance(filled, dict):
        assert set(plain) <= set(filled), (path, set(plain) - set(filled))
        out = [f"{path}/{k}" for k in filled if k not in plain]
        for k in plain:
            out += added_keys(plain[k], filled[k], f"{path}/{k}")
        return out
    assert plain == filled, path  # a judged number changed with --machine
    return []


def text_kept(plain: str, filled: str) -> list:
    """Every line of the plain output appears, in order, in the output with --machine; the
    lines it adds are returned."""
    rest = filled.splitlines()
    added, i = [], 0
    for line in plain.splitlines():
        while rest[i] != line:
            added.append(rest[i])
            i += 1
        i += 1
    return added + rest[i:]


def test_eval(f, cli):
    plain, filled = with_and_without(cli, "eval", f["qrels"], f["run"], "-m", "nDCG@5", "-m", "Judged@5",
                                     "--format", "json", f["machine"])
    assert sorted(added_keys(json.loads(plain), json.loads(filled))) == ["/machine", f"/runs/{f['run']}/machine_filled"]
    d = json.loads(filled)
    assert list(d["runs"][str(f["run"])]["machine_filled"]["mean"]) == ["nDCG@5 machine-filled"]  # no Judged@5
    plain, filled = with_and_without(cli, "eval", f["qrels"], f["run"], "-m", "nDCG@5", f["machine"])
    added = text_kept(plain, filled)
    assert added[0].startswith("machine-filled: the holes labelled by the machine judge") and "not judgments" in added[0]
    assert any("nDCG@5 machine-filled" in line for line in added)


def test_holes(f, cli):
    plain, filled = with_and_without(cli, "holes", f["qrels"], f["run"], "-k", 5, "--format", "json", f["machine"])
    p, d = json.loads(plain), json.loads(filled)
    assert sorted(added_keys(p, d)) == ["/machine", f"/runs/{f['run']}/machine_filled"]
    entry = d["runs"][str(f["run"])]
    assert entry["machine_filled"]["holes_machine_labelled"] == entry["machine_filled"]["holes"] == 6  # x y z, u v, w
    plain, filled = with_and_without(cli, "holes", f["qrels"], f["run"], "-k", 5, f["machine"])
    assert any("machine-filled" in line for line in text_kept(plain, filled))


def test_compare(f, cli):
    args = ("compare", f["qrels"], f["run2"], f["run"], "-m", "P@5", "--permutations", 200)
    plain, filled = with_and_without(cli, *args, "--format", "json", f["machine"])
    assert added_keys(json.loads(plain), json.loads(filled)) == ["/machine"]
    plain, filled = with_and_without(cli, *args, f["machine"])
    added = text_kept(plain, filled)
    assert added and all("machine" in line or not line.strip() for line in added), added


def test_report(f, cli):
    args = ("report", f["qrels"], f["run2"], f["run"], "-m", "P@5", "--permutations", 200)
    plain, filled = with_and_without(cli, *args, "--format", "csv", f["machine"])
    rows = lambda text: [tuple(r) for r in csv.reader(io.StringIO(text))]  # noqa: E731
    extra = set(rows(filled)) - set(rows(plain))
    assert set(rows(plain)) <= set(rows(filled)) and extra
    assert all(r[1].endswith(" machine-filled") and r[4] == r[5] == "" for r in extra)  # named, never tested
    plain, filled = with_and_without(cli, *args, "--format", "md", f["machine"])
    head_plain, head_filled = plain.splitlines()[0], filled.splitlines()[0]
    assert head_filled.startswith(head_plain.rstrip("|")) and head_filled.endswith("| P@5 machine-filled |")
    html = f["dir"] / "r.html"
    assert cli(*args, "--machine", f["machine"], "-o", html)[0] == 0
    page = html.read_text()
    assert "<h2 id='machine'>Machine labels</h2>" in page and "not judgments" in page


def test_infer_holes_compare_with_a_sample_keep_the_ppi_apart(f, cli):
    """With --sample the prediction-powered estimates are one block of their own (``ppi``);
    the rest is what the command prints with --sample alone."""
    pool = f["dir"] / "s.pool"
    assert cli("pool", f["qrels"], f["run"], "--depth", 10, "--strategy", "sample", "--budget", 4,
               "--seed", 3, "-o", pool)[0] == 0
    truth = dict((tuple(line.split()[::2][:2]), line.split()[3]) for line in MACHINE.splitlines())
    merged = f["dir"] / "merged.txt"  # the people's labels of the drawn pairs (here: the machine's, by chance)
    merged.write_text(QRELS + "".join(f"{p.qid} 0 {p.docid} {truth[(p.qid, p.docid)]}\n"
                                      for p in read_pool_file(pool).pairs))
    plain = json.loads(cli("holes", merged, f["run"], "--sample", pool, "--format", "json")[1])
    code, out, err = cli("holes", merged, f["run"], "--sample", pool, "--machine", f["machine"],
                         "--format", "json")
    assert code == 0, err
    assert sorted(added_keys(plain, json.loads(out))) == ["/machine", "/ppi", f"/runs/{f['run']}/machine_filled"]


def test_qrels_merge_takes_no_machine_labels_and_refuses_a_pool_file(f, capsys, cli):
    with pytest.raises(SystemExit) as exit_:  # no such option: merging is of judgments only
        cli("qrels", "merge", f["qrels"], f["machine"], "-o", f["dir"] / "m.txt", "--machine", f["machine"])
    assert exit_.value.code == 2 and "unrecognized arguments: --machine" in capsys.readouterr().err
    pool = f["dir"] / "m.pool"
    assert cli("pool", f["qrels"], f["run"], "--depth", 10, "--strategy", "machine", "--machine",
               f["machine"], "-o", pool)[0] == 0
    code, out, err = cli("qrels", "merge", f["qrels"], pool, "-o", f["dir"] / "m.txt")
    assert code == 2 and "pool file" in err and "not judgments" in err and err.count("\n") == 1
    assert not (f["dir"] / "m.txt").exists()


def test_pool_keeps_every_pair_the_machine_labelled(f, cli):
    """The machine's labels order the pool; they judge nothing: the pool holds every hole,
    the same pairs as depth pooling, with the machine's grade in a column named machine."""
    out = {}
    for strategy in ("depth", "machine", "disagreement"):
        out[strategy] = f["dir"] / f"{strategy}.pool"
        extra = () if strategy == "depth" else ("--machine", f["machine"])
        assert cli("pool", f["qrels"], f["run"], "--depth", 10, "--strategy", strategy, *extra,
                   "-o", out[strategy])[0] == 0
    for strategy, path in out.items():
        pf = read_pool_file(path)
        assert {(p.qid, p.docid) for p in pf.pairs} == HOLES, strategy
        if strategy != "depth":
            assert f"strategy={strategy}" in path.read_text().splitlines()[0] and "machine" in pf.pairs[0].fields


def test_the_judging_app_never_shows_or_exports_the_machine_grade(f, cli):
    pytest.importorskip("fastapi")
    pytest.importorskip("sqlalchemy")
    from fastapi.testclient import TestClient

    from judged.judge.app import create_app

    pool = f["dir"] / "m.pool"
    assert cli("pool", f["qrels"], f["run"], "--depth", 10, "--strategy", "machine", "--machine",
               f["machine"], "-o", pool)[0] == 0
    (f["dir"] / "queries.tsv").write_text("q1\tone\nq2\ttwo\nq3\tthree\n")
    (f["dir"] / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": d, "text": "text of " + d}) + "\n"
                                                   for _, d in sorted(HOLES)))
    db = str(f["dir"] / "j.db")
    assert cli("judge", "init", "--db", db, "--pool", pool, "--queries", f["dir"] / "queries.tsv",
               "--corpus", f["dir"] / "corpus.jsonl", "--overlap", 0)[0] == 0
    code, out, err = cli("judge", "add-assessor", "alice", "--db", db)
    assert code == 0, err
    token = out.strip().splitlines()[-1]
    c = TestClient(create_app(db), base_url="http://127.0.0.1:8000")   # a Host the app answers to (issue #35)
    r = c.post("/api/next", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200
    assert "machine" not in json.dumps(r.json())  # the assessor judges blind
    code, out, err = cli("judge", "export", "--db", db, "-o", f["dir"] / "labels.txt")
    assert code == 0, err
    assert (f["dir"] / "labels.txt").read_text() == ""  # nobody judged yet: nothing, whatever the machine said
