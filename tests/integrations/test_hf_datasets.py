"""Hugging Face ``datasets`` as judged inputs, against the real ``datasets`` package: the Hub's
qrels-only repositories (BeIR/*-qrels: split files at the root) and in-memory ``Dataset`` /
``DatasetDict`` objects, each read as ``datasets`` itself reads them."""

import os

import pytest

datasets = pytest.importorskip("datasets", reason="the hf extra is not installed: pip install 'judged[hf]'")

import judged  # noqa: E402
from judged.cli import main  # noqa: E402
from judged.core.errors import ParseError  # noqa: E402
from judged.core.io import dataset_qrels, hf  # noqa: E402

TEST = [("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d3", 1)]
TRAIN = [("q7", "d4", 1)]


def rows_of(q) -> list:
    return sorted(zip(q.qid.to_pylist(), q.docid.to_pylist(), q.grade.tolist()))


def write_tsv(path, rows) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in rows))


@pytest.fixture
def hub_qrels(tmp_path, monkeypatch):
    """BeIR/<name>-qrels as the Hub serves it: README.md (no configs), test.tsv and train.tsv at the root."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))      # load_dataset's cache, not the user's
    root = tmp_path / "scifact-qrels"
    root.mkdir()
    (root / "README.md").write_text("---\nlicense: cc-by-sa-4.0\n---\n# scifact qrels\n")
    write_tsv(root / "test.tsv", TEST)
    write_tsv(root / "train.tsv", TRAIN)
    return root


def test_a_hub_qrels_folder_with_split_files_at_its_root(hub_qrels):
    theirs = datasets.load_dataset(str(hub_qrels))             # the real package's reading of the folder
    assert set(theirs) == {"test", "train"}
    assert hf.is_dataset_folder(hub_qrels)
    for split in ("test", "train"):
        expected = sorted((str(r["query-id"]), str(r["corpus-id"]), int(r["score"])) for r in theirs[split])
        assert rows_of(dataset_qrels(hub_qrels, split)) == expected
    assert rows_of(judged.read_qrels(hub_qrels)) == sorted(TEST)   # a path: its test split
    with pytest.raises(ParseError, match=r"no qrels for split 'dev'.*splits here: test, train"):
        dataset_qrels(hub_qrels, "dev")


def test_the_cli_reads_a_hub_qrels_folder(hub_qrels, tmp_path, capsys):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\nq7 Q0 d4 1 1.0 r\n")
    assert main(["eval", str(hub_qrels), str(run), "-m", "nDCG@10", "--format", "json"]) == 0
    assert '"judgments": 3' in capsys.readouterr().out
    assert main(["eval", "--beir", str(hub_qrels), str(run), "--split", "train", "--format", "json"]) == 0
    assert '"judgments": 1' in capsys.readouterr().out


def test_a_folder_without_qrels_names_the_folder_not_an_invented_path(tmp_path, capsys):
    root = tmp_path / "empty-collection"
    root.mkdir()
    (root / "notes.txt").write_text("nothing here\n")
    with pytest.raises(ParseError) as info:
        dataset_qrels(root)
    assert info.value.source == str(root) and "qrels" in str(info.value)
    assert not os.path.exists(os.path.join(root, "qrels"))
    assert main(["eval", "--beir", str(root), os.devnull]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"judged: error: {root}: ") and os.path.join(str(root), "qrels") not in err


def as_dataset(rows) -> "datasets.Dataset":
    return datasets.Dataset.from_list([{"query-id": q, "corpus-id": d, "score": g} for q, d, g in rows])


def test_an_in_memory_dataset_is_qrels_and_runs_as_it_is():
    ds = as_dataset(TEST + TRAIN)
    assert rows_of(judged.read_qrels(ds)) == sorted(TEST + TRAIN)
    kept = ds.filter(lambda r: r["query-id"] != "q7")             # an indices mapping over the same Arrow table
    assert len(kept.data.table) == 4 and rows_of(judged.read_qrels(kept)) == sorted(TEST)
    qrels = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    run = {"q1": {"d2": 0.9, "d1": 0.8}, "q2": {"d3": 0.7}}
    ours = judged.evaluate(kept, {"r": run}, ["nDCG@10", "AP"]).mean()
    assert ours.equals(judged.evaluate(qrels, {"r": run}, ["nDCG@10", "AP"]).mean())
    as_run = datasets.Dataset.from_list([{"query-id": q, "corpus-id": d, "score": s}
                                         for q, docs in run.items() for d, s in docs.items()])
    r = judged.read_run(as_run, name="from-datasets")
    assert r.name == "from-datasets" and sorted(zip(r.qid.to_pylist(), r.docid.to_pylist(), r.score.tolist())) == \
        [("q1", "d1", 0.8), ("q1", "d2", 0.9), ("q2", "d3", 0.7)]


def test_a_dataset_dict_is_read_at_a_split():
    dd = datasets.DatasetDict({"test": as_dataset(TEST), "train": as_dataset(TRAIN)})
    assert rows_of(judged.read_qrels(dd)) == sorted(TEST)                    # as a folder: its test split
    assert rows_of(dataset_qrels(dd, "train")) == sorted(TRAIN)
    assert rows_of(judged.evaluate(dd, {"r": {"q1": {"d1": 1.0}}}, ["P@1"]).qrels) == sorted(TEST)
    no_test = datasets.DatasetDict({"train": as_dataset(TRAIN), "dev": as_dataset(TEST)})
    with pytest.raises(ParseError, match=r"no split 'test' \(splits here: dev, train\)"):
        judged.read_qrels(no_test)
    with pytest.raises(ParseError, match=r"no split 'validation' \(splits here: dev, train\)"):
        dataset_qrels(no_test, "validation")


def test_subsets_saved_to_disk_and_as_subfolders(tmp_path, capsys):
    # a multilingual task saved with save_to_disk, one folder per config (<subset>-qrels, -queries, -corpus)
    multi = tmp_path / "multi"
    for lang, rows in (("de", TEST), ("fr", TRAIN)):
        datasets.DatasetDict({"test": as_dataset(rows)}).save_to_disk(str(multi / f"{lang}-qrels"))
        datasets.DatasetDict({"queries": datasets.Dataset.from_list([{"_id": rows[0][0], "text": lang}])}
                             ).save_to_disk(str(multi / f"{lang}-queries"))
    assert hf.is_dataset_folder(multi) and hf.subsets(multi) == ["de", "fr"]
    assert rows_of(dataset_qrels(multi, subset="fr")) == sorted(TRAIN)
    assert hf.load_queries(multi, subset="de") == {"q1": "de"}
    with pytest.raises(ParseError, match="subsets de, fr; choose one with --subset"):
        dataset_qrels(multi)
    # CQADupStack's layout: one BEIR collection per forum, in subfolders
    cqa = tmp_path / "cqadupstack"
    for forum, rows in (("android", TEST), ("gis", TRAIN)):
        (cqa / forum / "qrels").mkdir(parents=True)
        write_tsv(cqa / forum / "qrels" / "test.tsv", rows)
    assert hf.subsets(cqa) == ["android", "gis"]
    run = tmp_path / "run.txt"
    run.write_text("q7 Q0 d4 1 1.0 r\nq1 Q0 d1 1 1.0 r\n")
    assert main(["eval", "--beir", str(cqa), str(run), "--subset", "gis", "-m", "P@1", "--format", "json"]) == 0
    assert '"judgments": 1' in capsys.readouterr().out
    for choice in (["--subset", "tex"], []):
        assert main(["eval", "--beir", str(cqa), str(run), *choice]) == 2
        assert "the folder holds the subsets android, gis" in capsys.readouterr().err
