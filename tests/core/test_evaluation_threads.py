"""Runs read into memory are scored in threads (judged.core.evaluation.scoring_threads): the same
numbers, in the same order, with the same first error, as in one thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import judged
import judged.core.evaluation as evaluation
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
