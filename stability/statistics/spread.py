"""Seed spread of one method against another's: σ over seeds with a bootstrap interval, and
the tests of equal spread and equal mean between two sets of seed scores.

A stabilisation method (Mosbach et al. 2021: more epochs, bias correction; re-initialising
the top layers; layer-wise learning-rate decay; mixout) is meant to make a fine-tuning
recipe's outcome depend less on its seed, i.e. to shrink σ of the score over seeds. Per
cell (a category MCC) and method the seeds give

- σ, the sample standard deviation over seeds (ddof = 1, as every σ of the project), and
  its bootstrap interval: `scipy.stats.bootstrap` resamples the seeds with replacement and
  takes the percentile interval of the resampled σ. Percentile, not BCa: BCa's acceleration
  is a jackknife over the 4–10 seeds a sweep has, itself that noisy, and undefined whenever
  the leave-one-out σ are all equal (e.g. one outlying seed among equal ones), which seed
  MCCs often are; the percentile interval is what the project's other bootstrap intervals
  are too. With few seeds the resampled σ are biased low (a resample repeats seeds), so the
  interval is a rough guide to how well σ is known, not a calibrated one;
- the Brown–Forsythe test of equal spread (`scipy.stats.levene(center="median")`: Levene's
  test on absolute deviations from each sample's median, robust to the skewed seed
  distributions a failed run makes);
- Welch's t-test of equal means (`scipy.stats.ttest_ind(equal_var=False)`): the two methods'
  runs are independent and need not be equally variable.

Fewer than `MIN_SEEDS` seeds on a side, or scores that leave a statistic undefined (every
seed equal on both sides), give NaN, never 0 or 1. Scores that are NaN are left out.
"""
from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

MIN_SEEDS = 2
INTERVAL_METHOD = "percentile"


def _scores(values: ArrayLike) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return values[~np.isnan(values)]


def _std(values: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.std(values, ddof=1, axis=axis)


def seed_std(values: ArrayLike) -> float:
    """σ over seeds (ddof = 1); NaN below `MIN_SEEDS` seeds."""
    values = _scores(values)
    return float(_std(values)) if len(values) >= MIN_SEEDS else float("nan")


def std_interval(values: ArrayLike, n_resamples: int, confidence: float, random_state: int) -> tuple[float, float]:
    """Percentile bootstrap interval of σ (ddof = 1) at `confidence`, the seeds resampled with
    replacement `n_resamples` times (`scipy.stats.bootstrap`, seeded with `random_state`, so
    the same scores always give the same interval); NaN below `MIN_SEEDS` seeds or without
    resamples."""
    values = _scores(values)
    if len(values) < MIN_SEEDS or n_resamples < 1:
        return float("nan"), float("nan")
    result = stats.bootstrap((values,), _std, n_resamples=n_resamples, confidence_level=confidence,
                             method=INTERVAL_METHOD, vectorized=True, random_state=random_state)
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _p_value(test, a: ArrayLike, b: ArrayLike, **options) -> float:
    a, b = _scores(a), _scores(b)
    if min(len(a), len(b)) < MIN_SEEDS:
        return float("nan")
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)   # 0 / 0 when both sides are constant: NaN
        return float(test(a, b, **options).pvalue)


def equal_spread_p(a: ArrayLike, b: ArrayLike) -> float:
    """Brown–Forsythe test (Levene's test about the medians) that two seed samples are equally
    spread: its p-value; NaN with fewer than two seeds on a side or no spread on either."""
    return _p_value(stats.levene, a, b, center="median")


def equal_mean_p(a: ArrayLike, b: ArrayLike) -> float:
    """Welch's t-test (unequal variances) that two seed samples have the same mean: its two-sided
    p-value; NaN with fewer than two seeds on a side or no spread on either."""
    return _p_value(stats.ttest_ind, a, b, equal_var=False)
