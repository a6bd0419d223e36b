"""BEIR folders, BEIR's ignore_identical_ids, and irds:<dataset-id> sources (offline)."""

import json

import pytest

import judged
from judged.cli import main
from judged.core.errors import ParseError

QRELS_TSV = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\nq2\td3\t1\n"
DEV_TSV = "query-id\tcorpus-id\tscore\nq1\td2\t1\n"
RUN = "q1 Q0 q1 1 9.0 dense\nq1 Q0 d2 2 8.0 dense\nq1 Q0 d1 3 7.0 dense\nq2 Q0 d3 1 5.0 dense\n"


@pytest.fixture
def beir_dir(tmp_path):
    d = tmp_path / "scifact"
    (d / "qrels").mkdir(parents=True)
    (d / "qrels" / "test.tsv").write_text(QRELS_TSV)
    (d / "qrels" / "dev.tsv").write_text(DEV_TSV)
    (d / "queries.jsonl").write_text('{"_id": "q1", "text": "what is x"}\n{"_id": "q2", "text": "why y"}\n')
    (d / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": f"d{i}", "title": f"T{i}", "text": f"text {i}"})
                                              for i in range(1, 4)) + "\n")
    (tmp_path / "dense.run").write_text(RUN)
    return d


def eval_json(capsys, *argv):
    assert main(["eval", *argv, "-m", "nDCG@10", "-m", "RR", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_beir_folder_reads_qrels_test_tsv(beir_dir, capsys):
    out = eval_json(capsys, "--beir", str(beir_dir), str(beir_dir.parent / "dense.run"))
    assert out["qrels"]["path"].endswith("qrels/test.tsv") and out["qrels"]["judgments"] == 3
    run = out["runs"][str(beir_dir.parent / "dense.run")]
    # q1 ranks the unjudged document 'q1' first, so RR(q1) = 1/2; q2 = 1
    assert run["mean"]["RR"] == pytest.approx((0.5 + 1.0) / 2)
    assert "identical-ids=kept" in out["measures"]["RR"]


def test_beir_ignore_identical_ids_drops_docid_equal_to_qid(beir_dir, capsys):
    out = eval_json(capsys, "--beir", str(beir_dir), str(beir_dir.parent / "dense.run"), "--ignore-identical-ids")
    run = next(iter(out["runs"].values()))
    assert run["mean"]["RR"] == 1.0  # 'q1' dropped: d2 now at rank 1
    assert "identical-ids=dropped" in out["measures"]["nDCG@10"]


def test_beir_split(beir_dir, capsys):
    out = eval_json(capsys, "--beir", str(beir_dir), str(beir_dir.parent / "dense.run"), "--split", "dev")
    assert out["qrels"]["judgments"] == 1


def test_beir_missing_split_is_one_line_error(beir_dir, capsys):
    assert main(["eval", "--beir", str(beir_dir), str(beir_dir.parent / "dense.run"), "--split", "train"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("judged: error:") and "splits here: dev, test" in err


def test_eval_without_run_is_one_line_error(beir_dir, capsys):
    assert main(["eval", str(beir_dir / "qrels" / "test.tsv")]) == 2
    assert "at least one RUN" in capsys.readouterr().err


def test_api_takes_beir_results_dict_and_matches_beir_ignore_identical_ids(beir_dir):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = judged.core.io.dataset_qrels(beir_dir)
    results = {"q1": {"q1": 0.9, "d2": 0.8, "d1": 0.7}, "q2": {"d3": 0.5, "q2": 0.6}}
    r = judged.evaluate(qrels, {"dense": results}, ["nDCG@10", "P@1"], ignore_identical_ids=True)
    # BEIR's EvaluateRetrieval.evaluate(ignore_identical_ids=True): pop docid == qid, then pytrec_eval
    popped = {q: {d: s for d, s in ds.items() if d != q} for q, ds in results.items()}
    qd = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
    beir = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut.10", "P.1"}).evaluate(popped)
    mean = r.mean().loc["dense"]
    assert mean["nDCG@10"] == pytest.approx(sum(v["ndcg_cut_10"] for v in beir.values()) / 2, abs=1e-12)
    assert mean["P@1"] == 1.0
    kept = judged.evaluate(qrels, {"dense": results}, ["P@1"]).mean().loc["dense", "P@1"]
    assert kept == 0.0  # MTEB's default: both queries rank their own id first


def test_beir_queries_and_docs(beir_dir):
    from judged.core.io import beir

    assert beir.load_queries(beir_dir) == {"q1": "what is x", "q2": "why y"}
    assert beir.load_docs(beir_dir, ["d2"]) == {"d2": {"title": "T2", "text": "text 2"}}
    assert len(beir.load_docs(beir_dir)) == 3
    with pytest.raises(ParseError, match="no such BEIR folder"):
        beir.qrels_path(beir_dir / "nope")


# --- ir_datasets: a local dataset registered in its registry, nothing downloaded ---------

@pytest.fixture
def irds_id(local_irds):
    return local_irds("q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\n", docs="d1\tfirst document\nd2\tsecond document\nd3\tthird\n",
                      queries="q1\twhat is x\nq2\twhy y\n")


def test_irds_qrels_equal_the_file(irds_id, tmp_path):
    q = judged.read_qrels(f"irds:{irds_id}")
    assert q.source == f"irds:{irds_id}" and len(q) == 3
    run = {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d3": 1.0}}
    a = judged.evaluate(f"irds:{irds_id}", {"r": run}, ["nDCG@10", "AP"]).mean()
    b = judged.evaluate(str(tmp_path / "qrels.txt"), {"r": run}, ["nDCG@10", "AP"]).mean()
    assert a.equals(b)


def test_irds_on_the_command_line(irds_id, tmp_path, capsys):
    (tmp_path / "r.run").write_text(RUN)
    out = eval_json(capsys, f"irds:{irds_id}", str(tmp_path / "r.run"))
    assert out["qrels"]["path"] == f"irds:{irds_id}"


def test_irds_queries_and_docs(irds_id):
    from judged.core.io import irds

    assert irds.load_queries(irds_id) == {"q1": "what is x", "q2": "why y"}
    assert irds.load_docs(f"irds:{irds_id}", ["d2"]) == {"d2": {"title": "", "text": "second document"}}
    assert set(irds.load_docs(irds_id)) == {"d1", "d2", "d3"}


def test_irds_unknown_dataset_is_a_parse_error(capsys):
    pytest.importorskip("ir_datasets")
    assert main(["eval", "irds:no/such/dataset", "x.run"]) == 2
    assert "irds:no/such/dataset: no such ir_datasets dataset" in capsys.readouterr().err


def test_judged_evaluate_stays_callable_after_its_module_is_imported():
    import judged.core.evaluation as module  # the engine lives in judged.core.evaluation, not judged.evaluate

    assert module.Result is not None
    assert judged.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["RR"]).mean().iloc[0, 0] == 1.0


def test_texts_from_any_source(beir_dir, irds_id, tmp_path):
    from judged.core.io.texts import read_docs, read_queries

    assert read_queries(beir_dir) == read_queries(f"irds:{irds_id}") == {"q1": "what is x", "q2": "why y"}
    assert read_queries(beir_dir / "queries.jsonl")["q2"] == "why y"
    assert read_queries(tmp_path / "queries.tsv")["q1"] == "what is x"
    assert read_docs(beir_dir, ["d1"]) == {"d1": {"title": "T1", "text": "text 1"}}
    assert read_docs(f"irds:{irds_id}", ["d3"])["d3"]["text"] == "third"
    assert read_docs(tmp_path / "docs.tsv", ["d2", "nope"]) == {"d2": {"title": "", "text": "second document"}}
    (tmp_path / "bad.tsv").write_text("q1 no tab here\n")
    with pytest.raises(ParseError, match="bad.tsv:1: expected id<TAB>text"):
        read_queries(tmp_path / "bad.tsv")
    (tmp_path / "latin1.tsv").write_bytes("q1\tok\nq2\tcaf\xe9\n".encode("latin-1"))
    with pytest.raises(ParseError, match=r"latin1.tsv:2: not UTF-8 text \(byte 0xe9 at column 7\)"):
        read_queries(tmp_path / "latin1.tsv")
    (tmp_path / "latin1.jsonl").write_bytes('{"_id": "q1", "text": "caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(ParseError, match="latin1.jsonl:1: not UTF-8 text"):
        read_queries(tmp_path / "latin1.jsonl")


def test_irds_without_the_package_says_how_to_install(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import fails as if not installed
    assert main(["eval", "irds:beir/scifact/test", "x.run"]) == 2
    assert "pip install 'judged[irds]'" in capsys.readouterr().err
