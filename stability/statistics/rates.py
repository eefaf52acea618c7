"""How sure a share of runs is: the Wilson score interval of a count out of a total.

A failure rate of 1 run in 5 is 0.2, but 5 runs say little: the interval says how little.
The Wilson interval (statsmodels' `proportion_confint(method="wilson")`) stays inside
[0, 1] and keeps a width at 0 of 5 and 5 of 5, where the normal approximation collapses
to a point; it is the usual choice for the small totals of a seed sweep. At 0 of n its lower
bound is exactly 0 and at n of n its upper bound exactly 1 (statsmodels' arithmetic leaves
5.55e-17 there, which a table would print and a coverage check would count as a miss).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from statsmodels.stats.proportion import proportion_confint


def wilson_interval(count: ArrayLike, total: ArrayLike, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise Wilson interval of count / total at `confidence` (α = 1 − confidence);
    NaN where the total is 0 or unknown (NaN)."""
    count, total = np.broadcast_arrays(np.asarray(count, dtype=float), np.asarray(total, dtype=float))
    low, high = np.full(count.shape, np.nan), np.full(count.shape, np.nan)
    known = ~np.isnan(count) & ~np.isnan(total) & (total > 0)
    if known.any():
        low[known], high[known] = proportion_confint(count[known], total[known], alpha=1.0 - confidence,
                                                     method="wilson")
    low[known & (count == 0)] = 0.0
    high[known & (count == total)] = 1.0
    return low, high
