"""Variance sources of a seed_init × seed_order grid: pure effects land in their own share, and
a random grid's sums of squares equal statsmodels' two-way ANOVA and a numpy hand computation."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm

from stability.statistics.variance import VARIANCE_COLUMNS, is_full_grid, variance_decomposition, variance_table


def grid(values: np.ndarray) -> pd.DataFrame:
    """Rows = seed_init, columns = seed_order, one MCC per cell."""
    return pd.DataFrame([(i, o, values[i, o]) for i in range(values.shape[0]) for o in range(values.shape[1])],
                        columns=["seed_init", "seed_order", "mcc"])


def test_pure_init_effect_is_all_init():
    init_effect = np.array([0.1, 0.3, 0.25])[:, None] + np.zeros((3, 4))
    out = variance_decomposition(grid(init_effect))
    assert out["share_init"] == pytest.approx(1.0)
    assert out["share_order"] == pytest.approx(0.0, abs=1e-12)
    assert out["share_residual"] == pytest.approx(0.0, abs=1e-12)
    assert out["var_order"] == pytest.approx(0.0, abs=1e-12)
    # var_init: MS_init / n_order with MS_res = 0; MS_init = 4 · Σ(ȳ_i − ȳ)² / 2
    effects = np.array([0.1, 0.3, 0.25])
    assert out["var_init"] == pytest.approx(4 * np.sum((effects - effects.mean()) ** 2) / 2 / 4)


def test_pure_order_effect_is_all_order():
    order_effect = np.zeros((4, 1)) + np.array([0.5, 0.2, 0.4])[None, :]
    out = variance_decomposition(grid(order_effect))
    assert out["share_order"] == pytest.approx(1.0)
    assert out["share_init"] == pytest.approx(0.0, abs=1e-12) and out["share_residual"] == pytest.approx(0.0, abs=1e-12)


def test_random_grid_equals_statsmodels_and_hand_computation():
    rng = np.random.default_rng(4)
    values = rng.normal(0.4, 0.1, (4, 5)) + rng.normal(0, 0.05, (4, 1))
    out = variance_decomposition(grid(values))
    # statsmodels, fitted here directly (type 1 sums of squares: the same on a full grid)
    reference = anova_lm(ols("mcc ~ C(seed_init) + C(seed_order)", data=grid(values)).fit(), typ=1)
    assert out["ss_init"] == pytest.approx(reference.loc["C(seed_init)", "sum_sq"])
    assert out["ss_order"] == pytest.approx(reference.loc["C(seed_order)", "sum_sq"])
    assert out["ss_residual"] == pytest.approx(reference.loc["Residual", "sum_sq"])
    # numpy by hand
    mean, rows, cols = values.mean(), values.mean(axis=1), values.mean(axis=0)
    ss_rows = 5 * np.sum((rows - mean) ** 2)
    ss_cols = 4 * np.sum((cols - mean) ** 2)
    ss_res = np.sum((values - rows[:, None] - cols[None, :] + mean) ** 2)
    total = np.sum((values - mean) ** 2)
    assert ss_rows + ss_cols + ss_res == pytest.approx(total)
    assert [out["ss_init"], out["ss_order"], out["ss_residual"]] == pytest.approx([ss_rows, ss_cols, ss_res])
    assert [out["share_init"], out["share_order"], out["share_residual"]] == pytest.approx(
        [ss_rows / total, ss_cols / total, ss_res / total])
    ms_res = ss_res / (3 * 4)
    assert out["var_init"] == pytest.approx(max(0.0, (ss_rows / 3 - ms_res) / 5))
    assert out["var_order"] == pytest.approx(max(0.0, (ss_cols / 4 - ms_res) / 4))
    assert out["var_residual"] == pytest.approx(ms_res)


def test_incomplete_grid_is_nan():
    cells = grid(np.arange(6.0).reshape(2, 3)).iloc[:-1]      # one cell missing
    assert not is_full_grid(cells)
    out = variance_decomposition(cells)
    assert (out["n_init"], out["n_order"]) == (2, 3)
    assert out.drop(["n_init", "n_order"]).isna().all()
    one_order = grid(np.arange(3.0).reshape(3, 1))              # a single data order: nothing to split
    assert variance_decomposition(one_order).drop(["n_init", "n_order"]).isna().all()
    missing_value = grid(np.array([[1.0, 2.0], [3.0, np.nan]]))
    assert np.isnan(variance_decomposition(missing_value)["share_init"])


def test_a_pooled_cell_is_an_error():
    cells = grid(np.arange(4.0).reshape(2, 2))
    with pytest.raises(ValueError, match="two runs in one"):
        variance_decomposition(pd.concat([cells, cells.iloc[:1]]))


def test_constant_grid_has_no_shares():
    out = variance_decomposition(grid(np.full((2, 2), 0.3)))
    assert out["ss_init"] == pytest.approx(0.0, abs=1e-20) and np.isnan(out["share_init"])


def test_variance_table_per_category():
    rng = np.random.default_rng(1)
    frames = []
    for category in ("negation", "quantifiers"):
        frames.append(grid(rng.normal(0.3, 0.1, (2, 3))).assign(lang="fr", category=category))
    scores = pd.concat(frames, ignore_index=True)
    table = variance_table(scores, ["lang", "category"])
    assert list(table.columns) == ["lang", "category", *VARIANCE_COLUMNS]
    assert list(table["category"]) == ["negation", "quantifiers"]
    for _, row in table.iterrows():
        expected = variance_decomposition(scores[scores["category"] == row["category"]])
        np.testing.assert_allclose(row[VARIANCE_COLUMNS].to_numpy(float), expected.to_numpy(float))
        assert row[["share_init", "share_order", "share_residual"]].sum() == pytest.approx(1.0)
