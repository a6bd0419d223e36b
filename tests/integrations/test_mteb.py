"""MTEB: a small retrieval task built locally in the mteb/* dataset layout, run through the real
mteb package with two tiny models built in code (offline); judged reads the predictions and the
task folder and reproduces every number MTEB reported, then adds holes, bounds and paired tests."""

import json
import os

import pytest

pytest.importorskip("torch", reason="torch is not installed: pip install torch==2.13.0 (the CPU wheel)")
mteb = pytest.importorskip("mteb", reason="the mteb extra is not installed: pip install 'judged[mteb]'")
datasets = pytest.importorskip("datasets", reason="the hf extra is not installed: pip install 'judged[hf]'")

import numpy as np  # noqa: E402
import tiny_st  # noqa: E402

import judged  # noqa: E402
from judged.cli import main  # noqa: E402
from judged.integrations.mteb import measure_of, read_predictions, read_scores, reported, task_conventions, task_qrels  # noqa: E402

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
---
"""


def write_task_folder(root):
    """40 documents, 10 queries, graded qrels (0, 1, 2): q9's judgments are all 0."""
    queries, corpus, relevant = tiny_st.collection(n_docs=40, n_queries=10, seed=11)
    rng = np.random.default_rng(12)
    rows = [{"query-id": q, "corpus-id": d, "score": int(rng.integers(0, 3)) if q != "q9" else 0}
            for q, docs in relevant.items() for d in sorted(docs)]
    for sub in ("corpus", "queries", "qrels"):
        os.makedirs(os.path.join(root, sub))
    datasets.Dataset.from_list([{"_id": d, "title": "", "text": t} for d, t in corpus.items()]).to_parquet(
        os.path.join(root, "corpus", "corpus-00000-of-00001.parquet"))
    datasets.Dataset.from_list([{"_id": q, "text": t} for q, t in queries.items()]).to_parquet(
        os.path.join(root, "queries", "queries-00000-of-00001.parquet"))
    datasets.Dataset.from_list(rows).to_parquet(os.path.join(root, "qrels", "test-00000-of-00001.parquet"))
    with open(os.path.join(root, "README.md"), "w") as fh:
        fh.write(README)
    return rows


def tiny_task(root):
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.task_metadata import TaskMetadata

    class TinyRetrieval(AbsTaskRetrieval):
        metadata = TaskMetadata(
            name="TinyRetrieval", description="A 40-document task built by judged's tests.", reference=None,
            type="Retrieval", category="t2t", modalities=["text"], eval_splits=["test"], eval_langs=["eng-Latn"],
            main_score="ndcg_at_10", dataset={"path": str(root), "revision": "local"}, date=None, domains=None,
            task_subtypes=None, license=None, annotations_creators=None, dialect=None, sample_creation=None,
            bibtex_citation=None)

    return TinyRetrieval()


@pytest.fixture(scope="module")
def mteb_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mteb")
    os.environ["HF_HOME"] = str(tmp / "hf")            # load_dataset's cache of the local folder
    root = tmp / "TinyRetrieval"
    write_task_folder(str(root))
    out = {"root": root, "predictions": {}, "results": {}}
    for name, seed in (("tiny/model-a", 3), ("tiny/model-b", 4)):
        model = tiny_st.model(seed=seed)
        model.model_card_data.model_name = name
        task = tiny_task(root)
        pred = tmp / name.replace("/", "__")
        cache = mteb.ResultCache(str(tmp / "cache"))
        mteb.evaluate(model, task, prediction_folder=str(pred), cache=cache, show_progress_bar=False)
        out["predictions"][name] = pred / "TinyRetrieval_predictions.json"
        results = list((tmp / "cache").rglob(f"{name.replace('/', '__')}/**/TinyRetrieval.json"))
        assert len(results) == 1
        out["results"][name] = results[0]
        out["task"] = task
    return out


def test_judged_reproduces_every_number_mteb_reported(mteb_run):
    for name, pred in mteb_run["predictions"].items():
        run = read_predictions(pred)
        assert run.name == name and len(run) > 0
        theirs = read_scores(mteb_run["results"][name])[("default", "test")]
        metrics = [m for m in theirs if m.split("_at_")[0] in ("ndcg", "map", "recall", "precision", "hit_rate", "mrr")
                   and "nauc" not in m]
        assert len(metrics) == 42                      # 6 families x k in 1, 3, 5, 10, 20, 100, 1000
        result = judged.evaluate(mteb_run["root"], {name: run}, [measure_of(m) for m in metrics])
        for metric in metrics:
            ours = result.aggregate(name, measure_of(metric))
            digits = max(5, len(repr(float(theirs[metric])).split(".")[1]))   # MTEB rounds to 5 (MRR: 6) digits
            assert round(ours, digits) == theirs[metric], (name, metric, ours, theirs[metric])
        assert round(result.aggregate(name, "nDCG@10"), 5) == theirs["main_score"]
        assert result.runs[name].counts["evaluated"] == 10          # q9 (all grades 0) counted, as MTEB does


def test_judged_eval_cli_on_the_task_folder_and_predictions(mteb_run, capsys):
    a, b = (str(p) for p in mteb_run["predictions"].values())
    assert main(["eval", "--beir", str(mteb_run["root"]), a, b, "-m", "nDCG@10", "-m", "Judged@10",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for name, path in zip(mteb_run["predictions"], (a, b)):
        mean = out["runs"][path]["mean"]
        assert round(mean["nDCG@10"], 5) == reported(mteb_run["results"][name])
        assert 0 < mean["Judged@10"] < 1                 # MTEB does not say how much of the top 10 is judged


def test_holes_bounds_and_paired_comparison_between_models(mteb_run, capsys):
    a, b = (str(p) for p in mteb_run["predictions"].values())
    root = str(mteb_run["root"])
    assert main(["holes", root, a, b, "-k", "10", "--format", "json"]) == 0
    holes = json.loads(capsys.readouterr().out)
    for path in (a, b):
        r = holes["runs"][path]
        assert r["min"] <= r["score"] <= r["max"] and r["max"] > r["min"]   # nDCG@10's exact bounds over the holes
    assert len(holes["pairs"]) == 1
    assert main(["compare", root, a, b, "-m", "nDCG@10", "--format", "json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["baseline"] == a and cmp["comparisons"][0]["run"] == b
    assert set(cmp["comparisons"][0]["p_values"]) >= {"wilcoxon", "bootstrap"} and cmp["comparisons"][0]["queries"] == 10
    assert cmp["holes"]["comparisons"][0]["min"] <= cmp["comparisons"][0]["mean_delta"] <= \
        cmp["holes"]["comparisons"][0]["max"]                              # could judging the holes flip it?


def test_the_task_objects_qrels_and_conventions(mteb_run):
    task = mteb_run["task"]
    from_task = task_qrels(task)
    from_folder = judged.read_qrels(mteb_run["root"])
    key = lambda q: sorted(zip(q.qid.to_pylist(), q.docid.to_pylist(), q.grade.tolist()))  # noqa: E731
    assert key(from_task) == key(from_folder) and from_task.source == "mteb:TinyRetrieval/default/test"
    assert task_conventions(task) == {"ignore_identical_ids": False}
    name = next(iter(mteb_run["predictions"]))
    run = read_predictions(mteb_run["predictions"][name])
    ours = judged.evaluate(from_task, run, ["nDCG@10"], **task_conventions(task)).mean().iloc[0, 0]
    assert round(ours, 5) == reported(mteb_run["results"][name])


def test_measure_names():
    assert [measure_of(m) for m in ("ndcg_at_10", "map_at_100", "recall_at_5", "precision_at_1",
                                    "hit_rate_at_3", "mrr_at_10")] == \
        ["nDCG@10", "AP@100", "R@5", "P@1", "Success@3", "RR@10"]
    with pytest.raises(ValueError):
        measure_of("nauc_ndcg_at_10_max")


LANGS = {"en": ["eng-Latn"], "de": ["deu-Latn"]}


def write_multilingual_task_folder(root):
    """mteb's layout of a multilingual retrieval task: configs <subset>-corpus, <subset>-queries,
    <subset>-qrels (RetrievalDatasetLoader's names), one collection per language."""
    configs = []
    for i, lang in enumerate(LANGS):
        queries, corpus, relevant = tiny_st.collection(n_docs=30, n_queries=8, seed=20 + i)
        rng = np.random.default_rng(30 + i)
        rows = [{"query-id": q, "corpus-id": d, "score": int(rng.integers(1, 3))}
                for q, docs in relevant.items() for d in sorted(docs)]
        parts = (("corpus", [{"_id": d, "title": "", "text": t} for d, t in corpus.items()], "corpus"),
                 ("queries", [{"_id": q, "text": t} for q, t in queries.items()], "queries"), ("qrels", rows, "test"))
        for part, records, split in parts:
            os.makedirs(os.path.join(root, f"{lang}-{part}"))
            datasets.Dataset.from_list(records).to_parquet(
                os.path.join(root, f"{lang}-{part}", f"{split}-00000-of-00001.parquet"))
            configs.append(f"- config_name: {lang}-{part}\n  data_files:\n  - split: {split}\n"
                           f"    path: {lang}-{part}/{split}-*\n")
    with open(os.path.join(root, "README.md"), "w") as fh:
        fh.write("---\nconfigs:\n" + "".join(configs) + "---\n")


@pytest.fixture(scope="module")
def multilingual_run(tmp_path_factory):
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.task_metadata import TaskMetadata

    tmp = tmp_path_factory.mktemp("mteb-multi")
    os.environ["HF_HOME"] = str(tmp / "hf")
    root = tmp / "TinyMultiRetrieval"
    write_multilingual_task_folder(str(root))

    class TinyMultiRetrieval(AbsTaskRetrieval):
        metadata = TaskMetadata(
            name="TinyMultiRetrieval", description="Two languages of 30 documents, built by judged's tests.",
            reference=None, type="Retrieval", category="t2t", modalities=["text"], eval_splits=["test"],
            eval_langs=LANGS, main_score="ndcg_at_10", dataset={"path": str(root), "revision": "local"}, date=None,
            domains=None, task_subtypes=None, license=None, annotations_creators=None, dialect=None,
            sample_creation=None, bibtex_citation=None)

    model = tiny_st.model(seed=5)
    model.model_card_data.model_name = "tiny/multi"
    mteb.evaluate(model, TinyMultiRetrieval(), prediction_folder=str(tmp / "pred"),
                  cache=mteb.ResultCache(str(tmp / "cache")), show_progress_bar=False)
    results = list((tmp / "cache").rglob("TinyMultiRetrieval.json"))
    assert len(results) == 1
    return {"root": root, "predictions": tmp / "pred" / "TinyMultiRetrieval_predictions.json", "results": results[0]}


def test_cli_picks_a_language_subset_of_a_multilingual_task(multilingual_run, capsys):
    root, pred = str(multilingual_run["root"]), str(multilingual_run["predictions"])
    scores = read_scores(multilingual_run["results"])
    assert set(scores) == {("en", "test"), ("de", "test")}
    means = {}
    for lang in LANGS:
        for qrels in (["--beir", root, pred], [root, pred]):        # --beir DIR or DIR as the qrels
            assert main(["eval", *qrels, "--subset", lang, "-m", "nDCG@10", "-m", "AP@100", "--format", "json"]) == 0
            out = json.loads(capsys.readouterr().out)
            means[lang] = out["runs"][pred]["mean"]
            assert round(means[lang]["nDCG@10"], 5) == scores[(lang, "test")]["ndcg_at_10"]   # MTEB's own number
            assert round(means[lang]["AP@100"], 5) == scores[(lang, "test")]["map_at_100"]
    assert means["en"] != means["de"]
    assert main(["eval", "--beir", root, pred, "--hf-subset", "de", "-m", "nDCG@10", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][pred]["mean"] == {"nDCG@10": means["de"]["nDCG@10"]}


def test_without_a_subset_the_error_lists_the_subsets(multilingual_run, capsys):
    root, pred = str(multilingual_run["root"]), str(multilingual_run["predictions"])
    assert main(["eval", "--beir", root, pred]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "subsets de, en" in err and "--subset" in err
    assert main(["eval", "--beir", root, pred, "--subset", "fr"]) == 2
    err = capsys.readouterr().err
    assert "'fr'" in err and "subsets de, en" in err
    with pytest.raises(judged.ParseError, match=r"subsets de, en.*subset="):
        read_predictions(pred)
    assert read_predictions(pred, subset="de").source.endswith("(de/test)")
    from judged.core.io import dataset_qrels
    assert len(dataset_qrels(root, subset="en")) > 0
