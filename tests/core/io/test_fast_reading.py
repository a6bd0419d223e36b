"""The fast readers (pyarrow from disk; Arrow tokenizer for irregular white space) read
exactly what the TREC tokenizer reads, and leave errors to the line-by-line explainer."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import judged

CLEAN = "1 Q0 a 1 3.5 t\n1 Q0 b 2 2 t\n1 Q0 c 3 2 t\n2 Q0 a 1 1e0 t\n10 Q0 z 1 0.5 t\n"
QRELS = "1 0 a 2\n1 0 c 1\n2 0 a 1\n10 0 z 0\n"


def values(tmp_path, run_text: str, name="run", mode="w"):
    (tmp_path / "qrels").write_text(QRELS)
    path = tmp_path / name
    if mode == "wb":
        path.write_bytes(run_text)
    else:
        path.write_text(run_text, newline="")
    r = judged.evaluate(str(tmp_path / "qrels"), str(path), ["nDCG@10", "AP", "RR"])
    return np.stack(list(r.runs[str(path)].values.values()))


@pytest.mark.parametrize("messy", [
    CLEAN.replace(" ", "\t"),                                   # tabs
    CLEAN.replace(" Q0 ", "   Q0  "),                           # runs of spaces
    CLEAN.replace("\n", "\r\n"),                                # CRLF
    "# a comment\n\n" + CLEAN.replace("\n", "  \n"),            # comment, blank line, trailing spaces
    "\ufeff" + CLEAN,                                           # byte-order mark
], ids=["tabs", "spaces", "crlf", "comment-trailing", "bom"])
def test_irregular_files_read_as_the_clean_one(tmp_path, messy):
    assert np.array_equal(values(tmp_path, messy), values(tmp_path, CLEAN, name="clean"))


def test_gzip_reads_as_plain(tmp_path):
    assert np.array_equal(values(tmp_path, gzip.compress(CLEAN.encode()), name="run.gz", mode="wb"),
                          values(tmp_path, CLEAN, name="clean"))


@pytest.mark.parametrize("text,line,why", [
    (CLEAN + "3 Q0  d 1 t\n", 6, "expected 6 fields"),           # a field missing, hidden by a double space
    (CLEAN.replace(" ", "\t") + "3\tQ0\td\t1\tx\tt\n", 6, "score 'x' is not a number"),
    ("1 Q0 a 1 nan t\n" + CLEAN, 1, "score .nan. is not a finite number"),
], ids=["missing-field", "bad-score-irregular", "nan"])
def test_errors_name_the_line(tmp_path, text, line, why):
    with pytest.raises(judged.ParseError, match=rf"run:{line}: {why}"):
        values(tmp_path, text)


def test_a_run_read_without_its_digest_is_the_same_run(tmp_path):
    """read_run(digest=False): a plain TREC run file is not hashed (sha256 None, for a caller
    that shows no run's hash, as judged compare); every column is the same."""
    import hashlib

    import judged

    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{i % 3} Q0 d{i} {i} {10 - i / 7!r} t\n" for i in range(40)))
    hashed, bare = judged.read_run(str(path)), judged.read_run(str(path), digest=False)
    assert hashed.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() and bare.sha256 is None
    assert hashed.docid.equals(bare.docid) and hashed.qid.equals(bare.qid) and hashed.score.tolist() == bare.score.tolist()
