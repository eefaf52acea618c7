"""Per-category seed statistics of the tidy results table: mean ± σ over seeds (ddof = 1).

The tidy results table (docs/design.md, "Results table") has one row per (lang, setup,
variant, seed, level, category); the report builds it from run directories and CSVs, W&B
tracking from the records of one group's finished seeds, and both summarise it with
`category_stats`. The seeds of one (lang, setup, variant) are one group (`GROUP_KEY`):
statistics over seeds never pool two variants (`variant` "" is the experiment as configured).
"""
from __future__ import annotations

import pandas as pd

from stability.core.taxonomy import COARSE_OF, FINE_CATEGORIES

TIDY_COLUMNS = ["lang", "setup", "variant", "seed", "level", "category", "n_items", "mcc"]
GROUP_KEY = ["lang", "setup", "variant"]
CATEGORY_STATS_COLUMNS = ["lang", "setup", "variant", "category", "coarse", "n_items", "mcc_mean", "mcc_std"]
CONDITION_SEPARATOR = "/"


def condition_name(setup: str, variant: str) -> str:
    """A condition as the report writes it: `rte`, or `rte/lr3e-05` for a variant (variant names
    never contain `/`, see `stability.core.identity`)."""
    return f"{setup}{CONDITION_SEPARATOR}{variant}" if variant else setup


def group_rows(table: pd.DataFrame, group: tuple[str, str, str]) -> pd.DataFrame:
    """The rows of one (lang, setup, variant)."""
    return table[(table[GROUP_KEY] == pd.Series(group, index=GROUP_KEY)).all(axis=1)]


def category_stats(results: pd.DataFrame) -> pd.DataFrame:
    """Per (lang, setup, variant, fine category): mean ± σ over seeds, then one `seed_<s>` column per seed."""
    fine = results[results["level"] == "fine"]
    keys = GROUP_KEY + ["category"]
    by_seed = fine.pivot(index=keys, columns="seed", values="mcc")
    by_seed.columns = [f"seed_{seed}" for seed in by_seed.columns]
    stats = pd.DataFrame({
        "n_items": fine.groupby(keys)["n_items"].first(),
        "mcc_mean": by_seed.mean(axis=1),
        "mcc_std": by_seed.std(axis=1, ddof=1),
    }).join(by_seed).reset_index()
    stats.insert(len(keys), "coarse", stats["category"].map(COARSE_OF))
    order = stats["category"].map({name: i for i, name in enumerate(FINE_CATEGORIES)})
    return stats.assign(_order=order).sort_values(GROUP_KEY + ["_order"]).drop(columns="_order") \
        .reset_index(drop=True)
