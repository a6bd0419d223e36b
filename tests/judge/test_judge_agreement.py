"""Cohen's kappa and Krippendorff's alpha against hand-computed values and, where
installed, against scikit-learn and the `krippendorff` package."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judged.analyses.assessor_agreement import cohen_kappa, krippendorff_alpha

nan = float("nan")
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the worked example:
# 4 coders (rows) x 12 units, blanks missing. Published: nominal 0.743, ordinal 0.815, interval 0.849.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


def test_cohen_kappa_by_hand():
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_weighted_kappa_by_hand():
    # a = 0,1,2 ; b = 0,2,2. Linear weights |i-j| over labels [0,1,2]:
    # observed disagreement = (0 + 1 + 0)/3 = 1/3; marginals a (1/3,1/3,1/3), b (1/3,0,2/3)
    # expected = sum_ij a_i b_j |i-j| = 1/3*(0*1/3 + 2*2/3) + 1/3*(1*1/3 + 1*2/3) + 1/3*(2*1/3 + 0) = 1
    # kappa = 1 - (1/3)/1 = 2/3
    assert cohen_kappa([0, 1, 2], [0, 2, 2], weights="linear") == pytest.approx(2 / 3)


def test_kappa_perfect_and_undefined():
    assert cohen_kappa([0, 1, 2, 3], [0, 1, 2, 3]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))  # no chance disagreement: undefined
    assert math.isnan(cohen_kappa([], []))


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_2011_worked_example(level, published):
    assert krippendorff_alpha(np.array(KRIPPENDORFF_2011).T, level) == pytest.approx(published, abs=5e-4)


def test_alpha_two_coders_nominal_by_hand():
    # units (0,0), (1,1), (0,1): coincidences o00 = 2, o11 = 2, o01 = o10 = 1; n = 6, n0 = n1 = 3
    # D_o = 2/6; D_e = 2*3*3/(6*5) = 0.6; alpha = 1 - (1/3)/0.6 = 4/9
    assert krippendorff_alpha([[0, 0], [1, 1], [0, 1]], "nominal") == pytest.approx(4 / 9)
    assert math.isnan(krippendorff_alpha([[1, 1], [1, None]], "nominal"))


def test_against_sklearn_and_krippendorff_packages():
    sk = pytest.importorskip("sklearn.metrics")
    kd = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(5, 60))
        a = rng.integers(0, 4, n)
        b = np.clip(a + rng.integers(-1, 2, n), 0, 3)
        for w in (None, "linear", "quadratic"):
            assert cohen_kappa(a, b, w) == pytest.approx(sk.cohen_kappa_score(a, b, weights=w), nan_ok=True)
        data = rng.integers(0, 4, (n, 3)).astype(float)
        data[rng.random((n, 3)) < 0.3] = np.nan
        for level in ("nominal", "ordinal", "interval"):
            ours = krippendorff_alpha(data, level)
            theirs = kd.alpha(reliability_data=data.T, level_of_measurement=level)
            assert ours == pytest.approx(theirs, abs=1e-9, nan_ok=True)
