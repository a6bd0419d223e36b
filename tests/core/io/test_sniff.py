"""Format by content where the name lies or the arguments are swapped (judged.core.io.sniff).

Parquet is read as Parquet whatever its name (a file, or a folder of part files as Spark
writes it), a TREC file named .json as TREC, JSON named .txt as JSON. A file that fails to
parse and looks like something else gets one line saying what it looks like and what was
probably meant: qrels where a run is expected and the other way round, a CSV or TSV with a
header.
Through the CLI: exit 2, that one line, no traceback.
"""

from __future__ import annotations

import gzip

import pandas as pd
import pytest

import judged
from judged.cli import main
from judged.core.errors import ParseError
from judged.core.io.sniff import looks_like

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 2\n"
RUN = "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n2 Q0 c 1 3 t\n"
SWAPPED = "are the arguments swapped?"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.gz").write_bytes(gzip.compress(("# judgments\n\n" + QRELS).encode()))
    return tmp_path


def cli_error(capsys, *argv) -> str:
    assert main(["eval", *map(str, argv)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err.strip()


def test_qrels_given_as_a_run(files, capsys):
    with pytest.raises(ParseError) as exc:
        judged.read_run(files / "qrels.txt")
    assert str(exc.value) == (f"{files / 'qrels.txt'}:1: looks like a qrels file (4 fields: qid iter docid grade), "
                              f"expected a TREC run (qid Q0 docid rank score tag) — {SWAPPED}")
    assert cli_error(capsys, files / "qrels.txt", files / "qrels.txt") == f"judged: error: {exc.value}"


def test_run_given_as_qrels_names_the_first_data_line(files, capsys):
    err = cli_error(capsys, files / "run.txt", files / "qrels.txt")  # both swapped: the qrels argument fails first
    assert err == (f"judged: error: {files / 'run.txt'}:1: looks like a run file (6 fields: qid Q0 docid rank score "
                   f"tag), expected TREC qrels (qid iter docid grade) — {SWAPPED}")
    err = cli_error(capsys, files / "qrels.txt", files / "qrels.gz")
    assert err.startswith(f"judged: error: {files / 'qrels.gz'}:3: looks like a qrels file") and SWAPPED in err


@pytest.mark.parametrize("name, text, seen", [
    ("run.csv", "qid,docid,score\n1,a,2.0\n", "a CSV file with a header (qid,docid,score)"),
    ("run.txt", "query_id,doc_id,score\n1,a,2.0\n", "a CSV file with a header (query_id,doc_id,score)"),
    ("run.tsv", "qid\tdocid\tscore\n1\ta\t2.0\n", "a TSV file with a header (qid docid score)"),
    ("run.tsv", "1\ta\t2.0\n", "qid docid score lines (3 fields, no header)"),
])
def test_delimited_files_given_as_a_run(files, capsys, name, text, seen):
    (files / name).write_text(text)
    err = cli_error(capsys, files / "qrels.txt", files / name)
    assert err.startswith(f"judged: error: {files / name}:1: looks like {seen}, expected a TREC run"), err
    assert err.endswith("pass the DataFrame (columns qid, docid, score)")


@pytest.mark.parametrize("gz", [False, True])
def test_the_content_decides_between_trec_and_json_where_the_name_lies(files, capsys, gz):
    """A TREC run and qrels named .json are read as TREC, JSON named .txt as JSON: the same
    numbers as the files named right (before: refused with 'rename it without .json')."""
    import json

    def put(name, text):
        path = files / (name + (".gz" if gz else ""))
        path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
        return path

    want = judged.evaluate(files / "qrels.txt", files / "run.txt", ["AP", "P@1"]).mean().values.tolist()
    run_json, qrels_json = put("run.json", RUN), put("qrels.json", QRELS)
    as_dict = {}
    for line in RUN.splitlines():
        q, _, d, _, score, _ = line.split()
        as_dict.setdefault(q, {})[d] = float(score)
    dict_txt = put("dict-run.txt", json.dumps(as_dict))
    for qrels, run in ((files / "qrels.txt", run_json), (qrels_json, files / "run.txt"), (qrels_json, dict_txt)):
        assert judged.evaluate(qrels, run, ["AP", "P@1"]).mean().values.tolist() == want, (qrels, run)
    assert main(["eval", str(qrels_json), str(run_json), "-m", "AP"]) == 0
    assert capsys.readouterr().err == ""


def test_csv_named_json_says_what_a_json_file_is(files, capsys):
    (files / "run.json").write_text("qid,docid,score\n1,a,2.0\n")
    err = cli_error(capsys, files / "qrels.txt", files / "run.json")
    assert "looks like a CSV file with a header (qid,docid,score), expected JSON" in err


def test_a_bad_line_in_a_real_run_keeps_its_own_message(files):
    (files / "bad.txt").write_text(RUN + "2 Q0 d 2 abc t\n")
    with pytest.raises(ParseError, match=r"bad.txt:4: score 'abc' is not a number"):
        judged.read_run(files / "bad.txt")


def frame(kind: str) -> pd.DataFrame:
    rows = [l.split() for l in (RUN if kind == "run" else QRELS).splitlines()]
    if kind == "run":
        return pd.DataFrame({"qid": [r[0] for r in rows], "docid": [r[2] for r in rows],
                             "score": [float(r[4]) for r in rows]})
    return pd.DataFrame({"qid": [r[0] for r in rows], "docid": [r[2] for r in rows], "grade": [int(r[3]) for r in rows]})


def test_parquet_by_content_whatever_its_name(files):
    """A Parquet file named .dat, and a Spark output folder (part files, _SUCCESS, .crc)
    named without .parquet: read as Parquet, the same numbers as the text files."""
    frame("run").to_parquet(files / "run.dat")
    folder = files / "qrels_out"
    folder.mkdir()
    q = frame("qrels")
    q.iloc[:2].to_parquet(folder / "part-00000-abc.snappy.parquet")
    q.iloc[2:].to_parquet(folder / "part-00001-abc.snappy.parquet")
    (folder / "_SUCCESS").write_text("")
    (folder / ".part-00000-abc.snappy.parquet.crc").write_bytes(b"crc")
    assert looks_like(files / "run.dat").kind == looks_like(folder).kind == "parquet"
    want = judged.evaluate(files / "qrels.txt", files / "run.txt", ["AP", "P@1"]).mean()
    got = judged.evaluate(folder, files / "run.dat", ["AP", "P@1"]).mean()
    assert got.values.tolist() == want.values.tolist()
    qrels = judged.read_qrels(folder)
    assert qrels.qid.to_pylist() == ["1", "1", "2"] and len(qrels.sha256) == 64
