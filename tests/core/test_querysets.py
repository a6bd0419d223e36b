"""One query-set rule for every command (judged.core.querysets), refused disjoint runs, depths.

The collection: 50 queries; ``full.run`` ranks 12 documents for every query (some
unjudged), ``part.run`` ranks 10 judged documents for the first 30 queries only (a run
covering 30 of 50 queries, fully judged), as in issue #14's outside test.
"""

import json
import random
import re

import numpy as np
import pytest

from judged import evaluate
from judged.cli import main
from judged.analyses.comparison import compare
from judged.core.errors import QuerySetError
from judged.analyses.holes.unjudged import holes_report
from judged.analyses.qrels_ops import rejudge


def write_collection(out):
    rng = random.Random(1)
    with open(out / "qrels.txt", "w") as q, open(out / "full.run", "w") as a, open(out / "part.run", "w") as b:
        for i in range(1, 51):
            qid = f"q{i:02d}"
            docs = [f"d{i}-{j}" for j in range(30)]
            for d in docs[:20]:
                q.write(f"{qid} 0 {d} {rng.choice([0, 0, 1, 2])}\n")
            for r, d in enumerate(rng.sample(docs, 12)):
                a.write(f"{qid} Q0 {d} {r + 1} {100 - r} full\n")
            if i <= 30:
                for r, d in enumerate(rng.sample(docs[:20], 10)):
                    b.write(f"{qid} Q0 {d} {r + 1} {100 - r} part\n")
    return out


@pytest.fixture()
def coll(tmp_path, monkeypatch):
    monkeypatch.chdir(write_collection(tmp_path))
    return tmp_path


def cli_json(capsys, *args):
    assert main([*args, "--format", "json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_holes_compare_and_rejudge_agree_on_a_run_covering_30_of_50(coll, capsys):
    # before: holes compared part's 30-query mean with full's 50-query mean and said "can flip",
    # compare (50 queries, missing = 0) said "cannot flip"; now both use every qrels query
    h = cli_json(capsys, "holes", "qrels.txt", "full.run", "part.run")
    c = cli_json(capsys, "compare", "qrels.txt", "full.run", "part.run", "--regressions", "0")
    pair = h["pairs"][0]
    flip = c["holes"]["comparisons"][0]
    assert pair["difference"] == pytest.approx(-c["comparisons"][0]["mean_delta"], abs=1e-12)
    assert (pair["min"], pair["max"]) == (pytest.approx(-flip["max"]), pytest.approx(-flip["min"]))
    assert pair["can_flip"] == flip["can_flip"]
    assert h["runs"]["part.run"]["score"] == pytest.approx(c["comparisons"][0]["mean_run"])
    # Judged@10 of the fully judged run lacking 20 queries: the same in both (0 where it ranks nothing)
    assert h["runs"]["part.run"]["judged"] == c["holes"]["runs"]["part.run"]["judged"] == pytest.approx(0.6)
    assert h["runs"]["part.run"]["holes"] == c["holes"]["runs"]["part.run"]["holes"] == 0
    for out in (h, c):
        assert out["query_set"]["rule"] == "qrels" and out["query_set"]["runs"]["part.run"]["missing_from_run"] == 20
    assert any("part.run ranks nothing for 20 of the 50" in w for w in h["warnings"])
    r = cli_json(capsys, "rejudge", "--qrels", "qrels.txt", "--qrels", "qrels.txt", "full.run", "part.run")
    assert r["runs"]["part.run"]["score"][0] == pytest.approx(c["comparisons"][0]["mean_run"])
    assert r["query_set"]["rule"] == "qrels"


def test_compare_says_which_queries_a_run_misses(coll, capsys):
    assert main(["compare", "qrels.txt", "full.run", "part.run", "--regressions", "0"]) == 0
    out = capsys.readouterr().out
    assert "part.run 0.6000 (0 holes; 20 of 50 queries not ranked, 0 there)" in out
    assert "query set: queries=qrels" in out
    assert "part.run ranks nothing for 20 of the 50 qrels queries" in out


def test_eval_keeps_trec_eval_query_set_and_warns_when_runs_differ(coll, capsys):
    d = cli_json(capsys, "eval", "qrels.txt", "full.run", "part.run")
    assert d["runs"]["part.run"]["queries"]["evaluated"] == 30  # trec_eval's default: the run's own queries
    assert d["query_set"]["rule"] == "run-and-qrels" and d["query_set"]["same_for_every_run"] is False
    assert any("the runs cover different queries" in w and "part.run 30" in w for w in d["warnings"])
    d = cli_json(capsys, "eval", "qrels.txt", "full.run", "part.run", "--complete")
    assert d["runs"]["part.run"]["queries"]["evaluated"] == 50 and d["query_set"]["same_for_every_run"] is True
    assert not any("cover different queries" in w for w in d["warnings"])
    assert main(["eval", "qrels.txt", "full.run", "part.run"]) == 0
    assert "query set: queries=run-and-qrels" in capsys.readouterr().out
    # one run alone: nothing to compare, but the 20 qrels queries it lacks are named (issue 34)
    d = cli_json(capsys, "eval", "qrels.txt", "part.run")
    assert d["query_set"]["same_for_every_run"] is True
    assert d["warnings"] == [
        "run part.run ranks nothing for 20 of the 50 qrels queries: left out of the mean (queries=run-and-qrels, "
        "trec_eval's default); --complete scores such queries 0 (trec_eval -c), as judged compare, holes and report do"]
    assert cli_json(capsys, "eval", "qrels.txt", "full.run")["warnings"] == []  # a run ranking every qrels query


def test_eval_and_holes_say_why_their_numbers_differ(coll, capsys):
    """Issue 34: eval printed 0.6790 (the run's 30 queries) and holes 0.4074 (every qrels
    query) for the same run, side by side, eval without a note. Each now names the queries
    the run lacks and the rule that applies, and eval --complete gives holes' number."""
    e = cli_json(capsys, "eval", "qrels.txt", "part.run", "-m", "nDCG@10")
    h = cli_json(capsys, "holes", "qrels.txt", "part.run", "-m", "nDCG@10")
    c = cli_json(capsys, "eval", "qrels.txt", "part.run", "-m", "nDCG@10", "--complete")
    assert e["runs"]["part.run"]["mean"]["nDCG@10"] * 30 / 50 == pytest.approx(h["runs"]["part.run"]["score"])
    assert c["runs"]["part.run"]["mean"]["nDCG@10"] == pytest.approx(h["runs"]["part.run"]["score"], abs=1e-15)
    said = "run part.run ranks nothing for 20 of the 50 qrels queries: "
    assert [w for w in e["warnings"] if w.startswith(said)] == [
        said + "left out of the mean (queries=run-and-qrels, trec_eval's default); --complete scores such queries 0 "
        "(trec_eval -c), as judged compare, holes and report do"]
    assert [w for w in h["warnings"] if w.startswith(said)] == [
        said + "scored 0 there (queries=qrels, trec_eval -c, as in judged compare, holes and report); judged eval "
        "leaves such queries out of a run's mean unless --complete"]
    assert [w for w in c["warnings"] if w.startswith(said)] == [w for w in h["warnings"] if w.startswith(said)]
    assert main(["eval", "qrels.txt", "part.run"]) == 0
    assert "--complete scores such queries 0" in " ".join(capsys.readouterr().out.split())


def test_many_runs_lacking_queries_get_one_line(coll, capsys):
    for name in ("p2.run", "p3.run"):
        with open(name, "w") as fh:
            fh.write(open("part.run").read())
    d = cli_json(capsys, "eval", "qrels.txt", "part.run", "p2.run", "p3.run", "full.run")
    assert [w for w in d["warnings"] if "rank nothing" in w] == [
        "3 runs (part.run, p2.run, p3.run) rank nothing for 20 of the 50 qrels queries: left out of the mean "
        "(queries=run-and-qrels, trec_eval's default); --complete scores such queries 0 (trec_eval -c), as judged "
        "compare, holes and report do"]


def test_meta_scores_every_run_over_the_qrels_queries(coll, capsys):
    d = cli_json(capsys, "meta", "power", "qrels.txt", "full.run", "part.run", "-m", "nDCG@10")
    assert d["queries"] == 50 and d["dropped_queries"] == 0 and d["query_set"]["rule"] == "qrels"


def test_rejudge_compares_versions_over_the_queries_every_version_judges(coll, capsys):
    lines = open("qrels.txt").read().splitlines()
    with open("qrels-v1.txt", "w") as f:  # the first 10 queries only
        f.write("\n".join(x for x in lines if int(x.split()[0][1:]) <= 10) + "\n")
    r = rejudge(["qrels-v1.txt", "qrels.txt"], ["full.run", "part.run"])
    v1 = evaluate("qrels-v1.txt", ["full.run"], ["nDCG@10"], complete=True).aggregate("full.run", "nDCG@10")
    assert r.scores["full.run"] == [pytest.approx(v1), pytest.approx(v1)]  # the same 10 queries, same labels
    assert r.flips() == [] and r.query_set.left_out == 40
    assert any("40 queries are judged in only some qrels versions" in w for w in r.warnings)


def test_a_run_sharing_no_query_id_is_refused(coll, capsys):
    with open("ids.run", "w") as f:  # '1' where the qrels say 'q01'
        f.write("".join(re.sub(r"^q0*", "", line) for line in open("part.run")))
    for args in (["eval", "qrels.txt", "ids.run"], ["compare", "qrels.txt", "full.run", "ids.run"],
                 ["holes", "qrels.txt", "ids.run"], ["report", "qrels.txt", "full.run", "ids.run", "--format", "md"],
                 ["meta", "power", "qrels.txt", "full.run", "ids.run"]):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "run ids.run shares no query id with the qrels qrels.txt" in err, err
        assert "'1'" in err and "'q01'" in err
    with pytest.raises(QuerySetError):
        compare("qrels.txt", {"full": "full.run", "ids": {"1": {"d1-1": 1.0}}}, ["nDCG@10"])
    # the library's evaluate() scores it as trec_eval does (over no query) and says why
    r = evaluate("qrels.txt", {"ids": {"1": {"d1-1": 1.0}}}, ["nDCG@10"])
    assert r.runs["ids"].counts["evaluated"] == 0
    assert any("only 0 of its 1 query ids are in the qrels" in w for w in r.checks.warnings(r))


def test_a_small_partial_overlap_is_named(coll, capsys):
    with open("mixed.run", "w") as f:
        f.write(open("part.run").read()[:2000])  # a few q.. queries
        f.write("".join(re.sub(r"^q0*", "", line) for line in open("full.run")))  # 50 queries the qrels lack
    d = cli_json(capsys, "eval", "qrels.txt", "mixed.run")
    assert any("only" in w and "of its" in w and "query ids are in the qrels" in w for w in d["warnings"])


def test_many_runs_with_the_same_small_overlap_get_one_warning(coll, capsys):
    # TREC DL 2019's official runs rank 200 queries, 43 of them judged: one line, not one per run
    text = open("part.run").read()[:2000] + "".join(re.sub(r"^q0*", "", line) for line in open("full.run"))
    for name in ("m1.run", "m2.run", "m3.run"):
        open(name, "w").write(text)
    d = cli_json(capsys, "eval", "qrels.txt", "m1.run", "m2.run", "m3.run")
    small = [w for w in d["warnings"] if "query ids are in the qrels" in w]
    assert len(small) == 1 and small[0].startswith("3 runs (m1.run, m2.run, m3.run): only 9 of each run's 59 query ids"), small
    d = cli_json(capsys, "eval", "qrels.txt", "m1.run", "m2.run")
    assert sum("query ids are in the qrels" in w for w in d["warnings"]) == 2


def deep_runs(out):
    """Two runs over the same 5 queries: one ranks 1001 documents per query, one 100."""
    rng = np.random.default_rng(3)
    with open(out / "qrels.txt", "w") as q, open(out / "deep.run", "w") as a, open(out / "shallow.run", "w") as b:
        for i in range(5):
            docs = [f"d{i}-{j}" for j in range(1200)]
            for j in rng.choice(1200, 60, replace=False):
                q.write(f"q{i} 0 {docs[j]} 1\n")
            for f, n in ((a, 1001), (b, 100)):
                for r, j in enumerate(rng.permutation(1200)[:n]):
                    f.write(f"q{i} Q0 {docs[j]} {r + 1} {2000 - r} x\n")


def test_unequal_depths_warn_and_depth_cut_scores_the_same_depth(tmp_path, monkeypatch, capsys):
    deep_runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    d = cli_json(capsys, "eval", "qrels.txt", "deep.run", "shallow.run", "-m", "AP", "-m", "R@1000")
    warning = next(w for w in d["warnings"] if "different numbers of documents" in w)
    assert "deep.run 1001, shallow.run 100" in warning and "--depth-cut 100" in warning
    assert d["query_set"]["runs"]["deep.run"]["max_depth"] == 1001
    # a cutoff within the shallowest depth reads the same depth in both: no warning
    assert not cli_json(capsys, "eval", "qrels.txt", "deep.run", "shallow.run", "-m", "P@10")["warnings"]
    # --depth-cut 100: deep.run scored as its own first 100 lines, declared in the convention
    with open("deep100.run", "w") as f:
        f.write("".join(line for line in open("deep.run") if int(line.split()[3]) <= 100))
    cut = cli_json(capsys, "eval", "qrels.txt", "deep.run", "-m", "AP", "--depth-cut", "100")
    ref = cli_json(capsys, "eval", "qrels.txt", "deep100.run", "-m", "AP")
    assert cut["runs"]["deep.run"]["mean"]["AP"] == ref["runs"]["deep100.run"]["mean"]["AP"]
    assert cut["measures"]["AP"].endswith("depth-cut=100")
    assert not any("different numbers" in w for w in
                   cli_json(capsys, "eval", "qrels.txt", "deep.run", "shallow.run", "-m", "AP", "--depth-cut",
                            "100")["warnings"])
    for args in (["compare", "qrels.txt", "deep.run", "shallow.run", "-m", "AP"],
                 ["meta", "power", "qrels.txt", "deep.run", "shallow.run", "-m", "AP"],
                 ["holes", "qrels.txt", "deep.run", "shallow.run", "-m", "AP"]):
        out = cli_json(capsys, *args, "--depth-cut", "100")
        assert "depth-cut=100" in json.dumps(out), args
    assert main(["report", "qrels.txt", "deep.run", "shallow.run", "-m", "AP", "--depth-cut", "100",
                 "--format", "csv"]) == 0
    capsys.readouterr()
    assert main(["eval", "qrels.txt", "deep.run", "--depth-cut", "0"]) == 2
    assert "--depth-cut must be a positive integer" in capsys.readouterr().err


def test_explain_states_its_convention_without_a_query_set(coll, capsys):
    assert main(["explain", "qrels.txt", "full.run", "-q", "q01"]) == 0
    out = capsys.readouterr().out
    assert "queries=" not in out and "one query: no mean, so no query set" in out


def test_library_entry_points_follow_the_rule(coll):
    assert holes_report("qrels.txt", ["full.run", "part.run"], samples=1).query_set.rule == "qrels"
    c = compare("qrels.txt", ["full.run", "part.run"], permutations=100, regressions=0)
    assert c.query_set.rule == "qrels" and c.to_dict()["query_set"]["qrels_queries"] == 50


def sample_pool(capsys):
    assert main(["pool", "qrels.txt", "full.run", "part.run", "--depth", "12", "--strategy", "sample", "--budget",
                 "30", "--seed", "1", "-o", "sample.pool"]) == 0
    capsys.readouterr()
    return "sample.pool"


COMPARING = {  # commands that compare runs and landed beside the rule: (argv, where the JSON keeps the query set)
    "meta holdout": (["meta", "holdout", "qrels.txt", "full.run", "part.run", "--samples", "5"], "query_set"),
    "meta pooling": (["meta", "pooling", "qrels.txt", "full.run", "part.run", "--budget", "20"], "query_set"),
    "infer": (["infer", "qrels.txt", "full.run", "part.run", "--sample", "sample.pool"], "query_set"),
}


@pytest.mark.parametrize("command", list(COMPARING))
def test_every_command_comparing_runs_scores_every_qrels_query(coll, capsys, command):
    # before: meta pooling and infer scored part.run over its own 30 queries (queries=run-and-qrels) and
    # compared that mean with full.run's over 50; holdout and both others printed no query set and no warning
    sample_pool(capsys)
    argv, key = COMPARING[command]
    d = cli_json(capsys, *argv)
    qs = d[key]
    assert qs["rule"] == "qrels" and qs["qrels_queries"] == 50
    assert qs["runs"]["part.run"]["missing_from_run"] == 20 and qs["runs"]["full.run"]["evaluated"] == 50
    assert "queries=qrels" in json.dumps(d) and "queries=run-and-qrels" not in json.dumps(d)
    assert any("run part.run ranks nothing for 20 of the 50 qrels queries" in w for w in d["warnings"])
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "query set: queries=qrels" in out and "run part.run ranks nothing for 20" in " ".join(out.split())


def test_the_refusal_quotes_query_ids_without_a_bom(coll, capsys):
    """A run file starting with a UTF-8 BOM is read without it; the refusal's sample of the
    run's query ids, which eval reads from the file apart, quoted '\\ufeff1'."""
    with open("bom.run", "w", encoding="utf-8-sig") as f:
        f.write("".join(re.sub(r"^q0*", "", line) for line in open("part.run")))
    assert main(["eval", "qrels.txt", "bom.run"]) == 2
    err = capsys.readouterr().err
    assert "(run query ids: '1', " in err and "ufeff" not in err, err


def test_a_run_sharing_no_query_id_is_refused_by_the_later_commands(coll, capsys):
    sample_pool(capsys)
    with open("ids.run", "w") as f:
        f.write("".join(re.sub(r"^q0*", "", line) for line in open("part.run")))
    for args in (["meta", "holdout", "qrels.txt", "full.run", "ids.run"],
                 ["meta", "pooling", "qrels.txt", "full.run", "ids.run", "--budget", "5"],
                 ["infer", "qrels.txt", "full.run", "ids.run", "--sample", "sample.pool"],
                 ["pool", "qrels.txt", "ids.run", "--depth", "10", "-o", "p.txt"],
                 ["rejudge", "qrels.txt", "full.run", "ids.run", "--versus-qrels", "qrels.txt"],
                 ["meta", "stability", "qrels.txt", "full.run", "ids.run", "-m", "AP", "-m", "P@10"]):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "run ids.run shares no query id with the qrels qrels.txt" in err, (args, err)


def test_every_command_offering_depth_cut_takes_it(tmp_path, monkeypatch, capsys):
    # before: meta pooling and infer offered --depth-cut and died on it with a TypeError traceback
    deep_runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["pool", "qrels.txt", "deep.run", "shallow.run", "--depth", "20", "--strategy", "sample", "--budget",
                 "20", "--seed", "1", "-o", "sample.pool"]) == 0
    with open("answers.txt", "w") as f:
        f.write("deep.run q0 yes\nshallow.run q0 no\n")
    runs = ["qrels.txt", "deep.run", "shallow.run"]
    for argv in (["eval", *runs, "-m", "AP"], ["compare", *runs, "-m", "AP"], ["report", *runs, "--format", "csv"],
                 ["holes", *runs, "-m", "AP"], ["rejudge", *runs, "--versus-qrels", "qrels.txt"],
                 ["answers", *runs, "--answers", "answers.txt"], ["infer", *runs, "--sample", "sample.pool"],
                 ["meta", "power", *runs], ["meta", "stability", *runs, "-m", "AP", "-m", "P@10"],
                 ["meta", "holdout", *runs, "--samples", "5"], ["meta", "pooling", *runs, "--budget", "10"]):
        capsys.readouterr()
        assert main([*argv, "--depth-cut", "50"]) == 0, (argv, capsys.readouterr().err)
        out = " ".join(capsys.readouterr().out.split())
        # declared in the output (rejudge's table stated no convention before); report's csv: the table alone
        assert "depth-cut=50" in out or argv[0] == "report", argv
