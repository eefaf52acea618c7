"""An adaptive sweep's decision goal checked at its own design: how often it declares two conditions
to differ when they do not, in the calibration's worlds (calibration.csv's rows, *Adaptive design*'s
sentence).

Why it is measured, not assumed: the goal's Lan–DeMets boundaries hold their α for normal
z-statistics, and each look's z is a Welch t of 3–10 seeds turned into a z; seeds may be
heavy-tailed, runs may fail. So, as for every other test of the report, A/A pairs are simulated:
both arms drawn from the reference arm's (the first of `compare`) world fitted to its runs
(`calibration.fit`: normal and heavy in standard units, failed where some of its runs failed,
resampling its own runs), run through the plan's looks and recorded boundaries
(`sequential_calibration.family_false_differ`). Rows per cell of the goal's statistic at the cell's
level (`cell_alpha`: α over the cells, or α for a plan recorded before cells shared it), and for
several cells the family's (some cell rejects: the pair is declared to differ) at α.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stability.core.adaptiverecord import AdaptiveRecord, read_record
from stability.core.schemas.adaptive import DECISION
from stability.report.calibration import COLUMNS, FAMILY_CELLS, FAMILY_LEVEL, fit_cells, percent, seed_cells
from stability.report.compare import Condition
from stability.report.precision import CELLS
from stability.statistics import calibration as sim
from stability.statistics.sequential_calibration import SEQUENTIAL, family_false_differ

DECISION_TEST = "decision goal"   # calibration.csv's statistic of these rows


def decision_records(paths: list[Path]) -> list[AdaptiveRecord]:
    """The decision goals' records in the folders of `runs=`."""
    records = [read_record(path) for path in paths if path.is_dir()]
    return [record for record in records if record is not None and record.plan.goal.get("goal") == DECISION]


def method_of(goal: dict) -> str:
    return f"{SEQUENTIAL} {goal['spending']}"


def decision_calibration(records: list[AdaptiveRecord], results: pd.DataFrame, failed: pd.DataFrame, *, sims: int,
                         random_state: int) -> pd.DataFrame:
    """calibration.csv's rows of every decision record (`COLUMNS`): per language, the A/A false "differ"
    rate of each cell and, with several cells, of the pair, in every world fitted to the reference arm
    (`sims` studies per world, one generator from `random_state`)."""
    rng = np.random.default_rng([random_state, 2])
    cells = seed_cells(results, failed)
    frames = []
    for record in records:
        goal = record.plan.goal
        level, categories, _ = CELLS[goal["statistic"]]
        reference, compared = (Condition.parse(text) for text in goal["compare"])
        looks = np.asarray(goal["looks"], int)
        bounds = np.array([np.inf if bound is None else bound for bound in goal["bounds"]], float)
        cell_alpha = goal.get("cell_alpha", goal["alpha"])
        arm = cells[reference.rows(cells) & (cells["level"] == level) & cells["category"].isin(categories)]
        for lang, rows in arm.groupby("lang", sort=True):
            rows = rows.reset_index(drop=True)
            if rows["scores"].map(len).nunique() != 1:
                continue
            fitted = fit_cells(rows)
            for world in sim.WORLDS:
                if not sim.fitted(world, fitted).all():   # the family is simulated whole, or not at all
                    continue
                rejected = family_false_differ(world, fitted, looks, bounds, sims=sims, rng=rng)
                measured = sim.rows({(DECISION_TEST, method_of(goal)): rejected}, np.arange(len(rows)), world,
                                    sim.FALSE_POSITIVES, cell_alpha)
                measured = measured.assign(level=rows["level"].to_numpy()[measured["cell"]],
                                           category=rows["category"].to_numpy()[measured["cell"]])
                if len(rows) > 1:
                    family = sim.rows({(DECISION_TEST, method_of(goal)): rejected.any(axis=0)[None]}, np.array([0]),
                                      world, sim.FALSE_POSITIVES, goal["alpha"])
                    measured = pd.concat([measured, family.assign(level=FAMILY_LEVEL, category=FAMILY_CELLS)])
                frames.append(measured.drop(columns="cell").assign(
                    lang=lang, condition=str(compared), reference=str(reference), n_seeds=int(looks[-1]),
                    n_seeds_reference=int(looks[-1])))
    return pd.concat(frames, ignore_index=True)[COLUMNS] if frames else pd.DataFrame(columns=COLUMNS)


def measured_text(table: pd.DataFrame | None, record: AdaptiveRecord) -> str:
    """*Adaptive design*'s sentence on the false "differ" rate of `record`'s pair at its design: per
    world the highest over its languages (the pair's, with several cells), against α."""
    goal = record.plan.goal
    if table is None:
        return " Its false \"differ\" rate at this design is not simulated (calibration_sims=0)."
    reference, compared = (str(Condition.parse(text)) for text in goal["compare"])
    rows = table[(table["statistic"] == DECISION_TEST) & (table["method"] == method_of(goal))
                 & (table["condition"] == compared) & (table["reference"] == reference)]
    several = (rows["level"] == FAMILY_LEVEL).any()
    rows = rows[rows["level"] == FAMILY_LEVEL] if several else rows
    if rows.empty:
        return " Its false \"differ\" rate is not simulated: no world could be fitted to the runs of " + reference + "."
    worst = rows.groupby("world")["measured"].max().reindex([w for w in sim.WORLDS if w in set(rows["world"])])
    rates = ", ".join(f"{world} {percent(rate)}" for world, rate in worst.items())
    whose = "some cell of the pair rejecting" if several else "the pair rejected"
    return (f" Its false \"differ\" rate at these looks and boundaries, measured in A/A pairs ({whose}; both arms "
            f"from {reference}'s world fitted to its runs, {int(rows['sims'].iloc[0])} simulated sweeps per world, "
            f"the highest over the languages): {rates}, against α = {percent(goal['alpha'])} "
            "(every row in calibration.csv).")
