"""Category heat maps: the drawing the report and W&B tracking share, and the seed heat map itself.

MCC maps share one diverging scale centred on 0 (−1 … 1) so colours compare across
figures; delta maps use a symmetric range fitted to their values. Categories run down
the y axis in canonical order, with lines between the coarse groups. A cell whose MCC is
undefined (degenerate: one class only among gold labels or predictions) is grey and
reads "n/a", never 0.00; the column of a failed run is hatched and its label says so.
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Iterable

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from stability.core.taxonomy import COARSE_OF  # noqa: E402
from stability.statistics.seeds import GROUP_KEY, condition_name, group_rows  # noqa: E402

CMAP = "RdBu_r"
_DPI = 120
_ANNOTATE_UP_TO = 14   # columns; beyond that the numbers no longer fit in the cells
UNDEFINED_TEXT = "n/a"
_UNDEFINED_COLOUR = "#d4d4d4"
FAILED_LABEL = "failed"


def safe_name(text: str) -> str:
    """A file-name fragment: `rte+mnli10000` → `rte_mnli10000`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


def category_figure(n_panels: int, n_rows: int, n_columns: int) -> tuple[plt.Figure, np.ndarray]:
    """Room for the longest category name on the left and ~0.3 in per heat-map row."""
    width = 3.6 + n_panels * (0.6 * n_columns + 1.6)
    return plt.subplots(1, n_panels, figsize=(width, 1.8 + 0.28 * n_rows), squeeze=False, sharey=True)


def coarse_starts(categories: Iterable[str]) -> np.ndarray:
    """Positions whose category opens a new coarse group (not the first): where separator lines go."""
    coarse = pd.Index(categories).map(COARSE_OF)
    return np.flatnonzero(coarse[1:] != coarse[:-1]) + 1


def draw_heatmap(ax: plt.Axes, matrix: pd.DataFrame, vmax: float, label: str, title: str,
                 undefined: pd.DataFrame | None = None, failed: Iterable[str] = ()) -> None:
    """One category × column heat map on a symmetric colour range centred on 0.

    `undefined` (same shape, bool) marks cells drawn grey with "n/a" instead of a colour and
    a number; `failed` names columns to hatch and relabel.
    """
    annotate = matrix.shape[1] <= _ANNOTATE_UP_TO
    mask = undefined.reindex_like(matrix).fillna(False).astype(bool) if undefined is not None else None
    sns.heatmap(matrix, ax=ax, cmap=CMAP, center=0.0, vmin=-vmax, vmax=vmax, mask=mask,
                annot=annotate, fmt=".2f", annot_kws={"size": 7},
                linewidths=0.4, linecolor="white", cbar_kws={"label": label, "shrink": 0.5})
    if mask is not None:
        for row, column in zip(*np.nonzero(mask.to_numpy())):
            ax.add_patch(plt.Rectangle((column, row), 1, 1, facecolor=_UNDEFINED_COLOUR, edgecolor="white",
                                       linewidth=0.4))
            if annotate:
                ax.text(column + 0.5, row + 0.5, UNDEFINED_TEXT, ha="center", va="center", size=7, color="#555555")
    columns = [str(column) for column in matrix.columns]
    for name in failed:
        column = columns.index(str(name))
        ax.add_patch(plt.Rectangle((column, 0), 1, matrix.shape[0], fill=False, hatch="///", edgecolor="#333333",
                                   linewidth=0))
    if failed:
        ax.set_xticks(np.arange(len(columns)) + 0.5,
                      [f"{c}\n({FAILED_LABEL})" if c in set(map(str, failed)) else c for c in columns])
    for row in coarse_starts(matrix.index):
        ax.axhline(row, color="black", linewidth=1.2)
    ax.set_title(title)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.tick_params(axis="x", labelrotation=45 if max(map(len, map(str, matrix.columns))) > 4 else 0)
    ax.tick_params(axis="y", labelrotation=0)


def wrapped_title(text: str, width: int = 90) -> str:
    """A title on as many lines as it needs: a variant's `_`-joined items (lr3e-05_bs16_...) may
    break after each `_`, so a long condition name stays inside the figure."""
    lines = textwrap.wrap(text.replace("_", "_ "), width)
    return "\n".join(line.replace("_ ", "_") for line in lines)


def save_figure(fig: plt.Figure, path: Path, top: float = 1.0) -> Path:
    """Lay out and write a figure; `top` < 1 keeps the figure's top share free for a suptitle."""
    fig.tight_layout(rect=(0.0, 0.0, 1.0, top))
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path


def _undefined_by_seed(degenerate: pd.DataFrame | None, group: tuple[str, str, str]) -> pd.DataFrame | None:
    """Category × seed (str) bool of one (lang, setup, variant), with a `mean` column true where every seed is."""
    if degenerate is None:
        return None
    part = group_rows(degenerate, group)
    if part.empty:
        return None
    matrix = part.pivot(index="category", columns="seed", values="degenerate").fillna(False).astype(bool)
    matrix.columns = [str(seed) for seed in matrix.columns]
    matrix["mean"] = matrix.all(axis=1)
    return matrix


def seed_heatmaps(stats: pd.DataFrame, out: Path, degenerate: pd.DataFrame | None = None,
                  failed: set[tuple[str, str, str, int]] = frozenset()) -> list[Path]:
    """Category × seed MCC (plus the seed mean) per (lang, setup, variant):
    `heatmap_<lang>_<setup>.png`, `heatmap_<lang>_<setup>_<variant>.png` for a variant.

    `degenerate`: fine rows lang, setup, variant, seed, category, degenerate (undefined MCCs
    read "n/a"); `failed`: (lang, setup, variant, seed) of failed runs, whose columns are hatched.
    """
    paths = []
    for (lang, setup, variant), group in stats.groupby(GROUP_KEY, sort=True):
        matrix = group.set_index("category").filter(regex=r"^seed_").dropna(axis=1, how="all")
        matrix.columns = [column.removeprefix("seed_") for column in matrix.columns]
        matrix["mean"] = group.set_index("category")["mcc_mean"]
        failed_seeds = [column for column in matrix.columns[:-1] if (lang, setup, variant, int(column)) in failed]
        condition = condition_name(setup, variant)
        fig, axes = category_figure(1, *matrix.shape)
        draw_heatmap(axes[0, 0], matrix, 1.0, "MCC", f"{lang} · {condition}: category MCC per seed",
                     undefined=_undefined_by_seed(degenerate, (lang, setup, variant)), failed=failed_seeds)
        axes[0, 0].axvline(matrix.shape[1] - 1, color="black", linewidth=1.2)
        axes[0, 0].set_xlabel("seed   (n/a: MCC undefined" + ("; hatched: failed run, included in the mean)"
                                                               if failed_seeds else ")"))
        paths.append(save_figure(fig, out / seed_heatmap_file(lang, setup, variant)))
    return paths


def seed_heatmap_file(lang: str, setup: str, variant: str) -> str:
    """The seed heat map's file name, which the report's page replaces by its interactive map."""
    return f"heatmap_{safe_name(lang)}_{safe_name(condition_name(setup, variant))}.png"
