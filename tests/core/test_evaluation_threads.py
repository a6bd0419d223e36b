"""Runs read into memory are scored in threads (judged.core.evaluation.scoring_threads): the same
numbers, in the same order, with the same first error, as in one thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import judged
import judged.core.evaluation as evaluation
from judged.core.data import take_strings
from judged.core.errors import ConventionError, ParseError, UsageError

from synth import make_collection

MEASURES = ["nDCG@10", "AP", "P@5", "RR", "Bpref", "nDCG(unjudged=condensed)@10", "Judged@10",
            "nDCG(unjudged=max)@10", "R@20"]


def _runs(seed: int, n: int = 6) -> tuple[dict, dict]:
    coll = make_collection(seed, max_queries=15, max_docs=60, max_ranked=40)
    rng = np.random.default_rng(seed)
    runs = {f"r{i}": {q: {d: s + float(rng.normal(0, 0.3)) for d, s in docs.items()} for q, docs in coll.run.items()}
            for i in range(n)}
    return coll.qrels, runs


def _values(result) -> dict:
    return {name: (r.qids.tolist(), {m: v.view(np.uint64).tolist() for m, v in r.values.items()}, r.counts)
            for name, r in result.runs.items()}


@pytest.mark.parametrize("seed", range(4))
def test_threads_give_the_one_thread_numbers_in_run_order(seed, monkeypatch):
    qrels, runs = _runs(seed)
    monkeypatch.setenv("JUDGED_THREADS", "1")
    one = judged.evaluate(qrels, runs, MEASURES)
    monkeypatch.setenv("JUDGED_THREADS", "3")
    many = judged.evaluate(qrels, runs, MEASURES)
    assert list(many.runs) == list(runs)
    assert _values(many) == _values(one)
    assert many.mean().equals(one.mean())


def test_runs_are_scored_off_the_main_thread_when_threads_are_allowed(monkeypatch):
    qrels, runs = _runs(7, n=4)
    seen = []
    real = evaluation.score_block

    def spy(*args, **kwargs):
        seen.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluation, "score_block", spy)
    monkeypatch.setenv("JUDGED_THREADS", "2")
    judged.evaluate(qrels, runs, ["nDCG@10"])
    assert seen == [False] * 4
    seen.clear()
    monkeypatch.setenv("JUDGED_THREADS", "1")
    judged.evaluate(qrels, runs, ["nDCG@10"])
    assert seen == [True] * 4


def test_the_first_runs_error_wins_over_a_later_files_parse_error(tmp_path, monkeypatch):
    qrels, runs = _runs(3, n=3)
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 not-a-score tag\n")
    real = evaluation.score_block

    def failing(qrels_, run, *args, **kwargs):
        if run.name in ("r1", "r2"):
            raise ConventionError(f"refused {run.name}")
        return real(qrels_, run, *args, **kwargs)

    monkeypatch.setattr(evaluation, "score_block", failing)
    monkeypatch.setenv("JUDGED_THREADS", "2")
    with pytest.raises(ConventionError, match="refused r1"):
        judged.evaluate(qrels, {**runs, "late": str(bad)}, ["nDCG@10"])
    monkeypatch.setattr(evaluation, "score_block", real)
    with pytest.raises(ParseError, match="bad.run:1"):
        judged.evaluate(qrels, {**runs, "late": str(bad)}, ["nDCG@10"])


@pytest.mark.parametrize("value, expected", [("", None), ("1", 1), ("3", 3), ("0", 1), (" 2 ", 2)])
def test_scoring_threads_reads_the_environment(value, expected, monkeypatch):
    monkeypatch.setenv("JUDGED_THREADS", value)
    got = evaluation.scoring_threads()
    assert got == expected if expected is not None else 1 <= got <= 4


def test_a_bad_thread_count_is_a_one_line_cli_error(tmp_path, monkeypatch, capsys):
    from judged.cli import main

    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 1.0 t\n")
    monkeypatch.setenv("JUDGED_THREADS", "many")
    with pytest.raises(UsageError):
        evaluation.scoring_threads()
    code = main(["eval", str(tmp_path / "q"), str(tmp_path / "r"), str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines() == ["judged: error: JUDGED_THREADS='many' is not a number of threads"]


def _write_runs(tmp_path, runs: dict) -> list:
    paths = []
    for name, run in runs.items():
        path = tmp_path / f"{name}.run"
        path.write_text("".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, docs in run.items() for d, s in docs.items()))
        paths.append(str(path))
    return paths


def test_run_files_read_ahead_come_in_order_with_the_same_names_and_rows(tmp_path):
    # named_runs(ahead=True) reads two files at a time in threads: the same (name, Run) pairs
    # in the same order, a file given twice named a.run, then a.run (2)
    _, runs = _runs(11, n=4)
    paths = _write_runs(tmp_path, runs)
    given = [paths[0], *paths, paths[0]]
    one = list(evaluation.named_runs(given, "error"))
    ahead = list(evaluation.named_runs(given, "error", ahead=True))
    assert [n for n, _ in ahead] == [n for n, _ in one] == [paths[0], paths[0] + " (2)", *paths[1:], paths[0] + " (3)"]
    for (_, a), (_, b) in zip(one, ahead):
        assert a.qid.equals(b.qid) and a.docid.equals(b.docid) and np.array_equal(a.score, b.score)


def test_a_run_file_read_ahead_raises_its_parse_error_in_its_turn(tmp_path):
    _, runs = _runs(12, n=3)
    paths = _write_runs(tmp_path, runs)
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 not-a-score tag\n")
    got = []
    with pytest.raises(ParseError, match="bad.run:1"):
        for name, _ in evaluation.named_runs([paths[0], str(bad), paths[1]], "error", ahead=True):
            got.append(name)
    assert got == [paths[0]]  # the run before it came first


@pytest.mark.parametrize("read", [False, True])
def test_scorer_keeps_the_top_ranks_without_the_runs_columns(tmp_path, read):
    # Top(5, docids_only): each alignment of each query's top 5 ranks, its run those rows'
    # docids only (and their hashes), renumbered; run files grouped by query are streamed
    # and their top rows aligned again, runs read into memory cut after scoring
    from judged.core.conventions import Settings
    from judged.core.evaluation import ALIGNMENT, Scorer, Top

    qrels, runs = _runs(13, n=3)
    paths = _write_runs(tmp_path, runs)
    given = {p: judged.read_run(p) for p in paths} if read else paths
    settings = Settings(complete=True)
    full = Scorer(qrels, ["AP"], settings).runs(given, ALIGNMENT)
    slim = Scorer(qrels, ["AP"], settings).runs(given, Top(5, docids_only=True))
    assert list(slim.runs) == list(full.runs) == paths
    for name, a in full.alignments().items():
        s, top = slim.runs[name].aligned, a.ranked.top(5)
        assert s.run.qid is None and s.run.score is None and a.run.score is not None
        assert take_strings(s.run.docid, s.ranked.row).equals(take_strings(a.run.docid, top.row))
        assert np.array_equal(s.run.docid_hash[s.ranked.row], a.run.docid_hash[top.row])
        assert s.ranked.pos.max() == 4 < a.ranked.pos.max()
        for col in ("q", "pos", "offsets"):
            assert np.array_equal(getattr(s.ranked, col), getattr(top, col)), col
        assert np.array_equal(s.ranked.grade, top.grade, equal_nan=True)
        assert slim.runs[name].values["AP"].tolist() == full.runs[name].values["AP"].tolist()
        assert s.counts == a.counts and np.array_equal(s.qids, a.qids)
