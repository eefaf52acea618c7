"""The runs' seed design joined with their scores: the tables the variance-source and
expected-maximum sections read (run directories only; tidy CSVs carry no run records).

A *grid* is the runs of one (lang, setup, family, seed) whose `seed_init` × `seed_order`
cells are all present once with at least two levels each: a sweep `seed=0 seed_init=0..4
seed_order=0..4` makes one. The family (`stability.core.identity.variant_family`) joins the
variants `init1`, `order1`, `init1_order1` and the run of the experiment as configured
(`seed_init = seed_order = seed`); grouping by `seed` too keeps apart a plain seed sweep's
runs (`seed=1` is the cell (1, 1) of no grid) from a grid's cell (1, 1) of `seed=0`, which
are the same computation and would otherwise fill one cell twice.
"""
from __future__ import annotations

import pandas as pd

from stability.statistics.seeds import GROUP_KEY
from stability.statistics.variance import is_full_grid

GRID_KEY = ["lang", "setup", "family", "seed"]
_RUN_KEY = [*GROUP_KEY, "seed"]


def grid_scores(results: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The result rows (every level and category with diagnostic items) of the runs that form a
    full grid, with their `family`, `seed_init` and `seed_order`; empty when no runs do.

    `results` is the tidy table (a failed run left out under `exclude_failed` leaves its grid
    incomplete, so that grid is not decomposed), `runs` the collected runs table.
    """
    design = runs.dropna(subset=["seed_init", "seed_order"])[[*_RUN_KEY, "family", "seed_init", "seed_order"]] \
        .astype({"seed_init": int, "seed_order": int})     # statsmodels' formulas take no nullable integers
    design = design.merge(results[_RUN_KEY].drop_duplicates(), on=_RUN_KEY)
    grids = [part for _, part in design.groupby(GRID_KEY, sort=True) if is_full_grid(part)]
    if not grids:
        return pd.DataFrame(columns=[*GRID_KEY, "seed_init", "seed_order", "level", "category", "mcc"])
    scores = pd.concat(grids).merge(results[results["n_items"].fillna(1) > 0], on=_RUN_KEY)
    return scores[[*GRID_KEY, "variant", "seed_init", "seed_order", "level", "category", "mcc"]]


def run_outcomes(results: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run directory still in `results`: its group, seed, `val_accuracy` and
    `overall_mcc` (the level-`all` row)."""
    overall = results.loc[results["level"] == "all", [*_RUN_KEY, "mcc"]].rename(columns={"mcc": "overall_mcc"})
    return runs[[*_RUN_KEY, "val_accuracy"]].merge(overall, on=_RUN_KEY)
