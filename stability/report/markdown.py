"""report.md: the tables and figures in one page that reads without opening the CSVs."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from stability.core.markdown import num, table
from stability.report.agreement import ALL_ITEMS
from stability.report.collect import OVERALL
from stability.report.compare import ALL_LANGUAGES
from stability.report.consistency import NON_FAILED
from stability.report.crosslingual import CrossLingual
from stability.report.failed import failed_counts
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
    failed: pd.DataFrame | None = None              # failed_runs.csv (empty: no run directory judged)
    summary_nonfailed: pd.DataFrame | None = None
    items_nonfailed: pd.DataFrame | None = None
    excluded_failed: bool = False                   # --exclude-failed: every table is over non-failed runs
    cross_lingual: CrossLingual | None = None
    # further sections rendered by their own modules (e.g. report.suites), appended in order
    sections: list[str] = field(default_factory=list)

    @property
    def figures(self) -> list[Path]:
        """Every PNG the report links to."""
        optional = [self.size_figure, self.comparison.figure if self.comparison else None]
        crossed = self.cross_lingual.figures if self.cross_lingual else []
        return self.seed_figures + self.language_figures + [path for path in optional if path is not None] + crossed


def _pm(mean: float, std: float) -> str:
    if isinstance(mean, float) and math.isnan(mean):
        return "–"
    return f"{num(mean)} ± {num(std)}"


def _figures(paths: list[Path]) -> str:
    return "".join(f"![{path.stem}]({path.name})\n\n" for path in paths)


def _summary(report: Report) -> str:
    counts = failed_counts(report.failed) if report.failed is not None else pd.DataFrame()
    failed = {(r.lang, r.setup): int(r.n_failed) for r in counts.itertuples()}
    nonfailed = {(r.lang, r.setup): r for r in report.summary_nonfailed.itertuples()} \
        if report.summary_nonfailed is not None and not report.excluded_failed else {}

    def row(r, runs: str) -> list[str]:
        return [r.lang if runs != NON_FAILED else "", r.setup if runs != NON_FAILED else "", runs, r.n_seeds,
                _pm(r.overall_mcc_mean, r.overall_mcc_std), _pm(r.mean_category_mcc_mean, r.mean_category_mcc_std),
                num(r.rs_corr), f"{r.rs_corr_pairs} / {r.rs_corr_skipped}"]

    rows = []
    for r in report.summary.itertuples():
        n_failed = failed.get((r.lang, r.setup))
        label = "non-failed" if report.excluded_failed else "all seeds"
        rows.append(row(r, label) + ["–" if n_failed is None else str(n_failed)])
        if n_failed and (r.lang, r.setup) in nonfailed:
            rows.append(row(nonfailed[(r.lang, r.setup)], NON_FAILED) + [""])
    return ("## Summary\n\nMean ± σ over seeds (σ: sample standard deviation, ddof = 1). "
            "RS corr.: mean Pearson r between two seeds' category-MCC vectors over all seed pairs; "
            "pairs where a vector is constant are skipped. Groups with failed runs (see *Failed runs*) get "
            "a second row over the non-failed seeds.\n\n"
            + table(["lang", "setup", "runs", "seeds", "overall MCC", "mean category MCC", "RS corr.",
                     "pairs used / skipped", "failed"], rows))


def _stability(report: Report) -> str:
    rows = []
    for (lang, setup), group in report.category_stats.groupby(["lang", "setup"], sort=True):
        # a category without items has σ = 0 by construction, which says nothing about stability
        scored = group[group["n_items"].fillna(1) > 0]
        ranked = scored.dropna(subset=["mcc_std"]).sort_values(["mcc_std", "category"])
        listing = [", ".join(f"{r.category} ({num(r.mcc_std)})" for r in part.itertuples())
                   for part in (ranked.head(_LISTED), ranked.tail(_LISTED)[::-1])]
        rows.append([lang, setup, *listing] if len(ranked) else [lang, setup, "–", "–"])
    return ("## Stability per category\n\nCategories with the smallest and largest σ of MCC across "
            "seeds (σ in parentheses); categories without diagnostic items are left out.\n\n"
            + table(["lang", "setup", "most stable", "least stable"], rows) + "\n"
            + _figures(report.seed_figures + report.language_figures))


def _language_corr(report: Report) -> str:
    corr = report.language_corr
    if corr.empty:
        return ""
    langs = sorted(set(corr["lang_a"]) - {MEAN})
    rows = []
    for setup, group in corr.groupby("setup", sort=True):
        means = group[group["lang_b"] == MEAN].set_index("lang_a")["pearson"]
        rows.append([setup, num(means.get(MEAN, math.nan))] + [num(means.get(lang, math.nan)) for lang in langs])
    return ("## Language-wise correlation\n\nPearson r between languages' seed-averaged category-MCC "
            "vectors: the mean over all language pairs, and each language's mean r with the others.\n\n"
            + table(["setup", "all pairs"] + langs, rows))


def _agreement(report: Report) -> str:
    if report.items is None:
        return ""
    rows = []
    for (lang, setup), items in report.items.groupby(["lang", "setup"], sort=True):
        by_category = report.agreement[(report.agreement["lang"] == lang) & (report.agreement["setup"] == setup)
                                       & (report.agreement["category"] != ALL_ITEMS)]
        lowest = by_category.sort_values(["agreement_mean", "category"]).head(_LISTED)
        kept = report.items_nonfailed
        kept = kept[(kept["lang"] == lang) & (kept["setup"] == setup)]["agreement"] if kept is not None else None
        rows.append([lang, setup, len(items), int(items["n_seeds"].max()), num(items["agreement"].mean()),
                     "–" if kept is None else num(kept.mean()), num((items["agreement"] == 1).mean()),
                     ", ".join(f"{r.category} ({num(r.agreement_mean)})" for r in lowest.itertuples())])
    return ("## Per-item agreement\n\nShare of seed pairs that predict the same label for an item, "
            "averaged over items (all seeds, and without failed runs); `flip_items.csv` lists the items the "
            "seeds disagree on most.\n\n"
            + table(["lang", "setup", "items", "seeds", "mean agreement (all seeds)", "(non-failed seeds)",
                     "items all seeds agree on", "lowest-agreement categories"], rows))


def _bootstrap(report: Report) -> str:
    if report.bootstrap is None:
        return ""
    rows = []
    for (lang, setup), group in report.bootstrap.groupby(["lang", "setup"], sort=True):
        overall = group[group["category"] == OVERALL].iloc[0]
        fine = group[group["category"] != OVERALL]
        rows.append([lang, setup, f"{num(overall.estimate)} [{num(overall.ci_low)}, {num(overall.ci_high)}]",
                     num((fine["ci_high"] - fine["ci_low"]).mean()),
                     int(((fine["ci_low"] > 0) | (fine["ci_high"] < 0)).sum())])
    level = f"{report.confidence:.0%}"
    return (f"## Bootstrap intervals\n\n{level} multi-bootstrap intervals (seeds and items resampled "
            "together); per category in `bootstrap_ci.csv`.\n\n"
            + table(["lang", "setup", f"overall MCC [{level} CI]", "mean category CI width",
                     "categories with CI excluding 0"], rows))


def _comparison(report: Report) -> str:
    comparison = report.comparison
    if comparison is None:
        return ""
    a, b = comparison.setup_a, comparison.setup_b
    shares = [[r.lang, r.n_cells, f"{r.n_delta_mcc_above} ({num(r.share_delta_mcc_above, 2)})",
               f"{r.n_delta_std_below} ({num(r.share_delta_std_below, 2)})"]
              for r in comparison.shares.itertuples()]
    text = (f"## Comparison: {b} vs {a}\n\nΔ = {b} − {a} per (language, category). Cells with "
            f"ΔMCC > {comparison.mcc_threshold:g} and with Δσ < {comparison.std_threshold:g} "
            f"(strict; `{ALL_LANGUAGES}` = every language):\n\n"
            + table(["lang", "cells", f"ΔMCC > {comparison.mcc_threshold:g}",
                     f"Δσ < {comparison.std_threshold:g}"], shares))
    largest = comparison.deltas.sort_values("delta_mcc", ascending=False)
    for title, part in (("Largest", largest.head(5)), ("Smallest", largest.tail(5)[::-1])):
        text += (f"\n{title} ΔMCC:\n\n" + table(
            ["lang", "category", f"MCC {a}", f"MCC {b}", "ΔMCC", "Δσ"],
            [[r.lang, r.category, _pm(r.mcc_mean_a, r.mcc_std_a), _pm(r.mcc_mean_b, r.mcc_std_b),
              num(r.delta_mcc), num(r.delta_std)] for r in part.itertuples()]))
    if comparison.bootstrap is not None and not comparison.bootstrap.empty:
        rows = []
        for lang, group in comparison.bootstrap.groupby("lang", sort=True):
            overall = group[group["category"] == OVERALL].iloc[0]
            fine = group[group["category"] != OVERALL]
            rows.append([lang, f"{num(overall.delta_mcc)} [{num(overall.ci_low)}, {num(overall.ci_high)}]",
                         num(overall.p_delta_le_0), int((fine["p_delta_le_0"] < 0.05).sum())])
        text += ("\nBootstrap (paired items, independent seeds); p = share of bootstrap Δ ≤ 0 "
                 "(per category in `bootstrap_deltas.csv`):\n\n"
                 + table(["lang", f"overall ΔMCC [{report.confidence:.0%} CI]", "p (Δ ≤ 0)",
                          "categories with p < 0.05"], rows))
    if comparison.figure is not None:
        text += "\n" + _figures([comparison.figure])
    return text


def _sizes(report: Report) -> str:
    curve = report.size_curve
    if curve is None or curve.empty:
        return ""
    rows = [[r.lang, r.family, f"{r.n_added:,}", r.setup, _pm(r.overall_mcc_mean, r.overall_mcc_std),
             _pm(r.mean_category_mcc_mean, r.mean_category_mcc_std), num(r.rs_corr)]
            for r in curve.itertuples()]
    return ("## Training-data size\n\nSetups of one family differing only in the number of added MNLI "
            "examples.\n\n"
            + table(["lang", "family", "MNLI added", "setup", "overall MCC", "mean category MCC",
                     "RS corr."], rows)
            + ("\n" + _figures([report.size_figure]) if report.size_figure else ""))


def _failed(report: Report) -> str:
    failed = report.failed
    if failed is None or failed.empty:
        return ""
    rows = [[r.lang, r.setup, f"{r.n_failed} of {r.n_runs}", r.n_predictions_only]
            for r in failed_counts(failed).itertuples()]
    listed = [[r.lang, r.setup, r.seed, r.reason] for r in failed[failed["failed"]].itertuples()]
    treatment = ("They are left out of every table and figure (`--exclude-failed`)." if report.excluded_failed else
                 "Their columns are hatched in the seed heat maps; the summary, `category_stats_nonfailed.csv`, "
                 "`summary_nonfailed.csv`, per-item agreement and consistency give each statistic over all seeds "
                 "and over the non-failed ones; bootstrap intervals, comparisons and size curves use all runs "
                 "(`--exclude-failed` leaves failed runs out of everything).")
    text = ("## Failed runs\n\nA run is *failed* when its validation accuracy is not above the validation "
            "set's majority-class share, or its diagnostic predictions are constant (thresholds: "
            "`--failed-margin`, `--constant-share`). Such a run learned nothing: its category MCCs are 0.0 or "
            f"undefined, not evidence about the categories. {treatment} Runs recorded before the majority "
            "share was stored are judged by their predictions only (last column).\n\n"
            + table(["lang", "setup", "failed", "judged by predictions only"], rows))
    if listed:
        text += "\n" + table(["lang", "setup", "seed", "why"], listed)
    return text


def _consistency(report: Report) -> str:
    crossed = report.cross_lingual
    if crossed is None:
        return ""
    summary = crossed.tables.summary
    rows = []
    for r in summary[summary["lang_a"] <= summary["lang_b"]].itertuples():
        own = r.lang_a == r.lang_b
        rows.append([r.setup, f"{r.lang_a} (seed baseline)" if own else f"{r.lang_a} – {r.lang_b}", r.runs,
                     r.n_pairs, r.n_items, _pm(r.consistency_mean, r.consistency_std), _pm(r.kappa_mean, r.kappa_std),
                     "" if own else num(r.kappa_baseline), "" if own else num(r.kappa_minus_baseline)])
    splits = [[r.setup, f"{r.lang_a} → {r.lang_b}", r.runs, num(r.consistency_correct_mean),
               num(r.consistency_incorrect_mean), f"{r.n_ent_ent} / {r.n_ent_not} / {r.n_not_ent} / {r.n_not_not}"]
              for r in summary[summary["lang_a"] != summary["lang_b"]].itertuples()]
    text = ("## Cross-lingual consistency\n\nThe translated diagnostic sets share their items (matched by `idx`), "
            "so each item is one meaning in several languages. *Consistency* is the share of items on which two "
            "runs predict the same label; Cohen's *κ* corrects it for chance: two runs that answer "
            "\"entailment\" everywhere agree 100 % and mean nothing (κ = 0). Language pairs compare runs of the "
            "same seed; the *seed baseline* compares two seeds of one language (run-to-run agreement). A pair whose "
            "κ reaches the mean of its two languages' baselines (κ − baseline ≈ 0) is as consistent across "
            "languages as the model is with itself. Mean ± σ over seeds (seed pairs for baselines); every run "
            "pair in `consistency.csv`, per category in `consistency_by_category.csv`.\n\n"
            + table(["setup", "pair", "runs", "run pairs", "items", "consistency", "κ", "κ baseline",
                     "κ − baseline"], rows))
    if crossed.tables.n_constant:
        text += (f"\n**Warning:** {crossed.tables.n_constant} of {len(crossed.tables.pairs)} run pairs include a run "
                 "with constant predictions on the shared items. κ is 0 for them, and their consistency only "
                 "reflects how often the other run gives that same label.\n")
    text += ("\nAgreement split by correctness in A (share of A's right / wrong items on which B agrees; weighted "
             "by those item counts they give the consistency) and transitions of the prediction from A to B summed "
             "over seeds (ent = entailment, not = not_entailment):\n\n"
             + table(["setup", "A → B", "runs", "A right", "A wrong", "ent→ent / ent→not / not→ent / not→not"],
                     splits))
    for setup, (a, b) in crossed.pairs_drawn.items():
        part = crossed.tables.by_category
        part = part[(part["setup"] == setup) & (part["lang_a"] == a) & (part["lang_b"] == b)
                    & (part["runs"] == "all") & (part["category"] != ALL_ITEMS)]
        lowest = part[part["level"] == "fine"].sort_values(["consistency_mean", "category"]).head(_LISTED)
        why = "chosen with --consistency-pair" if crossed.pair_chosen else \
            "the pair with the lowest κ; choose another with --consistency-pair"
        text += (f"\n{setup}, {a} – {b} ({why}): least consistent categories "
                 + ", ".join(f"{r.category} ({num(r.consistency_mean)}, {r.n_items} items)"
                             for r in lowest.itertuples()) + ".\n")
    if crossed.flagged is not None:
        text += ("\nData QA × consistency: items flagged by `stability.dataqa` (line- or word-level language check, "
                 "or premise = hypothesis, in either language's diagnostic file) against the other items; mean over seeds. Negative "
                 "difference = less consistent on flagged items; few flagged items make it noisy.\n\n"
                 + table(["setup", "pair", "runs", "flagged items", "other items", "consistency flagged",
                          "consistency other", "difference", "κ flagged", "κ other"],
                         [[r.setup, f"{r.lang_a} – {r.lang_b}", r.runs, r.n_items_flagged, r.n_items_unflagged,
                           num(r.consistency_flagged), num(r.consistency_unflagged),
                           num(r.consistency_difference), num(r.kappa_flagged), num(r.kappa_unflagged)]
                          for r in crossed.flagged.itertuples()]))
        if crossed.flagged.empty or not crossed.flagged["n_items_flagged"].any():
            text += "\nNo diagnostic item of these languages carries a translation finding: nothing to compare.\n"
    return text + "\n" + _figures(crossed.figures)


def render(report: Report) -> str:
    """The whole page; sections whose inputs are missing are left out."""
    parts = [f"# Fine-tuning stability report\n\nInputs: {report.sources}.\n", _summary(report), _failed(report),
             _stability(report), _language_corr(report), _agreement(report), _bootstrap(report),
             _comparison(report), _sizes(report), _consistency(report), *report.sections]
    return "\n".join(part for part in parts if part)
