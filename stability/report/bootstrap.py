"""Multi-bootstrap confidence intervals of the report: per (lang, setup, variant, category), and
for the difference between two conditions (docs/design.md, "Metrics").

The resampling itself (seeds and items together, any score of the confusion counts) is
`stability.statistics.bootstrap`; this module arranges the runs' predictions into its item
matrices and the intervals into the report's tables.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from stability.core.metrics import mcc_from_counts
from stability.core.taxonomy import FINE_CATEGORIES
from stability.report.collect import OVERALL
from stability.report.compare import Condition
from stability.statistics.bootstrap import (
    ItemMatrix,
    Score,
    bootstrap_samples,
    draw_counts,
    p_at_or_below_zero,
    percentile_interval,
    point_estimate,
    resampled_scores,
)
from stability.statistics.membership import fine_membership
from stability.statistics.seeds import GROUP_KEY

# The 33 fine categories, then all items (the overall MCC).
CI_CATEGORIES: tuple[str, ...] = FINE_CATEGORIES + (OVERALL,)
CI_COLUMNS = ["lang", "setup", "variant", "category", "estimate", "ci_low", "ci_high", "n_seeds", "n_items"]
DELTA_CI_COLUMNS = ["lang", "category", "delta_mcc", "ci_low", "ci_high", "p_delta_le_0",
                    "n_items"]


def item_matrix(group: pd.DataFrame) -> ItemMatrix:
    """Arrays of one (lang, setup, variant), keeping the items every seed predicted."""
    preds = group.pivot(index="idx", columns="seed", values="pred").dropna()
    items = group.drop_duplicates("idx").set_index("idx").loc[preds.index]
    membership = np.column_stack([fine_membership(items["categories"]), np.ones(len(items), bool)])
    return ItemMatrix(preds.index.to_numpy(), items["label"].to_numpy(np.int64),
                      preds.to_numpy(np.int64).T, membership)


def bootstrap_ci(predictions: pd.DataFrame, n_boot: int, confidence: float,
                 random_state: int, score: Score = mcc_from_counts) -> pd.DataFrame:
    """Per (lang, setup, variant, category): point estimate and multi-bootstrap interval."""
    rng = np.random.default_rng(random_state)
    frames = []
    for (lang, setup, variant), group in predictions.groupby(GROUP_KEY, sort=True):
        runs = item_matrix(group)
        low, high = percentile_interval(bootstrap_samples(rng, n_boot, runs, score), confidence)
        frames.append(pd.DataFrame({
            "lang": lang, "setup": setup, "variant": variant, "category": CI_CATEGORIES, "estimate": point_estimate(runs, score),
            "ci_low": low, "ci_high": high, "n_seeds": len(runs.preds),
            "n_items": runs.membership.sum(axis=0).astype(int),
        }))
    return pd.concat(frames, ignore_index=True)[CI_COLUMNS]


def bootstrap_deltas(predictions: pd.DataFrame, condition_a: str, condition_b: str, n_boot: int,
                     confidence: float, random_state: int, score: Score = mcc_from_counts) -> pd.DataFrame:
    """Per (lang, category): ΔMCC = B − A with an interval and the one-sided p-value P(Δ ≤ 0).

    A and B are conditions, `setup` or `setup/variant` (`Condition`). Both are scored on the
    same drawn items (paired over items); their seeds are drawn independently, since runs of
    different conditions are independent.
    """
    keys = [Condition.parse(condition).key for condition in (condition_a, condition_b)]
    rng = np.random.default_rng(random_state)
    frames = []
    for lang, group in predictions.groupby("lang", sort=True):
        by_condition = dict(tuple(group.groupby(["setup", "variant"])))
        if not all(key in by_condition for key in keys):
            continue
        a, b = (item_matrix(by_condition[key]) for key in keys)
        shared = np.intersect1d(a.idx, b.idx)
        if shared.size == 0:
            continue
        a, b = a.select(shared), b.select(shared)
        items = draw_counts(rng, n_boot, len(shared))
        deltas = (resampled_scores(items, draw_counts(rng, n_boot, len(b.preds)), b, score)
                  - resampled_scores(items, draw_counts(rng, n_boot, len(a.preds)), a, score))
        low, high = percentile_interval(deltas, confidence)
        frames.append(pd.DataFrame({
            "lang": lang, "category": CI_CATEGORIES, "delta_mcc": point_estimate(b, score) - point_estimate(a, score),
            "ci_low": low, "ci_high": high, "p_delta_le_0": p_at_or_below_zero(deltas),
            "n_items": a.membership.sum(axis=0).astype(int),
        }))
    return pd.concat(frames, ignore_index=True)[DELTA_CI_COLUMNS] if frames \
        else pd.DataFrame(columns=DELTA_CI_COLUMNS)
