"""Paired statistics, checked against scipy, exact enumeration and hand computation."""

import itertools

import numpy as np
import pytest
from scipy import stats as sp

from judged.analyses import stats
from judged.core.errors import ConventionError


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


@pytest.mark.parametrize("per_block", [7, 3, 13])
def test_blocks_of_draws_give_the_same_p_values(monkeypatch, per_block):
    # memory is bounded by drawing in blocks (a multiple of four draws: 4, 12; fewer than
    # four: the coins drawn at once); the p-values do not depend on the block size
    d = np.random.default_rng(9).normal(0.02, 0.2, (3, 40))
    whole = stats.randomization_pvalues(d, 3000, 4), stats.bootstrap_pvalues(d, 3000, 4)
    monkeypatch.setattr(stats, "_CHUNK", 40 * per_block)
    assert np.array_equal(stats.randomization_pvalues(d, 3000, 4), whole[0])
    assert np.array_equal(stats.bootstrap_pvalues(d, 3000, 4), whole[1])


@pytest.mark.parametrize("n, blocks", [(7, [(0, 4), (4, 12), (12, 15)]), (40, [(0, 3000)]), (3, [(0, 1), (1, 2)]),
                                       (1001, [(0, 8), (8, 16), (16, 21)])])
def test_sign_flips_from_raw_words_are_numpys_coins(monkeypatch, n, blocks):
    """The sign flips taken from the generator's raw words are rng.integers' coins x 2 - 1,
    block after block, and the p-values are those of numpy's own draws (the raw words are
    used only where they were checked to agree: judged.stats._raw_draws_agree)."""
    seed = np.random.SeedSequence([4, 2]).spawn(2)[0]
    rng = np.random.default_rng(seed)
    whole = rng.integers(0, 2, size=(blocks[-1][1], n), dtype=np.int8) * 2.0 - 1
    if all((d1 - d0) % 4 == 0 for d0, d1 in blocks[:-1]):  # numpy's blocks continue its stream
        rng = np.random.default_rng(seed)
        assert np.array_equal(np.concatenate([rng.integers(0, 2, size=(d1 - d0, n), dtype=np.int8) * 2.0 - 1
                                              for d0, d1 in blocks]), whole)
    assert stats._raw_draws_agree()
    raw = list(stats._sign_blocks(np.random.default_rng(seed), n, blocks))
    assert np.array_equal(np.concatenate(raw), whole) and all(s.dtype == np.float64 for s in raw)
    d = np.random.default_rng(n).normal(0.01, 0.2, (2, n))
    fast = stats.randomization_pvalues(d, 3001, seed)
    monkeypatch.setattr(stats, "_RAW_AGREE", [False])
    assert np.array_equal(np.concatenate(list(stats._sign_blocks(np.random.default_rng(seed), n, blocks))), whole)
    assert stats.randomization_pvalues(d, 3001, seed).tolist() == fast.tolist()


@pytest.mark.parametrize("n, blocks", [(7, [(0, 4), (4, 12), (12, 15)]), (40, [(0, 3000)]), (2, [(0, 1), (1, 3)]),
                                       (1001, [(0, 8), (8, 16), (16, 21)])])
def test_resampled_indices_from_raw_words_are_numpys(monkeypatch, n, blocks):
    """The bootstrap's indices made from the generator's raw words (judged.core.kernels.draws)
    are rng.integers' block after block, and the p-values those of numpy's own draws; and
    so for a range that skips half of the 32-bit draws (n = 2^31 + 1), take after take."""
    seed = np.random.SeedSequence([4, 2]).spawn(2)[1]
    rng = np.random.default_rng(seed)
    want = [rng.integers(0, n, size=(d1 - d0, n)) for d0, d1 in blocks]
    assert stats._raw_draws_agree()
    got = list(stats._index_blocks(np.random.default_rng(seed), n, blocks))
    assert all(np.array_equal(g, w) and g.dtype == np.int64 for g, w in zip(got, want))
    big = (1 << 31) + 1
    take, rng = stats._index_stream(np.random.default_rng(7), big), np.random.default_rng(7)
    assert all(np.array_equal(take(size), rng.integers(0, big, size=size)) for size in (1, 30, 2, 500))
    d = np.random.default_rng(n).normal(0.01, 0.2, (2, n))
    fast = stats.bootstrap_pvalues(d, 3001, seed)
    monkeypatch.setattr(stats, "_RAW_AGREE", [False])
    assert stats.bootstrap_pvalues(d, 3001, seed).tolist() == fast.tolist()


def test_bootstrap_counting_and_indexing_agree():
    # many pairs share query counts per resample; one pair indexes its values: the same p
    d = np.random.default_rng(10).normal(0.01, 0.2, (6, 50))
    many = stats.bootstrap_pvalues(d, 2000, 3)
    assert [stats.bootstrap_test(row, 2000, 3) for row in d] == many.tolist()


def test_bootstrap_of_one_pair_indexes_as_a_pair_among_others():
    # one pair gathers its resampled values as a matrix; two or more as a third axis: the same p
    d = np.random.default_rng(12).normal(0.01, 0.2, (2, 1000))
    assert stats.bootstrap_pvalues(d, 3000, 5).tolist() == [stats.bootstrap_test(row, 3000, 5) for row in d]


def test_paired_tests_in_threads_give_the_one_by_one_numbers():
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(13)
    pairs = [(rng.random(60), rng.random(60)) for _ in range(4)] + [(np.ones(5), np.ones(5))]
    one = [stats.paired_test(b, r, 2000, 7) for b, r in pairs]
    with ThreadPoolExecutor(2) as pool:
        threaded = stats.paired_tests(pairs, 2000, 7, pool=pool)
    assert threaded == one
    assert one[-1].p_values["randomization"] == 1.0


def test_ci95_matches_scipy(pair):
    d = stats.differences(*pair)
    ci = sp.ttest_1samp(d, 0).confidence_interval(0.95)
    assert stats.ci95(d) == pytest.approx((ci.low, ci.high), rel=1e-12)


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.975])
def test_one_sided_lower_bound_matches_scipy(pair, confidence):
    # the gate's non-inferiority bound: scipy's one-sided ('greater') t interval, its lower end
    d = stats.differences(*pair)
    low = sp.ttest_1samp(d, 0, alternative="greater").confidence_interval(confidence).low
    assert stats.lower_bound(d, confidence) == pytest.approx(low, rel=1e-12)
    if confidence == 0.975:  # ci95's lower end is the one-sided 97.5% bound, the same bits
        assert stats.lower_bound(d, confidence) == stats.ci95(d)[0]
    assert stats.lower_bound(np.full(4, 0.25), confidence) == 0.25  # constant differences: the mean
    with pytest.raises(ConventionError, match="confidence must be in"):
        stats.lower_bound(d, 1.0)


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


# ---------------------------------------------------------------------------
# Degenerate data: one tolerance rule for ties, constancy and zero variance (issue #14)


def _no_warnings(fn, *args):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


def rounding_constant():
    """+0.1 on every query, computed as scores are: the differences are 0.1 only up to
    float rounding (spread ~1e-17), which scipy reads as d_z = 3e15 and p = 1e-32."""
    base = np.linspace(0.05, 0.85, 30)
    run = base + 0.1
    d = run - base
    assert d.max() != d.min()  # the rounding is really there
    return base, run


def test_constant_difference_is_not_a_significant_bootstrap_or_t_test():
    base = np.linspace(0.05, 0.85, 30)
    t = _no_warnings(stats.paired_test, base, base + 0.1, 2000, 0)
    # zero variance: the t statistic and the bootstrap's null distribution do not exist
    assert np.isnan(t.p_values["t-test"]) and np.isnan(t.p_values["bootstrap"])
    assert "constant" in t.methods["t-test"] and "constant" in t.methods["bootstrap"]
    assert t.effect_size == np.inf and t.ci95 == (pytest.approx(0.1), pytest.approx(0.1))
    # the rank and sign tests are defined: 30 wins of 30
    assert t.p_values["sign"] == pytest.approx(2 / 2 ** 30)
    assert t.p_values["randomization"] < 0.001


def test_rounding_constant_difference_is_constant():
    base, run = rounding_constant()
    d = stats.differences(base, run)
    assert stats.is_constant(d)
    assert np.isnan(_no_warnings(stats.paired_t, d))
    assert _no_warnings(stats.effect_size, d) == np.inf  # not 3e15
    assert np.isnan(stats.bootstrap_test(d, 1000, 0))  # not 1/1001
    assert stats.ci95(d)[0] == stats.ci95(d)[1]


@pytest.mark.parametrize("n,expected", [(1, 1.0), (2, 0.5)])
def test_one_or_two_queries_are_never_significant(n, expected):
    base = np.full(n, 0.4)
    t = _no_warnings(stats.paired_test, base, base + 0.1, 10_000, 0)
    assert t.p_values["randomization"] == expected  # exact: 2 of 2^n assignments as extreme
    assert t.methods["randomization"].startswith("exact")
    assert np.isnan(t.p_values["bootstrap"]) and np.isnan(t.p_values["t-test"])
    assert t.p_values["wilcoxon"] == expected and t.p_values["sign"] == expected
    if n == 1:
        assert np.isnan(t.effect_size)


def test_bootstrap_pvalues_of_constant_rows_are_undefined_in_meta_power():
    d = np.vstack([np.full(20, 0.1), np.zeros(20), np.random.default_rng(1).normal(0.1, 0.2, 20)])
    d[0] += np.random.default_rng(2).uniform(-1, 1, 20) * 1e-17  # rounding only
    p = stats.bootstrap_pvalues(d, 500, 0)
    assert np.isnan(p[0]) and p[1] == 1.0 and 0 < p[2] < 1


def test_tolerance_scales_with_the_scores():
    # DCG-like scores near 40: rounding of 1e-14 is a tie, 1e-9 is not
    base = np.array([40.0, 40.0, 40.0, 3.0])
    run = base + np.array([1e-14, -1e-14, 1e-9, 0.5])
    assert stats.wins_losses_ties(stats.differences(base, run)) == (2, 0, 2)
    assert stats.tolerance(base, run) == pytest.approx(40.5e-12)


def test_row_tolerances_are_each_rows_tolerance():
    from judged.analyses.stats import row_tolerances

    rows = np.array([[40.0, -41.0, 3.0], [0.1, 0.2, 0.3], [np.nan, 5.0, 2.0], [np.nan, np.nan, np.nan],
                     [np.inf, 1.0, 2.0], [-2e6, 1.0, 0.0]])
    assert row_tolerances(rows).tolist() == [stats.tolerance(r) for r in rows]


def brute_wilcoxon(d):
    """The exact two-sided Wilcoxon p by enumeration of the 2^n sign assignments of the
    average ranks of |d| (zeros dropped)."""
    d = d[d != 0]
    ranks = sp.rankdata(np.abs(d))
    w = ranks[d > 0].sum()
    sums = np.array([sum(r for r, s in zip(ranks, signs) if s) for signs in itertools.product((0, 1), repeat=len(d))])
    return min(1.0, 2 * min((sums <= w + 1e-9).mean(), (sums >= w - 1e-9).mean()))


def test_wilcoxon_exact_matches_scipy_exact_without_ties():
    d = np.random.default_rng(4).normal(0.05, 0.2, 40)
    p, how = stats.wilcoxon_test(d)
    assert how.startswith("exact")
    assert p == pytest.approx(sp.wilcoxon(d, method="exact").pvalue, rel=1e-12)


def test_wilcoxon_exact_with_tied_ranks_matches_enumeration():
    d = np.array([0.1, 0.1, -0.1, 0.2, 0.3, -0.05, 0.2, 0.0, 0.1, 0.4, -0.2, 0.1])
    p, how = stats.wilcoxon_test(d)
    assert "tied" in how and "1 zero difference dropped" in how
    assert p == pytest.approx(brute_wilcoxon(d), rel=1e-12)


def test_wilcoxon_asymptotic_matches_scipy_beyond_50():
    d = np.round(np.random.default_rng(6).normal(0.03, 0.2, 80), 2)  # many tied |d|, some zeros
    p, how = stats.wilcoxon_test(d)
    assert how.startswith("asymptotic")
    assert p == pytest.approx(sp.wilcoxon(d, zero_method="wilcox", method="asymptotic").pvalue, rel=1e-10)


def test_wilcoxon_ties_within_rounding_are_ties():
    # |d| equal but for float rounding rank as equal: the exact p does not depend on the noise
    base = np.linspace(0.1, 0.6, 8)
    run = base + np.array([0.1, 0.1, -0.1, 0.2, 0.1, 0.1, -0.2, 0.1])
    d = run - base
    assert stats.wilcoxon(d) == pytest.approx(brute_wilcoxon(np.round(d, 12)), rel=1e-12)


def test_randomization_enumerates_when_two_to_the_n_is_small():
    d = np.random.default_rng(8).normal(0.1, 0.3, 12)  # 4096 <= 10000 draws: exact, seed irrelevant
    assert stats.randomization_test(d, 10_000, 1) == stats.randomization_test(d, 10_000, 2) == \
        pytest.approx(exact_p(d), abs=1e-15)
    assert stats.randomization_method(12, 10_000).startswith("exact")
    assert not stats.randomization_method(14, 10_000).startswith("exact")


def test_t_test_and_interval_match_scipy_and_statsmodels(pair):
    weightstats = pytest.importorskip("statsmodels.stats.weightstats")
    base, run = pair
    d = stats.differences(base, run)
    ds = weightstats.DescrStatsW(d)
    assert stats.paired_t(d) == pytest.approx(ds.ttest_mean(0)[1], rel=1e-10)
    assert stats.ci95(d) == pytest.approx(ds.tconfint_mean(0.05), rel=1e-12)


def test_adjust_leaves_undefined_tests_out_of_the_family():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.array([0.01, np.nan, 0.04, 0.03])
    out = stats.adjust(p, "holm")
    assert np.isnan(out[1])
    assert out[[0, 2, 3]] == pytest.approx(multitest.multipletests(p[[0, 2, 3]], method="holm")[1])


def test_special_functions_are_scipy_specials_own_without_its_package():
    """The t-test's and the interval's scipy functions are loaded without scipy.special's
    package (its __init__ costs a third of compare's time) and are the very ufuncs that
    scipy.special and scipy.stats use, so every p and interval keeps its bits; a thread
    importing scipy.special meanwhile gets the whole package (a fresh process: this one has
    imported scipy.stats)."""
    import subprocess
    import sys

    code = """
import sys, threading
from judged.analyses import stats
u = stats.special_functions()
assert "scipy.special" not in sys.modules and u.__name__ == "scipy.special._ufuncs", sorted(sys.modules)
import scipy.special, scipy.stats
assert (scipy.special.stdtr, scipy.special.stdtrit, scipy.special.bdtr) == (u.stdtr, u.stdtrit, u.bdtr)
assert stats.special_functions() is u
assert 2 * u.stdtr(29, -2.1) == 2 * scipy.stats.t.sf(2.1, 29) and u.stdtrit(29, 0.975) == scipy.stats.t.ppf(0.975, 29)
"""
    race = """
import sys, threading
from judged.analyses import stats
got = []
def load(): got.append(stats.special_functions().stdtr)
def real():
    import scipy.special
    got.append(scipy.special.stdtr)
threads = [threading.Thread(target=f) for f in (load, real, load, real)]
[t.start() for t in threads]
[t.join() for t in threads]
import scipy.special
assert got == [scipy.special.stdtr] * 4, got
"""
    for source in (code, race):
        done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_a_callers_generator_is_left_where_numpys_draws_leave_it():
    """Given a Generator rather than a seed, the tests draw with rng.integers itself (the raw
    words would give the same values but leave the generator elsewhere): its next draws
    are those it gave before this change of method."""
    d = np.random.default_rng(3).normal(0.01, 0.2, (2, 300))
    for test in (stats.randomization_pvalues, stats.bootstrap_pvalues):
        mine, numpys = np.random.default_rng(8), np.random.default_rng(8)
        p = test(d, 999, mine)
        expected = test(d, 999, 8)  # the same draws from a fresh generator of the same seed
        assert p.tolist() == expected.tolist()
        if test is stats.randomization_pvalues:
            numpys.integers(0, 2, size=(999, 300), dtype=np.int8)
        else:
            numpys.integers(0, 300, size=(999, 300))
        assert mine.random() == numpys.random()


def _samples(seed):
    """Arrays of odd and even lengths, repeated values and signed zeros."""
    rng = np.random.default_rng(seed)
    for n in list(range(1, 40)) + [200, 201]:
        for _ in range(20):
            v = rng.normal(0, 1, n) * np.exp(rng.normal(0, 10, n))
            if rng.random() < 0.2:
                v = np.round(v, 1)
            if rng.random() < 0.1:
                v[rng.integers(0, n)] = -0.0
            yield v


def test_median_is_numpys_median_bit_for_bit():
    """stats.median (no numpy.ma import) against np.median; NaN if any."""
    for v in _samples(5):
        assert np.float64(stats.median(v)).tobytes() == np.float64(np.median(v)).tobytes()
    assert np.isnan(stats.median(np.array([1.0, np.nan, 2.0])))


def test_percentiles_are_numpys_bit_for_bit():
    """stats.percentiles (no numpy.ma import) against np.percentile: quartiles, the ends and
    points between; NaN if any."""
    for v in _samples(6):
        for q in ([25, 50, 75], [0, 100], [10, 33.3, 90, 99.9]):
            assert stats.percentiles(v, q).tobytes() == np.percentile(v, q).tobytes()
    assert np.isnan(stats.percentiles(np.array([1.0, np.nan, 2.0]), [25, 50, 75])).all()
