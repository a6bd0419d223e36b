"""The diversity measures over subtopic qrels equal ndeval's, per query, on generated
collections (tests/synth.py's subtopic collections): pyndeval compiles ndeval.c, and
ir_measures' alpha_nDCG, ERR_IA, P_IA, NRBP, StRecall ... go through it. Hand-worked
examples say what the numbers mean."""

import json
import math

import numpy as np
import pytest

import judged
from judged.core.errors import MeasureError
from synth import make_subtopic_collection

# judged's string -> ndeval's (pyndeval's) name; alpha and beta given to pyndeval
CASES = {
    (0.5, 0.5, 1): [("alpha-nDCG@{k}", "alpha-nDCG@{k}"), ("alpha-DCG@{k}", "alpha-DCG@{k}"),
                    ("ERR-IA@{k}", "ERR-IA@{k}"), ("nERR-IA@{k}", "nERR-IA@{k}"), ("P-IA@{k}", "P-IA@{k}"),
                    ("StRecall@{k}", "strec@{k}"), ("NRBP", "NRBP"), ("nNRBP", "nNRBP"), ("AP-IA", "MAP-IA")],
    (0.3, 0.8, 1): [("alpha-nDCG(alpha=0.3)@{k}", "alpha-nDCG@{k}"), ("alpha-DCG(alpha=0.3)@{k}", "alpha-DCG@{k}"),
                    ("NRBP(alpha=0.3,beta=0.8)", "NRBP"), ("nNRBP(alpha=0.3,beta=0.8)", "nNRBP"),
                    # issue 34: ERR-IA and nERR-IA took no alpha, ndeval's -alpha changes them too
                    ("ERR-IA(alpha=0.3)@{k}", "ERR-IA@{k}"), ("nERR-IA(alpha=0.3)@{k}", "nERR-IA@{k}")],
    (0.5, 0.5, 2): [("alpha-nDCG(rel=2)@{k}", "alpha-nDCG@{k}"), ("ERR-IA(rel=2)@{k}", "ERR-IA@{k}"),
                    ("P-IA(rel=2)@{k}", "P-IA@{k}"), ("StRecall(rel=2)@{k}", "strec@{k}"), ("AP-IA(rel=2)", "MAP-IA")],
}
CUTOFFS = (2, 3, 5, 10, 20)


def _pairs(case):
    out = []
    for ours, theirs in CASES[case]:
        out += [(ours.format(k=k), theirs.format(k=k)) for k in CUTOFFS] if "{k}" in ours else [(ours, theirs)]
    return out


@pytest.mark.parametrize("seed", range(30))
def test_equal_to_ndeval(seed, tmp_path):
    """Every measure at every cutoff, bit for bit (ndeval's 0/0 for nNRBP without a
    relevant subtopic is 0 here)."""
    pyndeval = pytest.importorskip("pyndeval")
    c = make_subtopic_collection(seed)
    qrels_path, run_path = c.write(tmp_path)
    compared = 0
    for (alpha, beta, rel), pairs in ((case, _pairs(case)) for case in CASES):
        ours = judged.evaluate(str(qrels_path), str(run_path), [p[0] for p in pairs]).runs[str(run_path)]
        qids = ours.qids.tolist()
        ev = pyndeval.RelevanceEvaluator(c.qrels, [p[1] for p in pairs], relevance_level=rel, alpha=alpha, beta=beta)
        theirs = ev.evaluate([(q, d, s) for q, docs in c.run.items() for d, s in docs.items()])
        assert sorted(theirs) == sorted(qids)
        for q, values in theirs.items():
            for mine, name in pairs:
                value, expected = ours.values[mine][qids.index(q)], values[name]
                if math.isnan(expected):
                    assert name == "nNRBP" and value == 0.0
                else:
                    assert value == expected, (mine, q, value, expected)
                compared += 1
    assert compared > 0


def test_ir_measures_providers_agree(tmp_path):
    """ir_measures' names (alpha_nDCG, ERR_IA, P_IA, NRBP, StRecall, ...) through its pyndeval
    provider: the same values, and judged parses those spellings."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    names = ["alpha_nDCG@10", "alpha_nDCG(alpha=0.3)@5", "ERR_IA@20", "nERR_IA@10", "P_IA@10", "StRecall@10",
             "NRBP", "NRBP(beta=0.8)", "nNRBP", "AP_IA", "alpha_DCG@20"]
    worst, compared = 0.0, 0
    for seed in range(10):
        c = make_subtopic_collection(seed)
        qrels_path, run_path = c.write(tmp_path)
        ours = judged.evaluate(str(qrels_path), str(run_path), names).runs[str(run_path)]
        qids = ours.qids.tolist()
        qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
        for name in names:
            m = ir_measures.parse_measure(name)
            for x in ir_measures.providers.registry["pyndeval"].evaluator([m], qrels).iter_calc(c.run):
                if x.query_id not in qids:
                    continue
                mine = ours.values[name][qids.index(x.query_id)]
                if math.isnan(x.value):
                    assert mine == 0.0
                    continue
                worst = max(worst, abs(mine - x.value))
                compared += 1
    assert compared > 100 and worst == 0.0


def test_alpha_ndcg_by_hand(tmp_path):
    """Run a, b, c; a covers s1, b covers s1 and s2, c covers s2 (alpha = 0.5).
    G = 1 (a: s1 new), 1 + 0.5 (b: s2 new, s1 seen once), 0.5 (c: s2 seen once):
    alpha-DCG@3 = 1 + 1.5 / log2(3) + 0.5 / log2(4). The greedy ideal takes b (G = 2),
    then a or c (0.5 each: the tie goes to the larger docid, c), then a (0.5):
    2 + 0.5 / log2(3) + 0.5 / 2."""
    q = tmp_path / "q.txt"
    q.write_text("q 1 a 1\nq 1 b 1\nq 2 b 1\nq 2 c 1\n")
    r = tmp_path / "r.txt"
    r.write_text("q Q0 a 1 3 x\nq Q0 b 2 2 x\nq Q0 c 3 1 x\n")
    res = judged.evaluate(str(q), str(r), ["alpha-nDCG@3", "P-IA@3", "StRecall@1", "StRecall@2", "ERR-IA@3", "NRBP",
                                           "alpha-DCG@3", "nERR-IA@3", "nNRBP", "AP-IA"])
    v = {m: float(res.runs[str(r)].values[m][0]) for m in res.measures}
    dcg = 1 + 1.5 / math.log2(3) + 0.5 / 2
    ideal = 2 + 0.5 / math.log2(3) + 0.5 / 2
    assert v["alpha-nDCG@3"] == pytest.approx(dcg / ideal) and round(dcg / ideal, 4) == 0.8561
    assert v["P-IA@3"] == pytest.approx(4 / (3 * 2))  # 4 relevant (document, subtopic) pairs, k = 3, S = 2
    assert v["StRecall@1"] == 0.5  # a covers one of the two subtopics
    # ERR-IA: (1 + 1.5/2 + 0.5/3) over a ranking covering both subtopics at every rank (2 + 1/2 + 0.5/3)
    assert v["ERR-IA@3"] == pytest.approx((1 + 1.5 / 2 + 0.5 / 3) / (2 + 1 / 2 + 0.5 / 3))
    # NRBP: (1 - 0.5 * 0.5) / 2 * (1 + 0.5 * 1.5 + 0.25 * 0.5)
    assert v["NRBP"] == pytest.approx(0.75 / 2 * (1 + 0.75 + 0.125))
    # docs/measures.md's other numbers: alpha-DCG over the every-document-covers-both ranking,
    # nERR-IA and nNRBP over the greedy ideal b, c, a, AP-IA the mean of s1's AP 1 and s2's 0.5833
    assert v["alpha-DCG@3"] == pytest.approx(dcg / (2 + 1 / math.log2(3) + 0.5 / 2))
    assert round(v["alpha-DCG@3"], 4) == 0.7624
    assert v["nERR-IA@3"] == pytest.approx((1 + 1.5 / 2 + 0.5 / 3) / (2 + 0.5 / 2 + 0.5 / 3))
    assert v["nNRBP"] == pytest.approx(1.875 / 2.375)
    assert v["AP-IA"] == pytest.approx((1 + (1 / 2 + 2 / 3) / 2) / 2)
    assert v["StRecall@2"] == 1.0


def test_flat_qrels_and_conventions(tmp_path):
    """The other measures of the evaluation read each document's largest grade over its
    subtopics; the convention names the subtopic column."""
    q = tmp_path / "q.txt"
    q.write_text("q 1 a 0\nq 2 a 2\nq 1 b 0\n")
    r = tmp_path / "r.txt"
    r.write_text("q Q0 b 1 3 x\nq Q0 a 2 2 x\n")
    res = judged.evaluate(str(q), str(r), ["alpha-nDCG@2", "nDCG@2"])
    assert float(res.runs[str(r)].values["nDCG@2"][0]) == pytest.approx(2 / math.log2(3) / 2)
    assert "qrels=subtopics(second-column)" in res.conventions["alpha-nDCG@2"]
    assert str(judged.Measure.parse("alpha_nDCG(alpha=0.3)@20")) == "alpha-nDCG(alpha=0.3)@20"
    assert str(judged.Measure.parse("NRBP(beta=0.8)")) == "NRBP(beta=0.8)"
    assert judged.Measure.parse("S-recall@5").name == "StRecall"


def test_without_subtopic_qrels_a_clear_error():
    with pytest.raises(MeasureError, match="needs subtopic qrels"):
        judged.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["alpha-nDCG@5"])


def test_cli_eval_and_measures(tmp_path, capsys):
    """judged eval reads the second column as the subtopic when a diversity measure is asked
    for; judged measures explains it; bad subtopic qrels: one line naming file and line."""
    from judged.cli import main

    q = tmp_path / "q.txt"
    q.write_text("q 1 a 1\nq 1 b 1\nq 2 b 1\nq 2 c 1\n")
    r = tmp_path / "r.txt"
    r.write_text("q Q0 a 1 3 x\nq Q0 b 2 2 x\nq Q0 c 3 1 x\n")
    assert main(["eval", str(q), str(r), "-m", "alpha-nDCG@20", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert round(out["runs"][str(r)]["mean"]["alpha-nDCG@20"], 4) == 0.8561
    assert "qrels=subtopics(second-column)" in out["measures"]["alpha-nDCG@20"]
    assert main(["measures", "alpha-nDCG"]) == 0
    assert "greedy" in capsys.readouterr().out
    q.write_text("q 1 a 1\nq 1 a 2\n")
    assert main(["eval", str(q), str(r), "-m", "P-IA@10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("judged: error: ") and "q.txt:2: query 'q' subtopic '1'" in err[0]


def test_bounds_by_brute_force_on_generated_collections():
    """P-IA, StRecall, ERR-IA, alpha-DCG and NRBP rise with every (document, subtopic) label.
    On generated collections, per query with at most 2 holes in the measure's list and at
    most 3 subtopics: unjudged=min|max equal the least and greatest value over every way
    the holes could cover the query's subtopics (each hole any subset; S fixed)."""
    from itertools import chain, combinations, product

    import pandas as pd

    from judged.core.io.subtopics import read_subtopic_qrels

    measures = [("P-IA", 5), ("StRecall", 5), ("ERR-IA", 5), ("alpha-DCG", 5), ("alpha-DCG(alpha=0.3)", 4),
                ("NRBP", None), ("NRBP(alpha=0.3,beta=0.8)", None)]
    checked = 0
    collections = [make_subtopic_collection(seed, max_docs=12, max_ranked=8, max_subtopics=3) for seed in range(8)]
    for q, docs, rows in ((q, docs, [r for r in c.qrels if r[3] >= 0]) for c in collections for q, docs in c.run.items()):
        mine = [r for r in rows if r[0] == q]
        relevant = sorted({s for _, s, _, g in mine if g >= 1})
        judged_docs = {d for _, _, d, _ in mine}
        if not relevant:
            continue
        ranked = sorted(docs, key=lambda d: -docs[d])
        for name, k in measures:
            holes = [d for d in ranked[:k] if d not in judged_docs]
            if len(holes) > 2:
                continue
            frame = lambda extra: read_subtopic_qrels(pd.DataFrame(mine + extra, columns=["qid", "subtopic", "docid",
                                                                                        "grade"]))
            text = lambda u: (name.replace(")", f",unjudged={u})") if "(" in name else f"{name}(unjudged={u})") + \
                (f"@{k}" if k else "")
            base = name + (f"@{k}" if k else "")
            got = judged.evaluate(frame([]), {q: docs}, [text("min"), text("max")]).runs["run"].values
            subsets = list(chain.from_iterable(combinations(relevant, n) for n in range(len(relevant) + 1)))
            values = []
            for labels in product(subsets, repeat=len(holes)):
                extra = [(q, s, d, 1) for d, subs in zip(holes, labels) for s in subs]
                extra += [(q, "never-relevant", d, 0) for d in holes]  # judged, S unchanged
                values.append(float(judged.evaluate(frame(extra), {q: docs}, [base]).runs["run"].values[base][0]))
            assert float(got[text("min")][0]) == pytest.approx(min(values), abs=1e-12), (base, q)
            assert float(got[text("max")][0]) == pytest.approx(max(values), abs=1e-12), (base, q)
            checked += 1
    assert checked >= 40, checked


def test_an_ineligible_document_leaves_the_ideal_and_S(tmp_path):
    """--eligibility grades an ineligible pair 0: no diversity measure rewards it, and the
    ideal ranking and S leave it out, as nDCG's ideal does."""
    q = tmp_path / "q.txt"
    q.write_text("q 1 a 1\nq 1 b 1\nq 2 b 1\nq 2 c 1\nq 3 d 1\n")
    r = tmp_path / "r.txt"
    r.write_text("q Q0 a 1 3 x\nq Q0 b 2 2 x\nq Q0 c 3 1 x\n")
    e = tmp_path / "e.txt"
    e.write_text("q d false\n")  # d, the only document of subtopic 3, is ineligible
    plain = judged.evaluate(str(q), str(r), ["alpha-nDCG@3", "P-IA@3"]).runs[str(r)].values
    restricted = judged.evaluate(str(q), str(r), ["alpha-nDCG@3", "P-IA@3"], eligibility=str(e)).runs[str(r)].values
    assert float(plain["P-IA@3"][0]) == pytest.approx(4 / 9)  # S = 3
    assert float(restricted["P-IA@3"][0]) == pytest.approx(4 / 6)  # S = 2: the worked example
    assert round(float(restricted["alpha-nDCG@3"][0]), 4) == 0.8561


def _coverage_brute_force(name, k, q, docs, mine, extras):
    """(bounds, every value) of ``name@k`` for one query: the bounds of
    :func:`judged.analyses.holes.unjudged.bounds` (with ``extras`` further holes outside the ranking),
    and the value under every way the holes and the extras could cover the query's relevant
    subtopics (each any subset, S fixed)."""
    from itertools import chain, combinations, product

    import pandas as pd

    from judged.analyses.holes.unjudged import bounds
    from judged.core.align import align
    from judged.core.io import read_run
    from judged.core.io.subtopics import read_subtopic_qrels

    relevant = sorted({s for _, s, _, g in mine if g >= 1})
    judged_docs = {d for _, _, d, _ in mine}
    ranked = sorted(docs, key=lambda d: -docs[d])
    holes = [d for d in (ranked[:k] if k else ranked) if d not in judged_docs]
    if not 0 < len(holes) + extras <= 2:  # every coverage of at most two holes (8 subsets each)
        return None, None, None
    frame = lambda extra: read_subtopic_qrels(pd.DataFrame(mine + extra, columns=["qid", "subtopic", "docid", "grade"]))
    measure = name + (f"@{k}" if k else "")
    lo, hi = bounds(measure, align(frame([]), read_run({q: docs})), np.array([extras]))
    subsets = list(chain.from_iterable(combinations(relevant, n) for n in range(len(relevant) + 1)))
    labelled = holes + [f"extra-{i}" for i in range(extras)]
    values = []
    for labels in product(subsets, repeat=len(labelled)):
        extra = [(q, s, d, 1) for d, subs in zip(labelled, labels) for s in subs]
        extra += [(q, "never-relevant", d, 0) for d in labelled]  # judged, S unchanged
        values.append(float(judged.evaluate(frame(extra), {q: docs}, [measure]).runs["run"].values[measure][0]))
    return (float(lo[0]), float(hi[0])), values, len(holes)


def _generated_queries(seeds, max_subtopics=3):
    for c in (make_subtopic_collection(seed, max_docs=12, max_ranked=8, max_subtopics=max_subtopics) for seed in seeds):
        for q, docs in c.run.items():
            mine = [r for r in c.qrels if r[3] >= 0 and r[0] == q]
            if any(g >= 1 for *_, g in mine):
                yield q, docs, mine


def test_ap_ia_bounds_are_exact_by_brute_force():
    """AP-IA is not monotone (a relevant hole raises R too), but each subtopic's AP reads its
    own labels only: the mean of each AP's extremes is attained, and equals the least and
    greatest value over every coverage of the holes and of another run's holes (extras)."""
    checked = 0
    for q, docs, mine in _generated_queries(range(8)):
        for extras in (0, 1):
            bound, values, _ = _coverage_brute_force("AP-IA", None, q, docs, mine, extras)
            if bound is None:
                continue
            lo, hi = bound
            assert lo == pytest.approx(min(values), abs=1e-12) and hi == pytest.approx(max(values), abs=1e-12), q
            checked += 1
    assert checked >= 15, checked


@pytest.mark.parametrize("name,k", [("alpha-nDCG", 5), ("alpha-nDCG(alpha=0.3)", 4), ("alpha-nDCG(alpha=1)", 3),
                                    ("nERR-IA", 5), ("nNRBP", None), ("nNRBP(alpha=0.3,beta=0.8)", None)])
def test_greedy_normalised_bounds_hold_every_coverage(name, k):
    """alpha-nDCG, nERR-IA and nNRBP divide by ndeval's greedy ideal, which moves with the
    holes' labels (and not monotonely): their bounds are conservative. Every coverage of the
    holes and of another run's holes gives a value inside; the bounds are tighter than the
    trivial ones (0, and the cap 1 / (1 - (1 - 1/k)^k)) on some queries."""
    checked = tighter = 0
    for q, docs, mine in _generated_queries(range(10)):
        for extras in (0, 1):
            bound, values, _ = _coverage_brute_force(name, k, q, docs, mine, extras)
            if bound is None:
                continue
            lo, hi = bound
            assert lo <= min(values) + 1e-12 and max(values) <= hi + 1e-12, (name, q, lo, hi, min(values), max(values))
            checked += 1
            tighter += lo > 0 and hi < 1.0
    assert checked >= 15 and tighter >= 3, (checked, tighter)


def test_the_greedy_ideal_can_be_beaten():
    """Why alpha-nDCG's upper bound is neither min(1, ...) nor read off the ideal with the
    holes uncovered: at alpha = 1 (coverage only), k = 2, the run b, c covers 3 + 3 subtopics
    and is the ideal (value 1). Let another run's hole x cover 1, 2, 4, 5: the greedy ideal
    takes x first, then 1 more subtopic, 4 + 1/log2(3), below the run's 3 + 3/log2(3), so
    the run scores above 1. The bound with that hole (extras) holds it."""
    import pandas as pd

    from judged.analyses.holes.unjudged import bounds
    from judged.core.align import align
    from judged.core.io import read_run
    from judged.core.io.subtopics import read_subtopic_qrels

    rows = [("q", s, "b", 1) for s in "123"] + [("q", s, "c", 1) for s in "456"]
    frame = lambda extra: read_subtopic_qrels(pd.DataFrame(rows + extra, columns=["qid", "subtopic", "docid", "grade"]))
    run = {"q": {"b": 2.0, "c": 1.0}}
    m = "alpha-nDCG(alpha=1)@2"
    assert float(judged.evaluate(frame([]), run, [m]).runs["run"].values[m][0]) == 1.0
    labelled = judged.evaluate(frame([("q", s, "x", 1) for s in "1245"]), run, [m])
    value = float(labelled.runs["run"].values[m][0])
    lg3 = math.log2(3)
    assert value == pytest.approx((3 + 3 / lg3) / (4 + 1 / lg3), abs=1e-12) and value > 1
    lo, hi = bounds(m, align(frame([]), read_run(run)), np.array([1]))
    assert lo[0] <= 1.0 and hi[0] >= value
