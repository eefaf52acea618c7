"""PNG figures of the report beyond the seed heat map: language and delta heat maps, data-size
curves, cross-lingual κ maps and consistency bars, variance shares of seed grids,
expected-maximum curves, and σ and mean per stabilisation method.

They share the seed heat map's drawing (`stability.statistics.figures`): one diverging scale
centred on 0, categories in canonical order down the y axis, undefined cells in grey.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from stability.core.taxonomy import FINE_CATEGORIES  # noqa: E402
from stability.report.calibration import TOO_FEW, method_name, percent  # noqa: E402
from stability.report.collect import OVERALL  # noqa: E402
from stability.report.stabilizers import all_failed, method_labels  # noqa: E402
from stability.statistics.figures import (  # noqa: E402
    CMAP,
    UNDEFINED_TEXT,
    category_figure,
    coarse_starts,
    draw_heatmap,
    safe_name,
    save_figure,
)
from stability.statistics.seeds import condition_name  # noqa: E402


def language_heatmaps(stats: pd.DataFrame, out: Path, degenerate: pd.DataFrame | None = None) -> list[Path]:
    """Category × language seed-mean MCC per (setup, variant): `heatmap_languages_<setup>.png`
    (`..._<setup>_<variant>.png` for a variant; n/a where every seed's MCC was undefined)."""
    paths = []
    for (setup, variant), group in stats.groupby(["setup", "variant"], sort=True):
        matrix = group.pivot(index="category", columns="lang", values="mcc_mean") \
            .reindex(group["category"].drop_duplicates())
        undefined = None
        part = None if degenerate is None else \
            degenerate[(degenerate["setup"] == setup) & (degenerate["variant"] == variant)]
        if part is not None and not part.empty:
            undefined = part.assign(degenerate=part["degenerate"].fillna(False).astype(bool)) \
                .groupby(["category", "lang"])["degenerate"].all().unstack()
        condition = condition_name(setup, variant)
        fig, axes = category_figure(1, *matrix.shape)
        draw_heatmap(axes[0, 0], matrix, 1.0, "mean MCC over seeds", f"{condition}: mean category MCC",
                     undefined=undefined)
        axes[0, 0].set_xlabel("language" + ("   (n/a: MCC undefined in every seed)" if undefined is not None else ""))
        paths.append(save_figure(fig, out / language_heatmap_file(setup, variant)))
    return paths


def language_heatmap_file(setup: str, variant: str) -> str:
    """The language heat map's file name, which the report's page replaces by its interactive map."""
    return f"heatmap_languages_{safe_name(condition_name(setup, variant))}.png"


def delta_heatmaps(deltas: pd.DataFrame, condition_a: str, condition_b: str, out: Path) -> Path:
    """ΔMCC and Δσ (B − A) as category × language maps: `deltas_<A>_vs_<B>.png`."""
    order = deltas["category"].drop_duplicates()
    fig, axes = category_figure(2, len(order), deltas["lang"].nunique())
    for ax, column, label in zip(axes[0], ["delta_mcc", "delta_std"], ["ΔMCC", "Δσ"]):
        matrix = deltas.pivot(index="category", columns="lang", values=column).reindex(order)
        vmax = max(float(np.nanmax(np.abs(matrix.to_numpy()), initial=0.0)), 0.05)
        draw_heatmap(ax, matrix, vmax, f"{label} ({condition_b} − {condition_a})", label)
        ax.set_xlabel("language")
    fig.suptitle(f"{condition_b} vs {condition_a}")
    return save_figure(fig, out / f"deltas_{safe_name(condition_a)}_vs_{safe_name(condition_b)}.png")


def size_curve_plot(curve: pd.DataFrame, out: Path) -> Path:
    """Per language: MCC (mean ± σ) and RS corr. against added MNLI examples, a line per setup family
    (and variant): `size_curve.png`."""
    langs = sorted(curve["lang"].unique())
    fig, axes = plt.subplots(len(langs), 2, figsize=(11, 3.4 * len(langs)), squeeze=False)
    sizes = np.sort(curve["n_added"].unique())
    for row, lang in zip(axes, langs):
        for (family, variant), line in curve[curve["lang"] == lang].groupby(["family", "variant"], sort=True):
            family = condition_name(family, variant)
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
    return save_figure(fig, out / "size_curve.png")


def kappa_heatmap(matrices: dict[str, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]], condition: str,
                  out: Path, note: str = "") -> Path:
    """Language × language mean Cohen's κ (± σ over seeds) per run subset: `kappa_<condition>.png`.

    `matrices` maps a panel title (e.g. "all runs", "non-failed runs") to (κ mean, κ σ,
    run pairs) matrices; the diagonal is the seed baseline (two seeds of the same language).
    """
    n = len(matrices)
    size = len(next(iter(matrices.values()))[0])
    fig, axes = plt.subplots(1, n, figsize=(n * (1.1 * size + 2.6), 1.0 * size + 1.8), squeeze=False)
    for ax, (title, (mean, std, pairs)) in zip(axes[0], matrices.items()):
        labels = mean.map(lambda v: "" if pd.isna(v) else f"{v:.2f}") \
            + std.map(lambda v: "" if pd.isna(v) else f" ± {v:.2f}") \
            + pairs.map(lambda v: "" if pd.isna(v) else f"\n{int(v)} run pair{'s' if v != 1 else ''}")
        sns.heatmap(mean.fillna(0.0), ax=ax, cmap=CMAP, center=0.0, vmin=-1.0, vmax=1.0, annot=labels.to_numpy(),
                    fmt="", annot_kws={"size": 8}, mask=mean.isna(), linewidths=0.6, linecolor="white", square=True,
                    cbar_kws={"label": "Cohen's κ (mean over seeds)", "shrink": 0.7})
        for row, column in zip(*np.nonzero(mean.isna().to_numpy())):
            ax.text(column + 0.5, row + 0.5, f"{UNDEFINED_TEXT}\n(fewer than 2 runs)", ha="center", va="center",
                    size=8, color="#555555")
        for i in range(size):
            ax.add_patch(plt.Rectangle((i, i), 1, 1, fill=False, edgecolor="black", linewidth=1.4))
        ax.set_title(title)
        ax.set_xlabel("language B")
        ax.set_ylabel("language A")
        ax.tick_params(axis="y", labelrotation=0)
    fig.suptitle(f"{condition}: agreement of predictions across languages (same seed);\n"
                 "framed diagonal = seed baseline (two seeds of one language)" + (f"\n{note}" if note else ""),
                 fontsize=10)
    return save_figure(fig, out / f"kappa_{safe_name(condition)}.png")


def consistency_bars(by_category: pd.DataFrame, key: tuple[str, str], pair: tuple[str, str], out: Path) -> Path:
    """Per fine category: consistency of the pair (mean ± σ over seeds) in one (setup, variant), with
    each language's seed baseline as markers: `consistency_<setup>[_<variant>]_<a>_<b>.png`."""
    lang_a, lang_b = pair
    setup, variant = key
    condition = condition_name(setup, variant)
    part = by_category[(by_category["setup"] == setup) & (by_category["variant"] == variant)
                       & (by_category["runs"] == "all") & (by_category["level"] == "fine")]

    def series(a: str, b: str, column: str) -> pd.Series:
        return part[(part["lang_a"] == a) & (part["lang_b"] == b)].set_index("category")[column]

    mean, std = series(lang_a, lang_b, "consistency_mean"), series(lang_a, lang_b, "consistency_std")
    order = [name for name in part["category"].drop_duplicates() if name in mean.index]
    y = np.arange(len(order))
    n_items = part.drop_duplicates("category").set_index("category")["n_items"]
    fig, ax = plt.subplots(figsize=(11, 1.6 + 0.28 * len(order)))
    ax.barh(y, mean.reindex(order), xerr=std.reindex(order).fillna(0), color="#8fb3d9", capsize=2,
            label=f"{lang_a} vs {lang_b} (same seed)")
    for lang, marker in ((lang_a, "o"), (lang_b, "s")):
        baseline = series(lang, lang, "consistency_mean").reindex(order)
        ax.scatter(baseline, y, marker=marker, color="black", s=18, zorder=3, facecolors="none" if marker == "s" else None,
                   label=f"{lang} seed baseline (two seeds of {lang})")
    for row in coarse_starts(order):
        ax.axhline(row - 0.5, color="grey", linewidth=0.8)
    ax.set_yticks(y, [f"{name} ({n_items[name]})" for name in order])
    ax.invert_yaxis()
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("consistency: share of items with the same prediction (mean ± σ over seeds)")
    ax.set_title(f"{condition}: {lang_a} vs {lang_b} per category, all runs (items in parentheses)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(axis="x", alpha=0.3)
    return save_figure(fig, out / f"consistency_{safe_name(condition)}_{safe_name(lang_a)}_{safe_name(lang_b)}.png")


_SOURCES = (("init", "seed_init (initialisation)", "#4c72b0"), ("order", "seed_order (data order)", "#dd8452"),
            ("residual", "residual (interaction and noise)", "#b0b0b0"))


_PANELS_PER_ROW = 4   # grids per row of variance_sources.png, so that many grids wrap instead of one wide strip


def variance_shares_plot(table: pd.DataFrame, out: Path) -> Path:
    """Per grid (lang, setup, family, seed), one panel of stacked horizontal bars: the shares of
    the MCC's sum of squares from seed_init, seed_order and the residual, for the overall MCC and
    every fine category: `variance_sources.png`."""
    rows = table[table["level"].isin(["all", "fine"])]
    groups = list(rows.groupby(["lang", "setup", "family", "seed"], sort=True))
    present = set(rows["category"])
    order = [OVERALL, *(name for name in FINE_CATEGORIES if name in present)]
    columns = min(len(groups), _PANELS_PER_ROW)
    n_rows = -(-len(groups) // columns)
    fig, axes = plt.subplots(n_rows, columns, figsize=(3.6 + 3.2 * columns, (1.8 + 0.28 * len(order)) * n_rows),
                             squeeze=False, sharey=True)
    for ax in axes.flat[len(groups):]:
        ax.set_visible(False)
    y = np.arange(len(order))
    for ax, ((lang, setup, family, seed), group) in zip(axes.flat, groups):
        shares = group.set_index("category").reindex(order)
        left = np.zeros(len(order))
        for source, label, colour in _SOURCES:
            values = shares[f"share_{source}"].fillna(0.0).to_numpy()
            ax.barh(y, values, left=left, color=colour, label=label, height=0.8)
            left += values
        for row in np.flatnonzero(shares["share_init"].isna().to_numpy()):
            ax.text(0.02, row, f"{UNDEFINED_TEXT} (MCC equal in every run)", va="center", size=7, color="#555555")
        for row in coarse_starts(order[1:]):
            ax.axhline(row + 0.5, color="black", linewidth=0.8)   # order[1:] starts at y = 1
        ax.axhline(0.5, color="black", linewidth=1.2)
        grid = f"{int(group['n_init'].iloc[0])} × {int(group['n_order'].iloc[0])}"
        ax.set_title(f"{lang} · {condition_name(setup, family)} · seed {seed}\n{grid} seed_init × seed_order grid",
                     fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of the sum of squares")
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].set_yticks(y, order)
    axes[0, 0].invert_yaxis()
    axes[0, columns - 1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle("Where the seed variance of MCC comes from (two-way ANOVA without replication)", fontsize=10)
    return save_figure(fig, out / "variance_sources.png")


def expected_max_plot(curves: pd.DataFrame, out: Path) -> Path:
    """Per language: the expected best validation accuracy over n runs and the expected overall
    MCC of the run it selects, a line per condition: `expected_max.png`."""
    langs = sorted(curves["lang"].unique())
    fig, axes = plt.subplots(len(langs), 2, figsize=(11, 3.2 * len(langs)), squeeze=False)
    for row, lang in zip(axes, langs):
        for (setup, variant), line in curves[curves["lang"] == lang].groupby(["setup", "variant"], sort=True):
            label = condition_name(setup, variant)
            row[0].plot(line["n"], line["expected_max_valid"], marker="o", label=label)
            row[1].plot(line["n"], line["expected_selected_overall_mcc"], marker="s", label=label)
        for ax, ylabel in zip(row, ["E[best validation accuracy]", "E[overall MCC of the selected run]"]):
            ax.set_xlabel("runs n (best of n by validation accuracy)")
            ax.set_ylabel(ylabel)
            ax.set_title(lang)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle("Expected maximum over n runs (closed form over the runs' empirical distribution)", fontsize=10)
    return save_figure(fig, out / "expected_max.png")


_SPREAD_CMAP = "Purples"   # sequential, apart from the red–blue of the MCC maps beside it


def _wrapped(name: str) -> str:
    """A coarse category's name on two lines where it is long ("Predicate-Argument\nStructure")."""
    return textwrap.fill(name, 18, break_long_words=False, break_on_hyphens=False)


def stabilizer_heatmaps(table: pd.DataFrame, alpha: float, out: Path) -> list[Path]:
    """Per setup, a row of two heat maps per language, methods × (overall, coarse categories): σ of
    MCC over seeds with its bootstrap interval, and the mean MCC; the reference method first, the
    share of failed runs beside each method, ↓/↑ where the method's σ (mean) is below/above the
    reference's at Holm p < `alpha`: `stabilizers_<setup>.png` (`stabilizers.csv`'s rows)."""
    shown = table[table["level"].isin(["all", "coarse"])]
    paths = []
    for setup, part in shown.groupby("setup", sort=True):
        reference = part.loc[part["method"] == part["reference"], ["lang", "level", "category", "std_mcc", "mean_mcc"]]
        part = part.merge(reference.rename(columns={"std_mcc": "reference_std_mcc", "mean_mcc": "reference_mean_mcc"}),
                          on=["lang", "level", "category"], how="left")
        langs = list(part["lang"].drop_duplicates())
        columns = list(part["category"].drop_duplicates())
        n_methods = part.groupby("lang")["method"].nunique()
        vmax = max(float(np.nanmax(part["std_mcc"].to_numpy(float), initial=0.0)), 0.05)
        heights = [0.55 * n_methods[lang] + 0.9 for lang in langs]
        fig, axes = plt.subplots(len(langs), 2, figsize=(6.0 + 2 * 1.25 * len(columns), sum(heights) + 1.4),
                                 squeeze=False, gridspec_kw={"height_ratios": heights})
        for (ax_std, ax_mean), lang in zip(axes, langs):
            cells = part[part["lang"] == lang]
            methods = list(cells["method"].drop_duplicates())   # the reference first
            names = method_labels(methods)
            labels = [_method_label(cells[cells["method"] == method].iloc[0], names[method]) for method in methods]
            for ax, value, cmap, vmin, top, label, title in (
                    (ax_std, "std_mcc", _SPREAD_CMAP, 0.0, vmax, "σ of MCC over seeds",
                     f"σ of MCC over seeds [{interval_title(cells, alpha)}]"),
                    (ax_mean, "mean_mcc", CMAP, -1.0, 1.0, "mean MCC over seeds", "mean MCC over seeds")):
                matrix = cells.pivot(index="method", columns="category", values=value).reindex(index=methods,
                                                                                               columns=columns)
                text = cells.assign(_text=[_stabilizer_text(row, value, alpha) for row in cells.itertuples()]) \
                    .pivot(index="method", columns="category", values="_text").reindex(index=methods, columns=columns)
                sns.heatmap(matrix, ax=ax, cmap=cmap, vmin=vmin, vmax=top,
                            center=0.0 if value == "mean_mcc" else None,
                            annot=text.fillna("").to_numpy(), fmt="", annot_kws={"size": 8}, linewidths=0.6,
                            linecolor="white", cbar_kws={"label": label, "shrink": 0.8})
                ax.axhline(1, color="black", linewidth=1.4)   # below the reference
                ax.axvline(1, color="black", linewidth=1.0)   # right of overall
                ax.set_title(f"{lang} · {setup}: {title}", fontsize=10)
                ax.set_xlabel("")
                ax.set_ylabel("")
                ax.set_xticks(np.arange(len(columns)) + 0.5, [_wrapped(name) for name in columns], rotation=0,
                              fontsize=8)
                ax.set_yticks(np.arange(len(methods)) + 0.5, labels if ax is ax_std else [""] * len(methods),
                              rotation=0, fontsize=8)
                ax.tick_params(left=ax is ax_std)
        fig.suptitle(f"{setup}: which method stabilises what (rows: methods, the reference first, with their "
                     f"failed runs)\n↓ / ↑: σ (left) or mean (right) below / above the reference's, Holm p < {alpha:g} "
                     "(Brown–Forsythe for σ, Welch for the mean)", fontsize=10)
        paths.append(save_figure(fig, out / f"stabilizers_{safe_name(setup)}.png",
                                 top=1.0 - 0.45 / fig.get_figheight()))
    return paths


def interval_title(cells: pd.DataFrame, alpha: float) -> str:
    """What the σ cells' intervals are: the method(s) the calibration chose (`std_method`) with the lowest
    measured coverage among the drawn ones, and that cells with too few seeds have none."""
    level = f"{1 - alpha:.0%}"
    drawn = cells[cells["std_low"].notna()]
    coverage = drawn["std_coverage"].min()
    if cells["std_coverage"].isna().all():
        return f"{level} percentile bootstrap interval, coverage not measured"
    if drawn.empty:
        return f"no interval: {TOO_FEW}"
    names = [method_name(method) for method in sorted(drawn["std_method"].unique())]
    lacking = "; none where too few seeds" if cells["std_method"].eq(TOO_FEW).any() else ""
    return (f"{level} interval, {' or '.join(names)}{' per cell' if len(names) > 1 else ''}: "
            f"measured coverage ≥ {percent(coverage)}{lacking}")


def _method_label(row: pd.Series, name: str) -> str:
    """`trainer-mosbach` over `1 of 5 failed` (no second line for tidy CSV inputs); `(reference)` after the reference."""
    name += " (reference)" if row["method"] == row["reference"] else ""
    failed = "" if pd.isna(row["failed"]) else f"\n{row['failed']} of {row['n_runs']} failed"
    return name + failed


def _stabilizer_text(row: tuple, value: str, alpha: float) -> str:
    """A cell's annotation: the value, an arrow where it differs from the reference's (for σ not
    when every run of the method failed), and under σ its interval."""
    number = getattr(row, value)
    if pd.isna(number):
        return UNDEFINED_TEXT
    holm = row.p_variance_holm if value == "std_mcc" else row.p_mean_holm
    arrow = ""
    if not pd.isna(holm) and holm < alpha and not (value == "std_mcc" and all_failed(row)):
        arrow = " ↓" if number < getattr(row, f"reference_{value}") else " ↑"
    text = f"{number:.2f}{arrow}"
    if value == "std_mcc" and not pd.isna(row.std_low):
        text += f"\n[{row.std_low:.2f}, {row.std_high:.2f}]"
    return text
