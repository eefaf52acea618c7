"""Per condition (lang, setup, variant), the report's calibrated interval of one statistic: what
the precision goal of an adaptive sweep decides on; and its seeds' scores, which the decision goal
compares.

The interval is the one report.md prints for the cell: the runs collected as the report collects
them (`collect`), failed runs judged by the report's default rule, the method chosen per cell by
the report's calibration at the runs' own design (`calibration.calibrate`: nearest nominal among
those not measurably below it), and no interval where no method reaches the report's floor
("too few seeds": the width is then NaN, which no target accepts). Only the statistic's cells are
calibrated, so a decision costs seconds, not the whole report's calibration.
"""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd

from stability.core.schemas.report import ReportSchema
from stability.core.taxonomy import COARSE_CATEGORIES
from stability.report.calibration import calibrate, interval_method, mean_bounds, std_bounds
from stability.report.collect import OVERALL, collect
from stability.report.failed import FailedRule, failed_runs
from stability.statistics.calibration import MEAN, SIGMA
from stability.statistics.seeds import GROUP_KEY, condition_name

# statistic -> (level, categories, interval) of the cells it names
CELLS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "overall": ("all", (OVERALL,), MEAN),
    "coarse": ("coarse", COARSE_CATEGORIES, MEAN),
    "sigma": ("all", (OVERALL,), SIGMA),
}
INTERVAL_COLUMNS = [*GROUP_KEY, "level", "category", "n_seeds", "estimate", "low", "high", "width", "method",
                    "coverage"]
_DEFAULTS = {field.name: field.default for field in fields(ReportSchema)}


def statistic_cells(results: pd.DataFrame, statistic: str) -> pd.DataFrame:
    """The rows of collected `results` (one per run and cell) that are cells of `statistic`."""
    level, categories, _ = CELLS[statistic]
    return results[(results["level"] == level) & results["category"].isin(categories)]


def seed_scores(runs: list[Path], statistic: str) -> dict[str, np.ndarray]:
    """Per cell (category) of `statistic`, the MCC of the finished runs in `runs` in seed order: the
    seeds a decision goal compares, collected as the report collects them."""
    cells = statistic_cells(collect(runs).results, statistic)
    return {category: group.sort_values("seed")["mcc"].to_numpy(float)
            for category, group in cells.groupby("category", sort=True)}


def condition_intervals(runs: list[Path], statistic: str, *, confidence: float, sims: int, bootstrap: int,
                        random_state: int) -> pd.DataFrame:
    """One row per condition and cell of `statistic` (`CELLS`) among the finished runs in `runs`:
    its seeds, estimate (mean, or σ with ddof = 1), interval, width, method and measured coverage."""
    collected = collect(runs)
    failed = failed_runs(collected.runs, collected.predictions,
                         FailedRule(_DEFAULTS["failed_margin"], _DEFAULTS["constant_share"]))
    level, _, interval = CELLS[statistic]
    cells = statistic_cells(collected.results, statistic)
    calibration = calibrate(cells, failed, references={}, compare=None, sims=sims, confidence=confidence,
                            aso_iterations=1, random_state=random_state, bootstrap=bootstrap)
    bounds_of = std_bounds if interval == SIGMA else mean_bounds
    rows = []
    for (lang, setup, variant, category), group in cells.groupby([*GROUP_KEY, "category"], sort=True):
        values = group.sort_values("seed")["mcc"].to_numpy(float)
        choice = calibration.choice(lang, condition_name(setup, variant), "", level, category, interval)
        low, high = bounds_of(choice, True, values, bootstrap=bootstrap, confidence=confidence,
                              random_state=random_state)
        method, coverage = interval_method(choice, True)
        estimate = np.std(values, ddof=1) if interval == SIGMA else np.mean(values)
        rows.append([lang, setup, variant, level, category, len(values), float(estimate), low, high, high - low,
                     method, coverage])
    return pd.DataFrame(rows, columns=INTERVAL_COLUMNS)
