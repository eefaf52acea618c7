"""Minimum detectable ΔMCC and seeds needed, against statsmodels' power analysis."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.power import TTestIndPower, TTestPower

from stability.statistics.power import POWER_COLUMNS, min_detectable_delta, pooled_sd, power_table, seeds_needed

SIGMAS = np.array([0.02, 0.05, 0.08, 0.12, 0.3])
NS = np.array([3, 5, 10, 4, 20])


def reference_mde(design: str, sigma: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    if design == "independent":
        d = TTestIndPower().solve_power(effect_size=None, nobs1=n, alpha=alpha, power=power, ratio=1.0,
                                        alternative="two-sided")
    else:
        d = TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=power, alternative="two-sided")
    return d * sigma


@pytest.mark.parametrize("design", ["independent", "paired"])
def test_mde_equals_statsmodels(design):
    mde = min_detectable_delta(SIGMAS, NS, design)
    np.testing.assert_allclose(mde, [reference_mde(design, s, n) for s, n in zip(SIGMAS, NS)], rtol=1e-10)
    # other α and power
    mde = min_detectable_delta(SIGMAS, NS, design, alpha=0.01, power=0.9)
    np.testing.assert_allclose(mde, [reference_mde(design, s, n, 0.01, 0.9) for s, n in zip(SIGMAS, NS)],
                               rtol=1e-10)


def test_mde_below_two_seeds_is_nan():
    assert np.isnan(min_detectable_delta([0.1, 0.1], [1, 5])[0])


@pytest.mark.parametrize("design", ["independent", "paired"])
@pytest.mark.parametrize("delta", [0.1, 0.05])
def test_seeds_needed_is_smallest_n_with_mde_at_most_delta(design, delta):
    needed = seeds_needed(SIGMAS, delta, design)
    for sigma, n in zip(SIGMAS, needed.astype(int)):
        assert reference_mde(design, sigma, n) <= delta
        if n > 2:
            assert reference_mde(design, sigma, n - 1) > delta


def test_seeds_needed_known_values_and_edges():
    # d = 1 (σ = Δ = 0.1): the textbook 17 per group for a two-sample t-test; 10 pairs for a paired one
    assert seeds_needed([0.1], 0.1)[0] == 17
    assert seeds_needed([0.1], 0.1, "paired")[0] == 10
    needed = seeds_needed([0.0, np.nan, 1e-4], 0.1)
    assert needed[0] == 2 and np.isnan(needed[1]) and needed[2] == 2
    with pytest.raises(ValueError, match="delta"):
        seeds_needed([0.1], 0.0)
    with pytest.raises(ValueError, match="design"):
        seeds_needed([0.1], 0.1, "blocked")


def test_pooled_sd_by_hand():
    a, b = np.array([0.1, 0.3, 0.2]), np.array([0.5, 0.1, 0.4, 0.6, 0.2])
    pooled_var = (np.sum((a - a.mean()) ** 2) + np.sum((b - b.mean()) ** 2)) / (3 + 5 - 2)
    assert pooled_sd(a.std(ddof=1), b.std(ddof=1), 3, 5) == pytest.approx(np.sqrt(pooled_var))


def test_power_table():
    table = pd.DataFrame({"lang": ["fr", "de", "sv"], "setup": "rte", "category": "negation",
                          "sigma": [0.05, 0.1, np.nan], "n": [5, 10, 5]})
    out = power_table(table, design="paired", delta=0.1)
    assert list(out.columns) == list(table.columns) + POWER_COLUMNS
    np.testing.assert_allclose(out["min_detectable_delta"][:2],
                               [reference_mde("paired", 0.05, 5), reference_mde("paired", 0.1, 10)])
    assert list(out["seeds_needed"][:2]) == [5, 10] and out["seeds_needed"].isna().tolist() == [False, False, True]
    assert (out["design"] == "paired").all() and (out["target_delta"] == 0.1).all()
