"""The statistics module against values derived independently (closed forms, tables)."""
import math

import numpy as np
import pytest

from simcli import stats


def test_wilson_matches_the_textbook_example():
    # Wilson (1927) / Newcombe (1998) example: 81 of 263 -> 0.2553 .. 0.3662 (95%)
    lo, hi = stats.wilson(81 / 263, 263)
    assert lo == pytest.approx(0.2553, abs=1e-4) and hi == pytest.approx(0.3662, abs=1e-4)


def test_chi2_tail_matches_tables():
    # standard table values: P(chi2_1 > 3.841) = 0.05, P(chi2_5 > 11.070) = 0.05, P(chi2_10 > 23.209) = 0.01
    assert stats.chi2_sf(3.841459, 1) == pytest.approx(0.05, rel=1e-5)
    assert stats.chi2_sf(11.0705, 5) == pytest.approx(0.05, rel=1e-4)
    assert stats.chi2_sf(23.2093, 10) == pytest.approx(0.01, rel=1e-4)
    # df = 2 has the closed form exp(-x/2)
    for x in (0.5, 3.0, 40.0):
        assert stats.chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-10)


def test_two_proportion_and_welch_closed_forms():
    z, p = stats.two_proportion(60, 100, 40, 100)
    assert z == pytest.approx(0.2 / math.sqrt(0.25 * 0.02))
    assert p == pytest.approx(math.erfc(abs(z) / math.sqrt(2)))
    t, _ = stats.welch(10, 2, 50, 9, 3, 80)
    assert t == pytest.approx(1 / math.sqrt(4 / 50 + 9 / 80))


def test_chi2_homogeneity_flags_shifted_samples_and_not_equal_ones():
    rng = np.random.default_rng(0)
    a = np.bincount(rng.binomial(20, 0.5, 5000), minlength=21)
    b = np.bincount(rng.binomial(20, 0.5, 5000), minlength=21)
    c = np.bincount(rng.binomial(20, 0.55, 5000), minlength=21)
    h = lambda x: {i: int(v) for i, v in enumerate(x) if v}
    assert stats.chi2_homogeneity(h(a), h(b))[2] > 0.001
    assert stats.chi2_homogeneity(h(a), h(c))[2] < 1e-10


def test_holm_step_down():
    assert stats.holm([0.01, 0.04, 0.03, 0.5], 0.05) == [True, False, False, False]
    assert stats.holm([0.001, 0.012, 0.02, 0.5], 0.05) == [True, True, True, False]


def test_reseeded_equal_distributions_are_rarely_flagged():
    """Under the null, chi-square p-values are about uniform: ~5% below 0.05 (binomial bound)."""
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(400):
        a = np.bincount(rng.poisson(6, 800), minlength=30)
        b = np.bincount(rng.poisson(6, 800), minlength=30)
        p = stats.chi2_homogeneity({i: int(v) for i, v in enumerate(a) if v},
                                   {i: int(v) for i, v in enumerate(b) if v})[2]
        hits += p < 0.05
    assert 5 <= hits <= 40  # 400 * 0.05 = 20; 99.9% binomial range is about 6..37
