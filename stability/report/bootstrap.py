"""Multi-bootstrap confidence intervals of the report: per (lang, setup, variant, category), and
for the difference between two conditions or two languages (docs/design.md, "Metrics").

The resampling itself (seeds and items together, any score of the confusion counts) is
`stability.statistics.bootstrap`, and the paired replicates of a difference
`stability.statistics.multiplicity.paired_delta_replicates`; this module arranges the runs'
predictions into item matrices and the replicates into the report's tables. A comparison's
replicates cover the fine categories, `overall` and the coarse categories at once
(`TESTED_CATEGORIES`), so `bootstrap_deltas.csv` and the tests of `delta_tests.csv` read the
same bootstrap samples. Every sample draws the items' clusters (`report.clusters`), not single
items, unless the report was asked for `cluster=none`; `bootstrap_ci.csv` gives the width the
item bootstrap would give beside the clustered interval.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from stability.core.metrics import mcc_from_counts
from stability.core.taxonomy import COARSE_CATEGORIES, FINE_CATEGORIES
from stability.report.clusters import ItemClusters
from stability.report.collect import OVERALL
from stability.report.compare import Condition
from stability.statistics.bootstrap import (
    ItemMatrix,
    Score,
    bootstrap_samples,
    p_at_or_below_zero,
    percentile_interval,
    point_estimate,
)
from stability.statistics.membership import coarse_membership, fine_membership
from stability.statistics.multiplicity import PairedDeltas, paired_delta_replicates
from stability.statistics.seeds import GROUP_KEY

# The 33 fine categories, then all items (the overall MCC).
CI_CATEGORIES: tuple[str, ...] = FINE_CATEGORIES + (OVERALL,)
# The columns of `item_matrix(..., coarse=True)`: the same, then the 4 coarse categories.
TESTED_CATEGORIES: tuple[str, ...] = CI_CATEGORIES + COARSE_CATEGORIES
CI_COLUMNS = ["lang", "setup", "variant", "category", "estimate", "ci_low", "ci_high", "naive_ci_width", "n_seeds",
              "n_items", "n_clusters"]
DELTA_CI_COLUMNS = ["lang", "category", "delta_mcc", "ci_low", "ci_high", "p_delta_le_0",
                    "n_items"]


def item_matrix(group: pd.DataFrame, coarse: bool = False, clusters: ItemClusters | None = None) -> ItemMatrix:
    """Arrays of one (lang, setup, variant), keeping the items every seed predicted; score groups
    `CI_CATEGORIES`, or `TESTED_CATEGORIES` with `coarse`; items in `clusters`' clusters of the
    group's language (none: each item its own)."""
    preds = group.pivot(index="idx", columns="seed", values="pred").dropna()
    items = group.drop_duplicates("idx").set_index("idx").loc[preds.index]
    fine = fine_membership(items["categories"])
    columns = [fine, np.ones((len(items), 1), bool)] + ([coarse_membership(fine)] if coarse else [])
    membership = np.column_stack(columns)
    lang = group["lang"].iloc[0]
    return ItemMatrix(preds.index.to_numpy(), items["label"].to_numpy(np.int64), preds.to_numpy(np.int64).T,
                      membership, None if clusters is None else clusters.of(lang, preds.index.to_numpy()))


def clusters_per_group(runs: ItemMatrix) -> np.ndarray:
    """(groups,) the number of distinct clusters among each score group's items."""
    clusters = np.arange(len(runs.idx)) if runs.clusters is None else runs.clusters
    return np.array([len(np.unique(clusters[column])) for column in runs.membership.T], dtype=int)


def bootstrap_ci(predictions: pd.DataFrame, n_boot: int, confidence: float, random_state: int,
                 score: Score = mcc_from_counts, clusters: ItemClusters | None = None) -> pd.DataFrame:
    """Per (lang, setup, variant, category): point estimate and multi-bootstrap interval, clusters
    resampled; `naive_ci_width` is the width of the item bootstrap's interval (items one by one,
    its own draws), equal to the interval's where every item is its own cluster."""
    rng = np.random.default_rng(random_state)
    frames = []
    for (lang, setup, variant), group in predictions.groupby(GROUP_KEY, sort=True):
        runs = item_matrix(group, clusters=clusters)
        low, high = percentile_interval(bootstrap_samples(rng, n_boot, runs, score), confidence)
        naive_low, naive_high = (low, high) if runs.clusters is None else \
            percentile_interval(bootstrap_samples(rng, n_boot, runs.unclustered(), score), confidence)
        frames.append(pd.DataFrame({
            "lang": lang, "setup": setup, "variant": variant, "category": CI_CATEGORIES, "estimate": point_estimate(runs, score),
            "ci_low": low, "ci_high": high, "naive_ci_width": naive_high - naive_low, "n_seeds": len(runs.preds),
            "n_items": runs.membership.sum(axis=0).astype(int), "n_clusters": clusters_per_group(runs),
        }))
    return pd.concat(frames, ignore_index=True)[CI_COLUMNS]


def condition_deltas(predictions: pd.DataFrame, condition_a: str, condition_b: str, n_boot: int,
                     random_state: int, score: Score = mcc_from_counts,
                     clusters: ItemClusters | None = None) -> dict[str, PairedDeltas]:
    """Per language: Δ = B − A over `TESTED_CATEGORIES` with its multi-bootstrap replicates.

    A and B are conditions, `setup` or `setup/variant` (`Condition`), scored on the same drawn
    items (paired over items); their seeds are drawn independently, since runs of different
    conditions are independent. Languages without both conditions or without a shared item
    are left out.
    """
    keys = [Condition.parse(condition).key for condition in (condition_a, condition_b)]
    rng = np.random.default_rng(random_state)
    deltas = {}
    for lang, group in predictions.groupby("lang", sort=True):
        by_condition = dict(tuple(group.groupby(["setup", "variant"])))
        if all(key in by_condition for key in keys):
            _add_paired(deltas, lang, rng, n_boot, *(by_condition[key] for key in keys), score, clusters)
    return deltas


def language_deltas(predictions: pd.DataFrame, lang_a: str, lang_b: str, n_boot: int, random_state: int,
                    score: Score = mcc_from_counts,
                    clusters: ItemClusters | None = None) -> dict[tuple[str, str], PairedDeltas]:
    """Per condition (setup, variant): Δ = language B − language A over `TESTED_CATEGORIES`.

    The translated diagnostic sets share `idx`, so the items are paired: one bootstrap
    sample draws the same items in both languages, each language's seeds on their own; items
    clustered in either language are drawn as one cluster.
    """
    rng = np.random.default_rng(random_state)
    deltas = {}
    for key, group in predictions.groupby(["setup", "variant"], sort=True):
        by_lang = dict(tuple(group.groupby("lang")))
        if lang_a in by_lang and lang_b in by_lang:
            _add_paired(deltas, key, rng, n_boot, by_lang[lang_a], by_lang[lang_b], score, clusters)
    return deltas


def _add_paired(deltas: dict, key: object, rng: np.random.Generator, n_boot: int, a: pd.DataFrame,
                b: pd.DataFrame, score: Score, clusters: ItemClusters | None) -> None:
    try:
        deltas[key] = paired_delta_replicates(rng, n_boot, item_matrix(a, True, clusters), item_matrix(b, True, clusters),
                                              score)
    except ValueError:
        pass   # the two sides share no item: nothing to compare


def delta_ci_table(deltas: dict[str, PairedDeltas], confidence: float) -> pd.DataFrame:
    """bootstrap_deltas.csv from `condition_deltas`: per (lang, category or overall) ΔMCC, its
    interval and the one-sided p-value P(Δ ≤ 0)."""
    n = len(CI_CATEGORIES)
    frames = []
    for lang, paired in deltas.items():
        replicates = paired.replicates[:, :n]
        low, high = percentile_interval(replicates, confidence)
        frames.append(pd.DataFrame({
            "lang": lang, "category": CI_CATEGORIES, "delta_mcc": paired.estimate[:n], "ci_low": low,
            "ci_high": high, "p_delta_le_0": p_at_or_below_zero(replicates), "n_items": paired.n_items[:n],
        }))
    return pd.concat(frames, ignore_index=True)[DELTA_CI_COLUMNS] if frames \
        else pd.DataFrame(columns=DELTA_CI_COLUMNS)


def bootstrap_deltas(predictions: pd.DataFrame, condition_a: str, condition_b: str, n_boot: int,
                     confidence: float, random_state: int, score: Score = mcc_from_counts,
                     clusters: ItemClusters | None = None) -> pd.DataFrame:
    """Per (lang, category): ΔMCC = B − A with an interval and the one-sided p-value P(Δ ≤ 0)
    (`condition_deltas`, then `delta_ci_table`)."""
    return delta_ci_table(condition_deltas(predictions, condition_a, condition_b, n_boot, random_state, score,
                                           clusters), confidence)
