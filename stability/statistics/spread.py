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
- the ratio σ_method / σ_reference with its bootstrap interval: `scipy.stats.bootstrap` over
  the two independent samples (`paired=False`: each side's seeds resampled with replacement on
  their own), the percentile interval of the resampled ratios, for the reasons above. The ratio
  is undefined when the reference's σ is 0 (NaN, interval included); a resample whose reference
  σ is 0 counts as +∞ (the upper end is ∞ when more than (1 − confidence) / 2 of them are), one
  with both σ 0 has no ratio and is left out of the percentiles. Being a ratio of two σ each
  biased low, the interval is as rough a guide as σ's own;
- the Brown–Forsythe test of equal spread (Levene's test on absolute deviations from each
  sample's median, robust to the skewed seed distributions a failed run makes): `scipy.stats.levene(
  center="median")`'s p-value, vectorised for the calibration's simulated studies and with sums of
  squares within float rounding read as 0 (`brown_forsythe_p`), so the report's test is the one
  whose A/A rate the calibration measures;
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
_ROUNDING = 64 * np.finfo(float).eps   # relative error of a sum of squares of a few deviations


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


def std_ratio(values: ArrayLike, reference: ArrayLike) -> float:
    """σ_values / σ_reference (both ddof = 1); NaN below `MIN_SEEDS` seeds on either side or when
    the reference's σ is 0 (no ratio: 0 / 0 or unbounded)."""
    values, reference = _scores(values), _scores(reference)
    if min(len(values), len(reference)) < MIN_SEEDS or _std(reference) == 0:
        return float("nan")
    return float(_std(values) / _std(reference))


def _ratio(values: np.ndarray, reference: np.ndarray, axis: int = -1) -> np.ndarray:
    """σ_values / σ_reference along `axis`, vectorised for `scipy.stats.bootstrap`: +∞ where only the
    reference's σ is 0, NaN where both are."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _std(values, axis) / _std(reference, axis)


def _percentile(ratios: np.ndarray, q: float) -> float:
    """The `q` quantile of the sorted `ratios` by linear interpolation between order statistics
    (numpy's and `scipy.stats.quantile`'s default), +∞ wherever the interpolation reaches an ∞
    (their arithmetic gives NaN when it lands exactly on the last finite value before one)."""
    position = q * (len(ratios) - 1)
    below = int(np.floor(position))
    fraction = position - below
    if fraction == 0 or below + 1 >= len(ratios):
        return float(ratios[below])
    low, high = ratios[below], ratios[below + 1]
    return float("inf") if np.isinf(high) else float(low + fraction * (high - low))


def std_ratio_interval(values: ArrayLike, reference: ArrayLike, n_resamples: int, confidence: float,
                       random_state: int) -> tuple[float, float]:
    """Percentile bootstrap interval of `std_ratio` at `confidence`: `scipy.stats.bootstrap` with
    `data=(values, reference)`, `paired=False` (each side's seeds resampled with replacement on
    their own, `n_resamples` times, seeded with `random_state` as `std_interval` is). NaN where
    `std_ratio` is (fewer than `MIN_SEEDS` seeds on a side, the reference's σ 0) or without
    resamples. Resamples in which the reference's σ is 0 count as +∞ (so the upper end may be
    ∞); those in which both σ are 0 have no ratio and are left out, the percentiles taken over
    the rest (NaN when none is left). Where no resample is degenerate this is scipy's own
    percentile interval."""
    values, reference = _scores(values), _scores(reference)
    if np.isnan(std_ratio(values, reference)) or n_resamples < 1:
        return float("nan"), float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)   # NaN / ∞ resamples: handled below
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.bootstrap((values, reference), _ratio, paired=False, n_resamples=n_resamples,
                                 confidence_level=confidence, method=INTERVAL_METHOD, vectorized=True,
                                 random_state=random_state)
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    ratios = np.asarray(result.bootstrap_distribution, dtype=float)
    if not np.isnan(ratios).any() and not np.isinf(ratios).any():
        return low, high
    ratios = np.sort(ratios[~np.isnan(ratios)])
    if len(ratios) == 0:
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    return _percentile(ratios, alpha), _percentile(ratios, 1 - alpha)


def _p_value(test, a: ArrayLike, b: ArrayLike, **options) -> float:
    a, b = _scores(a), _scores(b)
    if min(len(a), len(b)) < MIN_SEEDS:
        return float("nan")
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)   # 0 / 0 when both sides are constant: NaN
        return float(test(a, b, **options).pvalue)


def equal_spread_p(a: ArrayLike, b: ArrayLike) -> float:
    """Brown–Forsythe test (Levene's test about the medians) that two seed samples are equally
    spread: its p-value (`brown_forsythe_p`, the calibration's own, so a measured A/A rate is this
    test's); NaN with fewer than two seeds on a side or no spread on either."""
    a, b = _scores(a), _scores(b)
    if min(len(a), len(b)) < MIN_SEEDS:
        return float("nan")
    return float(brown_forsythe_p(a[None], b[None])[0])


def brown_forsythe_p(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Brown–Forsythe (Levene about the medians) p-value per row of two samples, as
    `scipy.stats.levene(center="median")` for two groups, vectorised, except that sums of squares
    within float rounding count as 0 (p = 0 where only the groups' deviations differ); NaN without spread."""
    z_a = np.abs(a - np.median(a, axis=-1, keepdims=True))
    z_b = np.abs(b - np.median(b, axis=-1, keepdims=True))
    n_a, n_b = a.shape[-1], b.shape[-1]
    mean_a, mean_b = z_a.mean(axis=-1), z_b.mean(axis=-1)
    grand = (n_a * mean_a + n_b * mean_b) / (n_a + n_b)
    between = n_a * (mean_a - grand) ** 2 + n_b * (mean_b - grand) ** 2
    within = ((z_a - mean_a[..., None]) ** 2).sum(axis=-1) + ((z_b - mean_b[..., None]) ** 2).sum(axis=-1)
    # sums of squares within rounding of the deviations are 0: seeds that take two values evenly
    # (|u − m| and |v − m| about their midpoint m differ in the last bit) have no spread of
    # deviations, and their F is infinite (p = 0), not 1e32 (p = 1e-156, which scipy gives)
    rounding = (n_a + n_b) * (_ROUNDING * np.maximum(z_a.max(axis=-1), z_b.max(axis=-1))) ** 2
    between, within = (np.where(total <= rounding, 0.0, total) for total in (between, within))
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = (n_a + n_b - 2) * between / within
    return stats.f.sf(statistic, 1, n_a + n_b - 2)


def equal_mean_p(a: ArrayLike, b: ArrayLike) -> float:
    """Welch's t-test (unequal variances) that two seed samples have the same mean: its two-sided
    p-value; NaN with fewer than two seeds on a side or no spread on either."""
    return _p_value(stats.ttest_ind, a, b, equal_var=False)
