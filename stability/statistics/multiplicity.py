"""Comparisons a reviewer trusts: two-sided bootstrap p-values, adjusted over their family.

A comparison (setup A vs B, or language A vs B on one setup) tests every category at once;
with 33 fine categories × 5 languages that is 165 tests, and at α = 0.05 about 8 of them
look "significant" by chance alone. So each p-value is also given adjusted across the
family of cells it was tested with, by Holm (controls the family-wise error rate) and by
Benjamini–Hochberg (controls the false discovery rate), through
`statsmodels.stats.multitest.multipletests`, but for Holm's (`holm`, equal to it: see there why).

The p-values come from the multi-bootstrap (seeds and items resampled together, as the
report's intervals): with B replicates Δ* of Δ = B − A, k_le = #{Δ* ≤ 0} and
k_ge = #{Δ* ≥ 0}, the two-sided p-value is

    p = min(1, 2 · min((k_le + 1) / (B + 1), (k_ge + 1) / (B + 1)))

— twice the smaller one-sided p-value, each in the project's (k + 1) / (B + 1) form, which
is never 0 for a finite B.

Comparing two *languages* on one setup pairs the items: the diagnostic sets are parallel
(item `idx` is the same sentence pair translated), so one bootstrap sample draws the same
items for both languages and each language's seeds independently (its runs are independent
of the other language's). That is `paired_delta_replicates`, which also serves two setups
of one language.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from statsmodels.stats.multitest import multipletests

from stability.core.metrics import mcc_from_counts
from stability.statistics.bootstrap import (
    ItemMatrix,
    Score,
    draw_counts,
    item_draw_counts,
    p_at_or_below_zero,
    percentile_interval,
    point_estimate,
    resampled_scores,
)
from stability.statistics.clusters import merged

# statsmodels' method names for the two adjustments, by the column each fills.
ADJUSTMENTS = {"p_holm": "holm", "p_bh": "fdr_bh"}
DELTA_COLUMNS = ["category", "delta_mcc", "ci_low", "ci_high", "p_two_sided", "n_items"]


def adjusted_p(p_values: ArrayLike, method: str) -> np.ndarray:
    """p-values adjusted over their family by `multipletests(method=...)` ("holm", "fdr_bh", ...).

    NaN p-values (cells without a test) stay NaN and are not members of the family, so
    they neither count towards its size nor get an adjusted value.
    """
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    tested = ~np.isnan(p)
    if tested.any():
        adjusted[tested] = holm(p[tested]) if method == "holm" else multipletests(p[tested], method=method)[1]
    return adjusted


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values of one family, as `multipletests(p, method="holm")[1]` gives
    them (tests/statistics/test_multiplicity.py checks they are equal): the sorted p-values times m, m − 1,
    ..., 1, their running maximum, at most 1. Our own for a measured reason: statsmodels' Holm branch
    calls `gc.collect()` on every call, 0.3 s in a process holding what a report's holds (torch, pandas,
    the runs; about 1 s on a loaded machine) against 0.01 ms here (benchmarks/holm.py), and a report
    adjusts a family per table and per data-map group."""
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(len(p))
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1)))
    return adjusted


def adjust_family(table: pd.DataFrame, p_column: str = "p_two_sided") -> pd.DataFrame:
    """`table` plus `p_holm` and `p_bh`: `p_column` adjusted over all of the table's rows.

    The family is exactly the rows passed in (e.g. every (lang, category) cell of one
    comparison); the report says which family that was.
    """
    return table.assign(**{column: adjusted_p(table[p_column], method)
                           for column, method in ADJUSTMENTS.items()})


def p_two_sided(replicates: np.ndarray) -> np.ndarray:
    """Two-sided bootstrap p-value per column of (B, columns) replicates of a Δ.

    min(1, 2 · min(P(Δ* ≤ 0), P(Δ* ≥ 0))) with each one-sided P = (k + 1) / (B + 1);
    a column with any NaN replicate (a score undefined in some sample) gets NaN.
    """
    replicates = np.asarray(replicates, dtype=float)
    one_sided = np.minimum(p_at_or_below_zero(replicates), p_at_or_below_zero(-replicates))
    return np.where(np.isnan(replicates).any(axis=0), np.nan, np.minimum(1.0, 2.0 * one_sided))


@dataclass(frozen=True)
class PairedDeltas:
    """Δ = score(B) − score(A) per category on the items A and B share, with its replicates."""

    idx: np.ndarray          # (items,) the shared item ids the comparison used
    estimate: np.ndarray     # (categories,) Δ on all shared items, all seeds
    replicates: np.ndarray   # (n_boot, categories) multi-bootstrap replicates of Δ
    n_items: np.ndarray      # (categories,) shared items per category (A's membership)


def paired_delta_replicates(rng: np.random.Generator, n_boot: int, a: ItemMatrix, b: ItemMatrix,
                            score: Score = mcc_from_counts) -> PairedDeltas:
    """Multi-bootstrap of Δ = B − A, paired over items, seeds drawn per side.

    A and B are the runs of two languages on one setup (or two setups of one language),
    each an `ItemMatrix` (`stability.report.bootstrap.item_matrix`). Only items whose `idx`
    both have are used; every sample draws one multiset of those items for both sides and
    each side's seeds with replacement on its own, so item difficulty cancels in Δ while
    seed variation of both sides enters it. Items clustered on either side are drawn as one
    cluster (`clusters.merged`). Raises ValueError when no item is shared.
    """
    shared = np.intersect1d(a.idx, b.idx)
    if shared.size == 0:
        raise ValueError("the two sides share no item idx")
    a, b = a.select(shared), b.select(shared)
    sides = [side.clusters for side in (a, b) if side.clusters is not None]
    items = item_draw_counts(rng, n_boot, len(shared), merged(*sides) if sides else None)
    replicates = (resampled_scores(items, draw_counts(rng, n_boot, len(b.preds)), b, score)
                  - resampled_scores(items, draw_counts(rng, n_boot, len(a.preds)), a, score))
    return PairedDeltas(shared, point_estimate(b, score) - point_estimate(a, score), replicates,
                        a.membership.sum(axis=0).astype(int))


def delta_table(deltas: PairedDeltas, categories: Sequence[str], confidence: float) -> pd.DataFrame:
    """One row per category: Δ, its percentile interval and the two-sided p-value.

    Columns: `category`; `delta_mcc` (B − A, on the shared items); `ci_low`, `ci_high`
    (percentile interval of the replicates at `confidence`); `p_two_sided` (H0: Δ = 0);
    `n_items` (shared items of the category). Pass the rows of all cells of one
    comparison to `adjust_family` for `p_holm` and `p_bh`.
    """
    low, high = percentile_interval(deltas.replicates, confidence)
    return pd.DataFrame({"category": list(categories), "delta_mcc": deltas.estimate, "ci_low": low,
                         "ci_high": high, "p_two_sided": p_two_sided(deltas.replicates),
                         "n_items": deltas.n_items})[DELTA_COLUMNS]
