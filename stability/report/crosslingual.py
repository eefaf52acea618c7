"""The report's cross-lingual part: consistency tables, their figures and the data-QA join, in one call.

Kept apart from `cli` so the command line only wires it in: `cross_lingual` writes
consistency.csv, consistency_summary.csv, consistency_by_category.csv (and, given data-QA
folders, consistency_flagged.csv), draws the κ heat map and per-category bars per setup,
and returns what report.md shows.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from stability.core.errors import UserError
from stability.core.qaflags import FLAGGED_FILE, TRANSLATION_CHECKS, read_flags
from stability.report import figures
from stability.report.consistency import (ALL_RUNS, NON_FAILED, Consistency, consistency_of_runs,
                                          flagged_consistency, kappa_matrix, lowest_kappa_pair, setup_runs)


@dataclass(frozen=True)
class CrossLingual:
    """What report.md shows about consistency across languages."""

    tables: Consistency
    pairs_drawn: dict[str, tuple[str, str]]       # setup -> pair of the per-category bars
    pair_chosen: bool                             # --consistency-pair given (else: lowest κ)
    flagged: pd.DataFrame | None = None           # consistency on data-QA-flagged vs other items
    figures: list[Path] = field(default_factory=list)


def flagged_items(folders: list[Path]) -> dict[str, set[str]]:
    """Per language, the idx of diagnostic items with a translation finding (line or word level,
    premise == hypothesis)."""
    items: dict[str, set[str]] = {}
    for folder in folders:
        for flag in read_flags(folder / FLAGGED_FILE):
            if flag.role == "diagnostic" and flag.check in TRANSLATION_CHECKS:
                items.setdefault(flag.lang, set()).add(str(flag.idx))
    return items


def check_arguments(args: argparse.Namespace, predictions: pd.DataFrame) -> dict[str, set[str]] | None:
    """Fail before anything is written: unreadable --dataqa folders, --consistency-pair languages
    without runs. Returns the flagged diagnostic items of --dataqa (None without it)."""
    if args.consistency_pair:
        missing = sorted(set(args.consistency_pair) - set(predictions["lang"]))
        if missing:
            raise UserError(f"--consistency-pair: no runs with predictions in {', '.join(missing)}",
                            fix=f"choose from: {', '.join(sorted(set(predictions['lang']))) or 'none'}")
    return flagged_items(args.dataqa) if args.dataqa else None


def _bar_pair(tables: Consistency, setup: str, chosen: list[str] | None) -> tuple[str, str] | None:
    if not chosen:
        return lowest_kappa_pair(tables.summary, setup)
    part = tables.summary[tables.summary["setup"] == setup]
    pair = tuple(chosen)
    if not ((part["lang_a"] == pair[0]) & (part["lang_b"] == pair[1])).any():
        raise UserError(f"no runs of both {pair[0]} and {pair[1]} with setup {setup!r} and a shared seed",
                        fix="choose two languages of the report with --consistency-pair")
    return pair  # type: ignore[return-value]


def _failed_note(failed: pd.DataFrame, setup: str, has_nonfailed_panel: bool) -> str:
    runs = failed[failed["setup"] == setup]
    n_failed = int(runs["failed"].sum())
    if not n_failed:
        return ""
    return f"{n_failed} of {len(runs)} runs failed" + ("" if has_nonfailed_panel else ": no run pair without a failed run")


def cross_lingual(predictions: pd.DataFrame, failed: pd.DataFrame, args: argparse.Namespace,
                  flagged_by_lang: dict[str, set[str]] | None, out: Path,
                  write_csv: Callable[[pd.DataFrame, str], None], draw: bool) -> CrossLingual | None:
    """All cross-lingual outputs; None when no setup has predictions of two languages.
    `flagged_by_lang` comes from `check_arguments`."""
    if predictions.empty:
        return None
    runs = setup_runs(predictions)
    tables = consistency_of_runs(runs, failed)
    if tables is None:
        return None
    write_csv(tables.pairs, "consistency.csv")
    write_csv(tables.summary, "consistency_summary.csv")
    write_csv(tables.by_category, "consistency_by_category.csv")
    pairs = {setup: pair for setup in sorted(tables.summary["setup"].unique())
             if (pair := _bar_pair(tables, setup, args.consistency_pair)) is not None}
    flagged = None
    if flagged_by_lang is not None:
        flagged = flagged_consistency(runs, flagged_by_lang, failed)
        write_csv(flagged, "consistency_flagged.csv")
    drawn = []
    if draw:
        for setup, pair in pairs.items():
            panels = {title: tuple(kappa_matrix(tables.summary, setup, runs, value)
                                   for value in ("kappa_mean", "kappa_std", "n_pairs"))
                      for runs, title in ((ALL_RUNS, "all runs"), (NON_FAILED, "non-failed runs"))
                      if ((tables.summary["runs"] == runs) & (tables.summary["setup"] == setup)).any()}
            drawn.append(figures.kappa_heatmap(panels, setup, out, _failed_note(failed, setup, len(panels) > 1)))
            drawn.append(figures.consistency_bars(tables.by_category, setup, pair, out))
    return CrossLingual(tables, pairs, bool(args.consistency_pair), flagged, drawn)
