"""Streaming a run file by query blocks gives the in-memory engine's numbers, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import judged
from judged.core.evaluation import evaluate
from judged.core.conventions import Settings
from judged.core.measures import Measure
from judged.core.results import LazyRunResult
from judged.core.stream import evaluate_run_file

MEASURES = ["nDCG@10", "nDCG(gain=exp)@5", "AP", "P@5", "RR", "R@20", "Rprec", "Bpref", "Judged@10",
            "NumRet", "NumRel", "nDCG(unjudged=condensed)@10"]


def write_collection(tmp_path, seed=11, queries=30, grouped=True):
    """Run lines grouped by query (unless ``grouped`` is False), qids out of strcmp order,
    exact score ties, queries only in the run or only in the qrels, one with nothing relevant."""
    rng = np.random.default_rng(seed)
    run, qrels = [], []
    for q in range(queries):
        qid = str(q * 13 % 97)
        docs = [f"d{j}" for j in rng.choice(500, size=rng.integers(1, 60), replace=False)]
        scores = np.round(rng.normal(size=len(docs)), 1)
        if q % 10 != 9:
            run += [f"{qid} Q0 {d} {r + 1} {float(s)!r} tag\n" for r, (d, s) in enumerate(zip(docs, scores))]
        judged_docs = list(rng.choice(docs, size=min(len(docs), 15), replace=False)) + ["unretrieved"]
        grades = rng.choice([-1, 0, 1, 2, 3], size=len(judged_docs)) if q % 7 else np.zeros(len(judged_docs), int)
        qrels += [f"{qid} 0 {d} {g}\n" for d, g in zip(judged_docs, grades)]
    run.append("only-in-run Q0 x 1 1.0 tag\n")
    if not grouped:
        run = run[1::2] + run[0::2]
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(run))
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def in_memory(qrels, run, **conventions):
    r = evaluate(qrels, {"run": judged.read_run(run)}, MEASURES, **conventions)
    return r.runs["run"]


@pytest.mark.parametrize("conventions", [{}, {"complete": True}, {"no_relevant": "skip"}, {"ties": "rank"}],
                         ids=["defaults", "complete", "skip", "rank-ties"])
def test_tiny_blocks_give_identical_numbers(tmp_path, conventions):
    # 64-byte batches, one batch per block: nearly every query straddles two batches
    qrels_path, run_path = write_collection(tmp_path)
    qrels = judged.read_qrels(qrels_path)
    streamed = evaluate_run_file(qrels, run_path, {m: Measure.parse(m) for m in MEASURES}, Settings(**conventions),
                                 block_size=64)
    assert isinstance(streamed, LazyRunResult)
    whole = in_memory(qrels, run_path, **conventions)
    assert streamed.qids.tolist() == whole.qids.tolist()
    assert len(whole.qids) >= 20
    for m in MEASURES:
        assert np.array_equal(streamed.values[m], whole.values[m]), m
    assert streamed.counts == whole.counts
    assert streamed.aligned.qids.tolist() == whole.qids.tolist()  # computed on first use


def test_evaluate_streams_run_files(tmp_path):
    qrels_path, run_path = write_collection(tmp_path)
    result = evaluate(qrels_path, run_path, MEASURES)
    assert isinstance(result.runs[run_path], LazyRunResult)
    whole = in_memory(qrels_path, run_path)
    for m in MEASURES:
        assert np.array_equal(result.runs[run_path].values[m], whole.values[m])


def test_a_file_not_grouped_by_query_is_read_whole(tmp_path):
    qrels_path, run_path = write_collection(tmp_path, grouped=False)
    qrels = judged.read_qrels(qrels_path)
    measures = {m: Measure.parse(m) for m in MEASURES}
    assert evaluate_run_file(qrels, run_path, measures, Settings(), block_size=64) is None
    result = evaluate(qrels, run_path, MEASURES)
    assert not isinstance(result.runs[run_path], LazyRunResult)


def test_a_duplicate_in_a_late_block_names_its_line(tmp_path):
    (tmp_path / "qrels").write_text("1 0 a 1\n2 0 b 1\n")
    lines = [f"1 Q0 d{i} {i} {100 - i} t\n" for i in range(40)] + ["2 Q0 b 1 3 t\n", "2 Q0 b 2 2 t\n"]
    (tmp_path / "run").write_text("".join(lines))
    qrels = judged.read_qrels(str(tmp_path / "qrels"))
    with pytest.raises(judged.ParseError, match=r"run:42: docid 'b' appears twice for query '2'"):
        evaluate_run_file(qrels, str(tmp_path / "run"), {"AP": Measure.parse("AP")}, Settings(),
                          block_size=64)


def test_no_relevant_error_is_the_in_memory_refusal(tmp_path):
    qrels_path, run_path = write_collection(tmp_path)
    with pytest.raises(judged.ConventionError) as whole:
        evaluate(qrels_path, {"run": judged.read_run(run_path)}, ["AP"], no_relevant="error")
    qrels = judged.read_qrels(qrels_path)
    with pytest.raises(judged.ConventionError) as streamed:
        evaluate_run_file(qrels, run_path, {"AP": Measure.parse("AP")}, Settings(no_relevant="error"),
                          block_size=64)
    assert str(streamed.value) == str(whole.value)


def test_first_run_read_while_the_qrels_are_read(tmp_path, monkeypatch):
    # judged.evaluate starts tokenizing the first run file before it reads the qrels; the
    # numbers are those of the objects read one after the other, and the reader is used once
    import threading

    import judged.core.stream as stream

    qrels_path, run_path = write_collection(tmp_path)
    started = []
    real = stream.PieceReader.__init__

    def spy(self, source, block_size=0):
        started.append(source)
        real(self, source, block_size)

    monkeypatch.setattr(stream.PieceReader, "__init__", spy)
    before = set(threading.enumerate())
    result = evaluate(qrels_path, [run_path, run_path], MEASURES)
    whole = evaluate(judged.read_qrels(qrels_path), {"run": judged.read_run(run_path)}, MEASURES)
    if judged.core.native.native is None:
        assert started == []
    else:
        assert started[0] == run_path and len(started) == 2  # prefetched, then a new reader for the second
    for name in (run_path, run_path + " (2)"):
        for m in MEASURES:
            assert np.array_equal(result.runs[name].values[m], whole.runs["run"].values[m]), (name, m)
    assert not [t for t in set(threading.enumerate()) - before if t.name.startswith("ThreadPoolExecutor")]


def test_a_bad_qrels_file_closes_the_prefetched_run(tmp_path):
    import threading

    _, run_path = write_collection(tmp_path)
    (tmp_path / "bad").write_text("q1 0 d1 x\n")
    before = set(threading.enumerate())
    with pytest.raises(judged.core.errors.ParseError, match="bad:1: grade 'x' is not an integer"):
        evaluate(str(tmp_path / "bad"), run_path, MEASURES)
    assert not [t for t in set(threading.enumerate()) - before if t.name.startswith("ThreadPoolExecutor")]


def test_an_ungrouped_prefetched_run_is_read_whole(tmp_path):
    qrels_path, run_path = write_collection(tmp_path, grouped=False)
    result = evaluate(qrels_path, run_path, MEASURES)
    assert not isinstance(result.runs[run_path], LazyRunResult)
    whole = in_memory(judged.read_qrels(qrels_path), run_path)
    for m in MEASURES:
        assert np.array_equal(result.runs[run_path].values[m], whole.values[m]), m


def test_fields_after_the_tag_are_ignored_streamed(tmp_path, backend):
    """Issue #14: run lines with fields after the tag (trec_eval ignores them) stream on both
    back ends, with the numbers of the same lines without the extra fields."""
    qrels_path, run_path = write_collection(tmp_path)
    qrels = judged.read_qrels(qrels_path)
    extras = ["", " x", " x y z", " é"]
    lines = open(run_path).read().splitlines()
    (tmp_path / "extra").write_text("".join(line + extras[i % 4] + "\n" for i, line in enumerate(lines)))
    extra_path = str(tmp_path / "extra")
    plain = in_memory(qrels, run_path)
    streamed = evaluate_run_file(qrels, extra_path, {m: Measure.parse(m) for m in MEASURES}, Settings(),
                                 block_size=64)
    assert isinstance(streamed, LazyRunResult)
    result = evaluate(qrels_path, extra_path, MEASURES).runs[extra_path]
    for got in (result, streamed):
        assert got.qids.tolist() == plain.qids.tolist()
        for m in MEASURES:
            assert np.array_equal(got.values[m], plain.values[m]), m


def test_rank_ties_with_complete_add_the_missing_queries(tmp_path):
    # the queries the run lacks were aligned as an empty run, which has no rank column:
    # ties='rank' with complete=True refused every streamed or spilled file missing a query
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 1.0 t\n")
    streamed = evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), ["AP"], ties="rank", complete=True)
    whole = evaluate(str(tmp_path / "qrels"), {"run": judged.read_run(str(tmp_path / "run"))}, ["AP"], ties="rank",
                     complete=True)
    assert streamed.runs[str(tmp_path / "run")].values["AP"].tolist() == whole.runs["run"].values["AP"].tolist() \
        == [1.0, 0.0]
