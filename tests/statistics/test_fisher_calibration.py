"""The data maps' Fisher tests checked by simulation: the vectorised p-value is scipy's `fisher_exact`, Holm's
any-rejection is statsmodels', on independent items Fisher's test holds its 5 % (it is conservative), and a
test that treats clustered items as independent is caught far above 5 %."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import fisher_exact
from statsmodels.stats.multitest import multipletests

from stability.statistics.fisher_calibration import (CLUSTERED, FISHER, HOLM, INDEPENDENT, UNCORRECTED,
                                                     FeatureDesign, calibrate_features, fisher_two_sided, holm_any,
                                                     worlds_of)


def test_the_p_value_is_scipys_fisher_exact():
    rng = np.random.default_rng(0)
    for _ in range(300):
        total = int(rng.integers(2, 80))
        with_feature = int(rng.integers(0, total + 1))
        ambiguous = int(rng.integers(0, total + 1))
        low, high = max(0, ambiguous - (total - with_feature)), min(with_feature, ambiguous)
        x = int(rng.integers(low, high + 1))
        table = [[x, with_feature - x], [ambiguous - x, total - with_feature - ambiguous + x]]
        expected = fisher_exact(table, alternative="two-sided").pvalue
        assert fisher_two_sided(np.array([x]), with_feature, np.array([ambiguous]), total)[0] == \
            pytest.approx(expected, rel=1e-9, abs=1e-12), table


def test_holm_any_is_statsmodels_holm(holm_without_gc):
    rng = np.random.default_rng(1)
    p = rng.random((16, 7)) ** 3   # about half the rows reject
    expected = [multipletests(row, method="holm")[0].any() for row in p]
    np.testing.assert_array_equal(holm_any(p), expected)
    assert 3 < sum(expected) < 13


def _design(rng: np.random.Generator, clusters: np.ndarray, per_cluster_features: bool) -> FeatureDesign:
    """Eight features of 10–40 % of the items; with `per_cluster_features` a feature is a cluster's (all its
    items have it or none), as a feature of a shared premise is."""
    shares = rng.uniform(0.1, 0.4, 8)
    if per_cluster_features:
        has = rng.random((8, clusters.max() + 1)) < shares[:, None]
        has = has[:, clusters]
    else:
        has = rng.random((8, len(clusters))) < shares[:, None]
    return FeatureDesign(has, clusters, 0.3)


def test_independent_items_hold_five_percent_and_clusters_treated_as_items_do_not():
    rng = np.random.default_rng(2)
    singletons = np.arange(600)
    table = calibrate_features(_design(rng, singletons, False), sims=400, rng=rng)
    assert set(table["world"]) == {INDEPENDENT} and set(table["statistic"]) == {FISHER}
    rates = table.set_index("method")
    # Fisher's test is exact, hence conservative on a discrete null: at most 5 % within Monte-Carlo error
    assert rates.loc[UNCORRECTED, "mc_low"] <= 0.05 and rates.loc[UNCORRECTED, "measured"] < 0.06
    assert rates.loc[HOLM, "mc_low"] <= 0.05
    # 600 items in clusters of 6, each feature a cluster's: the clustered world's rejections are far above 5 %
    clusters = np.repeat(np.arange(100), 6)
    design = _design(rng, clusters, True)
    assert worlds_of(design) == (INDEPENDENT, CLUSTERED)
    table = calibrate_features(design, sims=400, rng=rng).set_index(["world", "method"])
    assert table.loc[(INDEPENDENT, UNCORRECTED), "mc_low"] <= 0.05
    assert table.loc[(CLUSTERED, UNCORRECTED), "mc_low"] > 0.2
    assert table.loc[(CLUSTERED, HOLM), "mc_low"] > 0.2
    assert (table["sims"].loc[(slice(None), HOLM)] == 400).all()
    assert (table["sims"].loc[(slice(None), UNCORRECTED)] == 400 * 8).all()
