"""Multiplicity control against statsmodels, two-sided p-values with known answers, and the
paired-over-items language comparison against explicit resampling scored by scikit-learn."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef
from statsmodels.stats.multitest import multipletests

from stability.statistics.bootstrap import ItemMatrix, draw_counts
from stability.statistics.multiplicity import (
    DELTA_COLUMNS,
    adjust_family,
    adjusted_p,
    delta_table,
    holm,
    p_two_sided,
    paired_delta_replicates,
)

P_VALUES = np.array([0.001, 0.04, 0.03, 0.2, 0.012, 0.5, 0.049, 0.0001])
pytestmark = pytest.mark.usefixtures("holm_without_gc")   # statsmodels, the reference, without its gc.collect()


@pytest.mark.parametrize("method", ["holm", "fdr_bh"])
def test_adjusted_p_equals_multipletests(method):
    np.testing.assert_allclose(adjusted_p(P_VALUES, method), multipletests(P_VALUES, method=method)[1])


@pytest.mark.parametrize("method", ["holm", "fdr_bh"])
def test_nan_p_values_stay_nan_and_leave_the_family(method):
    mixed = np.insert(P_VALUES, [0, 3, 3, 8], np.nan)
    adjusted = adjusted_p(mixed, method)
    assert np.isnan(adjusted[np.isnan(mixed)]).all()
    # the family is the 8 real p-values, not 12
    np.testing.assert_allclose(adjusted[~np.isnan(mixed)], multipletests(P_VALUES, method=method)[1])


def test_holm_equals_statsmodels_on_families_with_ties_and_values_past_one():
    """`holm` (statsmodels' Holm without its gc.collect()) on 200 random families of 1–40 p-values,
    some rounded so that they tie, some large enough that Holm cuts them at 1."""
    rng = np.random.default_rng(3)
    for size in rng.integers(1, 41, 200):
        p = rng.random(size) ** rng.uniform(0.5, 4)
        if size > 3:
            p[: size // 3] = np.round(p[: size // 3], 1)
        np.testing.assert_array_equal(holm(p), multipletests(p, method="holm")[1])


def test_holm_by_hand():
    # Holm: sorted p (0.01, 0.02, 0.04) times (3, 2, 1), running maximum -> 0.03, 0.04, 0.04
    np.testing.assert_allclose(adjusted_p([0.04, 0.01, 0.02], "holm"), [0.04, 0.03, 0.04])
    # BH: p_(i) · m / i = 0.03, 0.03, 0.04, running minimum from the top -> 0.03, 0.03, 0.04
    np.testing.assert_allclose(adjusted_p([0.04, 0.01, 0.02], "fdr_bh"), [0.04, 0.03, 0.03])


def test_adjust_family_adds_both_columns_over_all_rows():
    table = pd.DataFrame({"lang": list("abcdefgh"), "p_two_sided": P_VALUES})
    out = adjust_family(table)
    np.testing.assert_allclose(out["p_holm"], multipletests(P_VALUES, method="holm")[1])
    np.testing.assert_allclose(out["p_bh"], multipletests(P_VALUES, method="fdr_bh")[1])
    assert list(out.columns) == ["lang", "p_two_sided", "p_holm", "p_bh"]


def test_two_sided_p_known_answers():
    n_boot = 999
    positive = np.linspace(0.01, 1.0, n_boot)[:, None]
    assert p_two_sided(positive)[0] == pytest.approx(2 / (n_boot + 1))          # k_le = 0
    assert p_two_sided(-positive)[0] == pytest.approx(2 / (n_boot + 1))         # k_ge = 0
    symmetric = np.concatenate([-positive, positive])                           # k_le = k_ge = B / 2
    assert p_two_sided(symmetric)[0] == 1.0
    # 10 of 99 replicates ≤ 0 (and none exactly 0): 2 · (10 + 1) / (99 + 1) = 0.22
    mostly_positive = np.concatenate([-np.ones(10), np.ones(89)])[:, None]
    assert p_two_sided(mostly_positive)[0] == pytest.approx(0.22)
    # replicates exactly 0 count on both sides: all zero -> min(1, 2 · 1) = 1
    assert p_two_sided(np.zeros((50, 1)))[0] == 1.0


def test_two_sided_p_is_nan_for_undefined_scores():
    replicates = np.column_stack([np.ones(9), np.r_[np.ones(8), np.nan]])
    p = p_two_sided(replicates)
    assert p[0] == pytest.approx(0.2) and np.isnan(p[1])


def _runs(rng: np.random.Generator, idx: np.ndarray, labels: np.ndarray, accuracies: list[float]) -> ItemMatrix:
    preds = np.array([np.where(rng.random(len(labels)) < acc, labels, 1 - labels) for acc in accuracies])
    membership = np.column_stack([idx % 3 == 0, np.ones(len(labels), bool)])
    return ItemMatrix(idx, labels, preds, membership)


def _mcc(labels: np.ndarray, preds: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(matthews_corrcoef(labels, preds))


@pytest.fixture
def two_languages() -> tuple[ItemMatrix, ItemMatrix]:
    """Language A on items 0..119, language B on items 20..139 (100 shared); labels and categories
    belong to the item, as in the parallel diagnostic sets."""
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 140)
    a = _runs(rng, np.arange(120), labels[:120], [0.6, 0.65, 0.7])
    b = _runs(rng, np.arange(20, 140), labels[20:], [0.95, 0.97])
    return a, b


def test_paired_replicates_equal_explicit_resampling(two_languages):
    a, b = two_languages
    deltas = paired_delta_replicates(np.random.default_rng(11), 3, a, b)
    np.testing.assert_array_equal(deltas.idx, np.arange(20, 120))
    a_shared, b_shared = a.select(deltas.idx), b.select(deltas.idx)
    # the same draws, in the function's order: items (shared by both), then B's seeds, then A's
    rng = np.random.default_rng(11)
    items, seeds_b, seeds_a = draw_counts(rng, 3, 100), draw_counts(rng, 3, 2), draw_counts(rng, 3, 3)
    for sample in range(3):
        drawn = np.repeat(np.arange(100), items[sample])
        for c in range(2):
            chosen = drawn[a_shared.membership[drawn, c]]

            def mean_mcc(runs: ItemMatrix, seed_counts: np.ndarray) -> float:
                seeds = np.repeat(np.arange(len(runs.preds)), seed_counts)
                return np.mean([_mcc(runs.labels[chosen], runs.preds[s, chosen]) for s in seeds])

            expected = mean_mcc(b_shared, seeds_b[sample]) - mean_mcc(a_shared, seeds_a[sample])
            assert deltas.replicates[sample, c] == pytest.approx(expected, abs=1e-12)
    # the estimate: mean MCC over all seeds on all shared items, B − A
    for c in range(2):
        chosen = np.flatnonzero(a_shared.membership[:, c])
        expected = (np.mean([_mcc(b_shared.labels[chosen], p[chosen]) for p in b_shared.preds])
                    - np.mean([_mcc(a_shared.labels[chosen], p[chosen]) for p in a_shared.preds]))
        assert deltas.estimate[c] == pytest.approx(expected, abs=1e-12)
    np.testing.assert_array_equal(deltas.n_items, [33, 100])  # multiples of 3 in 20..119


def test_items_are_paired_between_languages():
    """One seed per side and identical predictions: only unpaired item draws could make Δ* ≠ 0."""
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 2, 80)
    a = _runs(rng, np.arange(80), labels, [0.7])
    deltas = paired_delta_replicates(np.random.default_rng(0), 200, a, a)
    assert np.all(deltas.replicates == 0.0) and np.all(deltas.estimate == 0.0)


def test_no_shared_items_is_an_error(two_languages):
    a, b = two_languages
    with pytest.raises(ValueError, match="share no item"):
        paired_delta_replicates(np.random.default_rng(0), 10, a.select(np.arange(10)), b)


def test_delta_table_columns(two_languages):
    a, b = two_languages
    deltas = paired_delta_replicates(np.random.default_rng(1), 400, a, b)
    table = delta_table(deltas, ["one_in_three", "overall"], 0.9)
    assert list(table.columns) == DELTA_COLUMNS
    np.testing.assert_allclose(table["delta_mcc"], deltas.estimate)
    np.testing.assert_allclose(table["ci_low"], np.quantile(deltas.replicates, 0.05, axis=0))
    np.testing.assert_allclose(table["p_two_sided"], p_two_sided(deltas.replicates))
    # B is far more accurate than A: every replicate above 0 on all items
    assert table.loc[1, "p_two_sided"] == pytest.approx(2 / 401)
