"""The tests of a comparison: per cell a two-sided p-value, adjusted over the comparison's family,
and, on request, almost stochastic order between the two sides' seed scores.

A comparison is B − A for two conditions (`compare=[A,B]`, cells = language × category) or
two languages (`compare_langs=[A,B]`, cells = condition × category). Its cells are the fine
and coarse categories with items (`overall` is not a cell: its interval is in
bootstrap_deltas.csv); every cell is one test, and the *family* is all cells of the
comparison: `p_holm` and `p_bh` adjust over exactly those
(`stability.statistics.multiplicity.adjust_family`), and ε_min is Bonferroni-corrected over
the same cells (`stability.statistics.dominance.aso_table`). A category without items in
the shared diagnostic items has no test (empty p-values) and is no member of the family.

ε_min counts as dominance below the threshold the calibration measured at the cell's design
(`report.calibration.aso_thresholds`: at most 5 % of A/A studies below it, in every world), not
below deepsig's fixed 0.2, which at 3–6 seeds lets far more than 5 % of A/A studies through; a cell
whose design has no such threshold is counted apart, not as dominance. The calibration's ε_min is
at the uncorrected level, the printed one Bonferroni-corrected (larger), so each cell's rate stays
at most 5 %. Without a calibration (calibration_sims=0) deepsig's 0.2 is used and said to be
uncalibrated.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from stability.core.markdown import num, table
from stability.core.taxonomy import COARSE_CATEGORIES
from stability.report.bootstrap import TESTED_CATEGORIES
from stability.report.calibration import AsoThresholds, SeedHalf
from stability.report.collect import OVERALL
from stability.statistics.dominance import ASO_COLUMNS, EXTRA, MISSING_NOTE, aso_available, aso_table
from stability.statistics.multiplicity import PairedDeltas, adjust_family, delta_table

log = logging.getLogger(__name__)

TEST_COLUMNS = ["level", "category", "delta_mcc", "ci_low", "ci_high", "p_two_sided", "p_holm", "p_bh", "n_items"]
LEVELS = ("fine", "coarse")
ALPHA = 0.05
DOMINANCE = 0.2     # deepsig's ε_min threshold: counted in report.md only where no calibration exists
THRESHOLD = "eps_threshold"   # the calibrated ε_min threshold per cell (NaN: none holds 5 % at its design)
_LISTED = 10        # cells listed under the summary, smallest BH-adjusted p first
MIN_SEEDS = 2       # per side, for almost stochastic order


def tests_table(deltas: dict, keys: Sequence[str], confidence: float) -> pd.DataFrame:
    """One row per cell: the `keys` columns (the parts of the dict key), then `TEST_COLUMNS`.

    `deltas` maps a side's key (a language, or a (setup, variant) condition) to its paired
    bootstrap (`stability.report.bootstrap.condition_deltas` / `language_deltas`).
    """
    frames = []
    for key, paired in deltas.items():
        table = delta_table(paired, TESTED_CATEGORIES, confidence)
        table = table[table["category"] != OVERALL]
        table.insert(0, "level", np.where(table["category"].isin(COARSE_CATEGORIES), "coarse", "fine"))
        parts = key if isinstance(key, tuple) else (key,)
        frames.append(table.assign(**dict(zip(keys, parts))))
    columns = [*keys, *TEST_COLUMNS]
    if not frames:
        return pd.DataFrame(columns=columns)
    table = pd.concat(frames, ignore_index=True)
    table.loc[table["n_items"] == 0, "p_two_sided"] = np.nan
    return adjust_family(table)[columns]


@dataclass(frozen=True)
class Dominance:
    """What the ASO step of a comparison did: the table with or without ε_min, and the line
    report.md says about it."""

    table: pd.DataFrame
    note: str


def aso_skipped(wanted: bool) -> str | None:
    """report.md's line when ε_min is not computed: `aso` is off, or on without deepsig (also
    warned); None when it is computed."""
    if not wanted:
        extra = "" if aso_available() else f" with the optional extra (pip install 'nli-stability[{EXTRA}]')"
        return f"Almost stochastic order (ε_min) is off: `aso=true` adds it{extra}."
    if not aso_available():
        log.warning("%s; the report leaves it out", MISSING_NOTE)
        return MISSING_NOTE + "."
    return None


def with_dominance(tests: pd.DataFrame, scores: pd.DataFrame, keys: Sequence[str], side: str, a: str, b: str, *,
                   wanted: bool, iterations: int, confidence: float, seed: int,
                   thresholds: AsoThresholds | None = None) -> Dominance:
    """`tests` plus ε_min of both directions per tested cell (`aso=true`, deepsig installed), and with
    `thresholds` (keyed by `keys`, level, category) each cell's calibrated threshold (`THRESHOLD`).

    `scores` has one row per run and cell: the `keys`, `level`, `category`, `side` (the
    column naming the side, e.g. `condition` or `lang`) and `mcc`. Only cells with a
    p-value and at least two seeds on each side are compared (one seed is no distribution);
    ε_min is Bonferroni-corrected over those cells.
    """
    skipped = aso_skipped(wanted)
    if skipped is not None:
        return Dominance(tests, skipped)
    by = [*keys, "level", "category"]
    cells = scores.merge(tests.loc[tests["p_two_sided"].notna(), by], on=by)
    cells = cells[cells.groupby([*by, side])["mcc"].transform("size") >= MIN_SEEDS]
    started = time.perf_counter()
    aso = aso_table(cells, by, side, a, b, seed=seed, confidence=confidence, iterations=iterations)
    log.info("almost stochastic order of %d cells (%d iterations each) in %.1f s", len(aso), iterations,
             time.perf_counter() - started)
    table = tests.merge(aso, on=by, how="left")
    table = table.astype({column: "Int64" for column in ASO_COLUMNS if column.startswith("n_seeds")})
    note = (f"ε_min (almost stochastic order, deepsig, {iterations} bootstrap iterations, seeded by "
            f"`random_state`): ε_min({b} over {a}) near 0 means {b}'s seed scores stochastically dominate "
            f"{a}'s, 0.5 no order, 1 the reverse; for the {len(aso)} cells with at least {MIN_SEEDS} seeds on each side, "
            f"Bonferroni over them (each bound at level 1 − {1 - confidence:g} / {len(aso)}). ")
    if thresholds is None:
        note += (f"Dominance is counted at deepsig's ε_min < {DOMINANCE:g}, not calibrated at these seeds "
                 "(`calibration_sims` > 0 measures the threshold that holds 5 % false positives here).")
        return Dominance(table, note)
    table = table.merge(thresholds.table, on=by, how="left")
    table.loc[table[ASO_COLUMNS[0]].isna(), THRESHOLD] = np.nan
    note += ("Dominance is counted below the threshold measured at each cell's design (the simulated A/A studies "
             "of `calibration.csv`, for ε_min at the uncorrected level, so the corrected one printed here errs "
             "less): " + "; ".join(thresholds.designs) + ". A cell whose design has no such threshold is "
             "counted apart: its ε_min cannot rank the two sides.")
    return Dominance(table, note)


def family_text(tests: pd.DataFrame, keys: Sequence[str], what: str) -> str:
    """"Holm and BH over the 5 × 37 cells of B − A": the family that was corrected."""
    tested = tests[tests["p_two_sided"].notna()]
    per_key = tested.groupby(list(keys)).size()
    cells = f"{len(per_key)} × {per_key.iloc[0]}" if per_key.nunique() == 1 else str(len(tested))
    return f"Holm and BH over the {cells} cells of {what}"


def tests_markdown(tests: pd.DataFrame, keys: Sequence[str], a: str, b: str, confidence: float, note: str,
                   csv: str, half: SeedHalf) -> str:
    """The body of a tests section: the corrected family, a row per `keys` value (cells tested,
    significant before and after adjustment, ε_min counts), then the cells with the smallest
    BH-adjusted p-values; `half` names the Δ interval's measured coverage in its header and
    withholds the interval where it is too low (`report.calibration.seed_half`)."""
    aso = "eps_min_b_over_a" in tests.columns
    calibrated = THRESHOLD in tests.columns
    directions = [f"ε_min({b} over {a})", f"ε_min({a} over {b})"]
    groups = []
    for key, part in tests.groupby(list(keys), sort=True):
        tested = part[part["p_two_sided"].notna()]
        cells = [*key, len(tested), *(int((tested[column] < ALPHA).sum()) for column in ("p_two_sided", "p_holm", "p_bh"))]
        if aso:
            cells += _dominance_counts(tested, calibrated)
        groups.append(cells)
    header = [*keys, "cells tested", f"p < {ALPHA:g}", f"Holm p < {ALPHA:g}", f"BH p < {ALPHA:g}"]
    if aso and calibrated:
        header += [f"{direction} < calibrated threshold" for direction in directions]
        header.append("no threshold at this design")
    elif aso:
        header += [f"{direction} < {DOMINANCE:g} (deepsig's, uncalibrated)" for direction in directions]
    level = f"{confidence:.0%}"
    listed = tests[tests["p_two_sided"].notna()].sort_values(["p_bh", "p_two_sided"]).head(_LISTED)
    rows = [[*(getattr(r, key) for key in keys), r.level, r.category,
             half.interval(r.delta_mcc, r.ci_low, r.ci_high), *(num(p, 4) for p in (r.p_two_sided, r.p_holm, r.p_bh)),
             *([num(r.eps_min_b_over_a), num(r.eps_min_a_over_b)] if aso else []),
             *([_threshold_cell(r)] if aso and calibrated else [])] for r in listed.itertuples()]
    return (f"{family_text(tests, keys, f'{b} − {a}')} (every fine and coarse category with items is one cell; "
            "Holm controls the family-wise error rate, Benjamini–Hochberg the false discovery rate). "
            f"Δ with its {level} multi-bootstrap interval and the two-sided bootstrap p-value; every cell in "
            f"`{csv}`. {note}\n\n" + table(header, groups)
            + f"\nThe {len(listed)} cells with the smallest BH-adjusted p:\n\n"
            + table([*keys, "level", "category", f"ΔMCC [{level} multi-bootstrap CI; {half.label}]", "p", "p Holm", "p BH",
                     *(directions if aso else []), *(["ε_min threshold (5 % A/A)"] if aso and calibrated else [])],
                    rows))


def _dominance_counts(tested: pd.DataFrame, calibrated: bool) -> list[int]:
    """Cells where ε_min of each direction counts as dominance; calibrated: below the cell's own
    threshold, then the cells with ε_min but no threshold at their design."""
    directions = ("eps_min_b_over_a", "eps_min_a_over_b")
    if not calibrated:
        return [int((tested[column] < DOMINANCE).sum()) for column in directions]
    below = [int((tested[column] < tested[THRESHOLD]).sum()) for column in directions]
    return [*below, int((tested[directions[0]].notna() & tested[THRESHOLD].isna()).sum())]


def _threshold_cell(row) -> str:
    if pd.isna(row.eps_min_b_over_a):
        return "–"
    return "none at this design" if pd.isna(row.eps_threshold) else num(row.eps_threshold)
