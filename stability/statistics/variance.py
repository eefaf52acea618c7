"""Where seed variance comes from: weight initialisation, data order, or neither alone.

A sweep that crosses `seed_init` × `seed_order` (every initialisation trained with every
data order, one run per cell) lets a category's MCC variance be split into its sources, as
Dodge et al. (2020) did for fine-tuning BERT. With one value per cell this is a two-way
ANOVA without replication (statsmodels' `ols("y ~ C(init) + C(order)")` and `anova_lm`;
for a full, balanced grid type 1 and type 2 sums of squares coincide):

    SS_init     = n_order · Σ_i (ȳ_i· − ȳ)²
    SS_order    = n_init  · Σ_j (ȳ_·j − ȳ)²
    SS_residual = Σ_ij (y_ij − ȳ_i· − ȳ_·j + ȳ)²    (interaction and noise, inseparable here)

The table reports the **shares of the sums of squares**, SS_x / (SS_init + SS_order +
SS_residual), which sum to 1, and beside them the random-effects variance components
from the mean squares (MS = SS / df):

    var_init     = max(0, (MS_init − MS_residual) / n_order)
    var_order    = max(0, (MS_order − MS_residual) / n_init)
    var_residual = MS_residual

which estimate the variance one more initialisation (or data order) would add.

Only a full grid decomposes: a group with a missing cell, or fewer than two levels of a
factor, gets NaN for every sum, share and component (`n_init`, `n_order` still say what it
had). Two values in one cell mean two runs were pooled (e.g. two variants), which seed
statistics never do: a ValueError.
"""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pandas as pd
from statsmodels.formula.api import ols
from statsmodels.tools.sm_exceptions import ValueWarning
from statsmodels.stats.anova import anova_lm

VARIANCE_COLUMNS = ["n_init", "n_order", "ss_init", "ss_order", "ss_residual",
                    "share_init", "share_order", "share_residual", "var_init", "var_order", "var_residual"]
_TERMS = {"init": "C(init)", "order": "C(order)", "residual": "Residual"}


def is_full_grid(grid: pd.DataFrame, init: str = "seed_init", order: str = "seed_order") -> bool:
    """Whether every init × order cell holds a value and each factor has at least two levels."""
    levels_init, levels_order = grid[init].nunique(), grid[order].nunique()
    return (levels_init >= 2 and levels_order >= 2 and len(grid) == levels_init * levels_order
            and not grid[[init, order]].duplicated().any())


def variance_decomposition(grid: pd.DataFrame, value: str = "mcc", init: str = "seed_init",
                           order: str = "seed_order") -> pd.Series:
    """Sums of squares, their shares and random-effects components of one seed_init × seed_order grid.

    `grid` has one row per run: `init`, `order` and the run's `value` (e.g. a category's
    MCC); a row whose value is NaN is a missing cell. Returns a Series indexed by
    `VARIANCE_COLUMNS` (see the module docstring); shares are NaN when every value is
    equal (nothing to decompose).
    """
    cells = grid.rename(columns={value: "y", init: "init", order: "order"})[["init", "order", "y"]]
    if cells[["init", "order"]].duplicated().any():
        raise ValueError("two runs in one seed_init × seed_order cell: pool no variants or setups")
    cells = cells.dropna(subset=["y"])
    n_init, n_order = cells["init"].nunique(), cells["order"].nunique()
    out = pd.Series(np.nan, index=VARIANCE_COLUMNS)
    out[["n_init", "n_order"]] = n_init, n_order
    if not is_full_grid(cells, "init", "order"):
        return out
    if cells["y"].nunique() == 1:   # equal values: nothing to decompose (and a fit of rounding noise)
        out[[f"{kind}_{source}" for kind in ("ss", "var") for source in _TERMS]] = 0.0
        return out
    with warnings.catch_warnings():
        # anova_lm also computes F tests, unused here, which divide by a zero residual of an exact fit
        warnings.simplefilter("ignore", ValueWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        anova = anova_lm(ols("y ~ C(init) + C(order)", data=cells).fit(), typ=2)
    ss = {source: float(anova.loc[term, "sum_sq"]) for source, term in _TERMS.items()}
    ms = {source: ss[source] / float(anova.loc[term, "df"]) for source, term in _TERMS.items()}
    total = sum(ss.values())
    for source in _TERMS:
        out[f"ss_{source}"] = ss[source]
        out[f"share_{source}"] = ss[source] / total
    out["var_init"] = max(0.0, (ms["init"] - ms["residual"]) / n_order)
    out["var_order"] = max(0.0, (ms["order"] - ms["residual"]) / n_init)
    out["var_residual"] = ms["residual"]
    return out


def variance_table(scores: pd.DataFrame, by: Sequence[str], value: str = "mcc", init: str = "seed_init",
                   order: str = "seed_order") -> pd.DataFrame:
    """`variance_decomposition` per group of `by` (e.g. lang, setup, category).

    Columns: the `by` columns, then `VARIANCE_COLUMNS`: `n_init`, `n_order` (levels in
    the grid); `ss_*` (sums of squares); `share_*` (SS shares, summing to 1: what the
    report's table and stacked-share figure show); `var_*` (random-effects components).
    """
    rows = [[*key, *variance_decomposition(grid, value, init, order)]
            for key, grid in scores.groupby(list(by), sort=True)]
    table = pd.DataFrame(rows, columns=[*by, *VARIANCE_COLUMNS])
    return table.astype({"n_init": int, "n_order": int})
