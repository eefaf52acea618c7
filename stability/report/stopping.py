"""The coverage of a precision goal's intervals under the adaptive sweep's own stopping rule: the
calibration's worlds (normal, heavy, failed where some run failed), fitted to each condition's runs
as `calibration` fits them for the fixed design, run through the plan's rule
(`sequential_calibration.precision_coverage`: the looks start, start + step, …, max; stop at the
first look whose interval is at most `target` wide in every cell of the statistic).

Why it is needed: stopping when an interval happens to be narrow stops when the sample σ happens
to be small, so the printed intervals can cover less than their fixed-design calibration says.

The simulated rule uses one analytic interval at every look, the one the report's calibration
can choose for the statistic (t for a mean; for σ the χ² or Bonett interval the sweep's last
decision used, χ² otherwise); the sweep itself re-chooses the method at each look and treats a
"too few seeds" interval as wide, which this leaves out.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from stability.core.adaptiverecord import AdaptiveRecord
from stability.report.calibration import DECIDING_WORLDS, fit_cells, seed_cells
from stability.report.precision import CELLS
from stability.statistics import calibration as sim
from stability.statistics.seeds import condition_name
from stability.statistics.sequential_calibration import precision_coverage

STATISTIC = {sim.MEAN: "mean", sim.SIGMA: "σ"}   # the calibration's name → the sequential module's
SIGMA_METHODS = ("chi2", "bonett")


@dataclass(frozen=True)
class StoppingCoverage:
    """A condition's lowest measured coverage over its cells and the deciding worlds, under the rule."""

    coverage: float
    world: str
    method: str
    sims: int


def _method(record: AdaptiveRecord, condition: str, interval: str) -> str:
    if interval == sim.MEAN:
        return "t"
    cells = record.decisions().get(condition, {}).get("cells") or [{}]
    return cells[0].get("method") if cells[0].get("method") in SIGMA_METHODS else SIGMA_METHODS[0]


def stopping_coverage(record: AdaptiveRecord, results: pd.DataFrame, failed: pd.DataFrame, *, sims: int,
                      random_state: int) -> dict[str, StoppingCoverage]:
    """Per condition of a precision plan with a world to fit, its coverage under the plan's rule (its
    target and confidence) in `sims` simulated sweeps per world (one generator from `random_state`,
    conditions in the plan's order, worlds in `DECIDING_WORLDS` order)."""
    plan, goal = record.plan, record.plan.goal
    level, categories, interval = CELLS[goal["statistic"]]
    cells = seed_cells(results, failed)
    cells = cells[(cells["level"] == level) & cells["category"].isin(categories)]
    names = [f"{lang}/{condition_name(setup, variant)}"
             for lang, setup, variant in zip(cells["lang"], cells["setup"], cells["variant"])]
    rng = np.random.default_rng(random_state)
    measured = {}
    for condition in plan.conditions:
        rows = cells[[name == condition for name in names]]
        if rows.empty or rows["scores"].map(len).nunique() != 1:
            continue
        fitted_cells = fit_cells(rows)
        method = _method(record, condition, interval)
        worst = None
        for world in DECIDING_WORLDS:
            index = np.flatnonzero(sim.fitted(world, fitted_cells))
            if not len(index):
                continue
            run = precision_coverage(world, fitted_cells.rows(index), plan.looks(), goal["target"],
                                     statistic=STATISTIC[interval], method=method, confidence=goal["confidence"],
                                     sims=sims, rng=rng, groups=np.zeros(len(index)))
            coverage = float(run.covered.mean(axis=-1).min())
            if worst is None or coverage < worst.coverage:
                worst = StoppingCoverage(coverage, world, method, sims)
        if worst is not None:
            measured[condition] = worst
    return measured
