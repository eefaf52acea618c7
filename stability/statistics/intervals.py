"""Intervals for σ over seeds and for the ratio of two σ that hold at few seeds, vectorised.

The percentile bootstrap of σ (`spread.std_interval`) is biased low at 3–10 seeds: a resample
repeats seeds, so its σ is smaller, and the interval misses the true σ far more often than its
label says (the report's calibration measures by how much, `calibration`). The alternatives here
come from the sampling distribution of s² itself:

- **χ² (normal theory)**: (n − 1) s² / σ² ~ χ²(n − 1) for normal seeds, so
  σ ∈ [s √((n − 1) / χ²_{1−α/2}), s √((n − 1) / χ²_{α/2})], the quantiles from
  `scipy.stats.chi2`. Exact for normal seeds, too narrow under heavier tails.
- **Bonett (2006)**, *Approximate confidence interval for standard deviation of nonnormal
  distributions*, Comput. Stat. Data Anal. 50:775–782: a log-scale interval whose width follows
  the sample's kurtosis,

      σ² ∈ exp(ln(c s²) ± z c se),   c = n / (n − z),   se = √((γ̂₄ − (n − 3) / n) / (n − 1)),
      γ̂₄ = n Σ(y − m)⁴ / (Σ(y − ȳ)²)²,

  m the trimmed mean with trim proportion 1 / (2 √(n − 4)) (so n ≥ 5; `scipy.stats.trim_mean`,
  which cuts ⌊n · trim⌋ seeds from each end as R's `mean(trim=)` does), z the normal quantile
  1 − α/2. The form with c in front of se is the paper's (and `DescTools::VarCI`'s); it
  reproduces the paper's worked example (tests/statistics/test_intervals.py).
- **F (normal theory) for σ_a / σ_b**: (s_a² / σ_a²) / (s_b² / σ_b²) ~ F(n_a − 1, n_b − 1), so
  σ_a / σ_b ∈ [r / √F_{1−α/2}, r / √F_{α/2}] with r = s_a / s_b (`scipy.stats.f`).
- **Bonett's ratio interval** (Bonett 2006, *Robust confidence interval for a ratio of standard
  deviations*, Appl. Psychol. Meas. 30:432–439), as the author's own `statpsych::ci.ratio.sd2`
  computes it: ln(c₀ s_a² / s_b²) ± z se with c₀ = (n_a / (n_a − z)) ((n_b − z) / n_b),
  se² = Σ_g (γ̂₄ − (n_g − 3) / n_g) / (n_g − 1), the pooled kurtosis
  γ̂₄ = (n_a + n_b)(A + ρ⁴ B) / ((n_a − 1) s_a² + ρ² (n_b − 1) s_b²)² (A, B the fourth powers
  about each side's trimmed mean) evaluated at the bound ρ itself, ten fixed-point iterations
  from ρ = 1. Needs n ≥ 5 on each side.

Every function takes arrays whose last axis is the seeds (or arrays of σ and n), so the
calibration can evaluate a million simulated samples in one call; NaN where a method is
undefined (fewer seeds than it needs, σ 0 where it divides by it).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

MIN_SEEDS_BONETT = 5   # the trim proportion 1 / (2 √(n − 4)) needs n > 4
RATIO_ITERATIONS = 10  # fixed-point iterations of Bonett's ratio interval, as statpsych::ci.ratio.sd2
SIGMA_METHODS = ("percentile", "chi2", "bonett")
RATIO_METHODS = ("percentile", "F", "bonett")


def _z(confidence: float) -> float:
    return float(stats.norm.ppf(1 - (1 - confidence) / 2))


def chi2_std_interval(std: ArrayLike, n: ArrayLike, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """χ² interval of σ from the sample σ (ddof = 1) of `n` seeds; NaN below 2 seeds."""
    std, n = np.broadcast_arrays(np.asarray(std, float), np.asarray(n, float))
    df = np.where(n >= 2, n - 1, np.nan)
    alpha = 1 - confidence
    low = std * np.sqrt(df / stats.chi2.ppf(1 - alpha / 2, df))
    high = std * np.sqrt(df / stats.chi2.ppf(alpha / 2, df))
    return low, high


def _trimmed_center(samples: np.ndarray) -> np.ndarray:
    n = samples.shape[-1]
    return stats.trim_mean(samples, 1 / (2 * np.sqrt(n - 4)), axis=-1)


def bonett_std_interval(samples: ArrayLike, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Bonett's (2006) interval of σ per row of `samples` (seeds on the last axis, no NaN);
    NaN below `MIN_SEEDS_BONETT` seeds or where every seed is equal."""
    samples = np.asarray(samples, float)
    n = samples.shape[-1]
    shape = samples.shape[:-1]
    if n < MIN_SEEDS_BONETT:
        return np.full(shape, np.nan), np.full(shape, np.nan)
    z = _z(confidence)
    c = n / (n - z)
    deviations = samples - samples.mean(axis=-1, keepdims=True)
    squares = (deviations ** 2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        kurtosis = n * ((samples - _trimmed_center(samples)[..., None]) ** 4).sum(axis=-1) / squares ** 2
        se = c * np.sqrt((kurtosis - (n - 3) / n) / (n - 1))
        centre = np.log(c * squares / (n - 1))
    return np.sqrt(np.exp(centre - z * se)), np.sqrt(np.exp(centre + z * se))


def f_ratio_interval(std_a: ArrayLike, n_a: int, std_b: ArrayLike, n_b: int,
                     confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """F interval of σ_a / σ_b from the two sample σ (ddof = 1); NaN below 2 seeds a side or σ_b 0."""
    if min(n_a, n_b) < 2:
        nan = np.full(np.broadcast(np.asarray(std_a), np.asarray(std_b)).shape, np.nan)
        return nan, nan.copy()
    alpha = 1 - confidence
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(np.asarray(std_b) > 0, np.asarray(std_a, float) / np.asarray(std_b, float), np.nan)
    return (ratio / np.sqrt(stats.f.ppf(1 - alpha / 2, n_a - 1, n_b - 1)),
            ratio / np.sqrt(stats.f.ppf(alpha / 2, n_a - 1, n_b - 1)))


def bonett_ratio_interval(a: ArrayLike, b: ArrayLike, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Bonett's interval of σ_a / σ_b per row (seeds on the last axis, rows broadcast); NaN below
    `MIN_SEEDS_BONETT` seeds on a side or where a side has no spread."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    n_a, n_b = a.shape[-1], b.shape[-1]
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    if min(n_a, n_b) < MIN_SEEDS_BONETT:
        return np.full(shape, np.nan), np.full(shape, np.nan)
    z = _z(confidence)
    var_a, var_b = a.var(axis=-1, ddof=1), b.var(axis=-1, ddof=1)
    fourth_a = ((a - _trimmed_center(a)[..., None]) ** 4).sum(axis=-1)
    fourth_b = ((b - _trimmed_center(b)[..., None]) ** 4).sum(axis=-1)
    c0 = (n_a / (n_a - z)) * ((n_b - z) / n_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.log(c0 * var_a / var_b)
        bounds = []
        for sign in (-1.0, 1.0):
            rho = np.ones(shape)
            for _ in range(RATIO_ITERATIONS):
                kurtosis = ((n_a + n_b) * (fourth_a + rho ** 4 * fourth_b)
                            / ((n_a - 1) * var_a + rho ** 2 * (n_b - 1) * var_b) ** 2)
                se = np.sqrt((kurtosis - (n_a - 3) / n_a) / (n_a - 1) + (kurtosis - (n_b - 3) / n_b) / (n_b - 1))
                rho = np.sqrt(np.exp(centre + sign * z * se))
            bounds.append(np.where((var_a > 0) & (var_b > 0), rho, np.nan))
    return bounds[0], bounds[1]


def std_interval_of(values: ArrayLike, method: str, confidence: float) -> tuple[float, float]:
    """σ's interval of one cell's seed scores (NaN left out) by a closed-form `method` ("chi2",
    "bonett"); the percentile bootstrap is `spread.std_interval`."""
    values = np.asarray(values, float)
    values = values[~np.isnan(values)]
    if method == "chi2":
        low, high = chi2_std_interval(np.std(values, ddof=1) if len(values) >= 2 else np.nan, len(values), confidence)
    elif method == "bonett":
        low, high = bonett_std_interval(values, confidence)
    else:
        raise ValueError(f"no closed-form σ interval {method!r}")
    return float(low), float(high)


def std_ratio_interval_of(values: ArrayLike, reference: ArrayLike, method: str,
                          confidence: float) -> tuple[float, float]:
    """σ_values / σ_reference's interval (NaN left out) by a closed-form `method` ("F", "bonett");
    the percentile bootstrap is `spread.std_ratio_interval`."""
    values, reference = (np.asarray(side, float) for side in (values, reference))
    values, reference = values[~np.isnan(values)], reference[~np.isnan(reference)]
    if method == "F":
        if min(len(values), len(reference)) < 2:
            return float("nan"), float("nan")
        low, high = f_ratio_interval(np.std(values, ddof=1), len(values), np.std(reference, ddof=1),
                                     len(reference), confidence)
    elif method == "bonett":
        low, high = bonett_ratio_interval(values, reference, confidence)
    else:
        raise ValueError(f"no closed-form σ-ratio interval {method!r}")
    return float(low), float(high)
