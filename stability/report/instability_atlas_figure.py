"""The instability atlas's figure: per coarse category and language, how often the items flip between
seeds and how often they still flip at the end of training (`instability_atlas.py`)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from stability.core.taxonomy import COARSE_CATEGORIES  # noqa: E402
from stability.report.instability_atlas import CONDITION, LAST_VALIDATIONS  # noqa: E402
from stability.statistics.figures import safe_name, save_figure, wrapped_title  # noqa: E402
from stability.statistics.seeds import condition_name  # noqa: E402

ALL_ITEMS = "all items"
_PANELS = (("flip_rate_seeds", "between seeds: share of seed pairs that disagree"),
           ("flip_rate_validations", f"late in training: share of the last {LAST_VALIDATIONS} validations'\n"
                                     "consecutive pairs whose prediction changes"))


def coarse_rates(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """Coarse category (+ `all items`) × language: the mean of `column` over the items of the category
    (an item in several coarse categories counts in each)."""
    exploded = rows.assign(group=rows["coarse"].fillna("").str.split(";")).explode("group")
    by_coarse = exploded[exploded["group"].isin(COARSE_CATEGORIES)].groupby(["group", "lang"])[column].mean()
    overall = rows.groupby("lang")[column].mean()
    table = by_coarse.unstack("lang").reindex(list(COARSE_CATEGORIES))
    table.loc[ALL_ITEMS] = overall
    return table


def instability_figures(atlas: pd.DataFrame, out: Path) -> list[Path]:
    """`instability_atlas_<setup>[_<variant>].png` per (setup, variant) with a defined rate: per coarse
    category, grouped bars (one per language) of the mean seed flip rate and the mean late-training flip
    rate, and, with 2 languages or more, one bar of the mean language flip rate (a property of the item,
    not of a language)."""
    paths = []
    for (setup, variant), rows in atlas.groupby(CONDITION, sort=True):
        if rows[[column for column, _ in _PANELS]].isna().all(axis=None):
            continue    # one seed and one validation per run: no rate to draw
        langs = sorted(rows["lang"].unique())
        items = rows.drop_duplicates("idx")
        counts = items["coarse"].fillna("").str.split(";").explode().value_counts()
        labels = [textwrap.fill(name, 14) + f"\n({int(counts.get(name, 0))} items)" for name in COARSE_CATEGORIES]
        labels.append(f"{ALL_ITEMS}\n({len(items)} items)")
        across = items["flip_rate_languages"].notna().any()
        fig, axes = plt.subplots(1, 3 if across else 2, figsize=(15.5 if across else 11.0, 4.6),
                                 gridspec_kw={"width_ratios": [1.0, 1.0, 0.75] if across else [1.0, 1.0]})
        width = 0.8 / len(langs)
        positions = np.arange(len(labels))
        for ax, (column, title) in zip(axes, _PANELS):
            rates = coarse_rates(rows, column).reindex(columns=langs)
            for i, lang in enumerate(langs):
                ax.bar(positions - 0.4 + width * (i + 0.5), rates[lang].to_numpy(dtype=float), width, label=lang,
                       color=f"C{i}")
            _axis(ax, positions, labels, rates.to_numpy(dtype=float), title)
        if across:
            rates = coarse_rates(items.assign(lang="all"), "flip_rate_languages")["all"].to_numpy(dtype=float)
            axes[2].bar(positions, rates, 0.6, color="#777777")
            _axis(axes[2], positions, labels, rates, "across languages: share of language pairs\n"
                                                     "(same seed) that disagree")
        condition = condition_name(setup, variant)
        title = wrapped_title(f"{condition}: how often the diagnostic predictions flip, per coarse category", 110)
        below = 0.045 * title.count("\n")     # each further title line moves the legend and the panels down
        fig.suptitle(title, fontsize=11)
        handles, names = axes[0].get_legend_handles_labels()
        fig.legend(handles, names, title="language", loc="upper center", ncol=len(langs), fontsize=8,
                   title_fontsize=8, bbox_to_anchor=(0.5, 0.955 - below), frameon=False)
        paths.append(save_figure(fig, out / f"instability_atlas_{safe_name(condition)}.png", top=0.9 - below))
    return paths


def _axis(ax: plt.Axes, positions: np.ndarray, labels: list[str], values: np.ndarray, title: str) -> None:
    ax.axvline(len(COARSE_CATEGORIES) - 0.5, color="#888888", linewidth=0.8, linestyle=":")
    ax.set_xticks(positions, labels, fontsize=8)
    ax.set_ylabel("mean flip rate over items")
    ax.set_title(title, fontsize=9)
    top = float(np.nanmax(values, initial=0.0)) if np.isfinite(values).any() else 0.0
    ax.set_ylim(0, max(top * 1.12, 0.05))
    ax.grid(axis="y", alpha=0.3)
