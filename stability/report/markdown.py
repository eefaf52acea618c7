"""report.md: the tables and figures in one page that reads without opening the CSVs."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from stability.report.agreement import ALL_ITEMS
from stability.report.collect import OVERALL
from stability.report.compare import ALL_LANGUAGES
from stability.report.stats import MEAN

_LISTED = 3   # categories named per list (most/least stable, lowest agreement)


@dataclass(frozen=True)
class Comparison:
    """A `--compare A B` result: point deltas, threshold shares and (optionally) bootstrap deltas."""

    setup_a: str
    setup_b: str
    mcc_threshold: float
    std_threshold: float
    deltas: pd.DataFrame
    shares: pd.DataFrame
    bootstrap: pd.DataFrame | None
    figure: Path | None


@dataclass(frozen=True)
class Report:
    """Everything report.md shows; optional parts are None when their inputs were absent."""

    sources: str
    summary: pd.DataFrame
    category_stats: pd.DataFrame
    language_corr: pd.DataFrame
    items: pd.DataFrame | None = None
    agreement: pd.DataFrame | None = None
    bootstrap: pd.DataFrame | None = None
    confidence: float = 0.95
    comparison: Comparison | None = None
    size_curve: pd.DataFrame | None = None
    seed_figures: list[Path] = field(default_factory=list)
    language_figures: list[Path] = field(default_factory=list)
    size_figure: Path | None = None
    # further sections rendered by their own modules (e.g. report.suites), appended in order
    sections: list[str] = field(default_factory=list)

    @property
    def figures(self) -> list[Path]:
        """Every PNG the report links to."""
        optional = [self.size_figure, self.comparison.figure if self.comparison else None]
        return self.seed_figures + self.language_figures + [path for path in optional if path is not None]


def _num(value: float, digits: int = 3) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _pm(mean: float, std: float) -> str:
    if isinstance(mean, float) and math.isnan(mean):
        return "–"
    return f"{_num(mean)} ± {_num(std)}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _figures(paths: list[Path]) -> str:
    return "".join(f"![{path.stem}]({path.name})\n\n" for path in paths)


def _summary(report: Report) -> str:
    rows = [[r.lang, r.setup, r.n_seeds, _pm(r.overall_mcc_mean, r.overall_mcc_std),
             _pm(r.mean_category_mcc_mean, r.mean_category_mcc_std), _num(r.rs_corr),
             f"{r.rs_corr_pairs} / {r.rs_corr_skipped}"] for r in report.summary.itertuples()]
    return ("## Summary\n\nMean ± σ over seeds (σ: sample standard deviation, ddof = 1). "
            "RS corr.: mean Pearson r between two seeds' category-MCC vectors over all seed pairs; "
            "pairs where a vector is constant are skipped.\n\n"
            + _table(["lang", "setup", "seeds", "overall MCC", "mean category MCC", "RS corr.",
                      "pairs used / skipped"], rows))


def _stability(report: Report) -> str:
    rows = []
    for (lang, setup), group in report.category_stats.groupby(["lang", "setup"], sort=True):
        # a category without items has σ = 0 by construction, which says nothing about stability
        scored = group[group["n_items"].fillna(1) > 0]
        ranked = scored.dropna(subset=["mcc_std"]).sort_values(["mcc_std", "category"])
        listing = [", ".join(f"{r.category} ({_num(r.mcc_std)})" for r in part.itertuples())
                   for part in (ranked.head(_LISTED), ranked.tail(_LISTED)[::-1])]
        rows.append([lang, setup, *listing] if len(ranked) else [lang, setup, "–", "–"])
    return ("## Stability per category\n\nCategories with the smallest and largest σ of MCC across "
            "seeds (σ in parentheses); categories without diagnostic items are left out.\n\n"
            + _table(["lang", "setup", "most stable", "least stable"], rows) + "\n"
            + _figures(report.seed_figures + report.language_figures))


def _language_corr(report: Report) -> str:
    table = report.language_corr
    if table.empty:
        return ""
    langs = sorted(set(table["lang_a"]) - {MEAN})
    rows = []
    for setup, group in table.groupby("setup", sort=True):
        means = group[group["lang_b"] == MEAN].set_index("lang_a")["pearson"]
        rows.append([setup, _num(means.get(MEAN, math.nan))] + [_num(means.get(lang, math.nan)) for lang in langs])
    return ("## Language-wise correlation\n\nPearson r between languages' seed-averaged category-MCC "
            "vectors: the mean over all language pairs, and each language's mean r with the others.\n\n"
            + _table(["setup", "all pairs"] + langs, rows))


def _agreement(report: Report) -> str:
    if report.items is None:
        return ""
    rows = []
    for (lang, setup), items in report.items.groupby(["lang", "setup"], sort=True):
        by_category = report.agreement[(report.agreement["lang"] == lang) & (report.agreement["setup"] == setup)
                                       & (report.agreement["category"] != ALL_ITEMS)]
        lowest = by_category.sort_values(["agreement_mean", "category"]).head(_LISTED)
        rows.append([lang, setup, len(items), int(items["n_seeds"].max()), _num(items["agreement"].mean()),
                     _num((items["agreement"] == 1).mean()),
                     ", ".join(f"{r.category} ({_num(r.agreement_mean)})" for r in lowest.itertuples())])
    return ("## Per-item agreement\n\nShare of seed pairs that predict the same label for an item, "
            "averaged over items; `flip_items.csv` lists the items the seeds disagree on most.\n\n"
            + _table(["lang", "setup", "items", "seeds", "mean agreement", "items all seeds agree on",
                      "lowest-agreement categories"], rows))


def _bootstrap(report: Report) -> str:
    if report.bootstrap is None:
        return ""
    table = report.bootstrap
    rows = []
    for (lang, setup), group in table.groupby(["lang", "setup"], sort=True):
        overall = group[group["category"] == OVERALL].iloc[0]
        fine = group[group["category"] != OVERALL]
        rows.append([lang, setup, f"{_num(overall.estimate)} [{_num(overall.ci_low)}, {_num(overall.ci_high)}]",
                     _num((fine["ci_high"] - fine["ci_low"]).mean()),
                     int(((fine["ci_low"] > 0) | (fine["ci_high"] < 0)).sum())])
    level = f"{report.confidence:.0%}"
    return (f"## Bootstrap intervals\n\n{level} multi-bootstrap intervals (seeds and items resampled "
            "together); per category in `bootstrap_ci.csv`.\n\n"
            + _table(["lang", "setup", f"overall MCC [{level} CI]", "mean category CI width",
                      "categories with CI excluding 0"], rows))


def _comparison(report: Report) -> str:
    comparison = report.comparison
    if comparison is None:
        return ""
    a, b = comparison.setup_a, comparison.setup_b
    shares = [[r.lang, r.n_cells, f"{r.n_delta_mcc_above} ({_num(r.share_delta_mcc_above, 2)})",
               f"{r.n_delta_std_below} ({_num(r.share_delta_std_below, 2)})"]
              for r in comparison.shares.itertuples()]
    text = (f"## Comparison: {b} vs {a}\n\nΔ = {b} − {a} per (language, category). Cells with "
            f"ΔMCC > {comparison.mcc_threshold:g} and with Δσ < {comparison.std_threshold:g} "
            f"(strict; `{ALL_LANGUAGES}` = every language):\n\n"
            + _table(["lang", "cells", f"ΔMCC > {comparison.mcc_threshold:g}",
                      f"Δσ < {comparison.std_threshold:g}"], shares))
    largest = comparison.deltas.sort_values("delta_mcc", ascending=False)
    for title, part in (("Largest", largest.head(5)), ("Smallest", largest.tail(5)[::-1])):
        text += (f"\n{title} ΔMCC:\n\n" + _table(
            ["lang", "category", f"MCC {a}", f"MCC {b}", "ΔMCC", "Δσ"],
            [[r.lang, r.category, _pm(r.mcc_mean_a, r.mcc_std_a), _pm(r.mcc_mean_b, r.mcc_std_b),
              _num(r.delta_mcc), _num(r.delta_std)] for r in part.itertuples()]))
    if comparison.bootstrap is not None and not comparison.bootstrap.empty:
        rows = []
        for lang, group in comparison.bootstrap.groupby("lang", sort=True):
            overall = group[group["category"] == OVERALL].iloc[0]
            fine = group[group["category"] != OVERALL]
            rows.append([lang, f"{_num(overall.delta_mcc)} [{_num(overall.ci_low)}, {_num(overall.ci_high)}]",
                         _num(overall.p_delta_le_0), int((fine["p_delta_le_0"] < 0.05).sum())])
        text += ("\nBootstrap (paired items, independent seeds); p = share of bootstrap Δ ≤ 0 "
                 "(per category in `bootstrap_deltas.csv`):\n\n"
                 + _table(["lang", f"overall ΔMCC [{report.confidence:.0%} CI]", "p (Δ ≤ 0)",
                           "categories with p < 0.05"], rows))
    if comparison.figure is not None:
        text += "\n" + _figures([comparison.figure])
    return text


def _sizes(report: Report) -> str:
    curve = report.size_curve
    if curve is None or curve.empty:
        return ""
    rows = [[r.lang, r.family, f"{r.n_added:,}", r.setup, _pm(r.overall_mcc_mean, r.overall_mcc_std),
             _pm(r.mean_category_mcc_mean, r.mean_category_mcc_std), _num(r.rs_corr)]
            for r in curve.itertuples()]
    return ("## Training-data size\n\nSetups of one family differing only in the number of added MNLI "
            "examples.\n\n"
            + _table(["lang", "family", "MNLI added", "setup", "overall MCC", "mean category MCC",
                      "RS corr."], rows)
            + ("\n" + _figures([report.size_figure]) if report.size_figure else ""))


def render(report: Report) -> str:
    """The whole page; sections whose inputs are missing are left out."""
    parts = [f"# Fine-tuning stability report\n\nInputs: {report.sources}.\n", _summary(report),
             _stability(report), _language_corr(report), _agreement(report), _bootstrap(report),
             _comparison(report), _sizes(report), *report.sections]
    return "\n".join(part for part in parts if part)
