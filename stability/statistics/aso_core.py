"""deepsig's almost stochastic order, vectorised over many simulated pairs of seed samples.

`deepsig.aso` computes one ε_min in Python, one bootstrap iteration at a time (about 10 ms per
iteration and pair); the calibration needs it for thousands of simulated A/A pairs at once, which
deepsig would take hours for (measured reason for this module). The estimator is deepsig's, step for
step (deepsig 1.2.x, `deepsig/aso.py`):

- the empirical quantile function of n scores at t is the sorted score number ⌈n t⌉ (1-based,
  clipped to 1..n), evaluated on the grid t = dt, 2 dt, …, < 1 (`np.arange(dt, 1, dt)`);
- the violation ratio is Σ_{t > dt, F⁻¹(t) < G⁻¹(t)} (G⁻¹ − F⁻¹)² / Σ_t (G⁻¹ − F⁻¹)² (0.5 when the
  denominator is 0), A's quantiles F⁻¹, B's G⁻¹;
- each bootstrap iteration draws n_a and n_b scores from the empirical distributions (deepsig: the
  quantile function at uniform draws, i.e. sorted scores at uniform indices);
- σ̂ = std(√(n_a n_b / (n_a + n_b)) (ratios* − ratio)), ε_min = clip(ratio − σ̂ / √(…) · Φ⁻¹(1 − c), 0, 1),
  and the other direction 1 − ratio with the same σ̂ (deepsig's `multi_aso`).

Here the quantile functions are piecewise constant, so the grid collapses to the few segments where
neither index changes (`_segments`), and the bootstrap draws are index arrays shared by every
simulated pair. With deepsig's own draws the result equals `deepsig.aso` (tests/statistics/test_aso_core.py).
"""
from __future__ import annotations

import numpy as np
from scipy import stats

DT = 0.005   # deepsig's default differential


def _segments(n_a: int, n_b: int, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(index into sorted A, into sorted B, grid points in the segment, of them in the violation sum)."""
    t = np.arange(dt, 1, dt)
    index_a = np.clip(np.ceil(n_a * t).astype(int) - 1, 0, n_a - 1)
    index_b = np.clip(np.ceil(n_b * t).astype(int) - 1, 0, n_b - 1)
    counted = np.ones(len(t), bool)
    counted[0] = False   # deepsig leaves t = dt out of the violation set
    keys = index_a * (n_b + 1) * 2 + index_b * 2 + counted
    unique, first, weight = np.unique(keys, return_index=True, return_counts=True)
    return index_a[first], index_b[first], weight.astype(float), np.where(counted[first], weight, 0).astype(float)


def violation_ratio(sorted_a: np.ndarray, sorted_b: np.ndarray, dt: float = DT) -> np.ndarray:
    """ε_W(A, B) of each pair of sorted samples (scores on the last axis, leading axes broadcast)."""
    index_a, index_b, weight, violated = _segments(sorted_a.shape[-1], sorted_b.shape[-1], dt)
    diff = sorted_b[..., index_b] - sorted_a[..., index_a]
    squares = diff ** 2
    total = squares @ weight
    violation = np.where(diff > 0, squares, 0.0) @ violated
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total == 0, 0.5, violation / total)


def epsilon_min(a: np.ndarray, b: np.ndarray, draws_a: np.ndarray, draws_b: np.ndarray, confidence: float,
                dt: float = DT) -> tuple[np.ndarray, np.ndarray]:
    """(ε_min(A over B), ε_min(B over A)) per row of `a` (…, n_a) and `b` (…, n_b).

    `draws_a` (iterations, n_a) and `draws_b` (iterations, n_b) are the bootstrap's indices into
    each sorted sample, shared by all rows. Rows are independent samples; the bootstrap is deepsig's.
    """
    sorted_a, sorted_b = np.sort(a, axis=-1), np.sort(b, axis=-1)
    ratio = violation_ratio(sorted_a, sorted_b, dt)
    resampled_a = np.sort(sorted_a[..., draws_a], axis=-1)   # (…, iterations, n_a)
    resampled_b = np.sort(sorted_b[..., draws_b], axis=-1)
    samples = violation_ratio(resampled_a, resampled_b, dt)
    n_a, n_b = a.shape[-1], b.shape[-1]
    const = np.sqrt(n_a * n_b / (n_a + n_b))
    sigma = np.std(const * (samples - ratio[..., None]), axis=-1)
    shift = sigma / const * stats.norm.ppf(1 - confidence)
    return np.clip(ratio - shift, 0, 1), np.clip(1 - ratio - shift, 0, 1)
