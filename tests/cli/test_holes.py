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
