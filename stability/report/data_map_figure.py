"""The data map figure (Swayamdipta et al., 2020, Fig. 1): each training item at (variability,
confidence) of the seed-averaged map, coloured by its correctness, with the thresholds of the regions
(`stability.report.data_map`) drawn and each region's share written in it."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from stability.report.data_map import (  # noqa: E402
    AMBIGUOUS,
    AMBIGUOUS_VARIABILITY,
    EASY,
    EASY_CONFIDENCE,
    HARD,
    HARD_CONFIDENCE,
    OTHER,
    region_shares,
)
from stability.statistics.figures import safe_name, save_figure, wrapped_title  # noqa: E402
from stability.statistics.seeds import condition_name  # noqa: E402

MAX_POINTS = 20000             # items drawn at most (a random subset beyond: the paper's plots subsample too)
_BINS = np.round(np.linspace(0.0, 1.0, 6), 1)   # correctness shown as 0.0, 0.2, …, 1.0 (the nearest)
_MAX_VARIABILITY = 0.5         # the standard deviation of values in [0, 1] is at most 0.5


def data_map_path(out: Path, lang: str, setup: str, variant: str) -> Path:
    return out / f"data_map_{safe_name(lang)}_{safe_name(condition_name(setup, variant))}.png"


def data_map_plot(items: pd.DataFrame, lang: str, setup: str, variant: str, n_seeds: int, out: Path,
                  random_state: int = 0) -> Path:
    """`data_map_<lang>_<setup>[_<variant>].png` of one group's seed-averaged map (rows of data_map.csv
    with `seed` = mean); items without a region (seen in fewer than two validations) are not drawn."""
    mapped = items[items["region"].notna()]
    # a random subset beyond MAX_POINTS, and in random order, so that no correctness bin hides the others
    shown = mapped.sample(n=min(len(mapped), MAX_POINTS), random_state=random_state)
    binned = _BINS[np.abs(shown["correctness"].to_numpy()[:, None] - _BINS[None, :]).argmin(axis=1)]
    palette = sns.diverging_palette(260, 15, n=len(_BINS), sep=10, center="dark")
    small = len(shown) > 2000
    fig, (ax, side) = plt.subplots(1, 2, figsize=(10.5, 6.4), width_ratios=(4.0, 1.35))
    side.axis("off")   # holds the legends, so that the layout leaves them room
    for value, colour in zip(_BINS, palette):
        chosen = binned == value
        ax.scatter(shown["variability"].to_numpy()[chosen], shown["confidence"].to_numpy()[chosen],
                   s=5 if small else 16, alpha=0.35 if small else 0.8, color=colour, linewidths=0,
                   label=f"{value:.1f}")
    ax.set_xlim(-0.01, _MAX_VARIABILITY)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("variability (σ of P(gold) over validations, mean over seeds)")
    ax.set_ylabel("confidence (mean P(gold) over validations, mean over seeds)")
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    legend = side.legend(handles, labels, title="correctness", loc="upper left",
                       markerscale=2.5 if small else 1.5, fontsize=8, title_fontsize=8, framealpha=0.9)
    for handle in legend.legend_handles:
        handle.set_alpha(1.0)
    side.add_artist(legend)   # kept when the regions' legend is added
    _draw_regions(ax, side, region_shares(mapped["region"]))
    drawn = f"{len(shown)} of {len(mapped)} items drawn" if len(shown) < len(mapped) else f"{len(mapped)} items"
    unmapped = len(items) - len(mapped)
    note = f"\n({unmapped} item{'s' if unmapped != 1 else ''} seen in < 2 validations not drawn)" if unmapped else ""
    ax.set_title(wrapped_title(f"{lang} · {condition_name(setup, variant)}: data map, {drawn}, mean over {n_seeds} "
                               f"seed{'s' if n_seeds != 1 else ''}", 85) + note, fontsize=10)
    return save_figure(fig, data_map_path(out, lang, setup, variant))


def _draw_regions(ax: plt.Axes, side: plt.Axes, shares: dict[str, float]) -> None:
    """The thresholds as dashed lines with each region's name beside them (small, so the points stay
    visible), and the regions' rules and shares of the map in a legend on `side`."""
    line = dict(color="0.25", linestyle="--", linewidth=1.0)
    ax.axvline(AMBIGUOUS_VARIABILITY, **line)
    for level in (EASY_CONFIDENCE, HARD_CONFIDENCE):
        ax.plot([-0.01, AMBIGUOUS_VARIABILITY], [level, level], **line)
    edge = AMBIGUOUS_VARIABILITY - 0.004
    name = dict(fontsize=8, color="0.15", bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.7))
    ax.text(edge, EASY_CONFIDENCE + 0.01, f"{EASY} ↑", ha="right", va="bottom", **name)
    ax.text(edge, EASY_CONFIDENCE - 0.01, f"{OTHER} ↓", ha="right", va="top", **name)
    ax.text(edge, HARD_CONFIDENCE - 0.01, f"{HARD} ↓", ha="right", va="top", **name)
    ax.text(AMBIGUOUS_VARIABILITY + 0.004, 1.0, f"{AMBIGUOUS} →", ha="left", va="top", **name)
    rows = [(EASY, f"confidence ≥ {EASY_CONFIDENCE:g}, variability < {AMBIGUOUS_VARIABILITY:g}"),
            (AMBIGUOUS, f"variability ≥ {AMBIGUOUS_VARIABILITY:g}"),
            (HARD, f"confidence ≤ {HARD_CONFIDENCE:g}, variability < {AMBIGUOUS_VARIABILITY:g}"),
            (OTHER, "the rest")]
    handles = [Patch(facecolor="none", edgecolor="none") for _ in rows]
    labels = [f"{region}: {'–' if np.isnan(shares[region]) else format(shares[region], '.0%')}\n{rule}"
              for region, rule in rows]
    side.legend(handles, labels, title="region: share of the map", loc="lower left",
              fontsize=7.5, title_fontsize=8, handlelength=0, handletextpad=0, labelspacing=0.8, framealpha=0.9)
