"""Seed statistics (docs/design.md, "Metrics") per (lang, setup, variant): mean ± σ
(ddof = 1) and RS corr. (`summary`), and language-wise correlation (`language_corr`); the
per-category table is `stability.statistics.seeds.category_stats`.

All statistics over categories use the fine categories a group actually has (33 for
run directories); hand-written CSVs may hold fewer, and the vectors then span those.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from stability.core.taxonomy import FINE_CATEGORIES
from stability.statistics.correlation import mean_pairwise, pearson_matrix
from stability.statistics.seeds import GROUP_KEY

SUMMARY_COLUMNS = ["lang", "setup", "variant", "n_seeds", "overall_mcc_mean", "overall_mcc_std",
                   "mean_category_mcc_mean", "mean_category_mcc_std", "rs_corr",
                   "rs_corr_pairs", "rs_corr_skipped"]
LANGUAGE_CORR_COLUMNS = ["setup", "variant", "lang_a", "lang_b", "pearson", "n_categories"]
EXTRA_SUMMARY_COLUMNS = ["lang", "setup", "variant", "set", "n_seeds", "n_items", "accuracy_mean", "accuracy_std",
                         "mcc_mean", "mcc_std", "n_degenerate"]
MEAN = "mean"


def seed_matrix(fine: pd.DataFrame) -> pd.DataFrame:
    """Seeds × fine categories (canonical order) of one (lang, setup, variant)."""
    matrix = fine.pivot(index="seed", columns="category", values="mcc")
    return matrix[[name for name in FINE_CATEGORIES if name in matrix.columns]]


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (lang, setup, variant): seed count, overall and mean-category MCC mean ± σ, RS corr."""
    rows = []
    for (lang, setup, variant), group in results.groupby(GROUP_KEY, sort=True):
        overall = group.loc[group["level"] == "all", "mcc"]
        matrix = seed_matrix(group[group["level"] == "fine"])
        mean_category = matrix.mean(axis=1)
        rs = mean_pairwise(pearson_matrix(matrix.dropna(axis=1).to_numpy()))
        rows.append({
            "lang": lang, "setup": setup, "variant": variant, "n_seeds": group["seed"].nunique(),
            "overall_mcc_mean": overall.mean(), "overall_mcc_std": overall.std(ddof=1),
            "mean_category_mcc_mean": mean_category.mean(),
            "mean_category_mcc_std": mean_category.std(ddof=1),
            "rs_corr": rs.mean, "rs_corr_pairs": rs.pairs, "rs_corr_skipped": rs.skipped,
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def extra_summary(extra: pd.DataFrame) -> pd.DataFrame:
    """One row per (lang, setup, variant, extra set): accuracy and MCC mean ± σ over seeds (ddof = 1),
    like the diagnostic's overall MCC, and how many seeds' MCC was undefined (scored 0.0)."""
    stats = extra.groupby([*GROUP_KEY, "set"], sort=True).agg(
        n_seeds=("seed", "nunique"), n_items=("n_items", "max"),
        accuracy_mean=("accuracy", "mean"), accuracy_std=("accuracy", lambda v: v.std(ddof=1)),
        mcc_mean=("mcc", "mean"), mcc_std=("mcc", lambda v: v.std(ddof=1)),
        n_degenerate=("degenerate", lambda v: int(v.fillna(False).sum())))
    return stats.reset_index()[EXTRA_SUMMARY_COLUMNS]


def language_corr(stats: pd.DataFrame) -> pd.DataFrame:
    """Per (setup, variant), Pearson r between languages' seed-averaged category vectors (long format).

    One row per unordered language pair; `lang_b = "mean"` rows give a language's mean r
    with the others, and `lang_a = lang_b = "mean"` the mean over all pairs (the
    language-wise analogue of RS corr.).
    """
    rows = []
    for (setup, variant), group in stats.groupby(["setup", "variant"], sort=True):
        wide = group.pivot(index="lang", columns="category", values="mcc_mean").dropna(axis=1)
        if len(wide) < 2:
            continue
        corr = pearson_matrix(wide.to_numpy())
        langs, n_categories = list(wide.index), wide.shape[1]
        for a, b in zip(*np.triu_indices(len(langs), k=1)):
            rows.append((setup, variant, langs[a], langs[b], corr[a, b], n_categories))
        for a, lang in enumerate(langs):
            others = np.delete(corr[a], a)
            mean = float(np.nanmean(others)) if not np.isnan(others).all() else float("nan")
            rows.append((setup, variant, lang, MEAN, mean, n_categories))
        rows.append((setup, variant, MEAN, MEAN, mean_pairwise(corr).mean, n_categories))
    return pd.DataFrame(rows, columns=LANGUAGE_CORR_COLUMNS)
