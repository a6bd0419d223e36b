"""Properties that hold for every collection (hypothesis, bounded so the suite stays fast).

* nDCG lies in [0, 1] under every gain, discount, ideal and unjudged convention;
* a ranking in ideal order scores exactly 1;
* linear and exponential gain agree when grades are binary (2^1 - 1 = 1);
* the order of the input lines does not change scores under trec tie order;
* every malformed input makes ``judged eval`` exit 2 with one line
  ``judged: error: FILE:LINE: ...`` on stderr, never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import judged
from judged.cli import main
from synth import trec_qrels_text, trec_run_text

FAST = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

QIDS = st.sampled_from([str(i) for i in range(1, 13)])
DOCIDS = st.sampled_from([str(i) for i in range(30)] + ["d7", "D7", "x-1"])
GRADES = st.integers(-2, 3)
SCORES = st.sampled_from([0.0, 0.25, 0.5, 1.0, -1.0, 3.0, 1e-5, 2.5e5])  # few values: many ties


@st.composite
def collections(draw, grades=GRADES):
    """(qrels, run) dicts: qrels queries keep at least one grade >= 0 (trec_eval's rule)."""
    qids = draw(st.lists(QIDS, min_size=1, max_size=4, unique=True))
    qrels, run = {}, {}
    for q in qids:
        judged_docs = draw(st.dictionaries(DOCIDS, grades, min_size=1, max_size=12))
        qrels[q] = judged_docs
        # mostly judged documents, some not: enough overlap for the rankings to matter
        pick = st.one_of(st.sampled_from(sorted(judged_docs)), st.sampled_from(sorted(judged_docs)), DOCIDS)
        ranked = draw(st.dictionaries(pick, SCORES, min_size=1, max_size=15))
        run[q] = ranked
    return qrels, run


NDCG_VARIANTS = [
    "nDCG@10", "nDCG", "nDCG@1", "nDCG(gain=exp)@5", "nDCG(gain={0:0,1:1,2:3,3:7})",
    "nDCG(discount=jk2002,base=2)@10", "nDCG(discount=jk2002,base=3)", "nDCG(discount=reciprocal)@10",
    "nDCG(discount=power,p=2)", "nDCG(discount=power,p=0.5)@5", "nDCG(ideal=retrieved)@10",
    "nDCG(ideal=retrieved,gain=exp)", "nDCG(unjudged=condensed)@10", "nDCG(unjudged=condensed,ideal=retrieved)@3",
]


def values(qrels, run, measures, **kw):
    r = judged.evaluate(qrels, {"r": run}, measures, **kw)
    return {m: r.runs["r"].values[m] for m in measures}


@FAST
@given(collections())
def test_ndcg_between_zero_and_one(c):
    for m, v in values(*c, NDCG_VARIANTS).items():
        assert np.all((v >= 0) & (v <= 1)), (m, v)


@FAST
@given(collections(), st.sampled_from(NDCG_VARIANTS))
def test_ideal_order_scores_one(c, measure):
    """Rank every judged document by grade, best first (unjudged ones after): nDCG = 1
    for each query that has something to find."""
    qrels, _ = c
    run = {}
    for q, docs in qrels.items():
        ordered = sorted(docs, key=lambda d: -docs[d])
        run[q] = {d: float(len(ordered) - i) for i, d in enumerate(ordered)}
        run[q]["unjudged-doc"] = -1.0
    v = values(qrels, run, [measure])[measure]
    has_gain = np.array([any(g > 0 for g in qrels[q].values()) for q in sorted(qrels)])
    assert np.all(v[has_gain] == 1.0), v
    assert np.all(v[~has_gain] == 0.0), v


@FAST
@given(collections(grades=st.integers(-1, 1)))
def test_linear_and_exponential_gain_agree_on_binary_grades(c):
    ms = ["nDCG@5", "nDCG(gain=exp)@5", "nDCG", "nDCG(gain=exp)", "DCG@10", "DCG(gain=exp)@10"]
    v = values(*c, ms)
    assert np.array_equal(v["nDCG@5"], v["nDCG(gain=exp)@5"])
    assert np.array_equal(v["nDCG"], v["nDCG(gain=exp)"])
    assert np.array_equal(v["DCG@10"], v["DCG(gain=exp)@10"])


ALL = ["nDCG@10", "nDCG", "AP", "AP@5", "P@5", "R@5", "RR", "Rprec", "Bpref", "Success@1", "NumRel",
       "NumRet", "NumRelRet", "Judged@5", "nDCG(unjudged=condensed)@5"]


@FAST
@given(collections(), st.randoms(use_true_random=False))
def test_line_order_does_not_change_trec_tie_order(c, rnd):
    qrels, run = c
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        outs = []
        for i in range(2):
            q_lines = trec_qrels_text(qrels).splitlines(keepends=True)
            r_lines = trec_run_text(run).splitlines(keepends=True)
            if i:
                rnd.shuffle(q_lines)
                rnd.shuffle(r_lines)
            (tmp / f"q{i}").write_text("".join(q_lines))
            (tmp / f"r{i}").write_text("".join(r_lines))
            r = judged.evaluate(tmp / f"q{i}", {"r": tmp / f"r{i}"}, ALL)
            outs.append(r.runs["r"])
    assert outs[0].qids.tolist() == outs[1].qids.tolist()
    for m in ALL:
        assert np.array_equal(outs[0].values[m], outs[1].values[m]), m


# ---------------------------------------------------------------------------
# Malformed input: exit 2, one line, FILE:LINE

RUN_OK = "1 Q0 a 1 3.0 t\n1 Q0 b 2 2.0 t\n2 Q0 a 1 1.5 t\n2 Q0 c 2 0.5 t\n10 Q0 z 1 1 t\n"
QRELS_OK = "1 0 a 1\n1 0 b 0\n2 0 c 2\n2 0 d 1\n10 0 z 0\n"

NOT_NUMBERS = st.sampled_from(["abc", "1.0x", "0x10", "--1", "1,5", "1_0", "one", "1e", "e5", ".", "+-1", "１"])
NON_FINITE = st.sampled_from(["nan", "NaN", "inf", "-inf", "Infinity", "-Infinity", "1e400", "-1e999"])
NOT_INTEGERS = st.sampled_from(["1.5", "1.0", "x", "nan", "1e3", "٣", "0x1", "inf", "2-", "1_0", "99999999999999999999"])
TOKEN = st.sampled_from(["1", "Q0", "a", "7", "0.5", "t", "x"])


@st.composite
def bad_input(draw):
    """(target 'run'|'qrels', file text, 1-based line of the bad line)."""
    kind = draw(st.sampled_from(["run-fields", "run-score", "run-nonfinite", "run-duplicate",
                                 "qrels-fields", "qrels-grade", "qrels-conflict"]))
    target = kind.split("-")[0]
    lines = (RUN_OK if target == "run" else QRELS_OK).splitlines()
    at = draw(st.integers(0, len(lines)))
    if kind == "run-fields":
        n = draw(st.sampled_from([1, 2, 3, 4, 5]))  # 7, 8: fields after the tag are ignored (trec_eval)
        bad = " ".join(draw(st.lists(TOKEN, min_size=n, max_size=n)))
    elif kind in ("run-score", "run-nonfinite"):
        bad = f"3 Q0 q 1 {draw(NOT_NUMBERS if kind == 'run-score' else NON_FINITE)} t"
    elif kind == "qrels-fields":
        n = draw(st.sampled_from([1, 2, 3, 5, 6]))
        bad = " ".join(draw(st.lists(TOKEN, min_size=n, max_size=n)))
    elif kind == "qrels-grade":
        bad = f"3 0 q {draw(NOT_INTEGERS)}"
    else:  # repeat an earlier pair: duplicate docid in a run query, or another grade in qrels
        at = draw(st.integers(1, len(lines)))
        f = lines[draw(st.integers(0, at - 1))].split()
        if target == "run":
            bad = f"{f[0]} Q0 {f[2]} 9 {draw(SCORES)} t"
        else:
            bad = f"{f[0]} 0 {f[2]} {int(f[3]) + draw(st.integers(1, 3))}"
    sep = draw(st.sampled_from([" ", "\t", "  "]))
    lines.insert(at, bad.replace(" ", sep))
    return target, "\n".join(lines) + "\n", at + 1


def run_cli(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def eval_with_bad(target: str, data: bytes) -> tuple[str, int, str, str]:
    """``judged eval`` on good qrels and run files, one of them (``target``) replaced by
    ``data``: (path of the bad file, exit status, stdout, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "qrels").write_text(QRELS_OK)
        (tmp / "run").write_text(RUN_OK)
        (tmp / target).write_bytes(data)
        return (str(tmp / target), *run_cli(["eval", str(tmp / "qrels"), str(tmp / "run")]))


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(bad_input())
def test_malformed_line_exits_2_with_file_and_line(case):
    target, text, line = case
    path, code, out, err = eval_with_bad(target, text.encode())
    assert code == 2 and out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"judged: error: {path}:{line}: "), (err, text)


BAD_FILES = {
    "empty": b"",
    "blank lines": b"\n \n\t\n\r\n",
    "only comments": b"# a comment\n\n# another\n",
    "binary data": b"1 Q0 a 1 3 t\n\x00\x01\x02\xff",
    "not UTF-8": b"1 Q0 a 1 3 t\n1 Q0 \xff\xfe 2 1 t\n",
    "corrupt gzip": b"\x1f\x8b\x08\x00garbage",
}


@pytest.mark.parametrize("target", ["qrels", "run"])
@pytest.mark.parametrize("name", list(BAD_FILES))
def test_bad_file_exits_2_with_one_line(name, target):
    path, code, out, err = eval_with_bad(target, BAD_FILES[name])
    assert code == 2 and out == "", name
    assert err.count("\n") == 1 and re.match(rf"judged: error: {re.escape(path)}(:\d+)?: \S", err), err


def test_missing_file_exits_2():
    with tempfile.TemporaryDirectory() as tmp:
        code, out, err = run_cli(["eval", f"{tmp}/nope.qrels", f"{tmp}/nope.run"])
    assert (code, out, err) == (2, "", f"judged: error: {tmp}/nope.qrels: no such file\n")


def test_real_process_prints_no_traceback(tmp_path):
    """The installed entry point, as a user runs it: exit 2, one line, no traceback."""
    (tmp_path / "qrels").write_text(QRELS_OK)
    (tmp_path / "run").write_text(RUN_OK + "1 Q0 a 3 nan t\n")
    for args, expect in [((tmp_path / "qrels", tmp_path / "run"), f"{tmp_path / 'run'}:6: score 'nan'"),
                         ((tmp_path / "qrels", tmp_path / "absent"), f"{tmp_path / 'absent'}: no such file")]:
        done = subprocess.run([sys.executable, "-m", "judged", "eval", *map(str, args)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith(f"judged: error: {expect}") and done.stderr.count("\n") == 1, done.stderr
        assert "Traceback" not in done.stderr


def test_float_parsing_of_good_scores_is_exact(tmp_path):
    """Any float written with repr reads back as the same double (the TREC reader's promise)."""
    rng = np.random.default_rng(7)
    scores = np.concatenate([rng.normal(0, 1, 50), rng.normal(0, 1e12, 20), rng.normal(0, 1e-12, 20)])
    (tmp_path / "r").write_text("".join(f"1 Q0 d{i} {i + 1} {float(s)!r} t\n" for i, s in enumerate(scores)))
    assert judged.read_run(tmp_path / "r").score.tolist() == scores.tolist()
    assert all(math.isfinite(s) for s in scores)


# ---------------------------------------------------------------------------
# Conventions pytrec_eval lacks, against a plain-Python reference written from their definitions

GAINS = {"linear": lambda g: float(g), "exp": lambda g: 2.0 ** g - 1, "{0:0,1:1,2:3,3:7}": {0: 0, 1: 1, 2: 3, 3: 7}.get}
DISCOUNTS = {
    "log2": lambda r: 1 / math.log2(r + 1),
    "jk2002,base=3": lambda r: 1.0 if r < 3 else 1 / math.log(r, 3),
    "reciprocal": lambda r: 1 / r,
    "power,p=2": lambda r: 1 / r ** 2,
}


def reference_ndcg(qrels_q: dict, run_q: dict, k, gain, discount, ideal, unjudged, normalise=True) -> float:
    """DCG@k (or nDCG@k) of one query, straight from the definitions in docs/conventions.md."""
    ranking = [d for d, _ in sorted(run_q.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]
    if unjudged == "condensed":
        ranking = [d for d in ranking if qrels_q.get(d, -1) >= 0]

    def g(doc_grade):
        return 0.0 if doc_grade is None or doc_grade <= 0 else GAINS[gain](doc_grade)

    top = ranking[:k] if k else ranking
    dcg = sum(g(qrels_q.get(d)) * DISCOUNTS[discount](r) for r, d in enumerate(top, start=1))
    if not normalise:
        return dcg
    pool = list(qrels_q.values()) if ideal == "judged" else [qrels_q.get(d) for d in ranking]
    best = sorted((g(x) for x in pool), reverse=True)
    best = best[:k] if k else best
    idcg = sum(x * DISCOUNTS[discount](r) for r, x in enumerate(best, start=1))
    return dcg / idcg if idcg > 0 else 0.0


DCG_VARIANTS = [(gain, discount, ideal, unjudged, k) for gain in GAINS for discount in DISCOUNTS
                for ideal in ("judged", "retrieved") for unjudged in ("zero", "condensed") for k in (None, 1, 3, 10)]


def variant_strings(gain, discount, ideal, unjudged, k) -> tuple[str, str]:
    params = [f"discount={discount}"] + ([] if gain == "linear" else [f"gain={gain}"]) + [f"unjudged={unjudged}"]
    cut = f"@{k}" if k else ""
    return f"nDCG({','.join(params + [f'ideal={ideal}'])}){cut}", f"DCG({','.join(params)}){cut}"


@settings(FAST, max_examples=20)
@given(collections(grades=st.integers(-1, 3)))
def test_dcg_family_matches_its_definition(c):
    """Every gain x discount x ideal x unjudged x cutoff, on each generated collection."""
    qrels, run = c
    names = {v: variant_strings(*v) for v in DCG_VARIANTS}
    rr = judged.evaluate(qrels, {"r": run}, sorted({m for pair in names.values() for m in pair})).runs["r"]
    for v, (ndcg, dcg) in names.items():
        for i, q in enumerate(rr.qids.tolist()):
            want = reference_ndcg(qrels[q], run[q], v[4], *v[:4])
            assert rr.values[ndcg][i] == pytest.approx(want, rel=1e-12, abs=1e-15), (q, ndcg)
            want = reference_ndcg(qrels[q], run[q], v[4], *v[:4], normalise=False)
            assert rr.values[dcg][i] == pytest.approx(want, rel=1e-12, abs=1e-15), (q, dcg)


@FAST
@given(collections(), st.sampled_from([1, 2, 5, 20]), st.sampled_from([1, 2]))
def test_rr_at_k_and_judged_at_k_match_their_definitions(c, k, rel):
    qrels, run = c
    ms = [f"RR(rel={rel})@{k}", f"Judged@{k}"]
    rr = judged.evaluate(qrels, {"r": run}, ms).runs["r"]
    for i, q in enumerate(rr.qids.tolist()):
        top = [d for d, _ in sorted(run[q].items(), key=lambda kv: (kv[1], kv[0]), reverse=True)][:k]
        hits = [r for r, d in enumerate(top, start=1) if qrels[q].get(d, -9) >= rel]
        assert rr.values[ms[0]][i] == (1 / hits[0] if hits else 0.0)
        assert rr.values[ms[1]][i] == sum(d in qrels[q] for d in top) / len(top)
