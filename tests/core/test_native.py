"""The compiled fast path (judged.core._native) gives exactly what the pure Python/numpy path gives.

Every comparison computes the pure answer in the same test (``pure_path()``: judged's one
switch, ``judged.core.native.pure()``) and compares bit for bit: ids as strings, floats as their
64-bit patterns, error messages as text.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import importlib
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import judged
import judged.core.native
from judged.core.align import align
from judged.core.conventions import Settings
from judged.core.data import Qrels, Run, string_codes, string_hash
from judged.core.errors import ParseError
from judged.core.io.trec_files import duplicate_rows
from judged.core.measures import Measure
from judged.core.results import LazyRunResult
from judged.core import stream

from synth import make_collection, trec_qrels_text, trec_run_text

SRC = Path(judged.__file__).parent


def evaluate_run_file(qrels, path, measures, settings, **options):
    """The stream under one qrels version: its RunResult, or None."""
    got = stream.evaluate_run_file([(qrels, measures)], path, settings, **options)
    return None if got is None else got[0]
# the modules that ask `compiled()` for the extension (`from .native import compiled`, or `..`):
# the kernel layer for every kernel, and the TREC readers choosing the compiled tokenizer
NATIVE_USERS = ("judged.core.kernels",)
native = judged.core.native.native

needs_native = pytest.mark.skipif(native is None, reason="judged.core._native is not built here (no C compiler, or "
                                  "JUDGED_PURE_PYTHON=1): nothing to compare the pure path with")
FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture
def pure():
    """judged on its pure Python/numpy path for the rest of the test."""
    with judged.core.native.pure():
        yield


pure_path = judged.core.native.pure  # the pure path inside a ``with`` block (to compare in one test)


def both(fn):
    """(fn() on the compiled path, fn() on the pure path)."""
    fast = fn()
    with pure_path():
        slow = fn()
    return fast, slow


def both_raise(fn):
    """The ParseError message of fn() on each path (both must raise)."""
    out = []
    for ctx in (contextlib.nullcontext(), pure_path()):
        with ctx, pytest.raises(ParseError) as exc:
            fn()
        out.append(str(exc.value))
    return out


class Spy:
    """Stands in for the native module and records which kernels were called."""

    def __init__(self, module):
        self.module, self.calls = module, []

    def __getattr__(self, name):
        self.calls.append(name)
        return getattr(self.module, name)


def spy_on(mp: pytest.MonkeyPatch) -> Spy:
    """A Spy in place of the compiled module, for every caller of ``compiled()``."""
    spy = Spy(native)
    mp.setattr(judged.core.native, "_loaded", spy)
    return spy


# -- 1. the fixture patches every importer ------------------------------------------------


def test_every_caller_asks_the_one_switch():
    """No module binds the compiled module at import (``from .native import native`` would
    escape ``judged.core.native.pure()``): every caller imports ``compiled`` and asks it."""
    importers, elsewhere = set(), []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "native.py" and path.parent == SRC / "core":
            continue
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.search(r"\bnative\b", line) and re.match(r"\s*(from|import)\s", line):
                names = re.fullmatch(r"from \.+(?:core\.)?native import ([\w, ]+)", line.strip())
                if names is None or "native" in {n.strip() for n in names.group(1).split(",")}:
                    elsewhere.append(f"{module}: {line.strip()}")  # binds the module (or _native): escapes the switch
                elif "compiled" in names.group(1).split(", ") and not line[0].isspace():
                    importers.add(module.removesuffix(".__init__"))
    assert elsewhere == []
    assert importers == set(NATIVE_USERS)


def test_pure_fixture_turns_the_extension_off(pure, tmp_path):
    assert judged.core.native.compiled() is None and judged.core.native.native is None
    assert judged.core.native.status()[0] == "pure"
    path = tmp_path / "run"
    path.write_text("q1 Q0 d1 1 1.5 t\n")
    tokens, _ = judged.core.io.text.read_tokens(path, judged.core.io.trec_files.RUN_LAYOUT)  # the tokenizer's reference
    assert tokens.number.tolist() == [1.5]
    assert judged.read_run(path).score.tolist() == [1.5]


# -- 2. CI requires the extension ----------------------------------------------------------


def test_extension_is_built_when_required():
    if os.environ.get("JUDGED_REQUIRE_NATIVE", "") in ("", "0"):
        pytest.skip("JUDGED_REQUIRE_NATIVE is not set (.ci/run sets it: CI machines have a C compiler)")
    assert os.environ.get("JUDGED_PURE_PYTHON", "") in ("", "0"), "JUDGED_PURE_PYTHON=1 turns the extension off"
    assert judged.core.native.native is not None, "judged.core._native is not built (pip install -e . needs gcc and Python headers)"


# -- 3. the tokenizer reads what the pure reader reads -------------------------------------

SCORES = ["1e-5", "+3", "-0", "0", ".5", "5.", "1E+05", "1234567890123456789012345", "-1234567890123456789.012345",
          "0.1000000000000000055511151231257827", "9007199254740993", "9007199254740992", "9007199254740991",
          "-9007199254740993.0", "18014398509481985", "4.9e-324", "2.4703282292062328e-324", "2.2250738585072014e-308",
          "1.7976931348623157e308", "1.7976931348623158e+308", "1e-400", "-1e-400", "123.456e-300", "0.000001e+22",
          "1e22", "1e23", "-1e-22", "123456789012345678e-5", "0e999999", "00000000000000000000000001.5", "+.5",
          "-.5e-3", "1234567890123456789.5", "9999999999999999999999e-22", "0.30000000000000004", "1.", "-7E-0",
          "3.14159265358979323846264338327950288", "1e0000000000000000000000001", "100e-2", "0.0000000000000000000001e22"]
GRADES = ["0", "1", "+2", "-1", "007", "-0", "+0010", "9223372036854775807", "-9223372036854775808", "3"]
DOCIDS = ["d", "doc-", "Ünïcödé-", "文書", "😀", "a#", "9", "10", "x" * 30]
SEPARATORS = [" ", "\t", "  ", " \t ", "\x0b", "\x0c", " \r "]


@st.composite
def trec_text(draw, kind: str):
    """A TREC run or qrels text with irregular white space, blank and comment lines, CRLF,
    maybe a BOM and no final newline. Distinct (qid, docid) pairs; qids grouped or not."""
    n = draw(st.integers(1, 25))
    sep = st.sampled_from(SEPARATORS)
    lines = []
    for i in range(n):
        qid = draw(st.sampled_from(["1", "2", "10", "q-é", "Q"]))
        docid = draw(st.sampled_from(DOCIDS)) + str(i)
        if kind == "run":
            score = draw(st.one_of(st.sampled_from(SCORES),
                                   st.floats(allow_nan=False, allow_infinity=False).map(repr),
                                   st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.17e}")))
            fields = [qid, "Q0", docid, str(i + 1), score, draw(st.sampled_from(["tag", "t-ü", "#t"]))]
        else:
            fields = [qid, "0", docid, draw(st.sampled_from(GRADES))]
        line = draw(st.sampled_from(["", " ", "\t", "\x0c"]))
        for f in fields[:-1]:
            line += f + draw(sep)
        line += fields[-1] + draw(st.sampled_from(["", " ", "\t", "\r", " \r", "\x0b"]))
        lines.append(line)
        extra = draw(st.sampled_from([None, None, None, "", "   ", "\t", "# a comment", "#", "  # indented comment x y",
                                      "#" + " f" * 5, "# Q0 c 1 1.0 t", "#q 0 c 1", "\r"]))
        if extra is not None:
            lines.append(extra)
    if draw(st.booleans()):
        lines.insert(0, "# header comment é")
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(lines) + draw(st.sampled_from(["", end, end + end]))
    data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + data


def write(directory, name: str, data: bytes, gz: bool = False) -> str:
    path = Path(directory) / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


def run_columns(run: Run) -> dict:
    return {"qid": run.qid.to_pylist(), "docid": run.docid.to_pylist(), "score": run.score.view(np.uint64).tolist(),
            "rank": run.rank_text.to_pylist(), "sha256": run.sha256, "hash": run.docid_hash.tolist()}


def qrels_columns(qrels: Qrels) -> dict:
    return {"qid": qrels.qid.to_pylist(), "docid": qrels.docid.to_pylist(), "grade": qrels.grade.tolist(),
            "sha256": qrels.sha256, "hash": qrels.docid_hash.tolist()}


@FEW
@given(data=trec_text("run"), gz=st.booleans())
def test_tokenizer_reads_runs_as_the_pure_reader(data, gz):
    with tempfile.TemporaryDirectory() as d:
        path = write(d, "run", data, gz)
        assert judged.core.io.text.read_tokens(path, judged.core.io.trec_files.RUN_LAYOUT) is not None  # the tokenizer took it all
        fast, slow = both(lambda: run_columns(judged.read_run(path)))
    assert fast == slow


@FEW
@given(data=trec_text("qrels"), gz=st.booleans())
def test_tokenizer_reads_qrels_as_the_pure_reader(data, gz):
    with tempfile.TemporaryDirectory() as d:
        path = write(d, "qrels", data, gz)
        assert judged.core.io.text.read_tokens(path, judged.core.io.trec_files.QRELS_LAYOUT) is not None
        fast, slow = both(lambda: qrels_columns(judged.read_qrels(path)))
    assert fast == slow


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_every_listed_score_and_grade_reads_identically(tmp_path, gz):
    comment = b"# not UTF-8 in a comment: \xff\xfe\xc3\n"
    run = comment + "".join(f"q{i % 3} Q0 d{i} {i} {s} t\n" for i, s in enumerate(SCORES)).encode()
    qrels = "".join(f"q{i % 3}\t0\td{i}\t{g}\r\n" for i, g in enumerate(GRADES)).encode() + comment
    run_path, qrels_path = write(tmp_path, "run", run, gz), write(tmp_path, "qrels", qrels, gz)
    fast, slow = both(lambda: (run_columns(judged.read_run(run_path)), qrels_columns(judged.read_qrels(qrels_path))))
    assert fast == slow
    assert fast[0]["score"] == np.array([float(s) for s in SCORES]).view(np.uint64).tolist()  # Python's float()


def test_a_long_fraction_with_a_seven_digit_exponent(tmp_path):
    score = "0." + "0" * 99999 + "1e1000000"  # 1e900000: not finite
    path = write(tmp_path, "run", f"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 {score} t\n".encode())
    with pure_path(), pytest.raises(ParseError, match="is not a finite number"):
        judged.read_run(path)
    fast, slow = both_raise(lambda: judged.read_run(path))
    assert fast == slow


@pytest.mark.parametrize("sep", ["\x0b", "\x0c"])
def test_vertical_tab_and_form_feed_inside_a_docid(tmp_path, sep):
    # bytes.split() (trec_eval's reading: isspace) splits at \v and \f: a run line of 7 fields
    # (docid 'd', rank 2, score 2, the last ignored as trec_eval ignores it); a bad qrels line
    data = f"q1 Q0 d1 1 3.0 t\nq1 Q0 d{sep}2 2 1.0 t\n".encode()
    for gz in (False, True):
        path = write(tmp_path, "run", data, gz)
        fast, slow = both(lambda: (lambda r: list(zip(r.docid.to_pylist(), r.score.tolist())))(judged.read_run(path)))
        assert fast == slow == [("d1", 3.0), ("d", 2.0)]
        path = write(tmp_path, "qrels", f"q1 0 d1 1\nq1 0 d{sep}2 0\n".encode(), gz)
        fast, slow = both_raise(lambda: judged.read_qrels(path))
        assert fast == slow
        assert ":2:" in fast and "found 5" in fast


def outcome(fn):
    """fn()'s value, or the text of its ParseError."""
    try:
        return fn()
    except ParseError as exc:
        return f"error: {exc}"


@FEW
@given(docids=st.lists(st.binary(min_size=1, max_size=6).map(lambda b: bytes(c | 0x80 if c < 0x80 else c for c in b)),
                       min_size=1, max_size=6), kind=st.sampled_from(["run", "qrels"]))
def test_utf8_validity_is_decided_alike(docids, kind):
    # bytes >= 0x80 only: valid and invalid UTF-8 (overlong forms, surrogates, > U+10FFFF, cut sequences)
    if kind == "run":
        data = b"".join(b"q Q0 d%d%s 1 1.0 t\n" % (i, d) for i, d in enumerate(docids))
        read, columns = judged.read_run, run_columns
    else:
        data = b"".join(b"q 0 d%d%s 1\n" % (i, d) for i, d in enumerate(docids))
        read, columns = judged.read_qrels, qrels_columns
    with tempfile.TemporaryDirectory() as d:
        path = write(d, kind, data)
        fast, slow = both(lambda: outcome(lambda: columns(read(path))))
    assert fast == slow
    valid = all(_decodes(d) for d in docids)
    assert isinstance(fast, dict) == valid


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# -- 4. bad lines: the same message ----------------------------------------------------------

GOOD_RUN = [f"{q} Q0 doc{d} {d + 1} {10 - d / 7:.6f} tag" for q in ("301", "302", "303") for d in range(20)]
GOOD_QRELS = [f"{q} 0 doc{d} {d % 3}" for q in ("301", "302", "303") for d in range(20)]
BAD_RUN_LINES = {
    "fields-5": b"301 Q0 docX 1 0.5", "fields-4": b"301 Q0 docX 1", "abc": b"301 Q0 docX 1 abc tag",
    "nan": b"301 Q0 docX 1 nan tag", "inf": b"301 Q0 docX 1 inf tag", "-Infinity": b"301 Q0 docX 1 -Infinity tag",
    "1e999": b"301 Q0 docX 1 1e999 tag", "0x10": b"301 Q0 docX 1 0x10 tag", "1_0": b"301 Q0 docX 1 1_0 tag",
    "fullwidth": "301 Q0 docX 1 １ tag".encode(), "1e": b"301 Q0 docX 1 1e tag", "dot": b"301 Q0 docX 1 . tag",
    "sign": b"301 Q0 docX 1 - tag", "lone-cr": b"301 Q0 docX\r1 0.5", "1e+": b"301 Q0 docX 1 1e+ tag", "1.5.": b"301 Q0 docX 1 1.5. tag",
    "utf8-docid": b"301 Q0 doc\xff 1 0.5 tag", "utf8-tag": b"301 Q0 docX 1 0.5 t\xc3", "utf8-qid": b"\xed\xa0\x80 Q0 d 1 1 t",
    "nul": b"301 Q0 do\x00cX 1 0.5 tag", "nul-comment": b"# comment \x00 here",
}
BAD_QRELS_LINES = {
    "fields-3": b"301 0 docX", "fields-5": b"301 0 docX 1 1", "1.5": b"301 0 docX 1.5", "0x1": b"301 0 docX 0x1",
    "huge": b"301 0 docX 99999999999999999999", "-huge": b"301 0 docX -9223372036854775809", "empty-sign": b"301 0 docX +",
    "fullwidth": "301 0 docX １".encode(), "utf8-docid": b"301 0 doc\x80 1", "nul": b"301 0 docX\x00 1",
    "nul-comment": b"#\x00",
}


def bad_file(good: list, bad: bytes, deep: bool) -> bytes:
    lines = [g.encode() for g in good]
    lines[45 if deep else 0:45 if deep else 0] = [b"# before the bad line", bad] if deep else [bad]
    return b"\n".join(lines) + b"\n"


def cli_error(capsys, qrels_path, run_path) -> list:
    from judged.cli import main

    capsys.readouterr()
    status = main(["eval", qrels_path, run_path])
    err = capsys.readouterr().err
    assert status == 2
    return err.splitlines()


BAD_LINES = [pytest.param("run", line, id=f"run-{case}") for case, line in BAD_RUN_LINES.items()] + \
    [pytest.param("qrels", line, id=f"qrels-{case}") for case, line in BAD_QRELS_LINES.items()]


@pytest.mark.parametrize("deep", [False, True], ids=["line1", "deep"])
@pytest.mark.parametrize("kind, bad", BAD_LINES)
def test_a_bad_line_gets_the_pure_readers_message(tmp_path, capsys, kind, bad, deep):
    good, reader = (GOOD_RUN, judged.read_run) if kind == "run" else (GOOD_QRELS, judged.read_qrels)
    other = write(tmp_path, "other", "\n".join(GOOD_QRELS if kind == "run" else GOOD_RUN).encode())
    for gz in (False, True):
        path = write(tmp_path, kind, bad_file(good, bad, deep), gz)
        fast, slow = both_raise(lambda: reader(path))
        assert fast == slow
        assert f":{47 if deep else 1}:" in fast  # the bad line's number (after a comment line when deep)
        assert cli_error(capsys, *((other, path) if kind == "run" else (path, other))) == [f"judged: error: {fast}"]


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf", b"  \n\t\n", b"# only\n\n#comments\r\n  # and blanks\n",
                                  b"\xef\xbb\xbf# bom and a comment"], ids=["empty", "bom", "blank", "comments", "bom-comment"])
@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_empty_files_get_the_pure_readers_message(tmp_path, capsys, data, kind):
    good = {"run": GOOD_RUN, "qrels": GOOD_QRELS}["qrels" if kind == "run" else "run"]
    other = write(tmp_path, "other", "\n".join(good).encode())
    for gz in (False, True):
        path = write(tmp_path, kind, data, gz)
        reader = judged.read_run if kind == "run" else judged.read_qrels
        fast, slow = both_raise(lambda: reader(path))
        assert fast == slow
        assert "empty file" in fast
        args = (other, path) if kind == "run" else (path, other)
        assert cli_error(capsys, *args) == [f"judged: error: {fast}"]


def test_a_duplicate_gets_the_pure_readers_message(tmp_path):
    run = GOOD_RUN[:50] + ["# c", GOOD_RUN[3].replace(" 4 ", " 99 ")] + GOOD_RUN[50:]
    qrels = GOOD_QRELS + [GOOD_QRELS[7].rsplit(" ", 1)[0] + " 5"]
    run_path, qrels_path = write(tmp_path, "run", "\n".join(run).encode()), write(tmp_path, "qrels", "\n".join(qrels).encode())
    fast, slow = both_raise(lambda: judged.read_run(run_path))
    assert fast == slow and ":52:" in fast
    fast, slow = both_raise(lambda: judged.read_qrels(qrels_path))
    assert fast == slow and ":61:" in fast


# -- 5. kernels vs numpy ---------------------------------------------------------------------

ids = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@FEW
@given(values=st.lists(st.one_of(ids, st.text("ab", max_size=9)), max_size=60), cut=st.integers(0, 8), keep=st.integers(0, 60))
def test_string_hash(values, cut, keep):
    array = pa.array(values, pa.string())
    for a in (array, array.slice(min(cut, len(values)), keep)):
        with pytest.MonkeyPatch.context() as mp:
            spy = spy_on(mp)
            fast = string_hash(a)
        assert spy.calls == ["string_hash"]
        slow = both(lambda: string_hash(a))[1]
        assert fast.dtype == slow.dtype == np.uint64
        assert np.array_equal(fast, slow)


def test_string_hash_of_tokens_is_string_hash(tmp_path):
    path = write(tmp_path, "run", "".join(f"q Q0 {'é' * i}{'x' * i} {i} 1 t\n" for i in range(1, 41)).encode())
    run = judged.read_run(path)
    with pure_path():
        assert np.array_equal(run.docid_hash, string_hash(run.docid))


@FEW
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["a", "b", "é", "", "doc1", "doc10", "文"])), max_size=80),
       grouped=st.booleans(), weak=st.booleans())
def test_duplicate_rows(rows, grouped, weak):
    if grouped:
        rows = sorted(rows, key=lambda r: r[0])
    qid = pa.array([str(q) for q, _ in rows], pa.string())
    docid = pa.array([d for _, d in rows], pa.string())
    # weak: every docid hashes alike, so only the byte comparison tells them apart
    hashes = np.zeros(len(rows), np.uint64) if weak else None
    with pytest.MonkeyPatch.context() as mp:
        spy = spy_on(mp)
        fast = duplicate_rows(qid, docid, hashes)
    assert ("repeated_rows" in spy.calls) == (len(rows) >= 2)
    slow = both(lambda: duplicate_rows(qid, docid, hashes))[1]
    assert fast.tolist() == slow.tolist()
    seen, expected = set(), []
    for i, r in enumerate(rows):
        (expected.append(i) if r in seen else seen.add(r))
    assert fast.tolist() == expected


@FEW
@given(rows=st.lists(st.tuples(st.integers(0, 3), st.one_of(ids, st.sampled_from(["a", "a\0", "a\0\0", "", "\0", "ab",
                                                                                "abcdefgh", "abcdefgh\0", "abcdefghi",
                                                                                "abcdefgg", "é", "文", "\U0001F600"]))),
                     max_size=120),
       cut=st.integers(0, 3))
def test_string_codes_number_pairs_by_group_then_pythons_string_order(rows, cut):
    # judged.core.data.string_codes: both back ends, and Python's sorted() of the distinct pairs;
    # NULs, prefixes and strings longer than a word included; a sliced array (offsets not at 0)
    array = pa.array([d for _, d in [(0, "x")] * cut + rows], pa.string()).slice(cut)
    group = np.array([g for g, _ in rows], np.int64)
    with pytest.MonkeyPatch.context() as mp:
        spy = spy_on(mp)
        fast = string_codes(group, array)
    assert spy.calls == ["string_codes"]
    slow = both(lambda: string_codes(group, array))[1]
    assert all(x.dtype == y.dtype == np.int64 and np.array_equal(x, y) for x, y in zip(fast, slow))
    number = {pair: i for i, pair in enumerate(sorted(set(rows)))}
    assert fast[0].tolist() == [number[pair] for pair in rows]
    assert fast[1].tolist() == sorted({pair: i for i, pair in reversed(list(enumerate(rows)))}.values(),
                                      key=lambda i: number[rows[i]])


def weak_hash(values):
    """Every string of one length hashes alike: collisions everywhere except within a query's
    judgments, whose docids differ in length (so the qrels' key table still builds)."""
    lengths = np.diff(np.frombuffer(values.buffers()[1], np.int32, len(values) + 1, values.offset * 4))
    return lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)


@FEW
@given(seed=st.integers(0, 2**32 - 1), weak=st.booleans())
def test_qrels_lookup_through_both_kernels(seed, weak):
    # judged.core.data.grades_of_rows: the compiled lookup_blocks against the reference (one KeyTable)
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(1, 6))
    qrels = {f"q{q}": {"x" * L + ("é" if L % 2 else ""): int(rng.integers(-1, 4)) for L in rng.choice(9, rng.integers(1, 9), replace=False) + 1}
             for q in range(nq)}
    pool = [d for docs in qrels.values() for d in docs] + ["y" * L for L in range(1, 10)] + ["", "zz", "xé"]
    n = int(rng.integers(1, 120))
    docid = pa.array(list(rng.choice(pool, n + 7)), pa.string()).slice(int(rng.integers(0, 8)), n)  # a sliced array
    qcode = rng.integers(-1, nq, n)  # per run row; -1: a query the qrels lack
    rows = np.argsort(qcode, kind="stable")  # grouped by query, as align gives them
    if rng.random() < 0.5:
        rows = rows[rng.random(n) < 0.7]  # not every row
    kernel = judged.core.data.grades_of_rows
    with pytest.MonkeyPatch.context() as mp:
        if weak:
            mp.setattr(judged.core.data, "string_hash", weak_hash)
        q = judged.read_qrels(qrels)  # its docids hashed as it reads them: again with the hash patched in
        index = q.known(docid_hash=judged.core.data.string_hash(q.docid)).index
        assert index.table is not None  # (the weak hash still tells each query's judgments apart)
        hashes = judged.core.data.string_hash(docid)
        fast = kernel.bound(native, index, rows, qcode, docid, hashes)
        slow = kernel.reference(index, rows, qcode, docid, hashes)
    if fast is judged.core.kernels.FALLBACK:  # the binding leaves empty inputs to the reference
        assert len(rows) == 0
        fast = judged.core.kernels.Kernel.__call__(kernel, index, rows, qcode, docid, hashes)
    assert np.array_equal(fast, slow, equal_nan=True)
    qids, names = index.query_ids, docid.to_pylist()
    expected = [qrels[qids[qcode[r]]].get(names[r], np.nan) if qcode[r] >= 0 else np.nan for r in rows]
    assert np.array_equal(fast, np.array(expected, float), equal_nan=True)


def ranked_arrays(aligned) -> dict:
    r = aligned.ranked
    return {"qids": aligned.qids.tolist(), "q": r.q.tolist(), "pos": r.pos.tolist(), "row": r.row.tolist(),
            "grade": r.grade, "offsets": r.offsets.tolist(), "counts": aligned.counts}


def assert_same_ranked(fast: dict, slow: dict):
    fg, sg = fast.pop("grade"), slow.pop("grade")
    assert np.array_equal(fg, sg, equal_nan=True)
    assert fast == slow


@FEW
@given(seed=st.integers(0, 2**32 - 1), ties=st.sampled_from(["trec", "input"]))
def test_align_trec_ties(seed, ties):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 150))
    qids = [f"q{q}" for q in rng.integers(0, 6, n)]
    if rng.random() < 0.5:  # queries in blocks, blocks out of order, some queries in several blocks
        qids = sorted(qids, key=lambda q: (q * 7)[::-1])
        if n > 10:
            qids = qids[n // 3:] + qids[:n // 3]
    docs = [f"{p}{i:03d}" for i, p in enumerate(rng.choice(["d", "D", "é", "文", "z", "", "9", "10"], n))]
    scores = rng.choice([0.0, -0.0, 1.0, 0.5, 0.25, -1e300, 5e-324, 2.0, np.inf, -np.inf], n) if rng.random() < 0.7 else rng.normal(size=n)
    if rng.random() < 0.3:  # scores listed descending per query, as run files are
        order = np.lexsort((-scores, qids))
        qids, docs, scores = [qids[i] for i in order], [docs[i] for i in order], scores[order]
    qrels = {f"q{q}": {docs[i]: int(rng.integers(-1, 3)) for i in rng.choice(n, min(n, 20), replace=False)} for q in range(7)}
    settings_ = Settings(ties=ties, no_relevant="zero")

    def aligned():  # Run() itself: read_run refuses infinite scores
        return ranked_arrays(align(judged.read_qrels(qrels), Run(pa.array(qids), pa.array(docs), scores), settings_))

    with pytest.MonkeyPatch.context() as mp:
        spy = spy_on(mp)
        fast = aligned()
    slow = both(aligned)[1]
    assert ("trec_rank" in spy.calls) == (ties == "trec")
    assert_same_ranked(fast, slow)
    if ties == "trec":  # each query: score descending, then docid descending (byte order)
        for a, b in zip(fast["row"], fast["row"][1:]):
            if qids[a] == qids[b]:
                assert (scores[a], docs[a].encode()) >= (scores[b], docs[b].encode())


def test_align_orders_repeated_pairs_of_an_unchecked_run_alike():
    # Run() itself does not refuse repeated (qid, docid) pairs: equal keys keep their input order on both paths
    rng = np.random.default_rng(0)
    n = 200
    run = Run(pa.array(rng.choice(["q1", "q2"], n)), pa.array(rng.choice(["a", "b", "c", "é"], n)),
              rng.choice([1.0, 2.0], n))
    qrels = Qrels(pa.array(["q1", "q2", "q2"]), pa.array(["a", "b", "é"]), np.array([1, 2, 0]))
    for ties in ("trec", "input"):
        fast, slow = both(lambda: ranked_arrays(align(qrels, run, Settings(ties=ties))))
        assert_same_ranked(fast, slow)


def test_align_with_a_nan_score_takes_the_numpy_path():
    run = Run(pa.array(["q", "q", "q"]), pa.array(["a", "b", "c"]), np.array([1.0, np.nan, 1.0]))
    qrels = Qrels(pa.array(["q"]), pa.array(["a"]), np.array([1]))
    fast, slow = both(lambda: ranked_arrays(align(qrels, run, Settings())))
    assert_same_ranked(fast, slow)


# -- 5b. measure kernels vs numpy ------------------------------------------------------------

KERNEL_MEASURES = [
    "P@1", "P@5", "P(rel=2)@10", "P(unjudged=condensed)@3", "R@5", "R(rel=3)@2", "R(unjudged=condensed)@4",
    "Success@1", "Success(rel=2)@5", "RR", "RR@3", "RR(rel=2)", "RR(unjudged=condensed)", "AP", "AP@5",
    "AP(rel=2)", "AP(rel=0)", "AP(unjudged=condensed)", "AP(unjudged=condensed)@3", "Rprec", "Rprec(rel=2)",
    "Rprec(unjudged=condensed)", "Bpref", "Bpref(rel=2)", "NumRet", "NumRet(unjudged=condensed)", "NumRelRet",
    "NumRelRet(rel=2,unjudged=condensed)", "NumRel",
    "nDCG", "nDCG@1", "nDCG@10", "DCG@5", "DCG", "nDCG(gain=exp)@10", "nDCG(gain={0:0,1:1,2:3,3:7})@5",
    "DCG(gain={-1:5,0:0.5,1:1,2:2,3:4})@7", "nDCG(discount=jk2002,base=3)@10", "nDCG(discount=reciprocal)",
    "nDCG(discount=power,p=0.7)@6", "nDCG(ideal=retrieved)@10", "nDCG(unjudged=condensed)@10",
    "nDCG(unjudged=condensed,ideal=retrieved)", "DCG(unjudged=condensed,gain=exp)@3",
]


@pytest.mark.parametrize("seed", range(12))
def test_measure_kernels_equal_numpy(seed, monkeypatch):
    """Every binary and DCG measure, cutoffs shorter and longer than the rankings, ties,
    negative grades, unjudged documents, condensed rankings: the same 64-bit values."""
    coll = make_collection(seed, max_queries=12, max_docs=80, max_ranked=60)
    settings = [{}, {"complete": True}, {"no_relevant": "skip"}, {"ties": "input"}][seed % 4]
    spy = spy_on(monkeypatch)

    def values():
        res = judged.evaluate(coll.qrels, coll.run, KERNEL_MEASURES, **settings).runs["run"]
        return res.qids.tolist(), {m: res.values[m].view(np.uint64).tolist() for m in KERNEL_MEASURES}

    fast, slow = both(values)
    assert fast == slow
    assert spy.calls.count("binary_measure") == 28 and spy.calls.count("dcg_measure") == 15


@pytest.mark.filterwarnings("ignore:overflow encountered in exp2")
def test_dcg_kernel_hands_grades_it_cannot_take_to_numpy():
    """A grade past the gain table or not an integer (holes fill in any grade): numpy decides."""
    from judged.core.measures.dcg import dcg

    aligned = align(judged.read_qrels({"q": {"a": 2, "b": 1}}), judged.read_run({"q": {"a": 3.0, "b": 2.0, "c": 1.0}}))
    for grade in ([2.0, 1.5, np.nan], [2.0, 1.0, 70000.0], [2.0, -3.0, 9.0], [2.0, 40.0, 16.0]):
        ranked = dataclasses.replace(aligned.ranked, grade=np.array(grade), _tops={}, _memo={})
        for text in ("DCG@3", "DCG(gain=exp)", "DCG(unjudged=condensed)@2", "DCG(gain={0:0,1:1,2:5})@3"):
            m = Measure.parse(text)

            def value():
                try:
                    return dcg(m, ranked, 1, condensed=m.unjudged == "condensed").view(np.uint64).tolist()
                except judged.core.errors.ConventionError as exc:
                    return str(exc)

            fast, slow = both(value)
            assert fast == slow, (grade, text)


# -- 6. streaming with the compiled tokenizer ------------------------------------------------

MEASURES = ["nDCG@10", "AP", "P@5", "RR", "Bpref", "nDCG(unjudged=condensed)@10", "Judged@10", "R@20"]


def stream_collection(rng, queries=12, long_query=300):
    qrels, lines = [], []
    for q in range(queries):
        qid = f"{q * 37 % 101}"
        n = long_query if q == 4 else int(rng.integers(1, 30))
        docs = [f"d{j}" for j in rng.choice(2000, n, replace=False)]
        scores = [float(s) for s in np.sort(np.round(rng.normal(size=n), 1))[::-1]]
        lines += [f"{qid} Q0 {d} {r + 1} {s!r} tag" for r, (d, s) in enumerate(zip(docs, scores))]
        if q % 3 == 1:
            lines.append("# between queries")
        qrels += [f"{qid} 0 {d} {int(rng.integers(-1, 3))}" for d in rng.choice(docs, min(n, 12), replace=False)]
    return "\n".join(qrels) + "\n", lines


def whole_file(qrels_path, run_path, on_duplicate="error", **conventions):
    run = judged.read_run(run_path, name="run", on_duplicate=on_duplicate)
    return numbers(judged.evaluate(qrels_path, {"run": run}, MEASURES, **conventions).runs["run"])


def numbers(res) -> tuple:
    """A result's qids, per-query values (as 64-bit patterns) and counts."""
    return res.qids.tolist(), {m: res.values[m].view(np.uint64).tolist() for m in MEASURES}, res.counts


@pytest.mark.parametrize("shape", ["plain", "no-final-newline", "bom", "crlf-tabs", "one-query", "duplicates"])
def test_streaming_in_tiny_pieces_gives_the_whole_file_numbers(tmp_path, shape):
    qrels_text, lines = stream_collection(np.random.default_rng(len(shape)))
    if shape == "crlf-tabs":
        lines = [line.replace(" ", "\t") for line in lines]
    if shape == "plain":  # a comment and a blank line inside the long query
        at = next(i for i, line in enumerate(lines) if line.startswith("47 ")) + 100
        lines[at:at] = ["# inside a query", "   "]
    if shape == "bom":
        lines = ["# a comment first", ""] + lines
    if shape == "one-query":  # one query longer than every piece, the last line without a line end
        lines = [line for line in lines if line.startswith("47 ")]  # query 4: 300 lines
        assert len(lines) == 300
    if shape == "duplicates":  # repeated docids, with a higher and a lower score, far apart in one query
        at = [i for i, line in enumerate(lines) if line.startswith("47 ")]
        for i, delta in ((at[5], 9.0), (at[200], -9.0), (at[-1], 0.0)):
            q, q0, d, r, score, tag = lines[i].split()
            lines.insert(at[len(at) // 2], f"{q} {q0} {d} {r} {float(score) + delta!r} {tag}")
    text = ("\r\n" if shape == "crlf-tabs" else "\n").join(lines) + ("" if shape in ("no-final-newline", "one-query") else "\n")
    data = (b"\xef\xbb\xbf" if shape == "bom" else b"") + text.encode()
    qrels_path, run_path = write(tmp_path, "qrels", qrels_text.encode()), write(tmp_path, "run", data)
    if shape == "duplicates":
        with pytest.raises(ParseError, match="appears twice"):
            judged.read_run(run_path)
    qrels = judged.read_qrels(qrels_path)
    measures = {m: Measure.parse(m) for m in MEASURES}
    for ties, on_duplicate in (("trec", "first"), ("input", "max"), ("rank", "max")):
        expected = whole_file(qrels_path, run_path, on_duplicate, ties=ties)
        with pure_path():
            assert whole_file(qrels_path, run_path, on_duplicate, ties=ties) == expected
        for block_size in (16, 64, 200, 5000):
            got = evaluate_run_file(qrels, run_path, measures, Settings(ties=ties, on_duplicate=on_duplicate),
                                    name="run", block_size=block_size)
            assert isinstance(got, LazyRunResult), block_size
            assert numbers(got) == expected


def test_a_rank_that_is_not_a_number_under_rank_ties(tmp_path):
    qrels_text, lines = stream_collection(np.random.default_rng(8), long_query=40)
    fields = lines[30].split()
    fields[3] = "x" + fields[3]
    lines[30] = " ".join(fields)
    qrels_path, run_path = write(tmp_path, "qrels", qrels_text.encode()), write(tmp_path, "run", "\n".join(lines).encode())
    fast, slow = both_raise(lambda: judged.evaluate(qrels_path, run_path, ["AP"], ties="rank"))
    assert fast == slow and f":31: rank '{fields[3]}' is not a number" in fast
    numbers_of = lambda: numbers(judged.evaluate(qrels_path, {"run": run_path}, MEASURES, ties="trec").runs["run"])
    fast, slow = both(numbers_of)  # no rank needed under trec ties
    assert fast == slow


@FEW
@given(data=trec_text("run"), block_size=st.integers(16, 400), grouped=st.booleans())
def test_streaming_generated_runs_in_pieces(data, block_size, grouped):
    with tempfile.TemporaryDirectory() as d:
        path = write(d, "run", data)
        with pure_path():
            run = judged.read_run(path)
        if grouped:  # rewrite the lines grouped by query (stable), keeping the odd white space of each
            lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
            first = [line.split()[0] if line.split() and not line.split()[0].startswith(b"#") else None for line in lines]
            order = {q: i for i, q in enumerate(dict.fromkeys(q for q in first if q is not None))}
            keyed = [(order[q] if q is not None else -1, i) for i, q in enumerate(first)]
            data = b"\n".join(lines[i] for _, i in sorted(keyed) if first[i] is not None) + b"\n"
            path = write(d, "run", data)
        docids = run.docid.to_pylist()
        qrels = write(d, "qrels", "".join(f"{q} 0 {doc} {len(doc) % 3}\n" for q, doc in
                                          zip(run.qid.to_pylist(), docids) if len(doc) % 4).encode() or b"x 0 y 1\n")
        qrels_ = judged.read_qrels(qrels)
        measures = {m: Measure.parse(m) for m in MEASURES}
        got = evaluate_run_file(qrels_, path, measures, Settings(), name="run", block_size=block_size)
        qid = judged.read_run(path).qid.to_pylist()
        blocks = [q for i, q in enumerate(qid) if i == 0 or qid[i - 1] != q]
        assert (got is None) == (len(blocks) != len(set(blocks)))
        if got is not None:
            assert numbers(got) == whole_file(qrels, path)


@pytest.mark.parametrize("block_size", [1, 2, 3, 4])
def test_streaming_a_bom_in_pieces_smaller_than_the_bom(tmp_path, block_size):
    qrels_path = write(tmp_path, "qrels", b"q 0 a 1\n")
    run_path = write(tmp_path, "run", b"\xef\xbb\xbfq Q0 a 1 1 t\n")
    got = evaluate_run_file(judged.read_qrels(qrels_path), run_path, {"RR": Measure.parse("RR")}, Settings(),
                            block_size=block_size)
    assert got is None or (got.qids.tolist() == ["q"] and got.values["RR"].tolist() == [1.0])


def test_streaming_refuses_a_file_not_grouped_by_query(tmp_path):
    qrels_text, lines = stream_collection(np.random.default_rng(3), long_query=20)
    lines = lines[1::2] + lines[0::2]
    qrels_path, run_path = write(tmp_path, "qrels", qrels_text.encode()), write(tmp_path, "run", "\n".join(lines).encode())
    qrels = judged.read_qrels(qrels_path)
    for block_size in (16, 200, 1 << 20):
        assert evaluate_run_file(qrels, run_path, {"AP": Measure.parse("AP")}, Settings(), block_size=block_size) is None
    result = judged.evaluate(qrels_path, {"run": run_path}, MEASURES).runs["run"]
    assert result.source is None  # read whole: neither streamed nor spilled
    assert numbers(result) == whole_file(qrels_path, run_path)


@pytest.mark.parametrize("bad", [b"101 Q0 dX 1 nan tag", b"101 Q0 dX 1 0.5", b"101 Q0 d\xff 1 0.5 tag"])
def test_streaming_a_bad_line_deep_in_the_file(tmp_path, bad):
    qrels_text, lines = stream_collection(np.random.default_rng(5))
    raw = [line.encode() for line in lines]
    raw.insert(len(raw) - 20, bad)
    qrels_path, run_path = write(tmp_path, "qrels", qrels_text.encode()), write(tmp_path, "run", b"\n".join(raw) + b"\n")
    qrels = judged.read_qrels(qrels_path)
    for block_size in (16, 200):
        assert evaluate_run_file(qrels, run_path, {"AP": Measure.parse("AP")}, Settings(), block_size=block_size) is None
    fast, slow = both_raise(lambda: judged.evaluate(qrels_path, run_path, ["AP"]))
    assert fast == slow and f":{len(raw) - 20}:" in fast


def test_streaming_a_duplicate_deep_in_the_file(tmp_path):
    qrels_text, lines = stream_collection(np.random.default_rng(6))
    lines.insert(len(lines) - 3, lines[-5])
    qrels_path, run_path = write(tmp_path, "qrels", qrels_text.encode()), write(tmp_path, "run", "\n".join(lines).encode())
    with pytest.raises(ParseError) as streamed:
        evaluate_run_file(judged.read_qrels(qrels_path), run_path, {"AP": Measure.parse("AP")}, Settings(), block_size=64)
    fast, slow = both_raise(lambda: judged.read_run(run_path))
    assert str(streamed.value) == fast == slow


# -- 7. end to end -----------------------------------------------------------------------------

E2E_MEASURES = ["nDCG@10", "AP", "P@5", "RR", "Bpref", "nDCG(unjudged=condensed)@10", "Judged@10", "R@5", "Rprec"]


@pytest.mark.parametrize("seed", range(20))
def test_evaluate_native_equals_pure(tmp_path, seed):
    coll = make_collection(seed, max_queries=10, max_docs=60, max_ranked=40)
    if seed % 4 == 1:  # non-ASCII docids: trec's tie order is their byte (code point) order
        wide = str.maketrans({"1": "é", "2": "文", "3": "😀"})
        coll.run = {q: {d.translate(wide): s for d, s in docs.items()} for q, docs in coll.run.items()}
        coll.qrels = {q: {d.translate(wide): g for d, g in docs.items()} for q, docs in coll.qrels.items()}
    rng = np.random.default_rng(seed)
    run_text = trec_run_text(coll.run, sci_share=0.3, rng=rng)
    lines = run_text.splitlines()
    for i in rng.choice(len(lines), min(3, len(lines)), replace=False):  # duplicates, a lower and a higher score
        q, _, d, r, s, t = lines[i].split()
        lines.insert(int(rng.integers(0, len(lines))), f"{q} Q0 {d} {r} {float(s) + float(rng.choice([-1.0, 1.0]))!r} {t}")
    if seed % 2:
        lines = [line.replace(" ", "\t", 2) for line in lines]
    run_path = write(tmp_path, "run", ("\n".join(lines) + "\n").encode(), gz=seed % 3 == 0)
    qrels_path = write(tmp_path, "qrels", trec_qrels_text(coll.qrels).encode())
    for ties in ("trec", "input", "rank"):
        for on_duplicate in ("first", "max"):
            def per_query():
                res = judged.evaluate(qrels_path, [run_path], E2E_MEASURES, ties=ties, on_duplicate=on_duplicate,
                                      no_relevant="zero").runs[run_path]
                return res.qids.tolist(), {m: res.values[m].view(np.uint64).tolist() for m in E2E_MEASURES}, res.counts

            fast, slow = both(per_query)
            assert fast == slow, (ties, on_duplicate)


# every comparison needs the extension (the two tests of the machinery above do not)
for _name, _test in list(globals().items()):
    if _name.startswith("test_") and _name not in ("test_every_caller_asks_the_one_switch",
                                                   "test_extension_is_built_when_required"):
        globals()[_name] = needs_native(_test)


# -- 8. trec_rank's sorts: score keys and docid keys ----------------------------------------

def trec_order(qe, score, docs) -> list:
    """Reference: rows with qe >= 0 by (query index, score descending, docid bytes
    descending, row); each sort stable, so equal keys keep the previous ones' order."""
    rows = [r for r in range(len(qe)) if qe[r] >= 0]
    rows.sort(key=lambda r: docs[r].encode(), reverse=True)
    rows.sort(key=lambda r: score[r], reverse=True)  # -0.0 == 0.0: a tie, like trec_eval's compare
    rows.sort(key=lambda r: qe[r])
    return rows


INF = np.inf
PREFIXES = ["", "a", "ab", "abc", "abd", "b", "ba", "é", "éa", "10", "1", "9"]
RANK_DOCIDS = {  # name -> docids(rng, n): what docid keys (8 bytes after a shared prefix) must get right
    "short": lambda rng, n: [f"{p}{i}" if rng.random() < 0.8 else p for i, p in enumerate(rng.choice(PREFIXES, n))],
    "long shared prefix": lambda rng, n: [f"clueweb09-en0000-{p}{i % 50}" for i, p in enumerate(rng.choice(PREFIXES, n))],
    "NUL and high bytes, repeated": lambda rng, n: list(rng.choice(["ab", "ab\x00", "ab\x00\x00c", "ab\x00c", "a", "",
                                                           "é\x00", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abé", "ab~", "abz",
                                                           "文", "b"], n)),
}
RANK_SCORES = {  # name -> scores(rng, n): what an order-preserving key must get right
    "normal": lambda rng, n: rng.normal(0, 1, n),
    "negative": lambda rng, n: -rng.exponential(5, n),
    "signed zeros": lambda rng, n: rng.choice([0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324], n),
    "infinities": lambda rng, n: rng.choice([INF, -INF, 0.0, -0.0, 1e308, -1e308, 1.0, -2.5], n),
    "few values": lambda rng, n: rng.choice([0.5, 0.25], n),
    "all equal": lambda rng, n: np.full(n, 3.0),
    "ascending": lambda rng, n: np.arange(n, dtype=float),
    "clustered with outliers": lambda rng, n: np.where(rng.random(n) < 0.01, rng.choice([1e300, -1e300, INF], n),
                                                        1 + rng.integers(0, 50, n) * 2.0 ** -52),
    "powers of two": lambda rng, n: rng.choice([-1.0, 1.0], n) * 2.0 ** rng.integers(-1074, 1024, n),
    "denormals": lambda rng, n: rng.integers(-40, 40, n) * 5e-324,
}
# queries of 1, 2, 3, 16, 17, 40 and over 1,000 rows (5,000: past one pass's 2,048 buckets)
BLOCK_SIZES = [1, 2, 2, 2, 3, 16, 17, 40, 1200, 5000]


def rank_case(name: str, docids: str, seed: int, descending: bool = False):
    """Rows of queries of BLOCK_SIZES interleaved, some dropped (query index -1), scores
    RANK_SCORES[name], RANK_DOCIDS[docids]; ``descending``: each query's scores already in
    order, ties not."""
    rng = np.random.default_rng(seed)
    qe = np.repeat(np.arange(len(BLOCK_SIZES)), BLOCK_SIZES)
    score = RANK_SCORES[name](rng, len(qe)).astype(float)
    if descending:  # each query's scores descending, docids as drawn: only equal scores out of order
        score = np.concatenate([np.sort(score[qe == k])[::-1] for k in range(len(BLOCK_SIZES))])
    docs = [str(d) for d in RANK_DOCIDS[docids](rng, len(qe))]
    if not descending:
        perm = rng.permutation(len(qe))
        qe, score, docs = qe[perm], score[perm], [docs[i] for i in perm]
    qe = np.where(rng.random(len(qe)) < 0.05, -1, qe)
    return qe, score, docs


@needs_native
@pytest.mark.parametrize("descending", [False, True], ids=["shuffled", "descending"])
@pytest.mark.parametrize("docids", list(RANK_DOCIDS))
@pytest.mark.parametrize("name", list(RANK_SCORES))
def test_trec_rank_orders_as_trec_eval(name, docids, descending):
    qe, score, docs = rank_case(name, docids, len(name), descending)
    nq = len(BLOCK_SIZES)
    rows, q, pos, offsets = (np.frombuffer(b, np.int64) for b in
                             native.trec_rank(qe, nq, score, *judged.core.data.string_buffers(pa.array(docs))))
    expected = trec_order(qe, score, docs)
    assert rows.tolist() == expected
    assert q.tolist() == qe[expected].tolist()
    assert offsets.tolist() == np.concatenate(([0], np.cumsum(np.bincount(qe[qe >= 0], minlength=nq)))).tolist()
    assert pos.tolist() == (np.arange(len(rows)) - offsets[q]).tolist()

    # align: the compiled kernel and the pure path (tie_order) give the same ranking
    qids = [f"q{k}" for k in np.maximum(qe, 0)]
    run = Run(pa.array(qids), pa.array(docs), score)
    qrels = Qrels(pa.array([f"q{k}" for k in range(nq)]), pa.array([docs[0]] * nq), np.ones(nq, np.int64))
    fast, slow = both(lambda: ranked_arrays(align(qrels, run, Settings(ties="trec", no_relevant="zero"))))
    assert_same_ranked(fast, slow)


@needs_native
def test_trec_rank_of_nothing_and_of_empty_queries():
    for qe in (np.zeros(0, np.int64), np.full(3, -1, np.int64)):
        rows, q, pos, offsets = (np.frombuffer(b, np.int64) for b in
                                 native.trec_rank(qe, 2, np.zeros(len(qe)),
                                                  *judged.core.data.string_buffers(pa.array(["a"] * len(qe), pa.string()))))
        assert (rows.tolist(), q.tolist(), pos.tolist(), offsets.tolist()) == ([], [], [], [0, 0, 0])


@pytest.mark.parametrize("name", ["negative", "signed zeros", "infinities", "few values", "clustered with outliers"])
def test_trec_rank_ties_equal_pytrec_eval(name):
    """One query of about 1,000 rows in shuffled order, float32-exact scores (pytrec_eval
    rounds scores to float32): every order-dependent measure equals trec_eval's C code."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(7)
    docs = sorted({str(f"{p}{i}" if rng.random() < 0.8 else p) for i, p in enumerate(rng.choice(PREFIXES, 1200))})
    with np.errstate(over="ignore"):  # 1e308 -> float32 inf
        score = RANK_SCORES[name](rng, len(docs)).astype(np.float32).astype(float)
    docs = [docs[i] for i in rng.permutation(len(docs))]
    qrels = {"1": {d: int(rng.integers(0, 3)) for d in rng.choice(docs, size=300, replace=False)}}
    qrels["1"][docs[0]] = 1
    pairs = {"AP": "map", "nDCG": "ndcg", "RR": "recip_rank", "P@5": "P_5", "nDCG@10": "ndcg_cut_10", "Rprec": "Rprec"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(pairs.values())).evaluate(
        {"1": {d: float(x) for d, x in zip(docs, score)}})["1"]
    run = Run(pa.array(["1"] * len(docs)), pa.array(docs), score)  # Run() itself: read_run refuses infinities
    ours = judged.evaluate(qrels, {"r": run}, list(pairs)).runs["r"].values
    for given, key in pairs.items():
        assert ours[given][0] == pytest.approx(theirs[key], abs=1e-12), given


def test_release_pool_frees_the_readers_pooled_blocks(tmp_path):
    """Columns the compiled reader made go back to its pool when freed (streaming reuses
    them); release_pool() frees the pool, for a caller that reads no more files."""
    import gc

    from judged.core.native import compiled, release_pool

    if compiled() is None:
        pytest.skip("the pool belongs to the compiled reader")
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{i % 7} Q0 d{i} {i} {1.0 / (i + 1)!r} t\n" for i in range(5000)))
    release_pool()
    run = judged.read_run(str(path))
    del run
    gc.collect()
    assert release_pool() > 0 and release_pool() == 0
