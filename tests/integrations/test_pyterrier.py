"""PyTerrier with judged as its evaluation back end, against the real PyTerrier: a tiny PISA
index built in the test (pyterrier-pisa ships its engine in the wheel; Terrier's own index
needs jars from Maven Central, which the tests cannot reach), pt.Experiment beside
judged.integrations.pyterrier.Experiment, and pt.Experiment computing through judged's
ir_measures provider."""

import pytest

pt = pytest.importorskip("pyterrier", reason="the pyterrier extra is not installed: pip install 'judged[pyterrier]'")
pisa = pytest.importorskip("pyterrier_pisa", reason="pyterrier-pisa (the tests' index) is not installed: "
                                                     "pip install 'judged[integrations]'")
ir_measures = pytest.importorskip("ir_measures")

import pandas as pd  # noqa: E402
from ir_measures import AP, RR, P, nDCG  # noqa: E402

import judged  # noqa: E402
from judged.integrations.ir_measures import provider, use_judged  # noqa: E402
from judged.integrations.pyterrier import Experiment  # noqa: E402

DOCS = [("d1", "the cat sat on the mat"), ("d2", "dogs chase cats in the park"), ("d3", "a bird sings at dawn"),
        ("d4", "cats and dogs living together"), ("d5", "the bird watched the cat"), ("d6", "fish swim in water"),
        ("d7", "a cat chased a bird"), ("d8", "dogs bark at birds"), ("d9", "water birds swim"),
        ("d10", "the mat was red"), ("d11", "park benches and dogs"), ("d12", "a fish and a cat")]
TOPICS = pd.DataFrame({"qid": ["1", "2", "3", "4", "5"], "query": ["cat", "bird", "dogs park", "fish water", "mat"]})
QRELS = pd.DataFrame({"qid": ["1", "1", "1", "2", "2", "3", "3", "4", "4", "5", "5", "9"],
                      "docno": ["d1", "d7", "d4", "d3", "d9", "d2", "d11", "d6", "d12", "d10", "d1", "d1"],
                      "label": [2, 1, 0, 2, 1, 2, 1, 2, 1, 1, 2, 1]})       # qid 9 is not a topic


@pytest.fixture(scope="module")
def systems(tmp_path_factory):
    index = pisa.PisaIndex(str(tmp_path_factory.mktemp("pisa") / "index"), overwrite=True)
    index.index([{"docno": d, "text": t} for d, t in DOCS])
    bm25 = index.bm25(num_results=10)
    # three systems that differ: BM25, its top 2 only, and its list reversed (a bad reranker)
    return {"BM25": bm25, "BM25 top 2": bm25 % 2, "reversed": bm25 >> pt.apply.doc_score(lambda row: -row["score"])}


def test_result_and_qrels_frames_are_judged_inputs(systems):
    res = systems["BM25"].transform(TOPICS)
    assert {"qid", "docno", "score", "rank"} <= set(res.columns)
    run, qrels = judged.read_run(res, name="BM25"), judged.read_qrels(QRELS)
    assert len(run) == len(res) and len(qrels) == len(QRELS)
    # PISA breaks score ties its own way: its rank column (ties="rank") and trec_eval's order
    # (score desc, docid desc; the default) are two declared conventions, two numbers
    by_rank = judged.evaluate(qrels, run, ["nDCG@10"], ties="rank")
    by_trec = judged.evaluate(qrels, run, ["nDCG@10"])
    assert by_rank.conventions["nDCG@10"] != by_trec.conventions["nDCG@10"]
    assert 0 < by_rank.mean().iloc[0, 0] <= 1 and 0 < by_trec.mean().iloc[0, 0] <= 1


def test_experiment_table_equals_pt_experiment_where_conventions_meet(systems):
    measures = [nDCG @ 10, AP, RR, P @ 5]
    theirs = pt.Experiment(list(systems.values()), TOPICS, QRELS, measures, names=list(systems),
                           baseline=0, correction="holm")
    ours = Experiment(list(systems.values()), TOPICS, QRELS, measures, names=list(systems), baseline=0,
                      correction="holm")
    assert list(ours["name"]) == list(theirs["name"]) == ["BM25", "BM25 top 2", "reversed"]
    assert ours["nDCG@10"][0] > max(ours["nDCG@10"][1], ours["nDCG@10"][2])
    for m in ("nDCG@10", "AP", "RR", "P@5"):
        assert ours[m].tolist() == pytest.approx(theirs[m].tolist(), abs=1e-12), m
        for i in (1, 2):
            assert ours[f"{m} +"][i] == theirs[f"{m} +"][i] and ours[f"{m} -"][i] == theirs[f"{m} -"][i]
            # scipy's paired t-test, Holm's correction
            assert ours[f"{m} p-value"][i] == pytest.approx(theirs[f"{m} p-value"][i], abs=1e-9), m
            assert ours[f"{m} p-value corrected"][i] == pytest.approx(theirs[f"{m} p-value corrected"][i], abs=1e-9)
    # what judged adds: holes in the top 10, nDCG@10's exact bounds, can judging flip the comparison?
    assert {"Judged@10", "nDCG(unjudged=min)@10", "nDCG(unjudged=max)@10", "nDCG@10 can flip"} <= set(ours.columns)
    assert (ours["nDCG(unjudged=min)@10"] <= ours["nDCG@10"]).all()
    assert (ours["nDCG@10"] <= ours["nDCG(unjudged=max)@10"]).all()
    assert ours["nDCG@10 can flip"][1] in (True, False)
    assert "ties=score-desc,docid-desc queries=qrels" in ours.attrs["conventions"]["nDCG@10"]
    per_query = Experiment(systems, TOPICS, QRELS, ["nDCG@10"], perquery=True, holes=False)
    assert set(per_query.columns) == {"name", "qid", "measure", "value"} and len(per_query) == 3 * 5


def test_pt_experiment_computes_through_judgeds_provider(systems, monkeypatch):
    calls = []
    original = provider._evaluator
    monkeypatch.setattr(provider, "_evaluator", lambda ms, q: calls.append(ms) or original(ms, q))
    measures = [nDCG @ 10, AP, nDCG(dcg="exp-log2") @ 10, P(rel=2) @ 5]
    with use_judged():
        assert ir_measures.DefaultPipeline.providers[0] is provider
        inside = pt.Experiment(list(systems.values()), TOPICS, QRELS, measures, names=list(systems))
    assert ir_measures.DefaultPipeline.providers[0] is not provider            # restored
    assert calls                                                                # judged computed them
    ours = Experiment(list(systems.values()), TOPICS, QRELS,
                      ["nDCG@10", "AP", "nDCG(gain=exp)@10", "P(rel=2)@5"], names=list(systems), holes=False)
    for m, mine in zip(("nDCG@10", "AP", "nDCG(dcg='exp-log2')@10", "P(rel=2)@5"),
                       ("nDCG@10", "AP", "nDCG(gain=exp)@10", "P(rel=2)@5")):
        column = next(c for c in inside.columns if c.replace('"', "'") == m)
        assert inside[column].tolist() == pytest.approx(ours[mine].tolist(), abs=1e-15), m
    by_name = ir_measures.providers.registry["judged_engine"].calc_aggregate(
        [RR], {"1": {"d1": 1}}, {"1": {"d1": 0.5, "d2": 0.5 + 1e-9}})
    assert by_name[RR] == 0.5                                                   # doubles: d2 scores higher
