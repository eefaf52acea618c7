"""σ and σ-ratio intervals (`stability.statistics.intervals`) against scipy's quantiles and the
worked examples of Bonett's papers; the Wilson bounds' exact 0 and 1 (`stability.statistics.rates`)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from stability.statistics.intervals import (bonett_ratio_interval, bonett_std_interval, chi2_std_interval,
                                            f_ratio_interval, std_interval_of, std_ratio_interval_of)
from stability.statistics.rates import wilson_interval

# Bonett (2006, CSDA 50:775), the paper's example: 8 measurements, s = 0.5168.
PAPER = np.array([15.83, 16.01, 16.24, 16.42, 15.33, 15.44, 16.88, 16.31])
# statpsych::ci.ratio.sd2's documented example (Bonett's own package for Bonett 2006, APM 30:432).
Y1 = np.array([32, 39, 26, 35, 43, 27, 40, 37, 34, 29], float)
Y2 = np.array([36, 44, 47, 42, 49, 39, 46, 31, 33, 48], float)


def test_chi2_bounds_are_the_formula_with_scipys_quantiles():
    values = np.array([0.31, 0.42, 0.18, 0.27, 0.36, 0.33])
    s, n = np.std(values, ddof=1), len(values)
    low, high = chi2_std_interval(s, n, 0.95)
    assert low == pytest.approx(math.sqrt((n - 1) * s ** 2 / stats.chi2.ppf(0.975, n - 1)), rel=1e-12)
    assert high == pytest.approx(math.sqrt((n - 1) * s ** 2 / stats.chi2.ppf(0.025, n - 1)), rel=1e-12)
    # by hand at n = 3, s = 1: χ²₂ quantiles 0.0506356 and 7.377759 → [√(2/7.3778), √(2/0.050636)]
    low3, high3 = chi2_std_interval(1.0, 3, 0.95)
    assert (low3, high3) == pytest.approx((0.520656, 6.284721), rel=1e-5)
    assert std_interval_of(values, "chi2", 0.95) == pytest.approx((low, high))
    assert np.isnan(chi2_std_interval(1.0, 1, 0.95)[0])


def test_bonett_reproduces_the_papers_worked_example():
    # By hand from the formula: n = 8, z = 1.959964, c = 8 / (8 − z) = 1.324495; trim 1/(2√4) = 0.25
    # cuts 2 of 8 from each end: m = mean(15.83, 16.01, 16.24, 16.31) = 16.0975; ȳ = 16.0575,
    # Σ(y − ȳ)² = 1.869550, Σ(y − m)⁴ = 0.927243, γ̂₄ = 8 · 0.927243 / 1.869550² = 2.122312;
    # se = c √((2.122312 − 5/8) / 7) = 0.612573; ln(c s²) = ln(1.324495 · 1.869550 / 7) = −1.039181;
    # σ ∈ √exp(−1.039181 ± 1.959964 · 0.612573) = [0.3263, 1.0841], the paper's 95 % interval.
    assert np.std(PAPER, ddof=1) == pytest.approx(0.5168, abs=5e-5)
    for confidence, expected in ((0.90, (0.3592, 0.9359)), (0.95, (0.3263, 1.0841)), (0.99, (0.2607, 1.5109))):
        assert bonett_std_interval(PAPER, confidence) == pytest.approx(expected, abs=5e-5)
    assert std_interval_of(PAPER, "bonett", 0.95) == pytest.approx((0.3263, 1.0841), abs=5e-5)


def test_bonett_is_vectorised_over_rows_and_undefined_below_five_seeds():
    rows = np.stack([PAPER, PAPER * 2 + 1])
    low, high = bonett_std_interval(rows, 0.95)
    assert low[1] == pytest.approx(2 * low[0]) and high[1] == pytest.approx(2 * high[0])   # scale-equivariant
    assert np.isnan(bonett_std_interval(PAPER[:4], 0.95)).all()


def test_f_ratio_interval_against_scipys_f_quantiles():
    a, b = Y1, Y2[:7]
    ratio = np.std(a, ddof=1) / np.std(b, ddof=1)
    low, high = f_ratio_interval(np.std(a, ddof=1), len(a), np.std(b, ddof=1), len(b), 0.95)
    assert low == pytest.approx(ratio / math.sqrt(stats.f.ppf(0.975, 9, 6)), rel=1e-12)
    assert high == pytest.approx(ratio / math.sqrt(stats.f.ppf(0.025, 9, 6)), rel=1e-12)
    # the same as inverting the variance-ratio F test: at the bounds the F statistic sits at its quantiles
    assert (ratio / low) ** 2 == pytest.approx(stats.f.ppf(0.975, 9, 6))
    assert std_ratio_interval_of(a, b, "F", 0.95) == pytest.approx((low, high))


def test_bonett_ratio_reproduces_statpsych():
    # ci.ratio.sd2(.05, y1, y2) returns SD1/SD2 0.8854257, LL 0.486279, UL 1.728396
    low, high = bonett_ratio_interval(Y1, Y2, 0.95)
    assert (low, high) == pytest.approx((0.486279, 1.728396), abs=1e-6)
    assert std_ratio_interval_of(Y1, Y2, "bonett", 0.95) == pytest.approx((0.486279, 1.728396), abs=1e-6)
    # swapping the sides inverts the interval
    swapped = bonett_ratio_interval(Y2, Y1, 0.95)
    assert swapped[0] == pytest.approx(1 / high, rel=1e-3) and swapped[1] == pytest.approx(1 / low, rel=1e-3)
    assert np.isnan(bonett_ratio_interval(Y1[:4], Y2, 0.95)).all()


def test_wilson_bounds_are_exactly_zero_and_one_at_the_ends():
    # statsmodels alone gives 2.78e-17 and 1 − 1.1e-16 at 0 and 7 of 7 (and 9 of 9)
    ends_low, ends_high = wilson_interval([0, 7, 0, 9], [7, 7, 9, 9], 0.95)
    assert (ends_low[0], ends_low[2], ends_high[1], ends_high[3]) == (0.0, 0.0, 1.0, 1.0)
    low, high = wilson_interval([0, 5, 2], [5, 5, 5], 0.95)
    assert low[0] == 0.0 and high[1] == 1.0
    assert low[1] > 0 and high[0] < 1
    assert (low[2], high[2]) == pytest.approx((0.1176, 0.7693), abs=1e-4)   # 2 of 5, by the Wilson formula
