"""Per-category seed statistics of the tidy results table: mean ± σ over seeds (ddof = 1).

The tidy results table (docs/design.md, "Run directory") has one row per (lang, setup, seed,
level, category); the report builds it from run directories and CSVs, W&B tracking from the
records of one group's finished seeds, and both summarise it with `category_stats`.
"""
from __future__ import annotations

import pandas as pd

from stability.core.taxonomy import COARSE_OF, FINE_CATEGORIES

TIDY_COLUMNS = ["lang", "setup", "seed", "level", "category", "n_items", "mcc"]
CATEGORY_STATS_COLUMNS = ["lang", "setup", "category", "coarse", "n_items", "mcc_mean", "mcc_std"]


def category_stats(results: pd.DataFrame) -> pd.DataFrame:
    """Per (lang, setup, fine category): mean ± σ over seeds, then one `seed_<s>` column per seed."""
    fine = results[results["level"] == "fine"]
    keys = ["lang", "setup", "category"]
    by_seed = fine.pivot(index=keys, columns="seed", values="mcc")
    by_seed.columns = [f"seed_{seed}" for seed in by_seed.columns]
    stats = pd.DataFrame({
        "n_items": fine.groupby(keys)["n_items"].first(),
        "mcc_mean": by_seed.mean(axis=1),
        "mcc_std": by_seed.std(axis=1, ddof=1),
    }).join(by_seed).reset_index()
    stats.insert(3, "coarse", stats["category"].map(COARSE_OF))
    order = stats["category"].map({name: i for i, name in enumerate(FINE_CATEGORIES)})
    return stats.assign(_order=order).sort_values(["lang", "setup", "_order"]).drop(columns="_order") \
        .reset_index(drop=True)
