"""The vectorised ASO core (`stability.statistics.aso_core`) equals deepsig given deepsig's own draws."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from stability.statistics.aso_core import epsilon_min, violation_ratio

# the module (deepsig's package namespace shadows it with the function `aso`)
DEEPSIG_ASO = pytest.importorskip("deepsig.aso")


def _deepsig_draws(n: int, seed: int, iterations: int, other: int) -> tuple[np.ndarray, np.ndarray]:
    """The indices deepsig's bootstrap draws: per iteration k, np.random.seed(seed + k + 1), then
    uniform(0, 1, n_a) and uniform(0, 1, n_b), each mapped to the sorted score ⌈n u⌉."""
    draws_a, draws_b = [], []
    for k in range(iterations):
        np.random.seed(seed + k + 1)
        for size, draws in ((n, draws_a), (other, draws_b)):
            draws.append(np.clip(np.ceil(size * np.random.uniform(0, 1, size)).astype(int) - 1, 0, size - 1))
    return np.array(draws_a), np.array(draws_b)


@pytest.mark.parametrize("n_a,n_b", [(3, 3), (5, 7), (6, 6)])
def test_violation_ratio_equals_deepsigs(n_a, n_b):
    rng = np.random.default_rng(n_a * 10 + n_b)
    for _ in range(5):
        a, b = rng.normal(0.3, 0.05, n_a), rng.normal(0.32, 0.05, n_b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = DEEPSIG_ASO.compute_violation_ratio(a, b, dt=0.005)
        assert violation_ratio(np.sort(a), np.sort(b)) == pytest.approx(expected, rel=1e-10)


def test_epsilon_min_equals_deepsig_aso_with_its_draws():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.3, 0.05, 5), rng.normal(0.35, 0.05, 6)
    draws_a, draws_b = _deepsig_draws(5, 7, 50, 6)
    a_over_b, b_over_a = epsilon_min(a, b, draws_a, draws_b, 0.95)
    expected = DEEPSIG_ASO.aso(a, b, confidence_level=0.95, num_bootstrap_iterations=50, show_progress=False, seed=7)
    assert a_over_b == pytest.approx(expected, rel=1e-10)
    # rows are independent samples evaluated at once
    rows_a, rows_b = np.stack([a, b[:5]]), np.stack([b, np.r_[a, 0.3]])
    stacked = epsilon_min(rows_a, rows_b, draws_a, draws_b, 0.95)
    assert stacked[0][0] == pytest.approx(a_over_b) and stacked[1][0] == pytest.approx(b_over_a)
