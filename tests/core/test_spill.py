"""A run file not grouped by query, partitioned on disk (judged.core.spill), gives the numbers and
the errors of reading it whole."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

import judged
from judged.core import spill
from judged.cli import main
from judged.core.conventions import Settings
from judged.core.errors import UsageError
from judged.core.measures import Measure
from judged.core.results import LazyRunResult

MEASURES = ["nDCG@10", "nDCG(gain=exp)@5", "AP", "P@5", "RR", "R@20", "Rprec", "Bpref", "Judged@10",
            "NumRet", "NumRel", "nDCG(unjudged=condensed)@10"]


@pytest.fixture
def spilled(tmp_path, monkeypatch):
    """Spill every file, in partitions of about 1 kB, into a temporary directory of our own;
    yields the list of partition lists made (one per spilled file)."""
    monkeypatch.setenv("JUDGED_SPILL_BYTES", "0")
    monkeypatch.setenv("JUDGED_SPILL_PARTITION_BYTES", "1000")
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    made = []
    real = spill.partition

    def recording(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(spill, "partition", recording)
    return made


def shuffled_collection(tmp_path, seed=5, queries=40, end="\n", sep=" ", extra=()):
    """Run lines in random order (each query scattered over the file), exact score ties,
    queries only in the run or only in the qrels, one with nothing relevant."""
    rng = np.random.default_rng(seed)
    run, qrels = [], []
    for q in range(queries):
        qid = f"q{q * 13 % 97}"
        docs = [f"d{j}" for j in rng.choice(300, size=rng.integers(1, 40), replace=False)]
        scores = np.round(rng.normal(size=len(docs)), 1)
        if q % 10 != 9:
            run += [sep.join([qid, "Q0", d, str(r + 1), repr(float(s)), "tag"])
                    for r, (d, s) in enumerate(zip(docs, scores))]
        judged_docs = list(rng.choice(docs, size=min(len(docs), 10), replace=False)) + ["unretrieved"]
        grades = rng.choice([-1, 0, 1, 2, 3], size=len(judged_docs)) if q % 7 else np.zeros(len(judged_docs), int)
        qrels += [f"{qid} 0 {d} {g}\n" for d, g in zip(judged_docs, grades)]
    run += [sep.join(["only-in-run", "Q0", "x", "1", "1.0", "tag"]), sep.join(["also-only", "Q0", "y", "1", "2", "t"])]
    run = [run[i] for i in rng.permutation(len(run))] + list(extra)
    (tmp_path / "qrels").write_text("".join(qrels))
    with open(tmp_path / "run", "w", newline="") as f:
        f.write("".join(line + end for line in run))
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def whole(qrels, run, measures=MEASURES, **options):
    """The in-memory engine on the same file read whole."""
    on_duplicate = options.get("on_duplicate", "error")
    return judged.evaluate(qrels, {"run": judged.read_run(run, on_duplicate=on_duplicate)}, measures,
                           **options).runs["run"]


def assert_same(got, want, measures=MEASURES):
    assert got.qids.tolist() == want.qids.tolist()
    for m in measures:
        assert np.array_equal(got.values[m], want.values[m]), m
    assert got.counts == want.counts


@pytest.mark.parametrize("conventions", [{}, {"ties": "input"}, {"ties": "rank"}, {"complete": True},
                                         {"no_relevant": "skip"}, {"complete": True, "no_relevant": "skip"}],
                         ids=["defaults", "input-ties", "rank-ties", "complete", "skip", "complete-skip"])
def test_shuffled_run_gives_the_in_memory_numbers(tmp_path, spilled, conventions):
    qrels, run = shuffled_collection(tmp_path)
    result = judged.evaluate(qrels, run, MEASURES, **conventions).runs[run]
    assert isinstance(result, LazyRunResult)
    assert len(spilled) == 1 and len(spilled[0]) >= 5  # really partitioned, in several files
    want = whole(qrels, run, **conventions)
    assert len(want.qids) >= 25 and want.counts["only_in_run"] == 2
    assert_same(result, want)
    assert result.aligned.qids.tolist() == want.qids.tolist()  # computed on first use


def test_partitions_hold_whole_queries_in_file_order_with_their_line_numbers(tmp_path):
    lines = ["\ufeffa Q0 x 1 1 t", "", "# a comment", "b\tQ0 y 1 1 t", "  c Q0 z 1 1 t\r", "a Q0 w 2 0 t",
             " \t ", "#", "c Q0 v 2 0 t", "b Q0 u 2 0 t"]
    (tmp_path / "run").write_bytes("\n".join(lines).encode())  # no line end after the last line
    parts = spill.partition(str(tmp_path / "run"), str(tmp_path), 64)
    seen = {}
    text = (tmp_path / "run").read_bytes().split(b"\n")
    for part in parts:
        with open(part.path, "rb") as f:
            got = f.read().split(b"\n")[:-1]
        numbers = np.fromfile(part.lines_path, dtype=np.int64)
        assert len(got) == len(numbers) and list(numbers) == sorted(numbers)
        for line, number in zip(got, numbers):
            assert line == text[number - 1].removeprefix(b"\xef\xbb\xbf")
            assert seen.setdefault(line.split()[0], part.path) == part.path  # a query in one partition
    assert sorted(seen) == [b"a", b"b", b"c"]
    assert sum(len(np.fromfile(p.lines_path, dtype=np.int64)) for p in parts) == 6  # data lines only


def test_crlf_and_tabs(tmp_path, spilled):
    qrels, run = shuffled_collection(tmp_path, end="\r\n", sep="\t")
    result = judged.evaluate(qrels, run, MEASURES).runs[run]
    assert spilled and isinstance(result, LazyRunResult)
    assert_same(result, whole(qrels, run))


def test_fields_after_the_tag_are_ignored(tmp_path, spilled, backend):
    """Issue #14: spilled partitions keep the whole lines; their reader ignores the fields
    after the tag, as trec_eval does."""
    qrels, run = shuffled_collection(tmp_path)
    want = whole(qrels, run)
    lines = open(run).read().splitlines()
    (tmp_path / "extra").write_text("".join(line + [" x", "", " a b"][i % 3] + "\n" for i, line in enumerate(lines)))
    extra = str(tmp_path / "extra")
    result = judged.evaluate(qrels, extra, MEASURES).runs[extra]
    assert spilled and isinstance(result, LazyRunResult)
    assert_same(result, want)


def duplicated(tmp_path):
    """Two pairs repeated far apart, with different scores, so first and max differ."""
    extra = ["q0 Q0 dup 9 -5.0 tag", "q13 Q0 dup2 1 3.5 tag", "q0 Q0 dup 1 7.0 tag", "q13 Q0 dup2 2 -1 tag"]
    qrels, run = shuffled_collection(tmp_path, extra=())
    lines = open(run).read().splitlines()
    for at, line in zip([3, 50, 200, 400], extra):
        lines.insert(at, line)
    with open(run, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(qrels, "a") as f:
        f.write("q0 0 dup 3\nq13 0 dup2 1\n")
    return qrels, run


@pytest.mark.parametrize("on_duplicate", ["first", "max"])
def test_duplicates_first_and_max_keep_their_meaning(tmp_path, spilled, on_duplicate):
    qrels, run = duplicated(tmp_path)
    result = judged.evaluate(qrels, run, MEASURES, on_duplicate=on_duplicate, ties="input").runs[run]
    assert spilled
    assert_same(result, whole(qrels, run, on_duplicate=on_duplicate, ties="input"))
    first, highest = (whole(qrels, run, ["RR"], on_duplicate=d, ties="input") for d in ("first", "max"))
    assert not np.array_equal(first.values["RR"], highest.values["RR"])  # the case tells them apart


def error_of(call):
    with pytest.raises(judged.ParseError) as caught:
        call()
    return str(caught.value)


def test_a_duplicate_names_its_original_line(tmp_path, spilled):
    qrels, run = duplicated(tmp_path)
    message = error_of(lambda: judged.evaluate(qrels, run, ["AP"]))
    assert spilled
    assert message == error_of(lambda: judged.read_run(run))
    assert message == f"{run}:201: docid 'dup' appears twice for query 'q0' (use --on-duplicate first|max to accept)"


@pytest.mark.parametrize("bad", ["q5 Q0 z 1 2.0", "q7 Q0 z 1 abc t", "q8 Q0 z 1 inf t"])
def test_a_bad_line_is_named_before_an_earlier_duplicate(tmp_path, spilled, bad):
    # reading the whole file checks every line before looking for repeated pairs
    qrels, run = duplicated(tmp_path)
    lines = open(run).read().splitlines()
    lines.insert(300, bad)
    with open(run, "w") as f:
        f.write("\n".join(lines) + "\n")
    message = error_of(lambda: judged.evaluate(qrels, run, ["AP"]))
    assert spilled
    assert message == error_of(lambda: judged.read_run(run))
    assert message.startswith(f"{run}:301: ")


def test_the_earliest_of_two_bad_lines_is_named(tmp_path, spilled):
    qrels, run = shuffled_collection(tmp_path)
    lines = open(run).read().splitlines()
    lines[250], lines[100] = "q40 Q0 z 1 2.0", "zz Q0 z 1"  # different queries, likely partitions
    with open(run, "w") as f:
        f.write("\n".join(lines) + "\n")
    message = error_of(lambda: judged.evaluate(qrels, run, ["AP"]))
    assert message == f"{run}:101: expected 6 fields (qid Q0 docid rank score tag), found 4"


def test_the_cli_prints_the_original_line(tmp_path, spilled, capsys):
    qrels, run = duplicated(tmp_path)
    assert main(["eval", qrels, run, "-m", "AP"]) == 2
    assert f"{run}:201: docid 'dup' appears twice" in capsys.readouterr().err


def test_the_temporary_directory_is_removed(tmp_path, spilled, monkeypatch):
    qrels, run = duplicated(tmp_path)
    judged.evaluate(qrels, run, ["AP"], on_duplicate="first")
    with pytest.raises(judged.ParseError):
        judged.evaluate(qrels, run, ["AP"])
    monkeypatch.setattr(spill, "score_block", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        judged.evaluate(qrels, run, ["AP"], on_duplicate="first")
    monkeypatch.setattr(spill, "_split", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):  # while partitioning
        judged.evaluate(qrels, run, ["AP"], on_duplicate="first")
    assert len(spilled) == 3
    assert os.listdir(tmp_path / "tmp") == []


def test_small_gzip_and_grouped_files_are_not_spilled(tmp_path, spilled, monkeypatch):
    import gzip

    qrels, run = shuffled_collection(tmp_path)
    q = judged.read_qrels(qrels)
    measures = {"AP": Measure.parse("AP")}
    assert spill.evaluate_run_file(q, run, measures, Settings(), threshold=os.path.getsize(run)) is None
    with open(run, "rb") as f, gzip.open(tmp_path / "run.gz", "wb") as g:
        g.write(f.read())
    assert spill.evaluate_run_file(q, str(tmp_path / "run.gz"), measures, Settings()) is None
    lines = sorted(open(run).read().splitlines(), key=lambda line: line.split()[0])
    (tmp_path / "grouped").write_text("\n".join(lines) + "\n")
    judged.evaluate(qrels, str(tmp_path / "grouped"), ["AP"])
    assert spilled == []  # gzip was refused before partitioning; the grouped file was streamed


def test_progress_bars_do_not_change_the_numbers(tmp_path, spilled, capsys):
    qrels, run = shuffled_collection(tmp_path)
    q = judged.read_qrels(qrels)
    got = spill.evaluate_run_file(q, run, {m: Measure.parse(m) for m in MEASURES}, Settings(), progress=True)
    assert_same(got, whole(qrels, run))


def test_a_bad_budget_is_a_usage_error(tmp_path, spilled, monkeypatch):
    qrels, run = shuffled_collection(tmp_path)
    monkeypatch.setenv("JUDGED_SPILL_PARTITION_BYTES", "256MB")
    with pytest.raises(UsageError, match="JUDGED_SPILL_PARTITION_BYTES='256MB' is not a number of bytes"):
        judged.evaluate(qrels, run, ["AP"])


def test_partitions_stay_inside_the_open_file_limit(tmp_path, spilled, monkeypatch):
    import resource

    qrels, run = shuffled_collection(tmp_path)
    monkeypatch.setattr(resource, "getrlimit", lambda what: (64 + 2 * 3, resource.RLIM_INFINITY))
    result = judged.evaluate(qrels, run, MEASURES).runs[run]
    assert [len(parts) for parts in spilled] == [3]
    assert_same(result, whole(qrels, run))


def test_no_relevant_error_is_the_in_memory_refusal(tmp_path, spilled):
    qrels, run = shuffled_collection(tmp_path)
    with pytest.raises(judged.ConventionError) as spilled_error:
        judged.evaluate(qrels, run, ["AP"], no_relevant="error")
    with pytest.raises(judged.ConventionError) as whole_error:
        whole(qrels, run, ["AP"], no_relevant="error")
    assert spilled and str(spilled_error.value) == str(whole_error.value)
