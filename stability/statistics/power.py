"""How many seeds: the smallest ΔMCC a sweep can detect, and the seeds a given ΔMCC needs.

A ΔMCC that no test flags may be absent or merely undetectable with the seeds run. For a
two-sided t-test at level α with power 1 − β, the minimum detectable effect (MDE) for n
seeds per condition is d(n) · σ, where d(n) is the standardised effect the test detects
(statsmodels' `solve_power`):

- `independent` (two setups, or two languages, trained separately): `TTestIndPower`, n
  seeds on each side, d = Δ / σ with σ the pooled SD of the two sides (`pooled_sd`; one
  side's σ when planning against a condition assumed equally variable);
- `paired` (the same seeds run under both conditions, compared seed by seed):
  `TTestPower`, d = Δ / σ_diff with σ_diff the SD of the per-seed differences.

The seeds needed for a target Δ are the smallest n ≥ 2 whose MDE is ≤ Δ, i.e. whose power
at d = Δ / σ reaches 1 − β (Dodge et al. 2019 and Reimers & Gurevych 2017 on reporting
score distributions rather than single runs). σ = 0 needs the minimum, 2; σ NaN gives NA.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from statsmodels.stats.power import TTestIndPower, TTestPower

ALPHA = 0.05
POWER = 0.8
DELTA = 0.1
MIN_SEEDS = 2
DESIGNS = ("independent", "paired")
POWER_COLUMNS = ["design", "min_detectable_delta", "target_delta", "seeds_needed"]


def _power(design: str, effect: np.ndarray, n: np.ndarray, alpha: float) -> np.ndarray:
    """Power of the two-sided test of `design` at standardised effect `effect` with n seeds (per side)."""
    if design == "independent":
        return TTestIndPower().power(effect, nobs1=n, alpha=alpha, ratio=1.0, alternative="two-sided")
    return TTestPower().power(effect, nobs=n, alpha=alpha, alternative="two-sided")


def _detectable_effect(design: str, n: int, alpha: float, power: float) -> float:
    """d(n): the standardised effect the test detects with the given power (NaN below 2 seeds)."""
    if n < MIN_SEEDS:
        return np.nan
    if design == "independent":
        return TTestIndPower().solve_power(None, nobs1=n, alpha=alpha, power=power, alternative="two-sided")
    return TTestPower().solve_power(None, nobs=n, alpha=alpha, power=power, alternative="two-sided")


def _check_design(design: str) -> None:
    if design not in DESIGNS:
        raise ValueError(f"design {design!r} is not one of {DESIGNS}")


def pooled_sd(sd_a: ArrayLike, sd_b: ArrayLike, n_a: ArrayLike, n_b: ArrayLike) -> np.ndarray:
    """√(((n_a − 1) σ_a² + (n_b − 1) σ_b²) / (n_a + n_b − 2)): the σ of the independent design."""
    sd_a, sd_b, n_a, n_b = (np.asarray(x, dtype=float) for x in (sd_a, sd_b, n_a, n_b))
    return np.sqrt(((n_a - 1) * sd_a ** 2 + (n_b - 1) * sd_b ** 2) / (n_a + n_b - 2))


def min_detectable_delta(sigma: ArrayLike, n: ArrayLike, design: str = "independent", alpha: float = ALPHA,
                         power: float = POWER) -> np.ndarray:
    """MDE = d(n) · σ per element: the smallest |Δ| detected with `power` at level `alpha`."""
    _check_design(design)
    sigma, n = np.broadcast_arrays(np.asarray(sigma, dtype=float), np.asarray(n))
    effect = {int(k): _detectable_effect(design, int(k), alpha, power) for k in np.unique(n[~np.isnan(n)])}
    d = np.array([effect[int(k)] if not np.isnan(k) else np.nan for k in n.ravel()]).reshape(n.shape)
    return d * sigma


def seeds_needed(sigma: ArrayLike, delta: float = DELTA, design: str = "independent", alpha: float = ALPHA,
                 power: float = POWER) -> np.ndarray:
    """The smallest n ≥ 2 (per side) whose MDE ≤ `delta`, per σ; NaN where σ is NaN.

    Found on integers (doubling, then bisection, all σ at once) from the power function,
    since power ≥ 1 − β at d = Δ / σ is the same statement as MDE ≤ Δ.
    """
    _check_design(design)
    if delta <= 0:
        raise ValueError(f"delta must be > 0, got {delta}")
    sigma = np.asarray(sigma, dtype=float)
    effect = delta / np.where(sigma > 0, sigma, np.nan)

    def reached(k: np.ndarray) -> np.ndarray:
        return _power(design, effect, k, alpha) >= power

    low = np.full(sigma.shape, MIN_SEEDS - 1)   # largest n known not to reach the power
    high = np.full(sigma.shape, MIN_SEEDS)      # smallest n tried that reaches it
    todo = sigma > 0
    while (grow := todo & ~reached(high)).any():
        low, high = np.where(grow, high, low), np.where(grow, 2 * high, high)
    while (split := todo & (high - low > 1)).any():
        mid = np.where(split, (low + high) // 2, high)  # statsmodels answers NaN for all if any n < 2
        ok = reached(mid)
        low, high = np.where(split & ~ok, mid, low), np.where(split & ok, mid, high)
    return np.where(np.isnan(sigma), np.nan, high)


def power_table(table: pd.DataFrame, sigma: str = "sigma", n: str = "n", design: str = "independent",
                delta: float = DELTA, alpha: float = ALPHA, power: float = POWER) -> pd.DataFrame:
    """`table` (e.g. lang, setup, category, sigma, n) plus the power analysis of each row.

    Added columns: `design` (independent or paired); `min_detectable_delta` (MDE for the
    row's n seeds and σ at `alpha`, `power`); `target_delta` (`delta`); `seeds_needed`
    (smallest n per side whose MDE ≤ `delta`; nullable integer).
    """
    return table.assign(
        design=design,
        min_detectable_delta=min_detectable_delta(table[sigma], table[n], design, alpha, power),
        target_delta=delta,
        seeds_needed=pd.array(seeds_needed(table[sigma], delta, design, alpha, power), dtype="Int64"),
    )
