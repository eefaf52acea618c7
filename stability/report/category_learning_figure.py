"""The learning curves of *When each category is learned*: per (setup, variant) one PNG
`category_learning_<setup>[_<variant>].png` with a panel for all items and one per coarse
category, the seed-mean MCC per validation (± σ over seeds) a line per language, and a star at
the first validation whose multi-bootstrap lower bound is above 0."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from stability.core.taxonomy import COARSE_CATEGORIES  # noqa: E402
from stability.report.collect import OVERALL  # noqa: E402
from stability.statistics.figures import safe_name, save_figure, wrapped_title  # noqa: E402
from stability.statistics.seeds import condition_name  # noqa: E402

PANELS: tuple[str, ...] = (OVERALL,) + COARSE_CATEGORIES
_TICKS = 12   # at most this many validations get a labelled tick


def learning_curves(curves: pd.DataFrame, out: Path) -> list[Path]:
    """One figure per (setup, variant) of `category_learning.csv` (its overall and coarse rows)."""
    paths = []
    shown = curves[curves["level"].isin(["all", "coarse"])]
    for (setup, variant), part in shown.groupby(["setup", "variant"], sort=True):
        condition = condition_name(setup, variant)
        fig, axes = plt.subplots(2, 3, figsize=(13, 7.2), sharex=True, sharey=True)
        langs = sorted(part["lang"].unique())
        colours = dict(zip(langs, plt.get_cmap("tab10" if len(langs) <= 10 else "tab20").colors))
        for ax, category in zip(axes.flat, PANELS):
            for lang in langs:
                _draw_language(ax, part[(part["lang"] == lang) & (part["category"] == category)], colours[lang], lang)
            ax.axhline(0.0, color="black", linewidth=0.8, linestyle="--")
            ax.set_title("all items" if category == OVERALL else category, fontsize=10)
            ax.grid(alpha=0.3)
        for ax in axes[:, 0]:
            ax.set_ylabel("MCC (mean ± σ over seeds)")
        ticks, labels, xlabel = _validation_ticks(part)
        for ax in (*axes[1, :2], axes[0, 2]):   # the top right panel has the legend below it, not a panel
            ax.set_xlabel(xlabel)
            ax.tick_params(labelbottom=True)
        for ax in axes.flat[: len(PANELS)]:
            ax.set_xticks(ticks, labels, fontsize=8)
        legend = axes.flat[len(PANELS)]
        legend.axis("off")
        handles, names = axes.flat[0].get_legend_handles_labels()
        if part["reliably_above_zero"].astype(bool).any():
            handles.append(plt.Line2D([], [], color="grey", marker="*", markersize=11, linestyle=""))
            names.append("first validation with the bootstrap\nlower bound above 0 (seeds pooled)")
        legend.legend(handles, names, loc="center", fontsize=9, title="language", frameon=False)
        title = wrapped_title(f"{condition}: diagnostic MCC during training", 120)
        fig.suptitle(title, fontsize=11)
        top = 0.95 - 0.03 * title.count("\n")
        paths.append(save_figure(fig, out / f"category_learning_{safe_name(condition)}.png", top=top))
    return paths


def _draw_language(ax: plt.Axes, line: pd.DataFrame, colour: tuple, lang: str) -> None:
    """The seed mean with its ± σ band, and a star at the first reliable validation."""
    line = line.sort_values("validation")
    x, mean = line["validation"].to_numpy(float), line["mean_mcc"].to_numpy(float)
    spread = np.nan_to_num(line["std_mcc"].to_numpy(float))
    ax.plot(x, mean, color=colour, marker="o", markersize=3, linewidth=1.4, label=lang)
    ax.fill_between(x, mean - spread, mean + spread, color=colour, alpha=0.15, linewidth=0)
    reliable = line[line["reliably_above_zero"].astype(bool)]
    if not reliable.empty:
        first = reliable.iloc[0]
        ax.plot(first["validation"], first["mean_mcc"], marker="*", markersize=13, color=colour,
                markeredgecolor="black", markeredgewidth=0.6, linestyle="", zorder=5)


def _validation_ticks(part: pd.DataFrame) -> tuple[list[int], list[str], str]:
    """Tick positions and labels: the validation number, with its epoch below unless they are the same."""
    epochs = part.groupby("validation")["epoch"].first()
    validations = list(epochs.index.astype(int))
    if len(validations) > _TICKS:
        validations = [int(v) for v in MaxNLocator(_TICKS, integer=True).tick_values(1, max(validations))
                       if v in epochs.index]
    if epochs.notna().all() and (epochs.to_numpy(float) == epochs.index.to_numpy(float)).all():
        return validations, [str(v) for v in validations], "validation (= epoch)"
    labels = [f"{v}\nep {_epoch(epochs.get(v))}" for v in validations]
    return validations, labels, "validation (epoch below)"


def _epoch(value: object) -> str:
    return "?" if value is None or pd.isna(value) else f"{float(value):g}"
