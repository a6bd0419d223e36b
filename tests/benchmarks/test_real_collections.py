"""benchmarks/real_collections.py builds a collection folder from pinned commits of git
repositories. Here the repositories are tiny ones made in the test, with a second commit
after the pinned one, so that the selection rules (which files, which lines, which commit)
are checked without the real data."""

from __future__ import annotations

import doctest
import gzip
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "real_collections.py"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def rc():
    spec = importlib.util.spec_from_file_location("real_collections", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org",
                           "-c", "commit.gpgsign=false", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def commit(repo: Path, files: dict) -> str:
    """Write ``files`` (path -> bytes, None: delete) into ``repo`` and commit; the commit's hash."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True)
        git(repo, "init", "-q")
    for path, data in files.items():
        target = repo / path
        if data is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "data")
    return git(repo, "rev-parse", "HEAD")


def mirror(repo: Path) -> Path:
    """A bare mirror of ``repo``, no work tree: what the builds read from on the lead's machine."""
    out = repo.with_name(repo.name + ".git")
    subprocess.run(["git", "clone", "-q", "--mirror", str(repo), str(out)], check=True, capture_output=True)
    return out


DL19_RUN_A = gzip.compress(b"19335 Q0 d1 1 2.0 a\n19335 Q0 d2 2 1.0 a\n", mtime=0)
DL19_RUN_B = gzip.compress(b"19335 Q0 d2 1 5.0 b\n", mtime=0)


@pytest.fixture
def dl19_sources(tmp_path, rc, monkeypatch):
    """sigir25: two official runs and a re-ranking that is not one; then a later commit that
    adds a third official run and changes run A. anserini-tools: the qrels, then a change."""
    sigir = tmp_path / "sigir25"
    pin_s = commit(sigir, {"runs/trec-dl-2019/dl-19-official-input.runA.gz": DL19_RUN_A,
                           "runs/trec-dl-2019/dl-19-official-input.runB.gz": DL19_RUN_B,
                           "runs/trec-dl-2019/tirex_rerank.run": b"19335 Q0 d9 1 1.0 t\n",
                           "runs/trec-dl-2020/dl-20-official-input.runC.gz": DL19_RUN_B})
    commit(sigir, {"runs/trec-dl-2019/dl-19-official-input.runC.gz": DL19_RUN_B,
                   "runs/trec-dl-2019/dl-19-official-input.runA.gz": DL19_RUN_B})
    anserini = tmp_path / "anserini-tools"
    pin_a = commit(anserini, {"qrels/qrels.dl19-passage.txt": b"19335 Q0 d1 3\n19335 Q0 d2 0\n"})
    commit(anserini, {"qrels/qrels.dl19-passage.txt": b"changed later\n"})
    monkeypatch.setattr(rc, "PINS", {**rc.PINS, "sigir25": pin_s, "anserini-tools": pin_a})
    monkeypatch.setattr(rc, "DL19_RUNS", {"runA": ("GroupA", "trad"), "runB": ("GroupB", "nnlm")})
    return sigir, anserini, pin_s


def test_dl19_copies_the_official_runs_and_the_qrels_at_the_pinned_commits(rc, dl19_sources, tmp_path, capsys):
    sigir, anserini, pin_s = dl19_sources
    out = tmp_path / "dl19"
    assert rc.main(["dl19", "--sigir25", str(mirror(sigir)), "--anserini-tools", str(anserini),
                    "--out", str(out)]) == 0
    # the re-ranking, the 2020 run and the later commit's runC are left out; runA as pinned
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["dl-19-official-input.runA.gz",
                                                                "dl-19-official-input.runB.gz"]
    assert (out / "runs" / "dl-19-official-input.runA.gz").read_bytes() == DL19_RUN_A
    assert (out / "qrels.txt").read_bytes() == b"19335 Q0 d1 3\n19335 Q0 d2 0\n"
    assert (out / "runs.tsv").read_text() == ("file\tgroup\tkind\n"
                                              "dl-19-official-input.runA.gz\tGroupA\ttrad\n"
                                              "dl-19-official-input.runB.gz\tGroupB\tnnlm\n")
    readme = (out / "README.md").read_text()
    assert f"@{pin_s[:7]} runs/trec-dl-2019/" in readme and "1 trad, 0 nn, 1 nnlm" in readme
    assert "2 runs" in capsys.readouterr().out


def test_dl19_stops_when_the_official_runs_and_the_run_table_differ(rc, dl19_sources, tmp_path, capsys, monkeypatch):
    sigir, anserini, _ = dl19_sources
    monkeypatch.setattr(rc, "DL19_RUNS", {"runA": ("GroupA", "trad"), "runZ": ("GroupZ", "nn")})
    out = tmp_path / "dl19"
    assert rc.main(["dl19", "--sigir25", str(sigir), "--anserini-tools", str(anserini), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not in the table: runB; missing: runZ" in err
    assert not out.exists()  # nothing written before every file was read


def test_tar17_keeps_the_first_of_a_repeated_pair_and_ends_every_line(rc, tmp_path, monkeypatch):
    tar = tmp_path / "tar"
    qrels = b"CD1\t0\t11\t2\nCD1\t0\t12\t0\n"
    pin = commit(tar, {
        "2017-TAR/testing/qrels/test.combined.qrels": qrels,
        # d11 twice for CD1 (the second dropped), d11 for CD2 kept; no newline at the end
        "2017-TAR/participant-runs/X/dup.res": b"CD1 AF 11 1 0.0 x\nCD1 AF 12 2 0.0 x\nCD1 AF 11 3 0.0 x\n"
                                               b"CD2 AF 11 1 0.0 x",
        "2017-TAR/participant-runs/Y/crlf.txt": b"CD1 NF 12 1 3.0 y\r\nCD1 NF 11 2 2.0 y\r\n",
        "2017-TAR/participant-runs/Y/not-taken.txt": b"CD1 NF 12 1 3.0 z\n",
    })
    commit(tar, {"2017-TAR/participant-runs/Y/crlf.txt": b"later\n"})
    monkeypatch.setattr(rc, "PINS", {**rc.PINS, "tar": pin})
    monkeypatch.setattr(rc, "TAR17_RUNS", {"x.dup": ("X/dup.res", "X", "trad"),
                                           "y.crlf": ("Y/crlf.txt", "Y", "unknown")})
    out = tmp_path / "tar17"
    assert rc.main(["tar17", "--tar", str(mirror(tar)), "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["x.dup", "y.crlf"]
    assert (out / "runs" / "x.dup").read_bytes() == b"CD1 AF 11 1 0.0 x\nCD1 AF 12 2 0.0 x\nCD2 AF 11 1 0.0 x\n"
    assert (out / "runs" / "y.crlf").read_bytes() == b"CD1 NF 12 1 3.0 y\r\nCD1 NF 11 2 2.0 y\r\n"  # as it was
    assert (out / "qrels.txt").read_bytes() == qrels
    assert (out / "runs.tsv").read_text() == "file\tgroup\tkind\nx.dup\tX\ttrad\ny.crlf\tY\tunknown\n"
    assert f"@{pin[:7]} 2017-TAR/participant-runs" in (out / "README.md").read_text()


def test_a_missing_commit_or_file_or_a_used_folder_is_one_line(rc, tmp_path, monkeypatch, capsys):
    tar = tmp_path / "tar"
    pin = commit(tar, {"2017-TAR/testing/qrels/test.combined.qrels": b"CD1 0 11 1\n"})
    monkeypatch.setattr(rc, "TAR17_RUNS", {"x": ("X/gone.res", "X", "trad")})
    cases = [
        ({"tar": "0" * 40}, tmp_path / "a", "commit 0000000 of tar not found"),
        ({"tar": pin}, tmp_path / "b", f"no 2017-TAR/participant-runs/X/gone.res at commit {pin[:7]}"),
    ]
    for pins, out, why in cases:
        monkeypatch.setattr(rc, "PINS", {**rc.PINS, **pins})
        assert rc.main(["tar17", "--tar", str(tar), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and why in err, err
    used = tmp_path / "used"
    (used / "runs").mkdir(parents=True)
    monkeypatch.setattr(rc, "TAR17_RUNS", {})
    assert rc.main(["tar17", "--tar", str(tar), "--out", str(used)]) == 2
    assert "is not an empty folder" in capsys.readouterr().err


def test_run_as_a_script_a_folder_that_is_no_repository_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "dl19", "--sigir25", str(tmp_path), "--anserini-tools",
                           str(tmp_path), "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "commit 935c789 of sigir25 not found" in done.stderr


def test_the_docstring_example_runs(rc):
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(rc, "real_collections"):
        runner.run(test)
    assert runner.tries >= 1 and runner.failures == 0


def test_no_benchmark_script_shadows_a_standard_module():
    """``python benchmarks/X.py`` puts benchmarks/ first on sys.path: a benchmarks/collections.py
    would be what ``functools`` imports as ``collections``, and every script there would fail."""
    clashes = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py") if p.stem in sys.stdlib_module_names)
    assert clashes == []
