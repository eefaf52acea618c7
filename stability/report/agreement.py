"""Per-item agreement across seeds: which diagnostic items do the seeds of one condition disagree on?

For an item predicted by k seeds of which c predict not_entailment, the share of seed
pairs predicting the same label is (C(c,2) + C(k−c,2)) / C(k,2) (undefined for k < 2).
"""
from __future__ import annotations

import pandas as pd

from stability.core.taxonomy import COARSE_OF, FINE_CATEGORIES
from stability.statistics.seeds import GROUP_KEY

ITEM_COLUMNS = ["lang", "setup", "variant", "idx", "agreement", "n_seeds", "label", "share_entailment",
                "share_correct", "categories"]
BY_CATEGORY_COLUMNS = ["lang", "setup", "variant", "category", "coarse", "n_items", "agreement_mean"]
ALL_ITEMS = "all items"


def _pairs(n: pd.Series) -> pd.Series:
    return n * (n - 1) / 2


def pairwise_agreement(k: pd.Series, c: pd.Series) -> pd.Series:
    """The share of the C(k, 2) pairs among k predictions (c of them not_entailment) that agree;
    undefined (NaN) below 2 predictions."""
    return ((_pairs(c) + _pairs(k - c)) / _pairs(k)).where(k >= 2)


def item_agreement(predictions: pd.DataFrame) -> pd.DataFrame:
    """One row per (lang, setup, variant, item): pairwise seed agreement and the share of each label."""
    items = predictions.assign(
        not_entailment=predictions["pred"] == 1,
        correct=predictions["pred"] == predictions["label"],
    ).groupby(GROUP_KEY + ["idx"], sort=True).agg(
        n_seeds=("pred", "size"), n_not_entailment=("not_entailment", "sum"),
        share_correct=("correct", "mean"), label=("label", "first"), categories=("categories", "first"),
    ).reset_index()
    k, c = items["n_seeds"], items["n_not_entailment"]
    items["agreement"] = pairwise_agreement(k, c)
    items["share_entailment"] = (k - c) / k
    return items[ITEM_COLUMNS]


def agreement_by_category(items: pd.DataFrame) -> pd.DataFrame:
    """Mean item agreement per (lang, setup, variant, fine category), plus an `all items` row per group."""
    exploded = items.assign(category=items["categories"].str.split(";")).explode("category")
    exploded = exploded[exploded["category"].isin(FINE_CATEGORIES)]
    keys = GROUP_KEY
    per_category = exploded.groupby(keys + ["category"]).agg(
        n_items=("idx", "size"), agreement_mean=("agreement", "mean")).reset_index()
    overall = items.groupby(keys).agg(n_items=("idx", "size"), agreement_mean=("agreement", "mean")) \
        .reset_index().assign(category=ALL_ITEMS)
    table = pd.concat([per_category, overall], ignore_index=True)
    table["coarse"] = table["category"].map(COARSE_OF).fillna(ALL_ITEMS)
    order = {name: i for i, name in enumerate(FINE_CATEGORIES + (ALL_ITEMS,))}
    return table.assign(_order=table["category"].map(order)).sort_values(keys + ["_order"]) \
        [BY_CATEGORY_COLUMNS].reset_index(drop=True)


def flip_items(items: pd.DataFrame, top: int) -> pd.DataFrame:
    """The `top` items of each (lang, setup, variant) with the lowest agreement; items all seeds agree on
    excluded."""
    flipping = items[items["agreement"] < 1].sort_values(GROUP_KEY + ["agreement", "idx"])
    return flipping.groupby(GROUP_KEY).head(top).reset_index(drop=True)
