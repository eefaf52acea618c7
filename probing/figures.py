"""One PNG per task: probe accuracy against layer; and the layer × layer CKA of one seed pair.

The pretrained encoder is a solid blue line; each fine-tuned setup a solid line (the mean
over seeds) with a band of ± one σ (ddof = 1); the control task of each (same colour) and
the random-init encoder (grey) are dashed; the majority-class accuracy is dotted.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from stability.core.probetable import PRETRAINED  # noqa: E402
from stability.statistics.figures import safe_name  # noqa: E402

_DPI = 130
_PRETRAINED_COLOUR = "#1f4e99"
_TUNED_COLOURS = ("#d95f02", "#1b9e77", "#7570b3", "#e7298a")
_RANDOM_COLOUR = "#7f7f7f"


def figure_path(out: Path, task: str) -> Path:
    return out / f"probing_{safe_name(task)}.png"


def task_figure(rows: pd.DataFrame, task: str, title: str, out: Path) -> Path:
    """`probing_<task>.png` from the probing.csv rows of `task`; `title` names the data."""
    mine = rows[rows["task"] == task]
    fig, ax = plt.subplots(figsize=(7.6, 5.2))
    pretrained = mine[mine["model"] == PRETRAINED].sort_values("layer")
    ax.plot(pretrained["layer"], pretrained["test_acc"], color=_PRETRAINED_COLOUR, marker="o", linewidth=2.2,
            label="pretrained")
    ax.plot(pretrained["layer"], pretrained["control_acc"], color=_PRETRAINED_COLOUR, linestyle="--",
            linewidth=1.2, label="pretrained: control task")
    tuned = mine[mine["model"] != PRETRAINED]
    for colour, (model, group) in zip(_TUNED_COLOURS, tuned.groupby("model", sort=True)):
        by_layer = group.groupby("layer", sort=True)
        mean, control = by_layer["test_acc"].mean(), by_layer["control_acc"].mean()
        n_seeds = group["seed"].nunique()
        ax.plot(mean.index, mean, color=colour, marker="s", linewidth=2.2,
                label=f"{model}: mean of {n_seeds} seeds" if n_seeds > 1 else f"{model} (1 seed)")
        if n_seeds > 1:
            std = by_layer["test_acc"].std(ddof=1)
            ax.fill_between(mean.index, mean - std, mean + std, color=colour, alpha=0.2, linewidth=0,
                            label=f"{model}: ± σ over seeds")
        ax.plot(control.index, control, color=colour, linestyle="--", linewidth=1.2,
                label=f"{model}: control task")
    ax.plot(pretrained["layer"], pretrained["random_init_acc"], color=_RANDOM_COLOUR, linestyle="--",
            marker="x", linewidth=1.2, label="random-init encoder")
    ax.axhline(float(mine["majority_acc"].iloc[0]), color="black", linestyle=":", linewidth=1.2,
               label="majority class")
    layers = sorted(mine["layer"].unique())
    ax.set_xticks(layers)
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("accuracy on the diagnostic set")
    ax.set_title(f"{task}: probe accuracy by layer\n{title}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)
    path = figure_path(out, task)
    fig.savefig(path, dpi=_DPI, bbox_inches="tight")
    plt.close(fig)
    return path


CKA_LAYERS_FIGURE = "probing_cka_layers.png"


def cka_layers_figure(layers: pd.DataFrame, out: Path) -> Path:
    """`probing_cka_layers.png`: linear CKA between every layer of one encoder (rows) and every
    layer of another (columns), from probing_cka_layers.csv's rows."""
    first = layers.iloc[0]
    matrix = layers.pivot(index="layer_a", columns="layer_b", values="cka")
    size = len(matrix)
    fig, ax = plt.subplots(figsize=(2.4 + 0.55 * size, 1.8 + 0.5 * size))
    sns.heatmap(matrix, ax=ax, vmin=0.0, vmax=1.0, cmap="viridis", annot=size <= 14, fmt=".2f",
                annot_kws={"size": 7}, square=True, cbar_kws={"label": "linear CKA", "shrink": 0.7})
    ax.invert_yaxis()
    ax.set_xlabel(f"layer of {first.seed_b} (0 = embeddings)")
    ax.set_ylabel(f"layer of {first.seed_a}")
    ax.set_title(f"{first.model}: {first.seed_a} vs {first.seed_b}\nsimilarity of every pair of layers", fontsize=10)
    path = out / CKA_LAYERS_FIGURE
    fig.savefig(path, dpi=_DPI, bbox_inches="tight")
    plt.close(fig)
    return path
