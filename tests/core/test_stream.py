"""Streaming a run file by query blocks gives the in-memory engine's numbers, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import judged
from judged.core.evaluation import evaluate
from judged.core.conventions import Settings
from judged.core.measures import Measure
from judged.core.results import LazyRunResult
from judged.core import stream

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


def evaluate_run_file(qrels, path, measures, settings, **options):
    """The stream under one qrels version: its RunResult, or None."""
    got = stream.evaluate_run_file([(qrels, measures)], path, settings, **options)
    return None if got is None else got[0]


def in_memory(qrels, run, **conventions):
    r = evaluate(qrels, {"run": judged.read_run(run)}, MEASURES, **conventions)
    return r.runs["run"]


def test_versions_are_each_versions_own_stream(tmp_path):
    """Under several qrels at once (the file read once, each block scored under each): per
    version the values, query ids and counts of streaming the file under that qrels alone."""
    qrels_path, run_path = write_collection(tmp_path)
    full = judged.read_qrels(qrels_path)
    frame = full.to_pandas()
    fewer = judged.read_qrels(frame[frame.qid != frame.qid.iloc[0]].iloc[::2])  # a query gone, half the rest
    versions = [(full, {m: Measure.parse(m) for m in MEASURES}), (fewer, {"AP": Measure.parse("AP")})]
    got = stream.evaluate_run_file(versions, run_path, Settings(complete=True), block_size=64)
    assert len(got) == 2
    for (qrels, measures), rr in zip(versions, got):
        alone = evaluate_run_file(qrels, run_path, measures, Settings(complete=True), block_size=64)
        assert rr.qids.tolist() == alone.qids.tolist() and rr.counts == alone.counts
        assert all(np.array_equal(rr.values[m], alone.values[m]) for m in measures)
    assert len(got[1].qids) == len(got[0].qids) - 1


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
    assert result.runs[run_path].source is None  # read whole: neither streamed nor spilled


@pytest.mark.parametrize("conventions", [{}, {"complete": True}, {"no_relevant": "skip"}, {"ties": "rank"},
                                         {"depth_cut": 4}], ids=["defaults", "complete", "skip", "rank-ties", "cut"])
def test_top_of_a_run_file_is_the_top_of_the_whole_alignment(tmp_path, monkeypatch, conventions):
    # Scorer Top(5): each block's top 5 ranks stacked (blocks of a query or two) and aligned
    # again, the same queries, ranks, grades and docids as the whole file's alignment cut at
    # 5; the values and counts are the stream's. A file not grouped by query, or gzip, is
    # read whole and cut: the same
    from judged.core.align import align
    from judged.core.evaluation import Scorer, Top

    qrels_path, run_path = write_collection(tmp_path)
    qrels, settings = judged.read_qrels(qrels_path), Settings(**conventions)
    measures = {m: Measure.parse(m) for m in ("nDCG@10", "AP")}
    monkeypatch.setattr(stream, "BLOCK_SIZE", 256)
    whole = align(qrels, judged.read_run(run_path), settings)
    cut = whole.ranked.top(5)
    alone = evaluate_run_file(qrels, run_path, measures, settings)
    (tmp_path / "u").mkdir()
    _, ungrouped = write_collection(tmp_path / "u", grouped=False)
    gz = tmp_path / "run.gz"
    gz.write_bytes(__import__("gzip").compress(open(run_path, "rb").read()))
    for path in (run_path, ungrouped, str(gz)):
        result = Scorer(qrels, measures, settings).runs({"r": path}, Top(5)).runs["r"]
        again = result.aligned
        assert again.run.name == "r" and len(again.run) == len(cut.row)
        assert len(cut.row) < len(whole.ranked.row) or "depth_cut" in conventions
        assert again.qids.tolist() == whole.qids.tolist() and again.settings == settings
        for field in ("q", "pos", "offsets"):
            assert np.array_equal(getattr(again.ranked, field), getattr(cut, field)), field
        assert np.array_equal(again.ranked.grade, cut.grade, equal_nan=True)
        assert again.docids(again.ranked.row) == whole.docids(cut.row)
        assert result.counts == alone.counts == again.counts
        assert all(np.array_equal(result.values[m], alone.values[m]) for m in measures)


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
    assert result.runs[run_path].source is None  # read whole: neither streamed nor spilled
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


# -- the piece reader: pieces of whole queries, tokenized in two threads -----------------


def irregular_run(tmp_path, crlf=False):
    """Run lines grouped by query with blank and ``#`` lines inside and between queries,
    tabs and runs of spaces between fields, leading white space, and (``crlf``) CRLF ends."""
    lines = ["# a comment before the first query", ""]
    for q in range(12):
        for r in range(1 + q * 7 % 23):
            sep = "\t" if r % 3 == 0 else "  " if r % 3 == 1 else " "
            lines.append(f"{' ' if r % 5 == 4 else ''}q{q}{sep}Q0{sep}d{r * 7 % 31}{sep}{r + 1} {20 - r * 0.5!r} t")
            if r % 4 == 2:
                lines.append("" if r % 8 == 2 else f"# q{q + 1} looks like the next query here")
    text = ("\r\n" if crlf else "\n").join(lines) + "\n"
    (tmp_path / "run").write_bytes(text.encode())
    return str(tmp_path / "run")


def test_query_cut_finds_where_the_last_query_begins():
    from judged.core.stream import query_cut

    text = b"q1 Q0 a 1 1 t\nq1 Q0 b 2 0 t\n\n# q2 is next\nq2 Q0 a 1 1 t\n  q2\tQ0 b 2 0 t\n"
    assert query_cut(text, len(text)) == text.index(b"\n\n# q2") + 1  # right after q1's last line
    one = b"# only\nq1 Q0 a 1 1 t\n\nq1 Q0 b 2 0 t\n# the end\n\n"
    assert query_cut(one, len(one)) == 0  # one query all through: read on before cutting
    assert query_cut(b"\n# nothing\n", 11) == 0
    ungrouped = b"q1 Q0 a 1 1 t\nq2 Q0 a 1 1 t\nq1 Q0 b 2 0 t\n"  # q1 first and last, q2 between
    assert query_cut(ungrouped, len(ungrouped)) == ungrouped.rindex(b"q1")  # not 0: no reading on
    many = b"".join(f"q{i // 3} Q0 d{i} 1 1 t\r\n".encode() for i in range(3001))
    assert query_cut(many, len(many)) == many.index(b"q1000 ")  # CRLF; a prefix of q1000's id
    assert query_cut(many, many.index(b"q999 ")) == many.index(b"q998 ")


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
@pytest.mark.parametrize("size", [16, 100, 1 << 20])
def test_pieces_hold_whole_queries_in_file_order(tmp_path, backend, crlf, size):
    # pieces far smaller than a query (16 bytes: the reader reads on), cut mid-query, or the
    # whole file; two threads tokenize them and the consumer gets them in file order
    from judged.core.io.text import read_tokens
    from judged.core.io.trec_files import RUN_LAYOUT
    from judged.core.stream import PieceReader

    path = irregular_run(tmp_path, crlf)
    whole, _ = read_tokens(path, RUN_LAYOUT)
    reader = PieceReader(path, size, threads=2)
    got, qids = [], []
    try:
        for read, row0, tokens, (starts, block_qids), qhash, dup in reader:
            assert row0 == sum(len(g[0]) for g in got)
            got.append([s.to_pylist() for s in tokens.strings] + [tokens.number.tolist(), tokens.hashes.tolist()])
            qids += block_qids.to_pylist()
            assert len(dup) == 0
    finally:
        reader.close()
    assert [sum((g[k] for g in got), []) for k in range(5)] == \
        [s.to_pylist() for s in whole.strings] + [whole.number.tolist(), whole.hashes.tolist()]
    assert qids == [f"q{q}" for q in range(12)]  # each query in one piece
    assert reader.row0 == whole.rows


@pytest.mark.parametrize("size", [64, 1 << 20])
def test_streamed_irregular_files_give_the_whole_files_numbers(tmp_path, backend, size):
    path = irregular_run(tmp_path, crlf=True)
    (tmp_path / "qrels").write_text("".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(12) for d in range(0, 31, 2)))
    qrels = judged.read_qrels(str(tmp_path / "qrels"))
    streamed = evaluate_run_file(qrels, path, {m: Measure.parse(m) for m in MEASURES}, Settings(), block_size=size)
    assert isinstance(streamed, LazyRunResult)
    whole = in_memory(qrels, path)
    for m in MEASURES:
        assert np.array_equal(streamed.values[m], whole.values[m]), m


@pytest.mark.parametrize("bad, why", [("q9 Q0 d1 1 x t", "run:{}: score 'x' is not a number"),
                                      ("q9 Q0 d1 1 t", r"run:{}: expected 6 fields \(qid Q0 docid rank score tag\), found 5")])
def test_a_refused_line_in_a_late_piece_names_its_line(tmp_path, backend, bad, why):
    # the piece holding it fails in a reader thread; the whole-file reader names the line
    path = irregular_run(tmp_path)
    lines = open(path).read().split("\n")
    at = lines.index(next(line for line in lines if line.startswith("q9")))
    lines.insert(at + 2, bad)
    (tmp_path / "run").write_text("\n".join(lines))
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    with pytest.raises(judged.ParseError, match=why.format(at + 3)):
        evaluate(str(tmp_path / "qrels"), path, ["AP"])
    qrels = judged.read_qrels(str(tmp_path / "qrels"))
    assert evaluate_run_file(qrels, path, {"AP": Measure.parse("AP")}, Settings(), block_size=64) is None


def test_closing_a_reader_early_ends_its_threads(tmp_path):
    import threading

    from judged.core.stream import PieceReader

    _, run_path = write_collection(tmp_path, queries=60)
    before = set(threading.enumerate())
    reader = PieceReader(run_path, 64, threads=2)
    next(iter(reader))
    reader.close()
    assert not [t for t in set(threading.enumerate()) - before if t.name == "judged-tokenizer"]


def test_two_reader_threads_on_the_compiled_tokenizer_only(backend, monkeypatch):
    # the Arrow reference holds the GIL between its calls: one reader thread there
    import os

    from judged.core.stream import tokenizer_threads

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert tokenizer_threads() == (2 if backend == "compiled" else 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert tokenizer_threads() == 1
