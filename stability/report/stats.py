"""Seed statistics of DESIGN.md section 4: mean ± σ (ddof = 1), RS corr., language-wise correlation.

All statistics over categories use the fine categories a group actually has (33 for
run directories); hand-written CSVs may hold fewer, and the vectors then span those.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from stability.core.taxonomy import COARSE_OF, FINE_CATEGORIES

SUMMARY_COLUMNS = ["lang", "setup", "n_seeds", "overall_mcc_mean", "overall_mcc_std",
                   "mean_category_mcc_mean", "mean_category_mcc_std", "rs_corr",
                   "rs_corr_pairs", "rs_corr_skipped"]
CATEGORY_STATS_COLUMNS = ["lang", "setup", "category", "coarse", "n_items", "mcc_mean", "mcc_std"]
LANGUAGE_CORR_COLUMNS = ["setup", "lang_a", "lang_b", "pearson", "n_categories"]
MEAN = "mean"


@dataclass(frozen=True)
class PairwiseCorr:
    """Mean Pearson r over unordered pairs, with how many pairs were used and skipped."""

    mean: float
    pairs: int
    skipped: int


def pearson_matrix(vectors: np.ndarray) -> np.ndarray:
    """Pearson r between every two rows; NaN where either row is constant (r undefined)."""
    if vectors.shape[1] == 0:
        return np.full((len(vectors), len(vectors)), np.nan)
    constant = np.ptp(vectors, axis=1) == 0
    centred = vectors - vectors.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(centred, axis=1)
    norms[constant] = np.nan
    corr = (centred @ centred.T) / np.outer(norms, norms)
    return np.clip(corr, -1.0, 1.0)


def mean_pairwise(corr: np.ndarray) -> PairwiseCorr:
    """Average the upper triangle of a correlation matrix; NaN cells are skipped pairs."""
    upper = corr[np.triu_indices(len(corr), k=1)]
    used = upper[~np.isnan(upper)]
    return PairwiseCorr(float(used.mean()) if used.size else float("nan"), int(used.size),
                        int(upper.size - used.size))


def seed_matrix(fine: pd.DataFrame) -> pd.DataFrame:
    """Seeds × fine categories (canonical order) of one (lang, setup)."""
    matrix = fine.pivot(index="seed", columns="category", values="mcc")
    return matrix[[name for name in FINE_CATEGORIES if name in matrix.columns]]


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (lang, setup): seed count, overall and mean-category MCC mean ± σ, RS corr."""
    rows = []
    for (lang, setup), group in results.groupby(["lang", "setup"], sort=True):
        overall = group.loc[group["level"] == "all", "mcc"]
        matrix = seed_matrix(group[group["level"] == "fine"])
        mean_category = matrix.mean(axis=1)
        rs = mean_pairwise(pearson_matrix(matrix.dropna(axis=1).to_numpy()))
        rows.append({
            "lang": lang, "setup": setup, "n_seeds": group["seed"].nunique(),
            "overall_mcc_mean": overall.mean(), "overall_mcc_std": overall.std(ddof=1),
            "mean_category_mcc_mean": mean_category.mean(),
            "mean_category_mcc_std": mean_category.std(ddof=1),
            "rs_corr": rs.mean, "rs_corr_pairs": rs.pairs, "rs_corr_skipped": rs.skipped,
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


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


def language_corr(stats: pd.DataFrame) -> pd.DataFrame:
    """Per setup, Pearson r between languages' seed-averaged category vectors (long format).

    One row per unordered language pair; `lang_b = "mean"` rows give a language's mean r
    with the others, and `lang_a = lang_b = "mean"` the mean over all pairs (the
    language-wise analogue of RS corr.).
    """
    rows = []
    for setup, group in stats.groupby("setup", sort=True):
        wide = group.pivot(index="lang", columns="category", values="mcc_mean").dropna(axis=1)
        if len(wide) < 2:
            continue
        corr = pearson_matrix(wide.to_numpy())
        langs, n_categories = list(wide.index), wide.shape[1]
        for a, b in zip(*np.triu_indices(len(langs), k=1)):
            rows.append((setup, langs[a], langs[b], corr[a, b], n_categories))
        for a, lang in enumerate(langs):
            others = np.delete(corr[a], a)
            mean = float(np.nanmean(others)) if not np.isnan(others).all() else float("nan")
            rows.append((setup, lang, MEAN, mean, n_categories))
        rows.append((setup, MEAN, MEAN, mean_pairwise(corr).mean, n_categories))
    return pd.DataFrame(rows, columns=LANGUAGE_CORR_COLUMNS)
