"""Hugging Face ``datasets`` folders (judged.core.io.hf): the three layouts a BEIR-style collection
takes on disk, written by the real ``datasets`` package, read as qrels, queries and texts."""

import json
import os

import pytest

import judged
from judged.cli import main
from judged.core.errors import ParseError
from judged.core.io import dataset_qrels, hf, texts

datasets = pytest.importorskip("datasets", reason="the hf extra is not installed: pip install 'judged[hf]'")

CORPUS = [{"_id": "d1", "title": "Cats", "text": "the cat sat"}, {"_id": "d2", "title": "", "text": "dogs bark"},
          {"_id": "d3", "title": "Birds", "text": "a bird sings"}]
QUERIES = [{"_id": "q1", "text": "cat"}, {"_id": "q2", "text": "bird"}]
TEST = [{"query-id": "q1", "corpus-id": "d1", "score": 2}, {"query-id": "q1", "corpus-id": "d2", "score": 0},
        {"query-id": "q2", "corpus-id": "d3", "score": 1}]
DEV = [{"query-id": "q2", "corpus-id": "d1", "score": 1}]
RUN = {"q1": {"d2": 0.9, "d1": 0.8}, "q2": {"d3": 0.7, "d9": 0.5}}
# q1: d2 (grade 0) above d1 (grade 2): DCG = 2/log2(3), IDCG = 2 -> 0.6309; q2: 1.0
EXPECTED_NDCG = (2 / 1.584962500721156 / 2 + 1.0) / 2

README = """---
configs:
- config_name: corpus
  data_files:
  - split: corpus
    path: corpus/corpus-*
- config_name: queries
  data_files:
  - split: queries
    path: queries/queries-*
- config_name: default
  data_files:
  - split: test
    path: qrels/test-*
  - split: dev
    path: qrels/dev-*
---
# tiny
"""


def ds(rows):
    return datasets.Dataset.from_list(rows)


@pytest.fixture
def hub_parquet(tmp_path):
    """The layout of mteb/* datasets converted to Parquet: README configs over folders."""
    root = tmp_path / "tiny-parquet"
    for sub in ("corpus", "queries", "qrels"):
        (root / sub).mkdir(parents=True)
    ds(CORPUS).to_parquet(str(root / "corpus" / "corpus-00000-of-00001.parquet"))
    ds(QUERIES).to_parquet(str(root / "queries" / "queries-00000-of-00001.parquet"))
    ds(TEST).to_parquet(str(root / "qrels" / "test-00000-of-00001.parquet"))
    ds(DEV).to_parquet(str(root / "qrels" / "dev-00000-of-00001.parquet"))
    (root / "README.md").write_text(README)
    return root


@pytest.fixture
def hub_jsonl(tmp_path):
    """The older mteb/* layout: corpus.jsonl, queries.jsonl, qrels/<split>.jsonl, no README."""
    root = tmp_path / "tiny-jsonl"
    (root / "qrels").mkdir(parents=True)
    ds(CORPUS).to_json(str(root / "corpus.jsonl"))
    ds(QUERIES).to_json(str(root / "queries.jsonl"))
    ds(TEST).to_json(str(root / "qrels" / "test.jsonl"))
    ds(DEV).to_json(str(root / "qrels" / "dev.jsonl"))
    return root


@pytest.fixture
def saved(tmp_path):
    """save_to_disk: one DatasetDict per config, as load_dataset(repo, config) returns them."""
    root = tmp_path / "tiny-saved"
    datasets.DatasetDict({"corpus": ds(CORPUS)}).save_to_disk(str(root / "corpus"))
    datasets.DatasetDict({"queries": ds(QUERIES)}).save_to_disk(str(root / "queries"))
    datasets.DatasetDict({"test": ds(TEST), "dev": ds(DEV)}).save_to_disk(str(root / "default"))
    return root


@pytest.fixture(params=["hub_parquet", "hub_jsonl", "saved"])
def folder(request):
    return request.getfixturevalue(request.param)


def test_every_layout_reads_the_same_collection(folder):
    assert hf.is_dataset_folder(folder)
    q = dataset_qrels(folder)
    assert sorted(zip(q.qid.to_pylist(), q.docid.to_pylist(), q.grade.tolist())) == \
        [("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d3", 1)]
    assert len(dataset_qrels(folder, "dev")) == 1
    assert texts.read_queries(folder) == {"q1": "cat", "q2": "bird"}
    assert texts.read_docs(folder, ["d3", "d1"]) == {"d1": {"title": "Cats", "text": "the cat sat"},
                                                      "d3": {"title": "Birds", "text": "a bird sings"}}
    assert len(texts.read_docs(folder)) == 3


def test_a_folder_is_qrels_wherever_a_path_is(folder):
    result = judged.evaluate(folder, {"dense": RUN}, ["nDCG@10"])
    assert result.mean().loc["dense", "nDCG@10"] == pytest.approx(EXPECTED_NDCG, abs=1e-15)
    assert len(result.qrels.sha256) == 64


def test_cli_beir_option_and_split(hub_parquet, tmp_path, capsys):
    run = tmp_path / "dense.json"
    run.write_text(json.dumps(RUN))
    assert main(["eval", "--beir", str(hub_parquet), str(run), "-m", "nDCG@10", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["qrels"]["judgments"] == 3
    assert out["runs"][str(run)]["mean"]["nDCG@10"] == pytest.approx(EXPECTED_NDCG, abs=1e-15)
    assert main(["eval", str(hub_parquet), str(run), "--split", "dev", "-m", "nDCG@10", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["qrels"]["judgments"] == 1


def test_missing_split_names_the_splits_there(saved, capsys):
    with pytest.raises(ParseError, match="splits here: dev, test"):
        dataset_qrels(saved, "train")
    assert main(["eval", "--beir", str(saved), "--split", "train", os.devnull]) == 2
    err = capsys.readouterr().err
    assert err.startswith("judged: error:") and "no qrels for split 'train'" in err


def test_a_plain_beir_folder_stays_beir(tmp_path):
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    assert not hf.is_dataset_folder(root)
    assert len(dataset_qrels(root)) == 1 and texts.read_queries(root) == {"q1": "x"}


def test_a_folder_without_qrels_is_one_clear_error(tmp_path):
    root = tmp_path / "only-corpus"
    datasets.DatasetDict({"corpus": ds(CORPUS)}).save_to_disk(str(root / "corpus"))
    with pytest.raises(ParseError, match="no qrels here"):
        dataset_qrels(root)
