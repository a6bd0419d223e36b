"""judged equals trec_eval (through pytrec_eval, its C code) on generated collections.

Every test runs on both of judged's back ends (the ``backend`` fixture: the compiled
extension and the pure Python/numpy path) and, where it reads a collection, from both
input forms (``form``): TREC files read back through judged's file readers, so the
readers are under test too, and dicts whose queries arrive out of order and whose
documents are not sorted by score, as BEIR result dicts do. The oracle gets the
generator's dicts directly. ``test_pure_and_compiled_agree_bit_for_bit`` compares the two
back ends' 64-bit values. Each collection carries the cases where evaluators part ways:
tied scores (trec_eval orders them by docid descending, as strings: "9" before "10"),
negative grades, queries only in the run or only in the qrels, queries with nothing
relevant, scores in scientific notation.

Scores are float32-exact. pytrec_eval converts run scores to float32 before sorting,
while trec_eval 10 (and judged) sort the doubles as read: two scores that differ only
past float32 precision tie in pytrec_eval and are ordered by docid there, but are ordered
by score in trec_eval and judged. ``test_float32_is_where_pytrec_eval_and_trec_eval_part``
shows one such pair.

Every qrels query keeps at least one grade >= 0: trec_eval (and pytrec_eval) crash or
loop on a query whose judgments are all negative (see ``test_all_negative_judgments``).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import pytrec_eval

import judged
import judged.core.native
from synth import Collection, make_collection, trec_qrels_text, trec_run_text

CUTOFFS = (1, 3, 5, 10, 100)
TOL = 1e-9


def measure_pairs(rel: int, condensed: bool = False) -> dict:
    """judged measure string -> pytrec_eval output key, at relevance level ``rel``."""
    params = []
    if rel != 1:
        params.append(f"rel={rel}")
    if condensed:
        params.append("unjudged=condensed")

    def m(name, cutoff=None, allow=("rel", "unjudged")):
        p = [x for x in params if x.split("=")[0] in allow]
        return name + (f"({','.join(p)})" if p else "") + (f"@{cutoff}" if cutoff else "")

    pairs = {
        m("AP"): "map", m("RR"): "recip_rank", m("Rprec"): "Rprec",
        m("Bpref", allow=("rel",)): "bpref", m("NumRel", allow=("rel",)): "num_rel",
        m("NumRet", allow=("unjudged",)): "num_ret", m("NumRelRet"): "num_rel_ret",
    }
    for k in CUTOFFS:
        pairs.update({m("AP", k): f"map_cut_{k}", m("P", k): f"P_{k}", m("R", k): f"recall_{k}",
                      m("Success", k): f"success_{k}"})
    if rel == 1:  # trec_eval's ndcg ignores the relevance level (-l); judged's nDCG takes no rel=
        pairs[m("nDCG", allow=("unjudged",))] = "ndcg"
        for k in CUTOFFS:
            pairs[m("nDCG", k, allow=("unjudged",))] = f"ndcg_cut_{k}"
    return pairs


PYTREC_MEASURES = {"map", "recip_rank", "Rprec", "bpref", "num_rel", "num_ret", "num_rel_ret", "ndcg"} | {
    f"{name}.{','.join(map(str, CUTOFFS))}" for name in ("map_cut", "P", "recall", "success", "ndcg_cut")}


def oracle(c: Collection, rel: int = 1, condensed: bool = False, complete: bool = False) -> dict:
    run = dict(c.run)
    if complete:  # trec_eval -c: a qrels query missing from the run is scored with an empty ranking
        run.update({q: {} for q in c.qrels if q not in run})
    ev = pytrec_eval.RelevanceEvaluator(c.qrels, PYTREC_MEASURES, relevance_level=rel,
                                        judged_docs_only_flag=condensed)
    return ev.evaluate(run)


@functools.lru_cache(maxsize=None)
def collection(seed: int, large: bool = False) -> Collection:
    if large:
        return make_collection(seed, max_queries=60, max_docs=400, max_ranked=300)
    return make_collection(seed)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Each collection written once as TREC files: (qrels path, run path)."""
    base = tmp_path_factory.mktemp("collections")
    return functools.lru_cache(maxsize=None)(lambda c: c.write(base))


FORMS = ["file", "dict"]


def out_of_order(c: Collection) -> tuple[dict, dict]:
    """(qrels, run) dicts with the queries in a shuffled order (never qid order when there
    are two or more) and each query's documents shuffled, as BEIR result dicts arrive."""
    rng = np.random.default_rng(c.seed + 7)

    def shuffle(d: dict, inner: bool) -> dict:
        keys = list(d)
        order = [keys[i] for i in rng.permutation(len(keys))]
        if len(order) > 1 and order == sorted(order):
            order.reverse()
        return {k: shuffle(d[k], False) if inner else d[k] for k in order}

    return shuffle(c.qrels, True), shuffle(c.run, True)


def judged_result(files, c: Collection, form: str, pairs, **settings):
    """judged's result on collection ``c`` read from TREC files or from out-of-order dicts."""
    if form == "file":
        qrels_path, run_path = files(c)
        qrels, run = judged.read_qrels(qrels_path), judged.read_run(run_path, name="synth")
    else:
        qrels, run = out_of_order(c)
    return judged.evaluate(qrels, {"synth": run}, list(pairs), **settings)


def assert_matches(result, expected: dict, pairs: dict):
    rr = result.runs["synth"]
    qids = rr.qids.tolist()
    assert sorted(qids) == sorted(expected), "evaluated queries differ from trec_eval's"
    for given, key in pairs.items():
        ours = rr.values[given]
        theirs = np.array([expected[q][key] for q in qids])
        bad = np.flatnonzero(np.abs(ours - theirs) > TOL)
        assert not len(bad), (f"{given} vs {key}: query {qids[bad[0]]}: judged {ours[bad[0]]!r}, "
                              f"trec_eval {theirs[bad[0]]!r}")
        agg = pytrec_eval.compute_aggregated_measure(key, theirs.tolist()) if len(qids) else 0.0
        assert result.aggregate("synth", given) == pytest.approx(agg, abs=TOL, rel=TOL), given


SMALL = range(200)
LARGE = range(1000, 1004)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("seed", SMALL)
def test_small_collections(files, seed, rel, form, backend):
    c = collection(seed)
    pairs = measure_pairs(rel)
    assert_matches(judged_result(files, c, form, pairs), oracle(c, rel), pairs)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", SMALL[:100])
def test_condensed_equals_judged_docs_only(files, seed, form, backend):
    """``unjudged=condensed`` is trec_eval -J (pytrec_eval judged_docs_only_flag=True):
    unjudged documents, and those with negative grades, leave the ranking before scoring."""
    c = collection(seed)
    pairs = measure_pairs(1, condensed=True)
    assert_matches(judged_result(files, c, form, pairs), oracle(c, 1, condensed=True), pairs)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", SMALL[:100])
def test_complete_equals_trec_eval_c(files, seed, form, backend):
    """``complete=True`` is trec_eval -c: the mean runs over every qrels query, those the
    run misses scored on an empty ranking (0, except NumRel)."""
    c = collection(seed)
    pairs = measure_pairs(1)
    expected = oracle(c, complete=True)
    result = judged_result(files, c, form, pairs, complete=True)
    assert_matches(result, expected, pairs)
    assert result.runs["synth"].counts["evaluated"] == len(c.qrels)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", SMALL[:50])
def test_query_counts(files, seed, form, backend):
    c = collection(seed)
    result = judged_result(files, c, form, {"AP": "map"})
    in_both = set(c.qrels) & set(c.run)
    no_relevant = {q for q in in_both if not any(g >= 1 for g in c.qrels[q].values())}
    assert result.runs["synth"].counts == {
        "evaluated": len(in_both), "skipped": 0, "missing_from_run": len(set(c.qrels) - set(c.run)),
        "only_in_run": len(set(c.run) - set(c.qrels)), "no_relevant": len(no_relevant)}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("seed", LARGE)
def test_large_collections(files, seed, rel, form, backend):
    c = collection(seed, large=True)
    pairs = measure_pairs(rel)
    assert_matches(judged_result(files, c, form, pairs), oracle(c, rel), pairs)


TINY = range(2000, 2500)


def test_tiny_collections_as_out_of_order_dicts(backend):
    """500 tiny collections (at most 3 queries of at most 4 ranked documents) as out-of-order
    dicts: where a query's few documents are out of score order exactly at another query's
    old block boundary (issue #14's pure-path ranking bug gave wrong values on 10 of them).
    One test per back end, so that the loop stays cheap."""
    pairs = measure_pairs(1)
    for seed in TINY:
        c = make_collection(seed, max_queries=3, max_docs=8, max_ranked=4)
        qrels, run = out_of_order(c)
        assert_matches(judged.evaluate(qrels, {"synth": run}, list(pairs)), oracle(c), pairs)


VARIANTS = [({"rel": 1}, {}), ({"rel": 2}, {}), ({"rel": 1, "condensed": True}, {}), ({"rel": 1}, {"complete": True})]


def bits(files, c: Collection, form: str) -> dict:
    """Every variant's (qids, {measure: 64-bit patterns}) on the back end in force."""
    out = {}
    for pair_args, settings in VARIANTS:
        pairs = measure_pairs(**pair_args)
        rr = judged_result(files, c, form, pairs, **settings).runs["synth"]
        out[str((pair_args, settings))] = (rr.qids.tolist(), {m: rr.values[m].view(np.uint64).tolist() for m in pairs})
    return out


def count_values(b: dict) -> int:
    return sum(len(v) for _, values in b.values() for v in values.values())


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", [*SMALL, *LARGE])
def test_pure_and_compiled_agree_bit_for_bit(files, seed, form):
    """The same collections, every measure and convention above: the compiled and the pure
    path give the same 64-bit values (not merely within 1e-9 of trec_eval)."""
    if judged.core.native.compiled() is None:
        pytest.skip(f"the compiled back end is {judged.core.native.status()[1]}")
    c = collection(seed, large=seed in LARGE)
    fast = bits(files, c, form)
    with judged.core.native.pure():
        slow = bits(files, c, form)
    assert count_values(fast) > 0
    assert fast == slow


def test_pure_path_ranks_out_of_order_queries_by_their_own_scores(backend):
    """Issue #14: the pure path reordered queries that arrive out of order, then checked
    "already sorted" at the old query boundaries, so it took q's [-1, 3] as sorted: RR 1.0.
    trec_eval ranks b (3.0) above a (-1.0): RR 0.5."""
    qrels = {"q": {"a": 1}, "r": {"d58": 0}}
    run = {"r": {"z": 0.0}, "q": {"a": -1.0, "b": 3.0}}
    r = judged.evaluate(qrels, run, ["RR"]).runs["run"]
    assert dict(zip(r.qids.tolist(), r.values["RR"].tolist())) == {"q": 0.5, "r": 0.0}
    assert oracle(Collection(qrels, run, 0))["q"]["recip_rank"] == 0.5


def test_generator_covers_the_hard_cases():
    """The oracle tests above can only catch what the collections contain."""
    seen = {"ties": 0, "string_vs_numeric": 0, "negative": 0, "only_run": 0, "only_qrels": 0, "no_relevant": 0}
    for seed in SMALL:
        c = collection(seed)
        for docs in c.run.values():
            scores = list(docs.values())
            seen["ties"] += len(scores) != len(set(scores))
            ids = list(docs)
            seen["string_vs_numeric"] += any(len(a) != len(b) for a in ids for b in ids)
        seen["negative"] += any(g < 0 for d in c.qrels.values() for g in d.values())
        seen["only_run"] += bool(set(c.run) - set(c.qrels))
        seen["only_qrels"] += bool(set(c.qrels) - set(c.run))
        seen["no_relevant"] += any(all(g < 1 for g in d.values()) for q, d in c.qrels.items() if q in c.run)
    assert all(v >= 20 for v in seen.values()), seen


def test_scientific_notation_reads_as_the_same_double(tmp_path):
    run = {"1": {"a": 1.5e-7, "b": 2.5e5, "c": -3.0e-3}}
    text = "1 Q0 a 1 1.5E-07 t\n1 Q0 b 2 2.5e+05 t\n1 Q0 c 3 -3e-3 t\n"
    (tmp_path / "r").write_text(text)
    r = judged.read_run(tmp_path / "r")
    assert r.score.tolist() == [1.5e-7, 2.5e5, -3.0e-3]
    assert r.score.tolist() == list(run["1"].values())


def test_tie_break_is_docid_descending_as_strings(tmp_path, backend):
    """All scores tie: trec_eval ranks "9" above "10" above "1" (strcmp, descending)."""
    qrels = {"1": {"10": 1, "9": 0, "1": 0}}
    run = {"1": {"1": 0.5, "10": 0.5, "9": 0.5}}
    (tmp_path / "q").write_text(trec_qrels_text(qrels))
    (tmp_path / "r").write_text(trec_run_text(run))
    r = judged.evaluate(tmp_path / "q", {"r": tmp_path / "r"}, ["RR"])
    assert r.runs["r"].values["RR"][0] == 0.5  # the relevant "10" sits at rank 2
    assert oracle(Collection(qrels, run, 0))["1"]["recip_rank"] == 0.5


def test_float32_is_where_pytrec_eval_and_trec_eval_part(backend):
    """Two scores equal in float32 but not as doubles: pytrec_eval ties them (docid
    descending puts "b" first), trec_eval 10 and judged keep the higher double first."""
    hi, lo = 1.0 + 2.0 ** -40, 1.0
    assert np.float32(hi) == np.float32(lo) and hi != lo
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": hi, "b": lo}}
    ours = judged.evaluate(qrels, {"r": run}, ["RR"]).runs["r"].values["RR"][0]
    theirs = oracle(Collection(qrels, run, 0))["1"]["recip_rank"]
    assert (ours, theirs) == (1.0, 0.5)


def test_all_negative_judgments(tmp_path, backend):
    """A query whose judgments are all negative: trec_eval 10 and pytrec_eval loop forever
    or crash on it (pytrec_eval-terrier 0.5.11 segfaults computing bpref beside other
    measures). judged scores it 0 on every measure, counts it as having nothing relevant,
    and returns promptly (a subprocess with a timeout, so a hang fails instead of blocking)."""
    (tmp_path / "q").write_text("1 0 a -1\n1 0 b -2\n2 0 x 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n2 Q0 x 1 1 t\n")
    measures = ["nDCG@10", "nDCG", "AP", "P@5", "R@5", "RR", "Rprec", "Bpref", "Success@5", "NumRel", "NumRelRet"]
    args = [sys.executable, "-m", "judged", "eval", str(tmp_path / "q"), str(tmp_path / "r"), "--per-query",
            "--format", "json"] + [a for m in measures for a in ("-m", m)]
    env = {**os.environ, "JUDGED_PURE_PYTHON": "1" if backend == "pure" else os.environ.get("JUDGED_PURE_PYTHON", "")}
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)["runs"][str(tmp_path / "r")]
    assert out["per_query"]["1"] == {m: 0.0 for m in measures}
    assert out["per_query"]["2"]["nDCG@10"] == 1.0
    assert out["queries"]["no_relevant"] == 1


@pytest.mark.parametrize("few_ties", [True, False], ids=["few-ties", "many-ties"])
@pytest.mark.parametrize("seed", range(20))
def test_non_ascii_docids_tie_order(seed, few_ties, backend):
    """Ties among UTF-8 docids ("é" > "z" > "Z" > "10" > "1"): trec_eval compares bytes,
    judged compares code points, which is the same order. Both of judged's tie paths run:
    few ties (sorted one tied group at a time) and many (one Arrow sort)."""
    rng = np.random.default_rng(seed)
    alphabet = ["é", "e", "z", "Z", "ü", "日本", "10", "9", "1", "ñ", "É", "ÿ", "ā", "-"]
    docs = sorted({"".join(rng.choice(alphabet, size=int(rng.integers(1, 4)))) for _ in range(80)})
    scores = rng.permutation(len(docs)).astype(float) if few_ties else rng.integers(0, 4, len(docs)) / 4
    if few_ties:
        scores[1] = scores[0]  # one tied pair: under 5% of neighbours tie
    run = {"1": {d: float(s) for d, s in zip(docs, scores)}}
    qrels = {"1": {d: int(rng.integers(0, 3)) for d in rng.choice(docs, size=20, replace=False)}}
    qrels["1"][docs[0]] = 1
    c = Collection(qrels, run, seed)
    pairs = {"AP": "map", "nDCG": "ndcg", "RR": "recip_rank", "P@5": "P_5"}
    assert_matches(judged.evaluate(qrels, {"synth": run}, list(pairs)), oracle(c), pairs)
