"""The σ ratio of two seed samples and its bootstrap interval (`stability.statistics.spread`): a hand
computation, scipy's own bootstrap called directly, exact scaling, and the undefined cases."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from stability.statistics.spread import (brown_forsythe_p, equal_spread_p, std_interval, std_ratio,
                                         std_ratio_interval)

METHOD = np.array([0.30, 0.35, 0.20, 0.42, 0.31, 0.28])
REFERENCE = np.array([0.10, 0.50, 0.30, 0.45, 0.05, 0.60])


def _scipy_interval(a, b, n_resamples=1000, confidence=0.95, seed=3) -> tuple[float, float]:
    interval = stats.bootstrap((a, b), lambda x, y, axis: np.std(x, ddof=1, axis=axis) / np.std(y, ddof=1, axis=axis),
                               paired=False, n_resamples=n_resamples, confidence_level=confidence,
                               method="percentile", vectorized=True, random_state=seed).confidence_interval
    return interval.low, interval.high


def test_point_ratio_by_hand():
    # [1, 3]: mean 2, σ² = (1 + 1) / 1 = 2; [0, 2, 4]: mean 2, σ² = (4 + 0 + 4) / 2 = 4
    assert std_ratio([1.0, 3.0], [0.0, 2.0, 4.0]) == pytest.approx(math.sqrt(2 / 4))
    assert std_ratio([0.0, 2.0, 4.0], [1.0, 3.0]) == pytest.approx(math.sqrt(2))
    assert std_ratio([0.5, 0.5, 0.5], [0.1, 0.2]) == 0.0   # a constant method: ratio 0, defined
    assert std_ratio([1.0, np.nan, 3.0], [0.0, 2.0, 4.0, np.nan]) == pytest.approx(math.sqrt(0.5))   # NaN left out


def test_interval_is_scipys_bootstrap_over_the_two_independent_samples():
    low, high = std_ratio_interval(METHOD, REFERENCE, 1000, 0.95, 3)
    assert (low, high) == pytest.approx(_scipy_interval(METHOD, REFERENCE), abs=1e-12)
    assert low < std_ratio(METHOD, REFERENCE) < high
    # seeded: the same scores give the same interval, another seed another one
    assert std_ratio_interval(METHOD, REFERENCE, 1000, 0.95, 3) == (low, high)
    assert std_ratio_interval(METHOD, REFERENCE, 1000, 0.95, 4) != (low, high)
    # a lower confidence gives a narrower interval inside it
    narrow = std_ratio_interval(METHOD, REFERENCE, 1000, 0.5, 3)
    assert low <= narrow[0] < narrow[1] <= high


def test_scaling_one_sample_scales_the_interval_exactly():
    low, high = std_ratio_interval(METHOD, REFERENCE, 500, 0.9, 7)
    scaled = std_ratio_interval(2.5 * METHOD, REFERENCE, 500, 0.9, 7)
    assert scaled == pytest.approx((2.5 * low, 2.5 * high), rel=1e-12)
    inverse = std_ratio_interval(METHOD, 4 * REFERENCE, 500, 0.9, 7)
    assert inverse == pytest.approx((low / 4, high / 4), rel=1e-12)
    # the ratio does not move with a shift of either sample
    assert std_ratio_interval(METHOD + 1, REFERENCE - 0.3, 500, 0.9, 7) == pytest.approx((low, high), rel=1e-9)


def test_interval_shrinks_with_more_seeds():
    rng = np.random.default_rng(0)
    widths = []
    for n in (5, 20, 80):
        a, b = rng.normal(0, 0.1, n), rng.normal(0, 0.2, n)
        low, high = std_ratio_interval(a, b, 2000, 0.95, 1)
        assert low < std_ratio(a, b) < high
        widths.append(high - low)
    assert widths[0] > widths[1] > widths[2]
    assert low < 0.5 < high   # the true ratio, with 80 seeds a side


def test_undefined_cases_are_nan():
    assert all(math.isnan(v) for v in (std_ratio([0.1], REFERENCE), std_ratio(METHOD, [0.2, np.nan]),
                                       std_ratio(METHOD, [0.3, 0.3, 0.3]), std_ratio([0.2, 0.2], [0.2, 0.2])))
    for a, b in (([0.1], REFERENCE), (METHOD, [0.2, np.nan]), (METHOD, [0.3, 0.3, 0.3]), ([], [])):
        assert all(math.isnan(v) for v in std_ratio_interval(a, b, 100, 0.95, 0))
    assert all(math.isnan(v) for v in std_ratio_interval(METHOD, REFERENCE, 0, 0.95, 0))   # no resamples


def test_a_reference_resampled_constant_makes_the_upper_end_infinite_without_warnings():
    # 3 seeds a side: 1 resample in 9 repeats one reference seed (σ 0), more than the 2.5 % above the upper end;
    # both sides constant (0 / 0) in about 1 in 81 resamples: left out, not a NaN interval
    a, b = np.array([0.2, 0.4, 0.3]), np.array([0.1, 0.5, 0.35])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = std_ratio_interval(a, b, 1000, 0.95, 2)
    assert 0 <= low < std_ratio(a, b) and high == math.inf
    # the lower end is the percentile of scipy's resampled ratios with the 0 / 0 ones left out
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ratios = stats.bootstrap((a, b), lambda x, y, axis: np.std(x, ddof=1, axis=axis) / np.std(y, ddof=1, axis=axis),
                                 paired=False, n_resamples=1000, method="percentile", vectorized=True,
                                 random_state=2).bootstrap_distribution
    assert np.isnan(ratios).any() and np.isinf(ratios).mean() > 0.025
    assert low == pytest.approx(np.quantile(ratios[~np.isnan(ratios)], 0.025), abs=1e-12)


def test_the_ratio_interval_leaves_sigmas_own_interval_alone():
    assert std_interval(METHOD, 1000, 0.95, 3) == pytest.approx(
        (stats.bootstrap((METHOD,), lambda v, axis: np.std(v, ddof=1, axis=axis), n_resamples=1000,
                         method="percentile", vectorized=True, random_state=3).confidence_interval), abs=1e-12)


def test_brown_forsythe_equals_scipy_levene_about_the_median():
    rng = np.random.default_rng(7)
    a, b = rng.normal(0, 1, (20, 5)), rng.normal(0, 2, (20, 7))
    expected = [stats.levene(x, y, center="median").pvalue for x, y in zip(a, b)]
    assert brown_forsythe_p(a, b) == pytest.approx(expected, rel=1e-10)


def test_brown_forsythe_reads_rounding_as_no_spread():
    """Seeds at two values, three each: every deviation from the median is the same in exact arithmetic
    (0.1 in one group, 0.25 in the other), so F is infinite and p = 0; scipy's levene, on the last-bit
    differences of |u − m|, gives p ≈ 1e-156, and a 5 % threshold at such a p is no threshold."""
    a = np.array([[0.1, 0.1, 0.1, 0.3, 0.3, 0.3]])
    b = np.array([[0.2, 0.2, 0.2, 0.7, 0.7, 0.7]])
    assert 0 < stats.levene(a[0], b[0], center="median").pvalue < 1e-100
    assert brown_forsythe_p(a, b)[0] == 0.0
    assert equal_spread_p(a[0], b[0]) == 0.0                 # the report's test is the calibrated one
    assert np.isnan(brown_forsythe_p(a, a + 0.5)[0])        # no spread on either side, and none between
