"""Which method stabilises what: every variant of a (lang, setup) against the reference method.

A sweep such as `experiment=stabilizers` trains the same data with several stabilisation
methods (trainer presets), each a variant of its runs (`trainer-mosbach`, `trainer-llrd`, ...).
Here a *method* is a variant, and the *reference* is the variant named by the report option
`reference` (default `trainer-jiant-superglue`, the study's own recipe): a variant is the
reference when it equals `reference` or has it as one of its `_`-separated items
(`model-x_trainer-jiant-superglue`). Within each (lang, setup) with a reference and at
least one other variant, every other variant is compared with the reference, per cell: the
overall MCC and every coarse and fine category with items.

`stabilizers.csv` has one row per (lang, setup, method, cell), the reference's own rows
included (their σ ratio and test columns empty): the failed-run rate with its Wilson interval
(`stability.statistics.rates`), mean and σ of MCC over seeds with σ's interval, and against
the reference the ratio σ_method / σ_reference with its interval (each by the method the
calibration chose for the cell's design, `stability.report.calibration`), the
Brown–Forsythe test of equal spread and Welch's t-test of equal means
(`stability.statistics.spread`), the two tests each Holm-adjusted over all compared cells of
the table (`multiplicity.adjusted_p`), and with `aso=true` almost stochastic order
(`dominance.aso_table`, Bonferroni over the cells with two seeds on each side).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from stability.core.identity import ITEM_SEPARATOR
from stability.core.taxonomy import COARSE_CATEGORIES, FINE_CATEGORIES
from stability.report.calibration import Calibration, interval_method, ratio_bounds, std_bounds
from stability.report.collect import OVERALL
from stability.report.failed import failed_counts
from stability.report.significance import Dominance, aso_skipped
from stability.statistics.calibration import RATIO, SIGMA
from stability.statistics.dominance import aso_table
from stability.statistics.multiplicity import adjusted_p
from stability.statistics.rates import wilson_interval
from stability.statistics.seeds import condition_name
from stability.statistics.spread import MIN_SEEDS, equal_mean_p, equal_spread_p, seed_std, std_ratio

log = logging.getLogger(__name__)

FILE = "stabilizers.csv"
PAIR = ["lang", "setup"]
CELL = ["level", "category"]
STABILIZER_COLUMNS = ["lang", "setup", "method", "reference", "category", "level", "n_seeds", "n_runs", "failed",
                      "failed_rate", "failed_low", "failed_high", "mean_mcc", "std_mcc", "std_low", "std_high",
                      "std_method", "std_coverage", "std_ratio", "std_ratio_low", "std_ratio_high", "std_ratio_method",
                      "std_ratio_coverage", "p_variance", "p_variance_holm", "p_mean", "p_mean_holm"]
EPS_COLUMNS = ["eps_min", "eps_min_reverse"]
_LEVEL_RANK = {"all": 0, "coarse": 1, "fine": 2}
_CATEGORY_RANK = {name: i for i, name in enumerate((OVERALL, *COARSE_CATEGORIES, *FINE_CATEGORIES))}


def is_reference(variant: str, reference: str) -> bool:
    """Whether `variant` is the reference method: equal to it, or carrying it as an item."""
    return variant == reference or reference in variant.split(ITEM_SEPARATOR)


def pick_reference(variants: list[str], reference: str) -> str | None:
    """The reference among a (lang, setup)'s variants: the one equal to `reference`, else the one
    carrying it with the fewest items (then the first by name); None when none carries it."""
    candidates = [variant for variant in variants if is_reference(variant, reference)]
    if not candidates:
        return None
    if reference in candidates:
        return reference
    return min(candidates, key=lambda variant: (len(variant.split(ITEM_SEPARATOR)), variant))


def method_labels(methods: list[str]) -> dict[str, str]:
    """Each method by the variant items that set it apart from the other methods of its (lang,
    setup): `trainer-mosbach` for `model-tiny_trainer-mosbach_ntrain16` beside
    `model-tiny_trainer-llrd_ntrain16`, so tables and figures stay readable (stabilizers.csv keeps
    the whole variant); the whole variant where no item is its own, `(as configured)` for ""."""
    items = {method: method.split(ITEM_SEPARATOR) if method else [] for method in methods}
    shared = set.intersection(*map(set, items.values())) if len(methods) > 1 else set()
    return {method: ITEM_SEPARATOR.join(item for item in parts if item not in shared) or method or "(as configured)"
            for method, parts in items.items()}


def all_failed(row: Any) -> bool:
    """Every run of the row's method failed: its σ (often 0: constant predictions) is no
    stability, so tables and figures mark no σ difference for it."""
    return not pd.isna(row.failed) and row.failed == row.n_runs


@dataclass(frozen=True)
class Pairs:
    """The (lang, setup) groups of a report by what the section can do with them."""

    variants: dict[tuple[str, str], list[str]]     # every (lang, setup) with >= 2 variants: its variants
    references: dict[tuple[str, str], str]         # those with a reference: the reference
    ambiguous: dict[tuple[str, str], list[str]]    # several variants carry the reference: all of them

    def methods(self, pair: tuple[str, str]) -> list[str]:
        """The reference first, then the other variants by name."""
        reference = self.references[pair]
        return [reference, *sorted(variant for variant in self.variants[pair] if variant != reference)]


def reference_pairs(results: pd.DataFrame, reference: str) -> Pairs:
    """Which (lang, setup) groups have two variants, and which of those have the reference."""
    variants = {pair: sorted(set(group)) for pair, group in results.groupby(PAIR, sort=True)["variant"]}
    variants = {pair: found for pair, found in variants.items() if len(found) >= 2}
    references, ambiguous = {}, {}
    for pair, found in variants.items():
        chosen = pick_reference(found, reference)
        if chosen is not None:
            references[pair] = chosen
            carrying = [variant for variant in found if is_reference(variant, reference)]
            if len(carrying) > 1:
                ambiguous[pair] = carrying
    return Pairs(variants, references, ambiguous)


def _cell_order(cells: pd.DataFrame) -> pd.DataFrame:
    """overall, the coarse, then the fine categories in taxonomy order; others (hand-written CSVs) last."""
    rank = cells["category"].map(_CATEGORY_RANK).fillna(len(_CATEGORY_RANK))
    level = cells["level"].map(_LEVEL_RANK).fillna(len(_LEVEL_RANK))
    return cells.assign(_level=level, _rank=rank).sort_values(["_level", "_rank", "category"]) \
        .drop(columns=["_level", "_rank"])


def stabilizers_table(results: pd.DataFrame, failed: pd.DataFrame, pairs: Pairs, *, bootstrap: int,
                      confidence: float, random_state: int, calibration: Calibration | None = None,
                      decided: set[frozenset[str]] = frozenset()) -> pd.DataFrame:
    """stabilizers.csv without ε_min (`STABILIZER_COLUMNS`): one row per (lang, setup, method, cell).

    `results` is the tidy table the statistics read (without failed runs under
    `exclude_failed`); `failed` the failed-run verdicts of every run (`failed_runs.csv`), so
    `failed_rate` counts all runs. Categories without items (MCC 0 by construction) have no
    row. The Holm families are all rows of the table with a p-value (the reference's rows
    have none, nor a σ ratio). σ's and the σ ratio's intervals are by the method `calibration`
    chose for the cell (`std_method`, `std_ratio_method`, with the measured coverage; "too few
    seeds" and no bounds where none reaches 90 %); a percentile bootstrap uses `bootstrap`,
    `confidence` and `random_state`, and without a calibration every interval is one; a cell the
    calibration has no world for (no spread among its non-failed runs) gets no interval. A pair of
    conditions in `decided` (an adaptive sweep's sequential decision, `report.sequential_pairs`) has no
    Welch p of the means: their seeds were added until that test decided.
    """
    scores = results[results["n_items"].fillna(1) > 0]
    counts = failed_counts(failed).set_index(["lang", "setup", "variant"])
    rows = []
    for pair, reference in pairs.references.items():
        group = scores[(scores["lang"] == pair[0]) & (scores["setup"] == pair[1])]
        seeds = {key: cell["mcc"].to_numpy(float) for key, cell in group.groupby(["variant", *CELL], sort=False)}
        for method in pairs.methods(pair):
            runs = counts.loc[(*pair, method)] if (*pair, method) in counts.index else None
            n_runs, n_failed = (runs["n_runs"], runs["n_failed"]) if runs is not None else (pd.NA, pd.NA)
            cells = _cell_order(group.loc[group["variant"] == method, CELL].drop_duplicates())
            for level, category in cells.itertuples(index=False):
                own = seeds[(method, level, category)]
                other = None if method == reference else seeds.get((reference, level, category))
                present = own[~np.isnan(own)]
                name, reference_name = condition_name(pair[1], method), condition_name(pair[1], reference)
                tests = (np.nan,) * 2
                if other is not None:   # no fixed-n test of the means a sequential test decided
                    tests = (equal_spread_p(own, other),
                             np.nan if frozenset((name, reference_name)) in decided else equal_mean_p(own, other))
                chosen = calibration.choice(pair[0], name, "", level, category, SIGMA) if calibration else None
                calibrated = calibration is not None
                spread = (*std_bounds(chosen, calibrated, own, bootstrap=bootstrap, confidence=confidence,
                                      random_state=random_state), *interval_method(chosen, calibrated))
                ratio = (np.nan,) * 5
                if other is not None:
                    chosen = (calibration.choice(pair[0], name, reference_name, level, category, RATIO)
                              if calibration else None)
                    ratio = (std_ratio(own, other), *ratio_bounds(chosen, calibrated, own, other, bootstrap=bootstrap,
                                                                  confidence=confidence, random_state=random_state),
                             *interval_method(chosen, calibrated))
                rows.append([*pair, method, reference, category, level, len(present), n_runs, n_failed,
                             present.mean() if len(present) else np.nan, seed_std(own), *spread, *ratio, *tests])
    columns = ["lang", "setup", "method", "reference", "category", "level", "n_seeds", "n_runs", "failed",
               "mean_mcc", "std_mcc", "std_low", "std_high", "std_method", "std_coverage", "std_ratio",
               "std_ratio_low", "std_ratio_high", "std_ratio_method", "std_ratio_coverage", "p_variance", "p_mean"]
    table = pd.DataFrame(rows, columns=columns).astype({"n_runs": "Int64", "failed": "Int64"})
    n_runs, n_failed = (table[column].to_numpy(float, na_value=np.nan) for column in ("n_runs", "failed"))
    with np.errstate(invalid="ignore", divide="ignore"):
        table["failed_rate"] = np.where(n_runs > 0, n_failed / n_runs, np.nan)
    table["failed_low"], table["failed_high"] = wilson_interval(n_failed, n_runs, confidence)
    table["p_variance_holm"] = adjusted_p(table["p_variance"], "holm")
    table["p_mean_holm"] = adjusted_p(table["p_mean"], "holm")
    return table[STABILIZER_COLUMNS]


def with_dominance(table: pd.DataFrame, results: pd.DataFrame, *, wanted: bool, iterations: int,
                   confidence: float, seed: int) -> Dominance:
    """`table` plus ε_min of method over reference (`eps_min`) and of reference over method
    (`eps_min_reverse`) for every compared cell with at least two seeds on each side
    (`aso=true`, deepsig installed; Bonferroni over those cells), as the comparison tests do."""
    skipped = aso_skipped(wanted)
    if skipped is not None:
        return Dominance(table, skipped)
    by = [*PAIR, "method", *CELL]
    compared = table[(table["method"] != table["reference"]) & (table["n_seeds"] >= MIN_SEEDS)]
    scores = results[results["n_items"].fillna(1) > 0].dropna(subset=["mcc"])
    method_side = scores.rename(columns={"variant": "method"}).merge(compared[by], on=by)
    reference_side = scores.rename(columns={"variant": "reference"}).merge(
        compared[[*by, "reference"]], on=[*PAIR, "reference", *CELL])
    sides = pd.concat([method_side.assign(side="method"), reference_side.assign(side="reference")],
                      ignore_index=True)
    sides = sides[sides.groupby([*by, "side"])["mcc"].transform("size") >= MIN_SEEDS]
    started = time.perf_counter()
    aso = aso_table(sides, by, "side", "reference", "method", seed=seed, confidence=confidence,
                    iterations=iterations)
    log.info("almost stochastic order of %d method cells (%d iterations each) in %.1f s", len(aso), iterations,
             time.perf_counter() - started)
    aso = aso.rename(columns={"eps_min_b_over_a": "eps_min", "eps_min_a_over_b": "eps_min_reverse"})
    merged = table.merge(aso[[*by, *EPS_COLUMNS]], on=by, how="left")
    note = (f"ε_min (almost stochastic order, deepsig, {iterations} bootstrap iterations, seeded by `random_state`) "
            "of the method's seed MCCs over the reference's: near 0 the method's seeds stochastically dominate "
            f"(score higher), 0.5 no order, near 1 the reverse (`eps_min_reverse`); for the {len(aso)} cells with "
            f"at least {MIN_SEEDS} seeds on each side, Bonferroni over them (each bound at level "
            f"1 − {1 - confidence:g} / {len(aso)}).")
    return Dominance(merged, note)
