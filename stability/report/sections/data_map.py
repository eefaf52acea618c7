"""`## Data maps`: per (lang, setup, variant) the dataset-cartography map of the training items
(Swayamdipta et al., 2020) from the runs that recorded training dynamics: the shares of
easy-to-learn, ambiguous and hard-to-learn items, how much the seeds agree on them, and which
annotator features the ambiguous items carry (`stability.report.data_map`)."""
from __future__ import annotations

import pandas as pd

from stability.core.markdown import num, table
from stability.report.context import Context
from stability.report.data_map import (AMBIGUOUS_VARIABILITY, EASY_CONFIDENCE, FEATURES_FILE, HARD_CONFIDENCE,
                                       MAP_FILE, MIN_SEEN, REGION_COLUMNS, REGIONS, REGIONS_FILE, FeatureShares,
                                       over_represented, region_summary)
from stability.report.section import LISTED, Built, figure_links, pm, with_variant
from stability.statistics.seeds import GROUP_KEY


def build(context: Context) -> Built | None:
    """data_map.csv, data_map_regions.csv, data_map_features.csv (when the annotator runs) and one
    data_map_<lang>_<setup>[_<variant>].png per group; None when no run recorded dynamics."""
    if not context.dynamics:
        return None
    maps = context.data_maps
    summary = region_summary(maps)
    features = context.feature_shares
    drawn = []
    if context.options.figures:
        from stability.report.data_map_figure import data_map_plot

        for key, items in maps.items.groupby(GROUP_KEY, sort=True):
            drawn.append(data_map_plot(items, *key, len(maps.seeds[key]), context.out,
                                       random_state=context.options.random_state))
    tables = {MAP_FILE: maps.table(), REGIONS_FILE: summary}
    if not features.table.empty:
        tables[FEATURES_FILE] = features.table
    text = _intro() + _regions_table(summary, context.has_variants) + "\n" + _features_text(summary, features)
    if drawn:
        text += figure_links(drawn)
    return Built(text, tables, drawn)


def _intro() -> str:
    return ("## Data maps\n\nThe training items of the runs that recorded their training dynamics "
            "(`trainer.dynamics=true`), mapped as in dataset cartography (Swayamdipta et al., 2020): over a run's "
            "validations, an item's *confidence* is the mean P(gold) its training passes gave it, its *variability* "
            "the standard deviation (ddof = 0, as allenai/cartography) and its *correctness* the share of those "
            "passes that predicted the gold label. Regions: easy-to-learn = confidence ≥ "
            f"{EASY_CONFIDENCE:g} and variability < {AMBIGUOUS_VARIABILITY:g}; hard-to-learn = confidence ≤ "
            f"{HARD_CONFIDENCE:g} and variability < {AMBIGUOUS_VARIABILITY:g}; ambiguous = variability ≥ "
            f"{AMBIGUOUS_VARIABILITY:g}; other = the rest. Items seen in fewer than {MIN_SEEN} validations have "
            "no variability and are left out of the shares. Shares: each seed's map, mean ± σ over seeds; "
            "*κ*: Fleiss' κ of the regions with the seeds as raters, *same region*: the share of items in one "
            f"region in every seed (both over the items with a region in every seed). Every item and seed, and the "
            f"seed-averaged map (`seed` = mean), in `{MAP_FILE}`; the shares in `{REGIONS_FILE}`.\n\n")


def _regions_table(summary: pd.DataFrame, shown: bool) -> str:
    header = with_variant(["lang", "setup"], "variant", shown) + \
        ["seeds", "items", *REGIONS, "κ", "same region"]
    rows = []
    for row in summary.itertuples(index=False):
        rows.append(with_variant([row.lang, row.setup], row.variant, shown)
                    + [row.n_seeds, row.n_mapped]
                    + [pm(getattr(row, f"{REGION_COLUMNS[r]}_mean"), getattr(row, f"{REGION_COLUMNS[r]}_std"))
                       for r in REGIONS]
                    + [num(row.kappa, 2), num(row.same_region, 2)])
    return table(header, rows)


def _features_text(summary: pd.DataFrame, features: FeatureShares) -> str:
    """Per group, the features most over-represented among ambiguous items; or why there are none."""
    text = "".join(f"Annotator features skipped: {note}.\n\n" for note in features.notes)
    if features.table.empty:
        return text
    lines = []
    for row in summary.itertuples(index=False):
        key = (row.lang, row.setup, row.variant)
        if not ((features.table[GROUP_KEY] == pd.Series(key, index=GROUP_KEY)).all(axis=1)).any():
            continue
        top = over_represented(features.table, key, LISTED)
        named = "; ".join(f"{f.feature} {num(f.ambiguous_with, 2)} vs {num(f.ambiguous_without, 2)} "
                          f"(n = {f.n_with}, Holm p = {num(f.p_ambiguous_holm, 3)})"
                          for f in top.itertuples(index=False)) or "none"
        condition = f"{row.setup} · {row.variant}" if row.variant else row.setup
        lines.append(f"- {row.lang} · {condition}: {named}")
    return (text + "Features over-represented among ambiguous items (rule-based annotator, seed-averaged map, the "
            "runs' own training pairs; ambiguous share with vs without the feature, Fisher's exact test, Holm over "
            f"the group's features; every feature and region in `{FEATURES_FILE}`):\n\n" + "\n".join(lines) + "\n\n")
