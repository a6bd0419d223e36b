"""`judged judge agreement HUMAN MACHINE`: a machine judge's labels against the people's, on
the pairs both labelled. Kappa and alpha are checked by hand, against scikit-learn and the
`krippendorff` package, and from the confusion matrix the command prints."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judged.analyses.assessor_agreement import alpha_from_coincidences, cohen_kappa, kappa_from_confusion, krippendorff_alpha
from judged.analyses.holes.machine import agreement


def qrels_text(labels: dict) -> str:
    return "".join(f"{q} 0 {d} {g}\n" for (q, d), g in labels.items())


def test_overlap_confusion_and_binary_by_hand():
    # the people judged a..e of q1 and f of q2; the machine labelled a..d, f and g (not e, adds g).
    human = {("q1", "a"): 2, ("q1", "b"): 0, ("q1", "c"): 1, ("q1", "d"): 0, ("q1", "e"): 1, ("q2", "f"): 2}
    machine = {("q1", "a"): 2, ("q1", "b"): 1, ("q1", "c"): 1, ("q1", "d"): 0, ("q2", "f"): 1, ("q2", "g"): 2}
    a = agreement({q: {d: g for (qq, d), g in human.items() if qq == q} for q in ("q1", "q2")},
                  {q: {d: g for (qq, d), g in machine.items() if qq == q} for q in ("q1", "q2")}, resamples=0)
    assert (a.pairs, a.human_only, a.machine_only) == (5, 1, 1)
    assert a.grades == [0, 1, 2]
    # overlap pairs (human, machine): a (2,2), b (0,1), c (1,1), d (0,0), f (2,1)
    assert a.confusion.tolist() == [[1, 1, 0], [0, 1, 0], [0, 1, 1]]
    assert a.marginal(0) == {"0": 2, "1": 1, "2": 2} and a.marginal(1) == {"0": 1, "1": 3, "2": 1}
    # p_o = 3/5; p_e = (2*1 + 1*3 + 2*1)/25 = 7/25; kappa = (15/25 - 7/25) / (18/25) = 8/18
    assert a.kappa["unweighted"] == pytest.approx(8 / 18)
    # binary at grade >= 1: human relevant a, c, f; machine relevant a, b, c, f -> tp 3, fp 1, fn 0, tn 1
    b = a.binary
    assert (b["true_positive"], b["false_positive"], b["false_negative"], b["true_negative"]) == (3, 1, 0, 1)
    assert b["precision"] == pytest.approx(0.75) and b["recall"] == 1.0 and b["false_positive_rate"] == 0.5


def test_kappa_and_alpha_match_scikit_learn_and_krippendorff():
    sk = pytest.importorskip("sklearn.metrics")
    kd = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(3)
    for trial in range(20):
        n = int(rng.integers(20, 400))
        h = rng.integers(0, 4, n)
        m = np.clip(h + rng.integers(-1, 3, n), 0, 3)  # a machine that over-grades
        human = {f"q{i % 7}": {} for i in range(n)}
        machine = {f"q{i % 7}": {} for i in range(n)}
        for i in range(n):
            human[f"q{i % 7}"][f"d{i}"] = int(h[i])
            machine[f"q{i % 7}"][f"d{i}"] = int(m[i])
        a = agreement(human, machine, resamples=0)
        for w in (None, "linear", "quadratic"):
            assert a.kappa["unweighted" if w is None else w] == pytest.approx(
                sk.cohen_kappa_score(h, m, weights=w), abs=1e-12)
        for level in ("nominal", "ordinal", "interval"):
            assert a.alpha[level] == pytest.approx(
                kd.alpha(reliability_data=np.vstack([h, m]).astype(float), level_of_measurement=level), abs=1e-9)


def test_confusion_forms_equal_the_item_forms_and_batch():
    rng = np.random.default_rng(9)
    h, m = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    c = np.zeros((3, 3))
    np.add.at(c, (h, m), 1)
    for w in (None, "linear", "quadratic"):
        assert kappa_from_confusion(c, w) == pytest.approx(cohen_kappa(h, m, w, labels=[0, 1, 2]))
        stacked = kappa_from_confusion(np.stack([c, c.T, np.eye(3)]), w)
        assert stacked.shape == (3,) and stacked[2] == pytest.approx(1.0)
    for level in ("nominal", "ordinal", "interval"):
        assert alpha_from_coincidences(c + c.T, [0, 1, 2], level) == pytest.approx(
            krippendorff_alpha(np.vstack([h, m]).T, level))
    assert np.isnan(kappa_from_confusion(np.zeros((2, 2))))  # nothing to compare: undefined, not 0


def test_bootstrap_interval_holds_the_estimate_and_is_seeded():
    rng = np.random.default_rng(1)
    h = rng.integers(0, 2, 300)
    m = np.where(rng.random(300) < 0.85, h, 1 - h)
    human = {"q": {f"d{i}": int(g) for i, g in enumerate(h)}}
    machine = {"q": {f"d{i}": int(g) for i, g in enumerate(m)}}
    a1 = agreement(human, machine, seed=4, resamples=500)
    a2 = agreement(human, machine, seed=4, resamples=500)
    lo, hi = a1.kappa_interval["unweighted"]
    assert lo < a1.kappa["unweighted"] < hi and hi - lo < 0.25
    assert a1.kappa_interval == a2.kappa_interval
    assert agreement(human, machine, seed=5, resamples=500).kappa_interval != a1.kappa_interval


def test_cli_table_and_json(tmp_path, cli):
    human = tmp_path / "qrels.txt"
    machine = tmp_path / "llm.txt"
    human.write_text("q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq1 0 d 0\nq1 0 e 1\nq2 0 f 2\n")
    machine.write_text("q1 0 a 2\nq1 0 b 1\nq1 0 c 1\nq1 0 d 0\nq2 0 f 1\nq2 0 g 2\n")
    code, out, err = cli("judge", "agreement", human, machine, "--resamples", 200)
    assert code == 0, err
    assert "overlap: 5 pairs labelled by both; 1 only by the people, 1 only by the machine" in out
    assert "Cohen's kappa: unweighted 0.444" in out and "Krippendorff's alpha: nominal" in out
    assert "Cohen 1960" in out and "bootstrap" in out  # the method and its sources
    code, out, err = cli("judge", "agreement", human, machine, "--format", "json")
    d = json.loads(out)
    assert d["pairs"] == 5 and d["confusion"]["counts"] == [[1, 1, 0], [0, 1, 0], [0, 1, 1]]
    assert d["per_grade"] == {"human": {"0": 2, "1": 1, "2": 2}, "machine": {"0": 1, "1": 3, "2": 1}}
    assert d["cohen_kappa"]["unweighted"]["value"] == pytest.approx(8 / 18)
    assert set(d["cohen_kappa"]) == {"unweighted", "linear", "quadratic"}
    assert set(d["krippendorff_alpha"]) == {"nominal", "ordinal", "interval"}
    assert d["binary"]["precision"] == pytest.approx(0.75)


def test_cli_bad_file_is_one_line(tmp_path, cli):
    human = tmp_path / "qrels.txt"
    human.write_text("q1 0 a 2\n")
    bad = tmp_path / "llm.txt"
    bad.write_text("q1 0 a relevant\n")
    code, out, err = cli("judge", "agreement", human, bad)
    assert code == 2 and err.count("\n") == 1 and "llm.txt:1" in err


def test_no_overlap_says_so(tmp_path, cli):
    human, machine = tmp_path / "h.txt", tmp_path / "m.txt"
    human.write_text("q1 0 a 1\n")
    machine.write_text("q1 0 b 1\n")
    code, out, err = cli("judge", "agreement", human, machine)
    assert code == 0 and "no pair labelled by both" in out
    d = json.loads(cli("judge", "agreement", human, machine, "--format", "json")[1])
    assert d["pairs"] == 0 and d["cohen_kappa"]["unweighted"]["value"] is None
