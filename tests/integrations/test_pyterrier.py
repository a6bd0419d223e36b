"""PyTerrier with judged as its evaluation back end, against the real PyTerrier: a tiny PISA
index built in the test (pyterrier-pisa ships its engine in the wheel; Terrier's own index
needs jars from Maven Central, which the tests cannot reach), pt.Experiment beside
judged.integrations.pyterrier.Experiment, and pt.Experiment computing through judged's
ir_measures provider."""

import os

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


# -- pt.Experiment's options, each beside pt.Experiment's own result -----------------------------------

TOPICS_8 = pd.concat([TOPICS, pd.DataFrame({"qid": ["8"], "query": ["zebra cat"]})], ignore_index=True)  # 8: no qrels


def same_values(ours, theirs, columns):
    for c in columns:
        assert ours[c].tolist() == pytest.approx(theirs[c].tolist(), abs=1e-12, nan_ok=True), c


def test_perquery_both_dataframe_false_and_the_query_filters(systems):
    two = {"BM25": systems["BM25"], "BM25 top 2": systems["BM25 top 2"]}
    with pytest.warns(UserWarning, match="1 topic"):
        theirs = pt.Experiment(list(two.values()), TOPICS_8, QRELS, [nDCG @ 10, AP], names=list(two), perquery=True)
    with pytest.warns(UserWarning, match="1 topic"):
        both = Experiment(two, TOPICS_8, QRELS, [nDCG @ 10, AP], perquery="both", holes=False)
    averages, per_query = both                                       # pt's EvaluationDataTuple unpacks the same
    assert list(per_query.columns) == ["name", "qid", "measure", "value"]
    key = ["name", "qid", "measure"]
    ours_pq, theirs_pq = (t.sort_values(key).reset_index(drop=True) for t in (per_query, theirs))
    assert ours_pq[key].equals(theirs_pq[key])                      # the NaN rows of topic 8 too
    same_values(ours_pq, theirs_pq, ["value"])
    assert per_query[per_query["qid"] == "8"]["value"].isna().all()
    means = pt.Experiment(list(two.values()), TOPICS_8, QRELS, [nDCG @ 10, AP], names=list(two))
    same_values(averages, means, ["nDCG@10", "AP"])                 # pt 1.x's own 'both' means are NaN here
    as_dicts = Experiment(two, TOPICS_8, QRELS, ["ndcg_cut_10", "map"], dataframe=False, holes=False)
    theirs_dicts = pt.Experiment(list(two.values()), TOPICS_8, QRELS, ["ndcg_cut_10", "map"], names=list(two),
                                 dataframe=False)
    assert set(as_dicts) == set(theirs_dicts) == set(two)
    for name in two:
        assert as_dicts[name] == pytest.approx(theirs_dicts[name], abs=1e-12)
    with pytest.warns(UserWarning):
        by_index = Experiment(two, TOPICS_8, QRELS, ["nDCG@10"], perquery=True, dataframe=False, holes=False)
    assert set(by_index) == {0, 1} and set(by_index[1]) == {"1", "2", "3", "4", "5", "8"}
    for filters in ({"filter_by_qrels": True}, {"filter_by_topics": False}):
        theirs = pt.Experiment(list(two.values()), TOPICS_8, QRELS, [nDCG @ 10, AP], names=list(two), **filters)
        ours = Experiment(two, TOPICS_8, QRELS, [nDCG @ 10, AP], holes=False, **filters)
        same_values(ours, theirs, ["nDCG@10", "AP"])
    assert Experiment(two, TOPICS_8, QRELS, ["AP"], filter_by_topics=False)["AP"][0] < means["AP"][0]  # q9 counts 0


def test_round_correction_alpha_and_highlight(systems):
    args = (list(systems.values()), TOPICS, QRELS, [nDCG @ 10, AP])
    for round_ in (2, {"nDCG@10": 3}):
        for alpha in (0.05, 0.9):
            kw = dict(names=list(systems), baseline=0, correction="holm", correction_alpha=alpha, round=round_)
            theirs, ours = pt.Experiment(*args, **kw), Experiment(*args, **kw)
            same_values(ours, theirs, ["nDCG@10", "AP", "AP p-value corrected", "nDCG@10 p-value corrected"])
            assert ours["AP reject"].tolist() == theirs["AP reject"].tolist()
            assert ours["nDCG@10 reject"].tolist() == theirs["nDCG@10 reject"].tolist()
    assert set(ours["nDCG@10 reject"]) == {False, True}                 # alpha 0.9 rejects one, not the baseline
    fdr = dict(names=list(systems), baseline=0, correction="fdr_bh")      # statsmodels' name for bh
    same_values(Experiment(*args, **fdr), pt.Experiment(*args, **fdr), ["AP p-value corrected"])
    with pytest.raises(ValueError, match="judged computes holm, bonferroni and bh"):
        Experiment(*args, names=list(systems), baseline=0, correction="holm-sidak")
    for highlight in ("bold", "color"):
        kw = dict(names=list(systems), baseline=0, highlight=highlight)
        theirs, ours = pt.Experiment(*args, **kw), Experiment(*args, **kw)
        assert isinstance(ours, pd.io.formats.style.Styler) and ours.data.attrs["result"] is not None

        def styled(s):
            s._compute()
            return {(r, s.data.columns[c], tuple(v)) for (r, c), v in s.ctx.items() if v}
        shared = set(theirs.data.columns)
        assert {x for x in styled(ours) if x[1] in shared} == styled(theirs)


def test_test_names_functions_and_wilcoxon_beside_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    # 20 queries, frames as systems: nDCG@1 takes 3 values, so many per-query differences tie
    qids = [str(i) for i in range(20)]
    topics = pd.DataFrame({"qid": qids, "query": ["q"] * 20})
    qrels = pd.DataFrame({"qid": qids * 2, "docno": ["a"] * 20 + ["b"] * 20, "label": [2] * 20 + [1] * 20})
    def frame(first):
        return pd.DataFrame({"qid": qids * 2, "docno": list(first) + ["z" if d != "z" else "a" for d in first],
                             "score": [2.0] * 20 + [1.0] * 20})
    a, b = frame("abz" * 6 + "ab"), frame("aazbbzz" * 2 + "aazbzz")
    args = ([a, b], topics, qrels, [nDCG @ 1, P @ 1])
    kw = dict(names=["a", "b"], baseline=0)
    theirs_t = pt.Experiment(*args, **kw)                                     # pt's default test="t"
    for test in ("t", "t-test", scipy_stats.ttest_rel):
        same_values(Experiment(*args, test=test, **kw), theirs_t, ["nDCG@1 p-value", "P@1 p-value"])
    theirs_w = pt.Experiment(*args, test="wilcoxon", **kw)
    same_values(Experiment(*args, test=scipy_stats.wilcoxon, **kw), theirs_w, ["nDCG@1 p-value", "P@1 p-value"])
    ours_w = Experiment(*args, test="wilcoxon", **kw)
    # tied differences and 20 queries: judged's p is exact, scipy's (pt's) the normal approximation
    assert ours_w["nDCG@1 p-value"][1] != pytest.approx(theirs_w["nDCG@1 p-value"][1], rel=1e-3)
    assert "scipy.stats.wilcoxon" in Experiment.__doc__ and "normal approximation" in Experiment.__doc__
    custom = Experiment(*args, test=lambda run, base: (0.0, 0.123), **kw)
    assert custom["P@1 p-value"][1] == 0.123


def test_save_dir_batch_size_verbose_mrt_and_validate(systems, tmp_path, capsys):
    two = {"BM25": systems["BM25"], "top2": systems["BM25 top 2"]}
    theirs_dir, ours_dir = tmp_path / "pt", tmp_path / "judged"
    theirs_dir.mkdir(), ours_dir.mkdir()
    pd.DataFrame({"name": ["older"], "nDCG@10": [0.5]}).to_csv(ours_dir / "aggregated.csv", index=False)
    pt.Experiment(list(two.values()), TOPICS, QRELS, [nDCG @ 10], names=list(two), save_dir=str(theirs_dir))
    first = Experiment(two, TOPICS, QRELS, [nDCG @ 10], save_dir=str(ours_dir), verbose=True, batch_size=2,
                       holes=False)
    assert "Experiment: 100%" in capsys.readouterr().err                     # the progress bar
    assert sorted(os.listdir(ours_dir)) == sorted(os.listdir(theirs_dir)) == \
        ["BM25.res.gz", "aggregated.csv", "perquery.csv", "top2.res.gz"]
    for name in ("BM25.res.gz", "top2.res.gz"):
        assert pt.io.read_results(str(ours_dir / name)).equals(pt.io.read_results(str(theirs_dir / name)))
    saved = pd.read_csv(ours_dir / "aggregated.csv")
    assert saved["name"].tolist() == ["BM25", "top2", "older"]              # the other system's row kept
    assert saved["nDCG@10"].tolist()[:2] == pytest.approx(first["nDCG@10"].tolist(), abs=1e-15)
    assert len(pd.read_csv(ours_dir / "perquery.csv")) == len(pd.read_csv(theirs_dir / "perquery.csv"))

    def broken(topics):
        raise AssertionError("reuse must read the saved results, not run the system")
    reused = Experiment({"BM25": pt.apply.generic(broken), "top2": pt.apply.generic(broken)}, TOPICS, QRELS,
                        [nDCG @ 10, "mrt"], save_dir=str(ours_dir), save_mode="reuse", holes=False, validate="ignore")
    assert reused["nDCG@10"].tolist() == first["nDCG@10"].tolist() and reused["mrt"].tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="already exists"):
        Experiment(two, TOPICS, QRELS, [nDCG @ 10], save_dir=str(ours_dir), save_mode="error")
    frames = {name: pt.io.read_results(str(ours_dir / f"{name}.res.gz")) for name in two}
    with pytest.warns(UserWarning, match="already exists"):                   # frames: warned, files left as they are
        Experiment(frames, TOPICS, QRELS, [nDCG @ 10], save_dir=str(ours_dir), holes=False)
    assert (ours_dir / "BM25.res.gz").exists() and (ours_dir / "top2.res.gz").exists()
    timed = Experiment(two, TOPICS, QRELS, [nDCG @ 10, "mrt"], holes=False)
    assert list(timed.columns) == ["name", "nDCG@10", "mrt"] and (timed["mrt"] > 0).all()
    no_docno = pt.apply.generic(lambda t: t.assign(score=1.0), transform_outputs=lambda cols: [*cols, "score"])
    for run in (pt.Experiment, Experiment):
        with pytest.raises(ValueError, match="do not produce"):
            run([no_docno], TOPICS, QRELS, [nDCG @ 10], names=["x"], validate="error")
    with pytest.raises(ValueError, match="use_judged"):
        Experiment(two, TOPICS, QRELS, [nDCG @ 10], plan="tree")
