"""Cohen's κ (core.metrics) against scikit-learn and values computed by hand."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from stability.core.metrics import cohen_kappa, confusion, kappa_from_counts


def test_kappa_by_hand():
    # a 0,0,0,1,1,1,0,1 / b 0,0,1,1,1,0,0,1: p_o = 6/8, both say 1 half the time -> p_e = 1/2
    assert cohen_kappa([0, 0, 0, 1, 1, 1, 0, 1], [0, 0, 1, 1, 1, 0, 0, 1]) == pytest.approx(0.5)
    assert cohen_kappa([0, 1, 0, 1], [0, 1, 0, 1]) == pytest.approx(1.0)
    assert cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)


@pytest.mark.parametrize("n", [3, 10, 57, 400])
def test_kappa_matches_sklearn(n):
    rng = np.random.default_rng(n)
    for _ in range(50):
        a = rng.integers(0, 2, n)
        b = np.where(rng.random(n) < rng.random(), a, rng.integers(0, 2, n))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = cohen_kappa_score(a, b)
        ours = cohen_kappa(a, b)
        if np.isnan(expected):               # both constant on one label: undefined
            assert ours is None
        else:
            assert ours == pytest.approx(expected, abs=1e-12)


def test_constant_raters_score_zero():
    # one run constant, the other not: chance explains all agreement, κ = 0 (sklearn agrees)
    assert cohen_kappa([0] * 6, [0, 0, 0, 0, 1, 1]) == pytest.approx(0.0)
    assert cohen_kappa_score([0] * 6, [0, 0, 0, 0, 1, 1]) == pytest.approx(0.0)
    # both constant on the same label: 100 % agreement, κ undefined -> None, 0.0 from counts
    assert cohen_kappa([0] * 6, [0] * 6) is None
    assert kappa_from_counts(*confusion([0] * 6, [0] * 6)) == 0.0


def test_kappa_from_counts_is_elementwise():
    counts = np.array([[3, 1, 1, 3], [0, 0, 0, 8], [2, 2, 2, 2]])
    np.testing.assert_allclose(kappa_from_counts(*counts.T), [0.5, 0.0, 0.0])
