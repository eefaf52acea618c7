"""The heat maps of *Stability per category* as the page's interactive maps: category × seed per
condition and category × language per setup, every cell with the value category_stats.csv holds,
the category's interval as bootstrap_ci.csv and report.md give it, and its items and seeds."""
from __future__ import annotations

import pandas as pd

from stability.core.markdown import num
from stability.report.context import Context
from stability.report.failed import failed_keys
from stability.report.figures import language_heatmap_file
from stability.report.page.view import Tables, View
from stability.report.section import pm
from stability.report.sections.intervals import interval_label
from stability.statistics.figures import seed_heatmap_file
from stability.statistics.seeds import GROUP_KEY, condition_name

CI_FILE = "bootstrap_ci.csv"


def heatmap_views(context: Context, tables: Tables) -> list[View]:
    """One seed map per (lang, setup, variant), then one language map per (setup, variant), in the
    order report.md links their PNGs."""
    stats = tables["category_stats.csv"]
    interval = _Intervals(context, tables)
    undefined = _undefined(context.fine_flags)
    failed = failed_keys(context.failed)
    views = []
    for (lang, setup, variant), group in stats.groupby(GROUP_KEY, sort=True):
        seeds = [column.removeprefix("seed_") for column in group.columns
                 if column.startswith("seed_") and group[column].notna().any()]
        rows = [{**_row(r, interval(lang, setup, variant, r.category)),
                 "cells": [num(getattr(r, f"seed_{seed}")) for seed in seeds],
                 "undefined": [undefined.get((lang, setup, variant, int(seed), r.category), False) for seed in seeds]}
                for r in group.itertuples(index=False)]
        views.append(View("seeds", {
            "lang": lang, "setup": setup, "variant": variant, "condition": condition_name(setup, variant),
            "seeds": seeds, "failed": [seed for seed in seeds if (lang, setup, variant, int(seed)) in failed],
            "interval": interval.label, "rows": rows}, seed_heatmap_file(lang, setup, variant)))
    for (setup, variant), group in stats.groupby(["setup", "variant"], sort=True):
        langs = sorted(group["lang"].unique())
        cells = {(r.category, r.lang): {**_row(r, interval(r.lang, setup, variant, r.category)), "value": num(r.mcc_mean),
                                        "seeds": _seed_count(r, group)}
                 for r in group.itertuples(index=False)}
        order = list(group["category"].drop_duplicates())
        views.append(View("languages", {
            "setup": setup, "variant": variant, "condition": condition_name(setup, variant), "langs": langs,
            "interval": interval.label,
            "rows": [{"category": category, "cells": [cells.get((category, lang)) for lang in langs]}
                     for category in order]}, language_heatmap_file(setup, variant)))
    return views


def _row(r, interval: str) -> dict:
    """What a category's cell says whatever the map: its items, mean ± σ and interval."""
    return {"category": r.category, "coarse": r.coarse, "n": None if pd.isna(r.n_items) else int(r.n_items),
            "mean": num(r.mcc_mean), "pm": pm(r.mcc_mean, r.mcc_std), "ci": interval}


def _seed_count(r, group: pd.DataFrame) -> int:
    return int(sum(pd.notna(getattr(r, column)) for column in group.columns if column.startswith("seed_")))


def _undefined(flags: pd.DataFrame) -> dict[tuple, bool]:
    """(lang, setup, variant, seed, category) → whether that MCC was undefined (scored 0.0)."""
    if flags.empty:
        return {}
    marked = flags.assign(degenerate=flags["degenerate"].fillna(False).astype(bool))
    return {(r.lang, r.setup, r.variant, int(r.seed), r.category): r.degenerate for r in marked.itertuples(index=False)}


class _Intervals:
    """Each category's multi-bootstrap interval as the *Bootstrap intervals* table prints one, or why
    there is none."""

    def __init__(self, context: Context, tables: Tables) -> None:
        self.label, self.half = interval_label(context)
        ci = tables.get(CI_FILE)
        self.rows = {} if ci is None else {tuple(key): r for key, r in zip(
            ci[[*GROUP_KEY, "category"]].itertuples(index=False, name=None), ci.itertuples(index=False))}
        self.absent = ("no interval: bootstrap=0" if not context.options.bootstrap
                       else "no interval: the runs have no predictions.jsonl")

    def __call__(self, lang: str, setup: str, variant: str, category: str) -> str:
        found = self.rows.get((lang, setup, variant, category))
        if found is None:
            return self.absent
        return self.half.interval(found.estimate, found.ci_low, found.ci_high)
