"""PNG figures of the report: category heat maps and data-size curves.

MCC maps share one diverging scale centred on 0 (−1 … 1) so colours compare across
figures; delta maps use a symmetric range fitted to their values. Categories run down
the y axis in canonical order, with lines between the coarse groups.
"""
from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from stability.core.taxonomy import COARSE_OF  # noqa: E402

CMAP = "RdBu_r"
_DPI = 120
_ANNOTATE_UP_TO = 14   # columns; beyond that the numbers no longer fit in the cells


def safe_name(text: str) -> str:
    """A file-name fragment: `rte+mnli10000` → `rte_mnli10000`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


def _category_figure(n_panels: int, n_rows: int, n_columns: int) -> tuple[plt.Figure, np.ndarray]:
    """Room for the longest category name on the left and ~0.3 in per heat-map row."""
    width = 3.6 + n_panels * (0.6 * n_columns + 1.6)
    return plt.subplots(1, n_panels, figsize=(width, 1.8 + 0.28 * n_rows), squeeze=False, sharey=True)


def _draw(ax: plt.Axes, matrix: pd.DataFrame, vmax: float, label: str, title: str) -> None:
    """One category × column heat map on a symmetric colour range centred on 0."""
    sns.heatmap(matrix, ax=ax, cmap=CMAP, center=0.0, vmin=-vmax, vmax=vmax,
                annot=matrix.shape[1] <= _ANNOTATE_UP_TO, fmt=".2f", annot_kws={"size": 7},
                linewidths=0.4, linecolor="white", cbar_kws={"label": label, "shrink": 0.5})
    coarse = matrix.index.map(COARSE_OF)
    for row in np.flatnonzero(coarse[1:] != coarse[:-1]) + 1:
        ax.axhline(row, color="black", linewidth=1.2)
    ax.set_title(title)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.tick_params(axis="x", labelrotation=45 if max(map(len, map(str, matrix.columns))) > 4 else 0)
    ax.tick_params(axis="y", labelrotation=0)


def _save(fig: plt.Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path


def seed_heatmaps(stats: pd.DataFrame, out: Path) -> list[Path]:
    """Category × seed MCC (plus the seed mean) per (lang, setup): `heatmap_<lang>_<setup>.png`."""
    paths = []
    for (lang, setup), group in stats.groupby(["lang", "setup"], sort=True):
        matrix = group.set_index("category").filter(regex=r"^seed_").dropna(axis=1, how="all")
        matrix.columns = [column.removeprefix("seed_") for column in matrix.columns]
        matrix["mean"] = group.set_index("category")["mcc_mean"]
        fig, axes = _category_figure(1, *matrix.shape)
        _draw(axes[0, 0], matrix, 1.0, "MCC", f"{lang} · {setup}: category MCC per seed")
        axes[0, 0].axvline(matrix.shape[1] - 1, color="black", linewidth=1.2)
        axes[0, 0].set_xlabel("seed")
        paths.append(_save(fig, out / f"heatmap_{safe_name(lang)}_{safe_name(setup)}.png"))
    return paths


def language_heatmaps(stats: pd.DataFrame, out: Path) -> list[Path]:
    """Category × language seed-mean MCC per setup: `heatmap_languages_<setup>.png`."""
    paths = []
    for setup, group in stats.groupby("setup", sort=True):
        matrix = group.pivot(index="category", columns="lang", values="mcc_mean") \
            .reindex(group["category"].drop_duplicates())
        fig, axes = _category_figure(1, *matrix.shape)
        _draw(axes[0, 0], matrix, 1.0, "mean MCC over seeds", f"{setup}: mean category MCC")
        axes[0, 0].set_xlabel("language")
        paths.append(_save(fig, out / f"heatmap_languages_{safe_name(setup)}.png"))
    return paths


def delta_heatmaps(deltas: pd.DataFrame, setup_a: str, setup_b: str, out: Path) -> Path:
    """ΔMCC and Δσ (B − A) as category × language maps: `deltas_<A>_vs_<B>.png`."""
    order = deltas["category"].drop_duplicates()
    fig, axes = _category_figure(2, len(order), deltas["lang"].nunique())
    for ax, column, label in zip(axes[0], ["delta_mcc", "delta_std"], ["ΔMCC", "Δσ"]):
        matrix = deltas.pivot(index="category", columns="lang", values=column).reindex(order)
        vmax = max(float(np.nanmax(np.abs(matrix.to_numpy()), initial=0.0)), 0.05)
        _draw(ax, matrix, vmax, f"{label} ({setup_b} − {setup_a})", label)
        ax.set_xlabel("language")
    fig.suptitle(f"{setup_b} vs {setup_a}")
    return _save(fig, out / f"deltas_{safe_name(setup_a)}_vs_{safe_name(setup_b)}.png")


def size_curve_plot(curve: pd.DataFrame, out: Path) -> Path:
    """Per language: MCC (mean ± σ) and RS corr. against added MNLI examples: `size_curve.png`."""
    langs = sorted(curve["lang"].unique())
    fig, axes = plt.subplots(len(langs), 2, figsize=(11, 3.4 * len(langs)), squeeze=False)
    sizes = np.sort(curve["n_added"].unique())
    for row, lang in zip(axes, langs):
        for family, line in curve[curve["lang"] == lang].groupby("family", sort=True):
            for stat, marker in (("overall_mcc", "o"), ("mean_category_mcc", "s")):
                row[0].errorbar(line["n_added"], line[f"{stat}_mean"], yerr=line[f"{stat}_std"],
                                marker=marker, capsize=3,
                                label=f"{family}: {stat.replace('_mcc', '').replace('_', ' ')}")
            row[1].plot(line["n_added"], line["rs_corr"], marker="o", label=family)
        for ax, ylabel in zip(row, ["MCC (mean ± σ over seeds)", "RS corr."]):
            positive = sizes[sizes > 0]
            ax.set_xscale("symlog", linthresh=positive.min() if positive.size else 1)
            ax.set_xticks(sizes, [f"{size:,}" for size in sizes], rotation=30)
            ax.set_xlabel("MNLI examples added")
            ax.set_ylabel(ylabel)
            ax.set_title(lang)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    return _save(fig, out / "size_curve.png")
