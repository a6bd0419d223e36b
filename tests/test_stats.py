"""Paired statistics, checked against scipy, exact enumeration and hand computation."""

import itertools

import numpy as np
import pytest
from scipy import stats as sp

from judged import stats


@pytest.fixture(scope="module")
def pair():
    rng = np.random.default_rng(11)
    base = rng.uniform(0, 1, 60)
    run = np.clip(base + rng.normal(0.04, 0.15, 60), 0, 1)
    run[:5] = base[:5]  # five exact ties
    return base, run


def test_paired_t_matches_scipy(pair):
    base, run = pair
    assert stats.paired_t(stats.differences(base, run)) == pytest.approx(sp.ttest_rel(run, base).pvalue, rel=1e-12)


def test_wilcoxon_matches_scipy_with_zeros_dropped(pair):
    base, run = pair
    expected = sp.wilcoxon(run, base, zero_method="wilcox").pvalue
    assert stats.wilcoxon(stats.differences(base, run)) == pytest.approx(expected, rel=1e-12)


def test_sign_test_hand_computed():
    # 8 wins, 2 losses, 3 ties: ties dropped, P(X<=2 or X>=8 | n=10, 1/2) = 2*(1+10+45)/1024
    d = np.array([0.1] * 8 + [-0.2] * 2 + [0.0] * 3)
    assert stats.sign_test(d) == pytest.approx(112 / 1024, abs=1e-15)
    assert stats.sign_test(d) == pytest.approx(sp.binomtest(8, 10, 0.5).pvalue, abs=1e-15)


def test_tie_is_a_difference_within_1e_12():
    base = np.array([0.5, 0.5, 0.5, 0.5])
    run = base + np.array([1e-13, -5e-13, 2e-12, -0.1])
    d = stats.differences(base, run)
    assert stats.wins_losses_ties(d) == (1, 1, 2)
    assert d[0] == 0.0 and d[1] == 0.0


def exact_p(d):
    """Independent exact randomization p: every one of the 2^n sign assignments."""
    observed = abs(np.mean(d))
    hits = sum(abs(np.mean(np.array(s) * d)) >= observed - 1e-12
               for s in itertools.product((1, -1), repeat=len(d)))
    return hits / 2 ** len(d)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_randomization_agrees_with_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    d = rng.normal(0.1, 0.3, 12)
    exact = exact_p(d)
    assert stats.randomization_exact(d) == pytest.approx(exact, abs=1e-15)
    m = 20_000
    p = stats.randomization_test(d, m, seed)
    # Monte Carlo error: 4 standard errors of a proportion over m draws, plus the +1/(m+1)
    assert abs(p - exact) <= 4 * np.sqrt(exact * (1 - exact) / m) + 1 / (m + 1)


def test_randomization_p_is_b_plus_one_over_m_plus_one():
    d = np.full(30, 0.2)  # every flip is less extreme but the identity: p is tiny, never 0
    p = stats.randomization_test(d, 10_000, 0)
    assert p * 10_001 == pytest.approx(round(p * 10_001))
    assert 1 / 10_001 <= p < 0.001
    assert stats.randomization_test(np.zeros(10), 1000, 0) == 1.0


def test_randomization_is_seeded(pair):
    d = stats.differences(*pair)
    assert stats.randomization_test(d, 5000, 7) == stats.randomization_test(d, 5000, 7)
    assert stats.randomization_test(d, 5000, 7) != stats.randomization_test(d, 5000, 8)


def test_bootstrap_close_to_t_test_on_normal_data():
    rng = np.random.default_rng(5)
    d = rng.normal(0.05, 0.2, 80)
    p_boot = stats.bootstrap_test(d, 20_000, 1)
    p_t = sp.ttest_1samp(d, 0).pvalue
    assert abs(p_boot - p_t) < 0.02, (p_boot, p_t)


def test_blocks_of_draws_give_the_same_p_values(monkeypatch):
    # memory is bounded by drawing in blocks; the p-values do not depend on the block size
    d = np.random.default_rng(9).normal(0.02, 0.2, (3, 40))
    whole = stats.randomization_pvalues(d, 3000, 4), stats.bootstrap_pvalues(d, 3000, 4)
    monkeypatch.setattr(stats, "_CHUNK", 40 * 7)  # 7 draws per block
    assert np.array_equal(stats.randomization_pvalues(d, 3000, 4), whole[0])
    assert np.array_equal(stats.bootstrap_pvalues(d, 3000, 4), whole[1])


def test_bootstrap_counting_and_indexing_agree():
    # many pairs share query counts per resample; one pair indexes its values: the same p
    d = np.random.default_rng(10).normal(0.01, 0.2, (6, 50))
    many = stats.bootstrap_pvalues(d, 2000, 3)
    assert [stats.bootstrap_test(row, 2000, 3) for row in d] == many.tolist()


def test_ci95_matches_scipy(pair):
    d = stats.differences(*pair)
    ci = sp.ttest_1samp(d, 0).confidence_interval(0.95)
    assert stats.ci95(d) == pytest.approx((ci.low, ci.high), rel=1e-12)


def test_effect_size_is_cohens_dz():
    d = np.array([0.1, 0.2, 0.3, 0.4])
    # mean 0.25, sd (n-1) = sqrt(((.15)^2+(.05)^2)*2/3) = 0.129099...
    assert stats.effect_size(d) == pytest.approx(0.25 / np.sqrt(0.05 / 3), rel=1e-12)
    assert stats.effect_size(np.zeros(4)) == 0.0


P = np.array([0.01, 0.04, 0.03, 0.005, 0.20])


def test_holm_hand_computed():
    # sorted 0.005,0.01,0.03,0.04,0.20 times 5,4,3,2,1 = .025,.04,.09,.08,.20; running max .025,.04,.09,.09,.20
    assert stats.adjust(P, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.025, 0.20])


def test_bonferroni_hand_computed():
    assert stats.adjust(P, "bonferroni") == pytest.approx([0.05, 0.20, 0.15, 0.025, 1.0])


def test_bh_hand_computed():
    # sorted p_(i) * 5/i: .025, .025, .05, .05, .20; running min from the top: .025,.025,.05,.05,.20
    assert stats.adjust(P, "bh") == pytest.approx([0.025, 0.05, 0.05, 0.025, 0.20])


@pytest.mark.parametrize("method,sm", [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")])
def test_corrections_match_statsmodels(method, sm):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.random.default_rng(3).uniform(0, 0.2, 9)
    assert stats.adjust(p, method) == pytest.approx(multitest.multipletests(p, method=sm)[1], rel=1e-12)


def test_paired_test_gathers_everything(pair):
    base, run = pair
    t = stats.paired_test(base, run, 2000, 0)
    assert set(t.p_values) == set(stats.TESTS)
    assert t.wins + t.losses + t.ties == t.n == 60 and t.ties == 5
    assert t.mean_delta == pytest.approx(float(np.mean(run - base)))
    assert t.ci95[0] < t.mean_delta < t.ci95[1]
    assert stats.paired_test(base, run, 2000, 0) == t
