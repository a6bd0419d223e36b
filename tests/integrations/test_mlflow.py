"""MLflow (issue 33, item 3): a result logged to a local tracking store in tmp_path with the real
mlflow package, read back with MLflow's own client: conventions as params, means as metrics,
the per-query table and the holes report as artifacts. Skips, saying why, without mlflow."""

import json
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow", reason="mlflow is not installed (pip install 'judged[mlflow]')")

import judged  # noqa: E402
from judged.cli import main  # noqa: E402
from judged.integrations.mlflow import keys_of, log_result, metric_key  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
MEASURES = ["nDCG@10", "AP", "nDCG(gain=exp)@10", "NumRelRet"]


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A file store in tmp_path (MLflow 3 keeps it behind MLFLOW_ALLOW_FILE_STORE), its client."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"file:{tmp_path / 'mlruns'}")
    mlflow.set_tracking_uri(f"file:{tmp_path / 'mlruns'}")
    mlflow.set_experiment("judged-tests")
    yield mlflow.MlflowClient()
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(None)


def artifact(run_id: str, path: str) -> str:
    return mlflow.artifacts.load_text(f"runs:/{run_id}/{path}")


def test_a_result_logged_and_read_back_with_mlflows_client(store):
    result = judged.evaluate(str(EXAMPLES / "qrels.txt"), {n: str(EXAMPLES / n) for n in ("bm25.run", "dense.run")},
                             MEASURES)
    with mlflow.start_run() as run:
        logged = log_result(result)
    data = store.get_run(run.info.run_id).data
    # conventions as params: each measure's canonical string under its key
    assert data.params["convention.nDCG_10"] == result.conventions["nDCG@10"]
    assert data.params["convention.nDCG_gain_exp__10"] == result.conventions["nDCG(gain=exp)@10"]
    assert data.params["judged.qrels_sha256"] == result.qrels.sha256
    assert data.params["judged.settings"] == result.settings.canonical()
    assert data.params["judged.version"] == judged.__version__
    # means as metrics, per run (two runs: run/measure); NumRelRet is a sum, as trec_eval
    assert data.metrics["bm25.run/nDCG_10"] == result.aggregate("bm25.run", "nDCG@10")
    assert round(data.metrics["dense.run/nDCG_10"], 4) == 0.5145  # docs/comparing.md's figure
    assert data.metrics["dense.run/NumRelRet"] == result.aggregate("dense.run", "NumRelRet")
    assert data.metrics == logged["metrics"] and len(data.metrics) == 2 * len(MEASURES)
    # artifacts: the per-query table (values read back bit for bit), the JSON, the holes report
    paths = sorted(a.path for a in store.list_artifacts(run.info.run_id, "judged"))
    assert paths == ["judged/holes.json", "judged/per_query.tsv", "judged/result.json"]
    rows = [line.split("\t") for line in artifact(run.info.run_id, "judged/per_query.tsv").splitlines()]
    assert rows[0] == ["run", "qid", "measure", "value"] and len(rows) == 1 + 2 * 40 * len(MEASURES)
    table = result.per_query()
    assert [float(r[3]) for r in rows[1:]] == table["value"].tolist()
    holes = json.loads(artifact(run.info.run_id, "judged/holes.json"))
    assert holes["measure"] == "nDCG@10" and holes["k"] == 10
    assert holes["runs"]["dense.run"]["holes"] == 178  # 45% of dense's top ten unjudged
    assert json.loads(artifact(run.info.run_id, "judged/result.json"))["measures"] == result.conventions


def test_one_run_is_keyed_by_the_measure_and_steps_are_kept(store):
    qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}}
    with mlflow.start_run() as run:
        for step, run_ in enumerate(({"q1": {"b": 2.0, "a": 1.0}, "q2": {"c": 1.0}},
                                     {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}})):
            log_result(judged.evaluate(qrels, run_, ["nDCG@10"]), step=step, prefix="dev_",
                       artifact_path=f"judged/step{step}")
    history = store.get_metric_history(run.info.run_id, "dev_nDCG_10")
    # step 0: q1 ranks b (grade 1) over a (grade 2): (1 + 2/log2 3) / (2 + 1/log2 3) = 0.8597; q2 1
    assert [(m.step, round(m.value, 4)) for m in history] == [(0, 0.9299), (1, 1.0)]
    assert {a.path for a in store.list_artifacts(run.info.run_id, "judged")} == {"judged/step0", "judged/step1"}


def test_eval_mlflow_logs_one_run(store, capsys, monkeypatch):
    monkeypatch.chdir(EXAMPLES)
    code = main(["eval", "qrels.txt", "tuned.run", "-m", "nDCG@10", "-m", "Judged@10", "--mlflow",
                 "--mlflow-experiment", "gate-ci", "--mlflow-run-name", "tuned", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and "logged to MLflow run " in err and json.loads(out)["runs"]["tuned.run"]
    experiment = store.get_experiment_by_name("gate-ci")
    (run,) = store.search_runs([experiment.experiment_id])
    assert run.info.run_name == "tuned"
    assert round(run.data.metrics["nDCG_10"], 4) == 0.7179 and run.data.metrics["Judged_10"] == 0.9625
    # judged's line on stderr (after MLflow's own log lines) names the run, the store and what went there
    assert err.splitlines()[-1] == (f"logged to MLflow run {run.info.run_id} at {mlflow.get_tracking_uri()}: "
                                    f"{len(run.data.params)} params, 2 metrics, artifacts judged/per_query.tsv, "
                                    "judged/result.json, judged/holes.json")
    # the conventions as params, the per-query values and the printed JSON as artifacts
    printed = json.loads(out)
    assert run.data.params["convention.nDCG_10"] == printed["measures"]["nDCG@10"]
    assert run.data.params["judged.qrels_sha256"] == printed["qrels"]["sha256"]
    rows = [line.split("\t") for line in artifact(run.info.run_id, "judged/per_query.tsv").splitlines()]
    assert rows[0] == ["run", "qid", "measure", "value"] and len(rows) == 1 + 40 * 2
    assert json.loads(artifact(run.info.run_id, "judged/result.json"))["runs"] == printed["runs"]


def test_metric_keys_are_mlflows_and_transformers_spelling():
    assert metric_key("nDCG@10") == "nDCG_10" and metric_key("nDCG(unjudged=min)@10") == "nDCG_unjudged_min__10"
    assert metric_key("P_10/x:y z-1.0") == "P_10/x:y z-1.0"
    with pytest.raises(ValueError, match="would both be logged as 'P_10'"):
        keys_of(["P@10", "P_10"])


def test_the_sentence_transformers_evaluator_logs_the_same(store):
    pytest.importorskip("torch", reason="torch is not installed: pip install torch==2.13.0 (the CPU wheel)")
    pytest.importorskip("sentence_transformers", reason="the st extra is not installed: pip install 'judged[st]'")
    import tiny_st
    from judged.integrations.sentence_transformers import GradedIREvaluator

    queries, corpus, relevant = tiny_st.collection()
    ev = GradedIREvaluator(queries, corpus, relevant, ["nDCG@10", "AP"], name="dev", mlflow=True)
    with mlflow.start_run() as run:
        metrics = ev(tiny_st.model(seed=3), epoch=1, steps=10)
    data = store.get_run(run.info.run_id).data
    # the returned metrics, keyed as transformers' MLflowCallback renames them (without eval_), at the step
    assert {metric_key(k): v for k, v in metrics.items()} == data.metrics
    assert store.get_metric_history(run.info.run_id, "dev_nDCG_10")[0].step == 10
    assert data.params["dev_convention.nDCG_10"] == ev.conventions["nDCG@10"]
    assert data.params["dev_convention.nDCG_unjudged_max__10"] == ev.conventions["nDCG(unjudged=max)@10"]
    folder = "judged/dev/epoch1-steps10"
    assert sorted(a.path for a in store.list_artifacts(run.info.run_id, folder)) == [
        f"{folder}/holes.json", f"{folder}/per_query.tsv", f"{folder}/result.json"]
    assert json.loads(artifact(run.info.run_id, f"{folder}/holes.json"))["k"] == 10
