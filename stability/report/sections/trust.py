"""`## How far to trust these numbers`: every seed-level interval's measured coverage and every
seed-level test's measured false-positive rate at this report's design (`stability.report.calibration`),
the worst world, and what follows for reading the tables below; calibration.csv has every row."""
from __future__ import annotations

import pandas as pd

from stability.core.markdown import table
from stability.report.calibration import (DECIDING_WORLDS, FILE, ITEM_SIMS, KEY, TOO_FEW, Calibration, aso_text,
                                          design_labels, method_name, percent)
from stability.report.context import Context
from stability.report.decision_calibration import DECISION_TEST
from stability.report.section import Built
from stability.statistics import calibration as sim
from stability.statistics.fisher_calibration import FISHER, ITEM_WORLDS

_LISTED = 12   # overall cells without a usable interval named in the text
# the intervals the report's tables print from seeds alone (the mean's and Δ's are the multi-bootstrap's,
# over seeds and items: their seed-level part is measured here)
PRINTED = (sim.SIGMA, sim.RATIO, sim.FAILED_RATE)


def build(context: Context) -> Built | None:
    """calibration.csv; None with calibration_sims=0 or no cell of two seeds."""
    calibration = context.calibration
    if calibration is None or calibration.table.empty:
        return None
    options = context.options
    table_ = calibration.table
    level = f"{options.confidence:.0%}"
    text = (f"## How far to trust these numbers\n\nEvery seed-level interval and test of this report, checked by "
            f"simulation at this report's own design: {calibration.sims} simulated studies per world "
            f"(`calibration_sims`, seeded by `random_state`), each world fitted to each "
            "cell (a condition's seeds in one category): *normal* (the cell's mean and σ), *heavy* (Laplace, same "
            "σ), *failed* (the condition's failed-run rate mixed in at chance, where runs failed) and *resampling* "
            f"(the cell's own runs drawn with replacement: no model){_item_worlds(table_)}. Coverage is how often a nominal "
            f"{level} interval holds the world's true value, the false-positive rate how often a test at "
            f"p < {sim.ALPHA:g} rejects when both sides come from one world (A/A); each with its Monte-Carlo "
            "interval in calibration.csv. The tables print, per cell, the interval method whose "
            f"worst coverage over the normal, heavy and failed worlds is nearest {level} without falling below "
            f"it, or one that reaches {sim.FLOOR:.0%}; where none does they print *{TOO_FEW}* instead. "
            f"Every row in `{FILE}`.\n\n")
    text += ("**Intervals** (measured coverage, nominal " + level + "; per world the worst cell of the design)\n\n"
             + _coverage_table(table_, calibration.choices) + "\n")
    tests = table_[table_["measure"] == sim.FALSE_POSITIVES]
    if not tests.empty:
        text += (f"**Tests** (measured false-positive rate at p < {sim.ALPHA:g}, nominal {sim.ALPHA:.0%}; "
                 "the last column is the threshold that gives 5 % here)\n\n" + _test_table(tests) + "\n")
        text += aso_text(tests, options.aso)
    text += _lacking_text(calibration)
    return Built(text, {FILE: table_})


def _item_worlds(frame: pd.DataFrame) -> str:
    if not (frame["statistic"] == FISHER).any():
        return ""
    return ("; the data maps' Fisher tests in two item worlds, *independent items* (each training item ambiguous "
            "on its own, at the group's observed share) and *clustered items* (the items that share a sentence "
            f"ambiguous together), {ITEM_SIMS} studies each at most (Monte-Carlo error about ± 3 % near 5 %)")


def _coverage_table(frame: pd.DataFrame, choices: pd.DataFrame) -> str:
    coverage = frame[frame["measure"] == sim.COVERAGE].assign(design=design_labels)
    cells = coverage.drop_duplicates([*KEY, "statistic"]).groupby(["statistic", "design"]).size()
    chosen = choices[choices["usable"]].merge(coverage[[*KEY, "statistic", "design"]].drop_duplicates(),
                                               on=[*KEY, "statistic"])
    printed = chosen.groupby(["statistic", "method", "design"]).size()
    rows = []
    for (statistic, method, design), part in coverage.groupby(["statistic", "method", "design"], sort=True):
        by_world = part.groupby("world")["measured"].min()
        deciding = by_world.reindex(list(DECIDING_WORLDS)).dropna()
        worst_world = deciding.idxmin() if not deciding.empty else by_world.idxmin()
        count = int(printed.get((statistic, method, design), 0))
        consequence = (f"chosen in {count} of {cells[(statistic, design)]} cells" if count else "never chosen")
        if statistic not in PRINTED:
            consequence = "not printed as a seed-level interval: " + consequence
        rows.append([statistic, method_name(method), design,
                     *(percent(by_world.get(world, float("nan"))) for world in sim.WORLDS),
                     worst_world, consequence])
    return table(["interval", "method", "seeds", *sim.WORLDS, "worst world", "consequence"], rows)


def _test_table(tests: pd.DataFrame) -> str:
    tests = tests.assign(design=design_labels(tests))
    worlds = [*sim.WORLDS, *(world for world in ITEM_WORLDS if world in set(tests["world"]))]
    rows = []
    for (statistic, method, design), part in tests.groupby(["statistic", "method", "design"], sort=True):
        by_world = part.groupby("world")["measured"].max()
        worst_world = by_world.idxmax()
        threshold = part[part["world"] == worst_world]["threshold"].min()
        name = f"{statistic} ({method})" if statistic in (sim.ASO, FISHER, sim.FAMILY_TEST, DECISION_TEST) else statistic
        rows.append([name, design, *(percent(by_world.get(w, float("nan"))) for w in worlds),
                     worst_world, _test_consequence(statistic, method, by_world[worst_world], threshold, worst_world)])
    return table(["test", "seeds", *worlds, "worst world", "consequence"], rows)


def _test_consequence(statistic: str, method: str, rate: float, threshold: float, world: str) -> str:
    bound = "ε_min" if statistic == sim.ASO else "p"
    if rate <= sim.ALPHA + 0.015:
        return "holds"
    if statistic == sim.FAMILY_TEST:
        after = "before correction" if method == sim.UNCORRECTED else f"after {method}"
        return (f"{percent(rate)} of A/A comparisons have some cell with p < {sim.ALPHA:g} {after}: "
                "read a tests section's significant cells with that in mind")
    if statistic == DECISION_TEST:
        return (f"{percent(rate)} of A/A pairs declared to differ in the {world} world: read the adaptive "
                "sweep's decisions with that in mind")
    if statistic == FISHER:
        return (f"{percent(rate)} false positives in the {world} world: items that share a sentence share "
                "their features, so read a feature's Holm p as weaker evidence than it says")
    if pd.isna(threshold):
        return f"{percent(rate)} false positives; no {bound} threshold reaches 5 % at these seeds"
    return f"{percent(rate)} false positives: read as significant only {bound} < {threshold:.2g}"


def _lacking_text(calibration: Calibration) -> str:
    choices = calibration.choices
    lacking = choices[~choices["usable"] & (choices["level"] == "all") & choices["statistic"].isin(PRINTED)]
    if lacking.empty:
        return ""
    lines = []
    for row in lacking.head(_LISTED).itertuples():
        where = f"{row.lang} · {row.condition}" + (f" vs {row.reference}" if row.reference else "")
        seeds = ("" if pd.isna(row.seeds_needed) else
                 f"; {int(row.seeds_needed)} seeds would reach {sim.FLOOR:.0%} in the {row.world} world")
        if pd.isna(row.seeds_needed) and not row.reference:
            seeds = f"; not even {sim.MAX_SEEDS} seeds reach {sim.FLOOR:.0%} in the {row.world} world"
        lines.append(f"- {where}, {row.statistic} overall: {TOO_FEW} (measured coverage {percent(row.coverage)}, "
                     f"{method_name(row.method)} in the {row.world} world){seeds}")
    more = len(lacking) - _LISTED
    return ("Overall intervals not printed:\n\n" + "\n".join(lines)
            + (f"\n- … {more} more in `{FILE}`" if more > 0 else "") + "\n\n")
