"""judged holes on the command line: one report per -m."""

import json

from judged.cli import main


def test_every_measure_given_gets_its_report(example, capsys):
    # -m A -m B used to keep only the last -m, silently
    q, a, b = (str(example / f) for f in ("qrels.txt", "bm25.run", "dense.run"))
    assert main(["holes", q, a, b, "-m", "AP", "-m", "P@5", "--samples", "5", "--format", "json"]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [r["measure"] for r in reports] == ["AP", "P@5"]
    assert main(["holes", q, a, b, "-m", "P@5", "--samples", "5", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == reports[1]  # one -m: the report itself, as before
    assert main(["holes", q, a, b, "-m", "AP", "-m", "RR", "--samples", "5"]) == 0
    out = capsys.readouterr().out
    assert "AP with holes counted as not relevant" in out and "RR with holes counted as not relevant" in out


def test_long_run_names_fold_and_the_numbers_are_never_cut(example, tmp_path, capsys):
    # run names are the paths given: a long one used to squeeze every column, cutting the
    # numbers ("0.94…"); the run column folds instead
    q = str(example / "qrels.txt")
    deep = tmp_path / ("very-long-folder-name-" * 5)
    deep.mkdir()
    runs = []
    for f in ("bm25.run", "dense.run"):
        (deep / f).write_bytes((example / f).read_bytes())
        runs.append(str(deep / f))
    assert main(["holes", q, *runs, "--samples", "5", "--format", "json"]) == 0
    summaries = json.loads(capsys.readouterr().out)["runs"].values()
    assert main(["holes", q, *runs, "--samples", "5"]) == 0
    out = capsys.readouterr().out
    assert "…" not in out
    for s in summaries:
        assert f"{s['score']:.4f}" in out and f"{s['max']:.4f}" in out
