"""Side files beside the qrels: small whitespace-separated tables keyed by query and
document (requirements, eligibility, answers, unanswerable queries), and how their
(qid, docid) pairs are matched to the aligned ranked rows.

Every side file reads the same way: one record per line, fields separated by spaces or
tabs, ``#`` comment lines and blank lines skipped, an optional header line naming the
columns, ``.gz`` accepted; or a pandas/polars DataFrame or Arrow table with those column
names. Errors are ``ParseError(file, line, why)``.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from ..errors import MeasureError, ParseError
from ..words import counted

TRUE = {"true", "1", "yes", "y", "t"}
FALSE = {"false", "0", "no", "n", "f"}


def read_records(source, columns: list[str], optional: list[str] = (), rest: bool = False,
                 what: str = "file") -> tuple[dict, str, list[int]]:
    """(column -> list of str, source name, line numbers) from a path or a DataFrame.

    ``columns`` are required; ``optional`` may be left off at the end of a line; with
    ``rest`` the last optional column takes the rest of the line (a free-text note).
    """
    names = list(columns) + list(optional)
    if not isinstance(source, (str, os.PathLike)):
        from ..io.frames import to_arrow_table

        table = to_arrow_table(source)
        missing = [c for c in columns if c not in table.column_names]
        if missing:
            raise ParseError(f"<{what}>", None, f"no column {', '.join(missing)} (found {', '.join(table.column_names)})")
        out = {c: [None if v is None else str(v) for v in table[c].to_pylist()] if c in table.column_names
               else [None] * table.num_rows for c in names}
        return out, f"<{what}>", list(range(1, table.num_rows + 1))
    from ..io.text import iter_lines, read_raw

    raw = read_raw(source)
    out = {c: [] for c in names}
    lines = []
    for lineno, f in iter_lines(raw):
        if not lines and [x.lower() for x in f[:len(columns)]] == [c.lower() for c in columns]:
            continue  # header line
        if rest and len(f) > len(names):
            f = f[:len(names) - 1] + [" ".join(f[len(names) - 1:])]
        if not len(columns) <= len(f) <= len(names):
            want = " ".join(columns) + "".join(f" [{c}]" for c in optional)
            raise ParseError(raw.name, lineno, f"expected {want}, found {counted(len(f), 'field')}")
        for i, c in enumerate(names):
            out[c].append(f[i] if i < len(f) else None)
        lines.append(lineno)
    if not lines:
        raise ParseError(raw.name, None, f"no records in this {what}")
    return out, raw.name, lines


def parse_bool(token: str, source: str, line: int | None, what: str) -> bool:
    t = str(token).strip().lower()
    if t in TRUE:
        return True
    if t in FALSE:
        return False
    raise ParseError(source, line, f"{what} must be true or false, got {token!r}")


def match_pairs(left_qid: pa.Array, left_docid: pa.Array, right_qid: pa.Array | None,
                right_docid: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (left, right) of equal (qid, docid) pairs; ``right_qid=None`` matches
    on docid alone. A left row may match several right rows."""
    if len(left_docid) == 0 or len(right_docid) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    keys = ["d"] if right_qid is None else ["q", "d"]
    left = {"d": left_docid, "li": pa.array(np.arange(len(left_docid)))}
    right = {"d": right_docid, "ri": pa.array(np.arange(len(right_docid)))}
    if right_qid is not None:
        left["q"], right["q"] = left_qid, right_qid
    joined = pa.table(left).join(pa.table(right), keys=keys, join_type="inner", use_threads=False)
    return joined["li"].to_numpy().astype(np.int64), joined["ri"].to_numpy().astype(np.int64)


def run_in_rank_order(run, ties: str = "trec", qids=None):
    """(rows, query codes, 0-based ranks, query vocabulary) of a run's rows in (query,
    rank) order under the declared tie order, for the queries ``qids`` (default: all)."""
    import pyarrow.compute as pc

    from ..align import tie_order

    vocab = pa.array(sorted(set(qids) if qids is not None else set(pc.unique(run.qid).to_pylist())), pa.string())
    code = pc.index_in(run.qid, value_set=vocab).to_numpy(zero_copy_only=False).astype(np.float64)
    rows = np.flatnonzero(~np.isnan(code))
    q = code[rows].astype(np.int64)
    perm = tie_order(run, rows, q, ties)
    rows, q = rows[perm], q[perm]
    starts = np.searchsorted(q, np.arange(len(vocab)))
    return rows, q, np.arange(len(rows)) - starts[q], vocab


def ranked_pairs(aligned, ranked) -> tuple[pa.Array, pa.Array]:
    """(qid, docid) of each row of ``ranked`` (a Ranked of this Aligned)."""
    qids = pa.array(aligned.qids[ranked.q].tolist(), type=pa.string())
    docids = aligned.run.docid.take(pa.array(ranked.row, type=pa.int64()))
    return qids, docids


def annotation(aligned, key: str, measure, option: str):
    """Side data attached to an Aligned by ``evaluate``; MeasureError when absent."""
    value = getattr(aligned, "annotations", {}).get(key)
    if value is None:
        raise MeasureError(f"{measure} needs {key} data: pass {option}")
    return value
