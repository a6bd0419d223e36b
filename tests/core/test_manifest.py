"""Frozen evaluation sets and evaluation records."""

import json
import shutil
import sys

import pytest

from judged.cli import main
from judged.analyses.comparison import compare_records
from judged.core.errors import JudgedError
from judged.core.manifest import Manifest, ManifestError, evaluate_frozen, load_record

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


@pytest.fixture()
def frozen(example, tmp_path):
    for f in ("qrels.txt", "bm25.run", "dense.run"):
        shutil.copy(example / f, tmp_path / f)
    (tmp_path / "queries.tsv").write_text("query-id\ttext\n" + "".join(f"q{i:02d}\tquery {i}\n" for i in range(1, 31)))
    assert main(["freeze", "--qrels", str(tmp_path / "qrels.txt"), "--queries", str(tmp_path / "queries.tsv"),
                 "--corpus-id", "toy-v1", "-m", "nDCG(gain=exp)@10", "-m", "AP", "-o", str(tmp_path / "eval.toml")]) == 0
    return tmp_path


def test_manifest_records_every_setting(frozen):
    data = tomllib.loads((frozen / "eval.toml").read_text())
    assert data["corpus"]["id"] == "toy-v1"
    assert data["queries"]["count"] == 30 and data["queries"]["ids"][0] == "q01" and len(data["queries"]["sha256"]) == 64
    assert data["qrels"]["relevance_unit"] == "document" and data["qrels"]["grades"] == [0, 1, 2, 3]
    assert data["qrels"]["judgments"] == 30 * 30 and len(data["qrels"]["sha256"]) == 64
    ndcg = data["measures"][0]
    assert ndcg["measure"] == "nDCG(gain=exp)@10" and ndcg["gain"] == "exp" and ndcg["cutoff"] == 10
    assert ndcg["discount"] == "log2(rank+1)"
    assert ndcg["convention"].startswith("nDCG@10 gain=exp discount=log2(rank+1)")
    assert data["conventions"]["ties"] == "trec" and data["conventions"]["complete"] is True


def test_eval_with_manifest_uses_frozen_settings(frozen, capsys):
    assert main(["eval", "--manifest", str(frozen / "eval.toml"), str(frozen / "bm25.run"), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["measures"]) == ["nDCG(gain=exp)@10", "AP"]
    assert out["runs"][str(frozen / "bm25.run")]["queries"]["evaluated"] == 30  # the frozen query set only


def test_changed_qrels_are_refused_with_a_diff(frozen, capsys):
    lines = (frozen / "qrels.txt").read_text().splitlines()
    q3 = next(i for i, line in enumerate(lines) if line.startswith("q03 "))
    lines[q3] = lines[q3][:-1] + ("3" if lines[q3][-1] != "3" else "0")
    lines = [line for line in lines if not line.startswith("q07 ")]
    (frozen / "qrels.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(ManifestError) as err:
        evaluate_frozen(frozen / "eval.toml", [str(frozen / "bm25.run")])
    text = str(err.value)
    assert "q03 (30 judgments, a grade or docid differs)" in text
    assert "1 query no longer judged: q07" in text
    assert main(["compare", "--manifest", str(frozen / "eval.toml"), str(frozen / "bm25.run"),
                 str(frozen / "dense.run")]) == 2
    assert "no longer matches" in capsys.readouterr().err


def test_changed_query_set_is_refused(frozen):
    (frozen / "queries.tsv").write_text("q01\nq02\nq99\n")
    with pytest.raises(ManifestError, match=r"query set .* changed: 1 added \(q99\), 28 removed"):
        evaluate_frozen(frozen / "eval.toml", [str(frozen / "bm25.run")])


def test_reformatted_qrels_still_match(frozen):
    text = (frozen / "qrels.txt").read_text().replace(" ", "\t")
    (frozen / "qrels.txt").write_text(text)
    result = evaluate_frozen(frozen / "eval.toml", [str(frozen / "bm25.run")])
    assert len(result.runs[str(frozen / "bm25.run")].qids) == 30


def test_manifest_fixes_measures_and_conventions(frozen, capsys):
    base = ["eval", "--manifest", str(frozen / "eval.toml"), str(frozen / "bm25.run")]
    assert main(base + ["-m", "P@5"]) == 2
    assert main(base + ["--ties", "input"]) == 2
    err = capsys.readouterr().err
    assert "fixes the measures" in err and "fixes the conventions" in err


def test_record_and_compare_records(frozen, capsys):
    a, b = frozen / "a.json", frozen / "b.json"
    assert main(["eval", "--manifest", str(frozen / "eval.toml"), str(frozen / "bm25.run"), "--save", str(a)]) == 0
    assert main(["eval", "--manifest", str(frozen / "eval.toml"), str(frozen / "dense.run"), "--save", str(b)]) == 0
    capsys.readouterr()
    rec = load_record(a)
    run = rec["runs"][str(frozen / "bm25.run")]
    assert rec["ranked_depth"] is None  # AP has no cutoff: whole rankings kept
    assert len(run["ranked"]["q01"]) == 20 and len(run["per_query"]) == 30
    assert rec["ideal_grades"]["q01"] == sorted(rec["ideal_grades"]["q01"], reverse=True)
    assert rec["tool"].startswith("judged ") and len(rec["qrels"]["sha256"]) == 64
    assert rec["manifest"]["sha256"] and rec["measures"]["AP"].startswith("AP rel>=1")

    c = compare_records(a, b, permutations=2000)
    direct = compare(frozen)
    assert direct.to_dict()["manifest"]["path"].endswith("eval.toml") and len(direct.to_dict()["manifest"]["sha256"]) == 64
    with pytest.raises(JudgedError, match="fixes the measures"):
        run_compare_with_measures(frozen)
    x, y = c.get("AP", str(frozen / "dense.run")), direct.get("AP", str(frozen / "dense.run"))
    assert x.test.mean_delta == pytest.approx(y.test.mean_delta, abs=1e-15)
    assert x.test.p_values["t-test"] == pytest.approx(y.test.p_values["t-test"], rel=1e-12)


def run_compare_with_measures(frozen):
    from judged.analyses.comparison import compare as run_compare

    return run_compare(None, [str(frozen / "bm25.run"), str(frozen / "dense.run")], ["AP"], manifest=frozen / "eval.toml")


def compare(frozen):
    from judged.analyses.comparison import compare as run_compare

    return run_compare(None, [str(frozen / "bm25.run"), str(frozen / "dense.run")], manifest=frozen / "eval.toml",
                       permutations=2000)


def test_compare_records_refuses_different_judgments(example, tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    main(["eval", str(example / "qrels.txt"), str(example / "bm25.run"), "-m", "nDCG@10", "--save", str(a)])
    lines = (example / "qrels.txt").read_text().splitlines()
    (tmp_path / "q2.txt").write_text("\n".join(lines[:-1]) + "\nq40 0 new-doc 2\n")
    main(["eval", str(tmp_path / "q2.txt"), str(example / "dense.run"), "-m", "nDCG@10", "--save", str(b)])
    capsys.readouterr()
    with pytest.raises(JudgedError, match="different judgments"):
        compare_records(a, b)
    assert main(["compare-records", str(a), str(b), "--allow-different-qrels", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("q40" in line for line in out["qrels_changes"])
    assert out["comparisons"][0]["queries"] == 40


def test_not_a_manifest(tmp_path):
    (tmp_path / "x.toml").write_text("a = 1\n")
    with pytest.raises(JudgedError, match="not a judged manifest"):
        Manifest.load(tmp_path / "x.toml")


def test_query_files(tmp_path):
    from judged.core.manifest import read_query_ids

    (tmp_path / "queries.jsonl").write_text('{"_id": "q2", "text": "b"}\n{"_id": "q1", "text": "a"}\n')
    (tmp_path / "queries.json").write_text('{"q3": "c", "q1": "a"}')
    (tmp_path / "topics.txt").write_text("# ids\nq9 first\nq8 second\n")
    assert read_query_ids(tmp_path / "queries.jsonl")[0] == ["q1", "q2"]
    assert read_query_ids(tmp_path / "queries.json")[0] == ["q1", "q3"]
    ids, sha = read_query_ids(tmp_path / "topics.txt")
    assert ids == ["q8", "q9"] and len(sha) == 64


def test_compare_save_keeps_every_run(example, tmp_path, capsys):
    rec = tmp_path / "cmp.json"
    assert main(["compare", str(example / "qrels.txt"), str(example / "bm25.run"), str(example / "dense.run"),
                 "-m", "nDCG@10", "--permutations", "500", "--format", "json", "--save", str(rec)]) == 0
    capsys.readouterr()
    data = load_record(rec)
    assert list(data["runs"]) == [str(example / "bm25.run"), str(example / "dense.run")]
    assert data["ranked_depth"] == 10 and all(len(v) <= 10 for v in data["runs"][str(example / "dense.run")]["ranked"].values())
    assert data["settings"]["complete"] is True and len(data["ideal_grades"]["q01"]) == 10


def test_manifest_paths_are_relative_to_the_manifest(example, tmp_path, monkeypatch):
    (tmp_path / "sets").mkdir()
    shutil.copy(example / "qrels.txt", tmp_path / "qrels.txt")
    monkeypatch.chdir(tmp_path)
    Manifest.freeze("qrels.txt", ["nDCG@10"]).write("sets/eval.toml")
    assert Manifest.load(tmp_path / "sets" / "eval.toml").qrels["path"] == "../qrels.txt"
    monkeypatch.chdir(tmp_path / "sets")  # used from elsewhere: the qrels are still found
    result = evaluate_frozen("eval.toml", [str(example / "bm25.run")])
    assert len(result.qrels) == 1200


def test_subtopic_judgments_are_frozen(tmp_path):
    """With a diversity measure the manifest fingerprints the subtopic lines: a subtopic
    judgment that changes while every document's largest grade stays is still refused."""
    q = tmp_path / "q.txt"
    q.write_text("q 1 a 1\nq 2 a 1\nq 2 b 1\n")
    r = tmp_path / "r.txt"
    r.write_text("q Q0 a 1 2 x\nq Q0 b 2 1 x\n")
    Manifest.freeze(str(q), ["alpha-nDCG@2"]).write(str(tmp_path / "m.toml"))
    assert evaluate_frozen(str(tmp_path / "m.toml"), [str(r)]).runs[str(r)].values["alpha-nDCG@2"][0] > 0
    q.write_text("q 1 a 1\nq 2 a 0\nq 2 b 1\n")  # a's largest grade is still 1
    with pytest.raises(ManifestError, match="judgments changed for 1 query"):
        evaluate_frozen(str(tmp_path / "m.toml"), [str(r)])
