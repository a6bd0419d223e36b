"""judged.integrations.sentence_transformers.GradedIREvaluator against the real Sentence
Transformers: the same numbers as judged.evaluate on the retrieved lists, the built-in
InformationRetrievalEvaluator's numbers where the conventions meet, graded where it is binary,
and its metrics in the trainer's logs. Tiny models built in code (tests/integrations/tiny_st.py)."""

import math

import pytest

pytest.importorskip("torch", reason="torch is not installed: pip install torch==2.13.0 (the CPU wheel)")
pytest.importorskip("sentence_transformers", reason="the st extra is not installed: pip install 'judged[st]'")

import tiny_st  # noqa: E402
from synth import write_qrels, write_run  # noqa: E402
try:  # sentence-transformers 6
    from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator
except ImportError:  # 3.x - 5.x
    from sentence_transformers.evaluation import InformationRetrievalEvaluator

import judged  # noqa: E402
from judged.integrations.sentence_transformers import GradedIREvaluator  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return tiny_st.collection()


@pytest.fixture(scope="module")
def model():
    return tiny_st.model(seed=3)


def builtin(queries, corpus, relevant, **kw):
    return InformationRetrievalEvaluator(queries, corpus, relevant, write_csv=False, **kw)


def test_numbers_equal_judged_evaluate_on_the_same_lists(data, model, tmp_path):
    """The evaluator scores its retrieved lists as Arrow columns (no dict in between): the
    same bits as judged.evaluate of those lists given as dicts and as TREC files."""
    queries, corpus, relevant = data
    graded = {q: {d: 1 + i % 2 for i, d in enumerate(sorted(docs))} for q, docs in relevant.items()}
    ev = GradedIREvaluator(queries, corpus, graded, ["nDCG@10", "nDCG(gain=exp)@10", "AP", "RR", "P@5"], depth=20)
    metrics = ev(model)
    direct = judged.evaluate(graded, {"m": ev.last_run}, list(ev.measures)).mean().loc["m"]
    from_files = judged.evaluate(write_qrels(tmp_path / "qrels.txt", graded),
                                 write_run(tmp_path / "run.txt", ev.last_run, "m"), list(ev.measures)).mean().iloc[0]
    assert set(metrics) == set(ev.measures) and len(ev.last_run) == len(queries)
    assert all(len(docs) == 20 for docs in ev.last_run.values())
    for given in ev.measures:
        assert metrics[given] == direct[given] == from_files[given]  # bit for bit
    assert ev.primary_metric == "nDCG@10"
    assert "gain=exp" in ev.conventions["nDCG(gain=exp)@10"]
    # holes: Judged@10 and nDCG@10's exact bounds over the unjudged documents in the top 10
    assert 0 < metrics["Judged@10"] < 1
    assert metrics["nDCG(unjudged=min)@10"] <= metrics["nDCG@10"] < metrics["nDCG(unjudged=max)@10"]  # min: not monotone


def test_binary_qrels_match_the_builtin_evaluator_where_conventions_meet(data, model):
    queries, corpus, relevant = data
    theirs = builtin(queries, corpus, relevant, mrr_at_k=[10], ndcg_at_k=[10], accuracy_at_k=[1, 5],
                     precision_recall_at_k=[1, 5, 10], map_at_k=[100], name="b")(model)
    sim = model.similarity_fn_name
    ev = GradedIREvaluator(queries, corpus, relevant, ["nDCG@10", "RR@10", "P@1", "P@5", "P@10", "R@5", "R@10",
                                                       "Success@1", "Success@5", "AP@100"], name="b")
    ours = ev(model)
    pairs = {"nDCG@10": "ndcg@10", "RR@10": "mrr@10", "P@1": "precision@1", "P@5": "precision@5",
             "P@10": "precision@10", "R@5": "recall@5", "R@10": "recall@10", "Success@1": "accuracy@1",
             "Success@5": "accuracy@5", "AP@100": "map@100"}   # MAP@100 = AP@100 while no query has 100+ relevant
    for mine, st in pairs.items():
        assert ours[f"b_{mine}"] == pytest.approx(theirs[f"b_{sim}_{st}"], abs=1e-12), mine


def test_map_at_k_differs_where_a_query_has_more_relevant_than_k(data, model):
    """ST's MAP@k divides by min(k, R); trec_eval's map_cut (judged's AP@k) by R."""
    queries, corpus, _ = data
    ev0 = GradedIREvaluator(queries, corpus, {"q0": {"d00": 1}}, ["AP@2"], holes=False)
    ev0(model)
    top = list(ev0.last_run["q0"])
    relevant = {"q0": {top[0], top[1], top[5]}}            # ranks 1, 2 and 6: three relevant
    theirs = builtin({"q0": queries["q0"]}, corpus, relevant, map_at_k=[2])(model)
    ours = GradedIREvaluator({"q0": queries["q0"]}, corpus, relevant, ["AP@2"], holes=False)(model)
    assert theirs[f"{model.similarity_fn_name}_map@2"] == pytest.approx(1.0)          # (1 + 1) / min(2, 3)
    assert ours["AP@2"] == pytest.approx(2 / 3)                                        # (1 + 1) / 3


def graded_pair():
    """Two models that put the same two judged documents first, in opposite orders."""
    alpha, near, far = [1, 0, 0, 0, 0], [0.8, 0.6, 0, 0, 0], [0, 0, 1, 0, 0]
    others = {"delta": [0.1, 0, 0, 1, 0], "epsilon": [0.05, 0, 0, 0, 1]}
    a = tiny_st.model({"alpha": alpha, "gamma": near, "beta": far, **others}, dim=5)
    b = tiny_st.model({"alpha": alpha, "beta": near, "gamma": far, **others}, dim=5)
    return a, b


def test_builtin_gives_one_score_to_rankings_graded_ndcg_separates():
    queries = {"q1": "alpha"}
    corpus = {"d1": "alpha gamma", "d2": "alpha beta", "d3": "delta", "d4": "epsilon"}
    graded = {"q1": {"d1": 2, "d2": 1}}                     # d1 is the better answer
    a, b = graded_pair()
    ours = GradedIREvaluator(queries, corpus, graded, ["nDCG@10"], holes=False)
    ours(a)
    assert list(ours.last_run["q1"])[:2] == ["d1", "d2"]
    ours_a = ours(a)["nDCG@10"]
    ours(b)
    assert list(ours.last_run["q1"])[:2] == ["d2", "d1"]
    ours_b = ours(b)["nDCG@10"]
    st = builtin(queries, corpus, {"q1": set(graded["q1"])}, ndcg_at_k=[10])   # relevance as a set: binary
    key = f"{a.similarity_fn_name}_ndcg@10"
    assert st(a)[key] == st(b)[key] == 1.0                   # the built-in evaluator cannot tell them apart
    assert ours_a == 1.0
    assert ours_b == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))   # 0.8597
    # a grade-0 judgment ("judged not relevant") becomes relevant once the qrels are a set
    zero = {"q1": {"d1": 2, "d2": 0}}
    assert st.__class__(queries, corpus, {"q1": set(zero["q1"])}, ndcg_at_k=[10], write_csv=False)(b)[key] == 1.0
    assert GradedIREvaluator(queries, corpus, zero, ["nDCG@10"], holes=False)(b)["nDCG@10"] == \
        pytest.approx(1 / math.log2(3))


def test_metrics_are_logged_by_the_trainer(tmp_path, data):
    datasets = pytest.importorskip("datasets", reason="training needs the datasets package")
    pytest.importorskip("accelerate", reason="training needs accelerate (sentence-transformers[train])")
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    try:
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    except ImportError:
        from sentence_transformers.losses import MultipleNegativesRankingLoss

    queries, corpus, relevant = data
    m = tiny_st.model(seed=5)
    train = datasets.Dataset.from_dict({"anchor": [queries[q] for q in relevant],
                                        "positive": [corpus[sorted(d)[0]] for d in relevant.values()]})
    ev = GradedIREvaluator(queries, corpus, relevant, ["nDCG@10"], name="dev", write_run=True)
    args = SentenceTransformerTrainingArguments(output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=4,
                                                eval_strategy="steps", eval_steps=1, logging_steps=1, report_to=[],
                                                save_strategy="no", use_cpu=True, learning_rate=0.05)
    trainer = SentenceTransformerTrainer(model=m, args=args, train_dataset=train, evaluator=ev,
                                         loss=MultipleNegativesRankingLoss(m))
    trainer.train()
    logged = [h for h in trainer.state.log_history if "eval_dev_nDCG@10" in h]
    assert len(logged) == 2
    assert {"eval_dev_Judged@10", "eval_dev_nDCG(unjudged=max)@10"} <= set(logged[0])
    assert 0 <= logged[-1]["eval_dev_nDCG@10"] <= 1
    assert trainer.state.log_history and ev.last_result is not None


def test_texts_read_from_a_collection_folder_go_in_as_they_are(tmp_path, model):
    import json

    from judged.core.io import texts

    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    docs = [("d1", "alpha", "beta gamma"), ("d2", "", " delta "), ("d3", "epsilon zeta", ""), ("d4", "eta", "theta")]
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs))
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "alpha gamma"}\n{"_id": "q2", "text": "delta"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td4\t1\nq2\td2\t1\n")
    corpus, queries = texts.read_docs(root), texts.read_queries(root)
    assert corpus["d1"] == {"title": "alpha", "text": "beta gamma"}
    ev = GradedIREvaluator(queries, corpus, str(root), ["nDCG@10", "RR@10"], holes=False)
    # a document is its title and text joined by a space, stripped, as BEIR and MTEB encode it
    assert ev.corpus == ["alpha beta gamma", "delta", "epsilon zeta", "eta theta"]
    joined = GradedIREvaluator(queries, dict(zip(ev.corpus_ids, ev.corpus)), str(root), ["nDCG@10", "RR@10"],
                               holes=False)
    assert ev(model) == joined(model) and ev.last_run == joined.last_run and len(ev.last_run) == 2


def test_the_top_of_each_row_keeps_every_document_tied_with_its_last():
    """_top_with_ties gives, per row, the ``top`` largest values and every value equal to the
    last of them (the candidates the docid rule then orders): the same set as comparing the
    whole row with its k-th value, on rows with and without ties at the cut."""
    import torch

    from judged.integrations.sentence_transformers import _top_with_ties

    sim = torch.tensor([[0.9, 0.5, 0.5, 0.5, 0.1],    # one of three 0.5s in the top 2: all three kept
                        [0.9, 0.8, 0.7, 0.6, 0.5],    # no tie: the top 2
                        [0.5, 0.5, 0.5, 0.5, 0.5],    # all tied
                        [0.1, 0.2, 0.9, 0.9, 0.3]])   # tied inside the top 2 only
    for top in (1, 2, 5):
        got = sorted((int(r), int(c), float(v)) for rows, cols, vals in _top_with_ties(sim, top)
                     for r, c, v in zip(rows, cols, vals))
        kth = torch.topk(sim, top, dim=1).values[:, -1:]
        rows, cols = torch.nonzero(sim >= kth, as_tuple=True)
        assert got == sorted((int(r), int(c), float(sim[r, c])) for r, c in zip(rows, cols)), top
    assert sum(len(r) for r, _, _ in _top_with_ties(sim, 2)) == 4 + 2 + 5 + 2
