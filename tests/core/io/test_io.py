"""One collection in every input form gives the same numbers, bit for bit.

The forms: TREC text (plain; CRLF; BOM; blank lines; tabs and runs of spaces; ``#``
comments; gzip, bz2, xz; all of those at once), BEIR qrels TSV with its header, JSON
dict-of-dicts, Parquet, pandas and polars DataFrames, Python dicts. Then the
``on_duplicate`` conventions: ``error`` (default), ``first``, ``max``.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import re

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import judged
from judged.core.errors import ParseError
from judged.cli import main
from synth import make_collection, trec_qrels_text, trec_run_text, write_gz

MEASURES = ["nDCG@10", "nDCG", "AP", "P@5", "R@10", "RR", "Rprec", "Bpref", "NumRel", "NumRet",
            "NumRelRet", "Judged@10", "nDCG(gain=exp,unjudged=condensed)@5"]
COLLECTION = make_collection(11, max_queries=12, max_docs=60, max_ranked=40)


def rows(d: dict):
    return [(q, doc, v) for q, docs in d.items() for doc, v in docs.items()]


QRELS_TEXT = trec_qrels_text(COLLECTION.qrels)
RUN_TEXT = trec_run_text(COLLECTION.run, sci_share=0.5, rng=np.random.default_rng(0))


def messy(text: str) -> str:
    """Tabs and runs of spaces between fields, blank lines, comment lines."""
    out = ["# a comment line, as trec_eval 10 accepts", ""]
    for i, line in enumerate(text.splitlines()):
        fields = line.split(" ")
        seps = ["\t", "  ", " \t "][i % 3]
        out.append(seps.join(fields) + (" " if i % 4 == 0 else ""))
        if i % 5 == 0:
            out += ["", "   ", "# another comment"]
    return "\n".join(out) + "\n"


TEXT_FORMS = {
    "plain": lambda t: t.encode(),
    "crlf": lambda t: t.replace("\n", "\r\n").encode(),
    "bom": lambda t: b"\xef\xbb\xbf" + t.encode(),
    "blank-lines": lambda t: ("\n\n" + t.replace("\n", "\n\n")).encode(),
    "tabs-spaces-comments": lambda t: messy(t).encode(),
    "no-final-newline": lambda t: t.rstrip("\n").encode(),
    "everything": lambda t: b"\xef\xbb\xbf" + messy(t).replace("\n", "\r\n").encode(),
}


@pytest.fixture(scope="module")
def reference():
    r = judged.evaluate(COLLECTION.qrels, {"r": COLLECTION.run}, MEASURES)
    return r.runs["r"]


def same(result, reference):
    rr = result.runs[next(iter(result.runs))]
    assert rr.qids.tolist() == reference.qids.tolist()
    for m in MEASURES:
        assert np.array_equal(rr.values[m], reference.values[m]), m


COMPRESSIONS = {"text": bytes, "gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


@pytest.mark.parametrize("codec", list(COMPRESSIONS))
@pytest.mark.parametrize("form", list(TEXT_FORMS))
def test_trec_text_forms(tmp_path, reference, form, codec):
    """Every form, plain or compressed (told by content: the files have no suffix)."""
    q, r = tmp_path / "qrels", tmp_path / "run"
    for path, text in ((q, QRELS_TEXT), (r, RUN_TEXT)):
        path.write_bytes(COMPRESSIONS[codec](TEXT_FORMS[form](text)))
    same(judged.evaluate(q, {"r": r}, MEASURES), reference)


def test_gz_file_by_name(tmp_path, reference):
    q, r = write_gz(tmp_path / "qrels.txt.gz", QRELS_TEXT), write_gz(tmp_path / "run.gz", RUN_TEXT)
    same(judged.evaluate(q, {"r": r}, MEASURES), reference)


def after_the_tag(text: str) -> str:
    """Run lines with fields after the tag, as trec_eval ignores them: none, one, two, a
    non-ASCII one, and 30 (past the compiled tokenizer's 16 recorded fields and its 64-byte
    window)."""
    extras = ["", " extra", " x\ty", " é 1", " " + " ".join(map(str, range(30)))]
    return "".join(line + extras[i % 5] + "\n" for i, line in enumerate(text.splitlines()))


@pytest.mark.parametrize("gz", [False, True], ids=["text", "gz"])
@pytest.mark.parametrize("form", ["plain", "tabs-spaces-comments", "everything"])
def test_run_fields_after_the_tag_are_ignored(tmp_path, reference, form, gz, backend):
    """Issue #14: trec_eval ignores any field after the run tag; judged refused the line.
    Compiled: the tokenizer; pure: pyarrow's CSV reader refuses, the Arrow splitter reads."""
    q, r = tmp_path / "qrels", tmp_path / "run"
    for path, text in ((q, QRELS_TEXT), (r, after_the_tag(RUN_TEXT))):
        data = TEXT_FORMS[form](text)
        write_gz(path, data) if gz else path.write_bytes(data)
    same(judged.evaluate(q, {"r": r}, MEASURES), reference)


def test_fields_after_the_tag_still_need_the_six_before(tmp_path, backend):
    """A short line is still refused, and named, after lines with extra fields; a qrels line
    with a fifth field is refused as trec_eval refuses it."""
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 tag more\n1 Q0 b 2 1.0 tag\n1 Q0 c 3 0.5\n")
    with pytest.raises(ParseError, match=r"run:3: expected 6 fields \(qid Q0 docid rank score tag\), found 5"):
        judged.read_run(tmp_path / "run")
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0 extra\n")
    with pytest.raises(ParseError, match=r"qrels:2: expected 4 fields \(qid iter docid grade\), found 5"):
        judged.read_qrels(tmp_path / "qrels")
    (tmp_path / "bad").write_bytes(b"1 Q0 a 1 2.0 tag \xff\n")  # extra fields are still UTF-8 text
    with pytest.raises(ParseError, match="bad:1: not valid UTF-8"):
        judged.read_run(tmp_path / "bad")


def test_readers_give_the_same_rows(tmp_path):
    (tmp_path / "q").write_bytes(TEXT_FORMS["everything"](QRELS_TEXT))
    (tmp_path / "r").write_bytes(TEXT_FORMS["everything"](RUN_TEXT))
    qrels, run = judged.read_qrels(tmp_path / "q"), judged.read_run(tmp_path / "r")
    assert list(zip(qrels.qid.to_pylist(), qrels.docid.to_pylist(), qrels.grade.tolist())) == rows(COLLECTION.qrels)
    assert sorted(zip(run.qid.to_pylist(), run.docid.to_pylist(), run.score.tolist())) == sorted(rows(COLLECTION.run))


@pytest.mark.parametrize("header", ["query-id\tcorpus-id\tscore", "query-id corpus-id score", "qid\tdocid\tgrade"])
def test_beir_tsv_qrels(tmp_path, reference, header):
    body = "".join(f"{q}\t{d}\t{g}\n" for q, d, g in rows(COLLECTION.qrels))
    (tmp_path / "test.tsv").write_text(header + "\n" + body)
    (tmp_path / "run").write_text(RUN_TEXT)
    same(judged.evaluate(tmp_path / "test.tsv", {"r": tmp_path / "run"}, MEASURES), reference)


def test_json_dict_of_dicts(tmp_path, reference):
    (tmp_path / "qrels.json").write_text(json.dumps(COLLECTION.qrels))
    (tmp_path / "run.json").write_text(json.dumps(COLLECTION.run))
    same(judged.evaluate(tmp_path / "qrels.json", {"r": tmp_path / "run.json"}, MEASURES), reference)


def frame(d: dict, value: str) -> dict:
    q, doc, v = zip(*rows(d))
    return {"qid": list(q), "docid": list(doc), value: list(v)}


def test_parquet(tmp_path, reference):
    pq.write_table(pa.table(frame(COLLECTION.qrels, "grade")), tmp_path / "qrels.parquet")
    pq.write_table(pa.table(frame(COLLECTION.run, "score")), tmp_path / "run.parquet")
    same(judged.evaluate(tmp_path / "qrels.parquet", {"r": tmp_path / "run.parquet"}, MEASURES), reference)


@pytest.mark.parametrize("lib", ["pandas", "polars", "arrow"])
def test_dataframes(reference, lib):
    make = {"pandas": pd.DataFrame, "polars": pl.DataFrame, "arrow": pa.table}[lib]
    qrels, run = make(frame(COLLECTION.qrels, "grade")), make(frame(COLLECTION.run, "score"))
    same(judged.evaluate(qrels, {"r": run}, MEASURES), reference)


def test_dataframe_column_spellings(reference):
    """BEIR's column names and integer ids work too (ids become their text)."""
    f = frame(COLLECTION.qrels, "score")
    qrels = pd.DataFrame({"query-id": [int(q) for q in f["qid"]], "corpus-id": f["docid"], "score": f["score"]})
    same(judged.evaluate(qrels, {"r": COLLECTION.run}, MEASURES), reference)


def test_pandas_string_dtype_and_categoricals(reference):
    f = frame(COLLECTION.run, "score")
    run = pd.DataFrame({"qid": pd.Series(f["qid"], dtype="category"), "docid": pd.Series(f["docid"], dtype="string"),
                        "score": f["score"]})
    same(judged.evaluate(COLLECTION.qrels, {"r": run}, MEASURES), reference)


# ---------------------------------------------------------------------------
# on_duplicate

RUN_DUP = "1 Q0 a 1 1.0 t\n1 Q0 b 2 2.0 t\n1 Q0 a 3 3.0 t\n2 Q0 a 1 1.0 t\n"
QRELS_DUP = "1 0 a 1\n1 0 b 0\n1 0 a 2\n2 0 a 1\n2 0 a 1\n"


def test_run_duplicate_error(tmp_path):
    (tmp_path / "r").write_text(RUN_DUP)
    with pytest.raises(ParseError) as e:
        judged.read_run(tmp_path / "r")
    assert e.value.line == 3 and "'a' appears twice for query '1'" in str(e.value)


def test_qrels_conflict_error_and_identical_repeat(tmp_path):
    (tmp_path / "q").write_text(QRELS_DUP)
    with pytest.raises(ParseError) as e:
        judged.read_qrels(tmp_path / "q")
    assert e.value.line == 3 and "different grades [1, 2]" in str(e.value)
    (tmp_path / "q2").write_text("2 0 a 1\n2 0 a 1\n")  # the same judgment twice collapses to one
    assert len(judged.read_qrels(tmp_path / "q2")) == 1


def pairs(table, values) -> dict:
    return dict(zip(zip(table.qid.to_pylist(), table.docid.to_pylist()), values.tolist()))


@pytest.mark.parametrize("mode,score_a,grade_a", [("first", 1.0, 1), ("max", 3.0, 2)])
def test_duplicates_first_max(tmp_path, mode, score_a, grade_a):
    (tmp_path / "r").write_text(RUN_DUP)
    (tmp_path / "q").write_text(QRELS_DUP)
    run = judged.read_run(tmp_path / "r", on_duplicate=mode)
    qrels = judged.read_qrels(tmp_path / "q", on_duplicate=mode)
    assert pairs(run, run.score) == {("1", "a"): score_a, ("1", "b"): 2.0, ("2", "a"): 1.0}
    assert pairs(qrels, qrels.grade) == {("1", "a"): grade_a, ("1", "b"): 0, ("2", "a"): 1}


@pytest.mark.parametrize("mode,expected", [("first", 0.5), ("max", 1.0)])
def test_on_duplicate_changes_scores_through_the_cli(tmp_path, capsys, mode, expected):
    """Query 1: first keeps a at score 1.0 (below b, RR 1/2); max keeps 3.0 (top, RR 1)."""
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r").write_text(RUN_DUP)
    assert main(["eval", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "RR", "--format", "json",
                 "--on-duplicate", mode]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][str(tmp_path / "r")]["mean"]["RR"] == expected
    assert main(["eval", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "RR"]) == 2
    assert capsys.readouterr().err.startswith(f"judged: error: {tmp_path / 'r'}:3: ")


@pytest.mark.parametrize("mode,expected", [("error", None), ("first", 1), ("max", 2)])
def test_json_repeated_keys_follow_on_duplicate(tmp_path, mode, expected):
    """JSON parsers keep the last of repeated keys silently; judged does not."""
    (tmp_path / "q.json").write_text('{"1": {"a": 1, "b": 0, "a": 2}}')
    if expected is None:
        with pytest.raises(ParseError, match="'a' appears twice"):
            judged.read_qrels(tmp_path / "q.json")
    else:
        q = judged.read_qrels(tmp_path / "q.json", on_duplicate=mode)
        assert dict(zip(q.docid.to_pylist(), q.grade.tolist())) == {"a": expected, "b": 0}


@pytest.mark.parametrize("mode", ["error", "first", "max"])
def test_dataframe_duplicates(mode):
    run = pd.DataFrame({"qid": ["1", "1", "1"], "docid": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]})
    if mode == "error":
        with pytest.raises(ParseError, match="appears twice"):
            judged.read_run(run)
        return
    r = judged.read_run(run, on_duplicate=mode)
    assert dict(zip(r.docid.to_pylist(), r.score.tolist())) == {"a": 1.0 if mode == "first" else 3.0, "b": 2.0}


# ---------------------------------------------------------------------------
# bad tables: a ParseError naming the row (a one-line exit 2 from the CLI), never a traceback

BAD_TABLES = [
    ("qrels", {"qid": ["1", "1"], "docid": ["a", "b"], "grade": ["1", "x"]}, "2: grade 'x' is not a number"),
    ("qrels", {"qid": ["1", "1"], "docid": ["a", "b"], "grade": [1.0, 1.5]}, "2: grade 1.5 is not an integer"),
    ("qrels", {"qid": ["1", "1"], "docid": ["a", "b"], "grade": [1.0, 1e30]}, "2: grade 1e+30 is out of range"),
    ("qrels", {"qid": ["1", None], "docid": ["a", "b"], "grade": [1, 1]}, "2: missing query id"),
    ("run", {"qid": ["1", "1"], "docid": ["a", None], "score": [1.0, 2.0]}, "2: missing document id"),
    ("run", {"qid": ["1", "1"], "docid": ["a", "b"], "score": ["1.0", "high"]}, "2: score 'high' is not a number"),
    ("run", {"qid": ["1", "1"], "docid": ["a", "b"], "score": [1.0, float("inf")]}, "2: score inf is not a finite number"),
    ("run", {"qid": ["1", "1"], "docid": ["a", "b"], "score": [1.0, 2.0], "rank": ["1", "x"]}, "2: rank 'x' is not a number"),
]


@pytest.mark.parametrize("target,columns,why", BAD_TABLES)
def test_bad_tables(tmp_path, capsys, target, columns, why):
    with pytest.raises(ParseError, match=f"^<dataframe>:{re.escape(why)}$"):
        (judged.read_qrels if target == "qrels" else judged.read_run)(pd.DataFrame(columns))
    good = {"qrels": pa.table({"qid": ["1"], "docid": ["a"], "grade": [1]}),
            "run": pa.table({"qid": ["1"], "docid": ["a"], "score": [1.0]})}
    good[target] = pa.table(columns)
    for name, table in good.items():
        pq.write_table(table, tmp_path / f"{name}.parquet")
    assert main(["eval", str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet")]) == 2
    assert capsys.readouterr().err == f"judged: error: {tmp_path / target}.parquet:{why}\n"


def test_numeric_text_columns_are_numbers(reference):
    """A frame read from CSV as text still evaluates: grades and scores that are numbers in text."""
    q, r = frame(COLLECTION.qrels, "grade"), frame(COLLECTION.run, "score")
    q["grade"] = [str(g) for g in q["grade"]]
    r["score"] = [repr(s) for s in r["score"]]
    same(judged.evaluate(pd.DataFrame(q), {"r": pd.DataFrame(r)}, MEASURES), reference)


def test_dicts_take_numpy_scalars(reference):
    """Scores straight from an embedding model are numpy float32; ids may be numbers."""
    qrels = {q: {d: np.int64(g) for d, g in docs.items()} for q, docs in COLLECTION.qrels.items()}
    run = {q: {d: np.float32(s) for d, s in docs.items()} for q, docs in COLLECTION.run.items()}
    same(judged.evaluate(qrels, {"r": run}, MEASURES), reference)  # the collection's scores are float32-exact


@pytest.mark.parametrize("target,text,why", [
    ("qrels", '{"1": {"a": 1e30}}', "grade 1e+30 is out of range"),
    ("qrels", '{"1": {"a": 99999999999999999999}}', "grade 99999999999999999999 is out of range"),
    ("qrels", '{"1": {"a": 1.5}}', "grade 1.5 is not an integer"),
    ("qrels", '{"1": {"a": true}}', "grade True is not an integer"),
    ("run", '{"1": {"a": "0.5"}}', "score '0.5' is not a finite number"),
    ("run", '{"1": {"a": 1e999}}', "score inf is not a finite number"),
    ("run", '{"1": {"a": 1' + "0" * 400 + '}}', "is not a finite number"),
])
def test_bad_json_values(tmp_path, capsys, target, text, why):
    (tmp_path / "qrels.json").write_text('{"1": {"a": 1}}')
    (tmp_path / "run.json").write_text('{"1": {"a": 1.0}}')
    (tmp_path / f"{target}.json").write_text(text)
    assert main(["eval", str(tmp_path / "qrels.json"), str(tmp_path / "run.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"judged: error: {tmp_path / target}.json: query '1' docid 'a': ") and err.count("\n") == 1
    assert why in err
