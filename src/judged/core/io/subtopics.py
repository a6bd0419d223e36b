"""Subtopic qrels (ndeval's ``qid subtopic docid grade``) for the diversity measures.

In a TREC qrels file the second column, trec_eval's unused "iteration", is read as the
subtopic, as ir_measures does for its diversity measures (TREC Web track 2009-2012
diversity qrels are written that way). A document judged for several subtopics has one
line per subtopic. The other measures of the same evaluation read the flat qrels:
each (qid, docid) once, with its largest grade over the subtopics
(:meth:`judged.core.data.SubtopicQrels.flat`).

The file is read only when a diversity measure is asked for
(``read_qrels(..., subtopics=True)``); otherwise the column is ignored, as trec_eval does.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from ..data import Qrels, SubtopicQrels
from ..errors import ParseError
from .text import Layout, iter_lines, line_of_row, read_raw, read_tokens
from .trec_files import parse_grade
from .frames import DOCID_NAMES, GRADE_NAMES, QID_NAMES, to_arrow_table

SUBTOPIC_NAMES = ("subtopic", "subtopic_id", "iteration", "iter")


def read_subtopic_qrels(source) -> Qrels:
    """The flat qrels of a subtopic qrels source (a TREC qrels path, or a DataFrame / Arrow
    table with a ``subtopic`` or ``iteration`` column), the subtopic judgments in
    ``meta['subtopics']``. A (qid, subtopic, docid) judged twice with different grades
    is an error naming the line.

    >>> import pandas as pd
    >>> q = read_subtopic_qrels(pd.DataFrame({"qid": ["1", "1", "1"], "subtopic": ["1", "2", "2"],
    ...                                       "docid": ["a", "a", "b"], "grade": [1, 0, 2]}))
    >>> q.docid.to_pylist(), q.grade.tolist(), len(q.meta["subtopics"])
    (['a', 'b'], [1, 2], 3)
    """
    if isinstance(source, (str, os.PathLike)):
        return _read_file(os.fspath(source))
    table = to_arrow_table(source)
    name = "<dataframe>"

    def column(names, what):
        for c in names:
            if c in table.column_names:
                if table[c].null_count:
                    raise ParseError(name, None, f"the {what} column {c!r} has missing values")
                return table[c]
        raise ParseError(name, None, f"no {what} column ({' or '.join(names)}; found {', '.join(table.column_names)})"
                         + (": the diversity measures need one" if what == "subtopic" else ""))

    g = np.asarray(column(GRADE_NAMES, "grade").to_pylist(), dtype=np.float64)
    if (g != np.round(g)).any():
        row = int(np.flatnonzero(g != np.round(g))[0])
        raise ParseError(name, row + 1, f"grade {float(g[row])!r} is not an integer")
    sub = SubtopicQrels(column(QID_NAMES, "query id"), column(SUBTOPIC_NAMES, "subtopic"),
                        column(DOCID_NAMES, "document id"), g.astype(np.int64), source=name)
    _check_repeats(sub, lambda row: row + 1)
    return sub.flat()


def _line(raw, lineno: int, f: list[str]) -> tuple:
    """(qid, subtopic, docid, grade) of a line's fields, or the line's ParseError."""
    if len(f) != 4:
        raise ParseError(raw.name, lineno, f"expected 4 fields (qid subtopic docid grade), found {len(f)}")
    return f[0], f[1], f[2], parse_grade(raw, lineno, f[3])


LAYOUT = Layout(fields=4, strings=(0, 1, 2), number=3, kind="int", hashed=2, check=_line)  # the compiled tokenizer's


def _read_file(path: str) -> Qrels:
    """The compiled tokenizer's columns (qid, subtopic, docid, grade); the line-by-line
    reader for a file it refuses (its error names the line)."""
    read = read_tokens(path, LAYOUT)
    if read is not None:
        tokens, sha256 = read
        sub = SubtopicQrels(*tokens.strings, tokens.number, source=path)
        _check_repeats(sub, lambda row: line_of_row(read_raw(path), row))
        return sub.flat(sha256)
    raw = read_raw(path)
    rows = [_line(raw, lineno, f) + (lineno,) for lineno, f in iter_lines(raw)]
    if not rows:
        raise ParseError(raw.name, None, "no judgments in this qrels file")
    qids, subs, docids, grades, lines = zip(*rows)
    sub = SubtopicQrels(pa.array(qids, pa.string()), pa.array(subs, pa.string()), pa.array(docids, pa.string()),
                        np.array(grades, np.int64), source=raw.name)
    _check_repeats(sub, lambda row: lines[row])
    return sub.flat(raw.sha256)


def subtopics_of(qrels: Qrels) -> SubtopicQrels | None:
    """The subtopic judgments behind ``qrels`` (None when it was read without them)."""
    return qrels.meta.get("subtopics")


def _check_repeats(sub: SubtopicQrels, line_of) -> None:
    """A (qid, subtopic, docid) repeated with another grade: ParseError on the later line.
    Repeats with the same grade are one judgment."""
    t = pa.table({"q": sub.qid, "s": sub.subtopic, "d": sub.docid, "g": pa.array(sub.grade)})
    agg = t.group_by(["q", "s", "d"], use_threads=False).aggregate([("g", "min"), ("g", "max"), ("g", "count")])
    if len(agg) == len(sub):
        return
    bad = agg.filter(pa.compute.not_equal(agg["g_min"], agg["g_max"]))
    if len(bad):
        q, s, d = (bad[c][0].as_py() for c in ("q", "s", "d"))
        rows = [i for i, key in enumerate(zip(sub.qid.to_pylist(), sub.subtopic.to_pylist(), sub.docid.to_pylist()))
                if key == (q, s, d)]
        raise ParseError(sub.source, line_of(rows[1]), f"query {q!r} subtopic {s!r} docid {d!r} is judged twice "
                                                     f"with different grades {sorted(set(sub.grade[rows].tolist()))}")
    keep = pa.table({"q": sub.qid, "s": sub.subtopic, "d": sub.docid, "i": pa.array(np.arange(len(sub)))}) \
        .group_by(["q", "s", "d"], use_threads=False).aggregate([("i", "min")])["i_min"].to_numpy()
    keep = np.sort(keep)
    idx = pa.array(keep)
    sub.qid, sub.subtopic, sub.docid, sub.grade = (sub.qid.take(idx), sub.subtopic.take(idx), sub.docid.take(idx),
                                                   sub.grade[keep])
