"""The report's statistics checked at the runs' own design (`stability.statistics.calibration`):
calibration.csv, and per cell the interval method the tables print.

The *design* comes from the runs: per condition (lang, setup, variant) and cell (overall, coarse,
fine category with items) its seed count, its seeds' scores and failed verdicts; per compared pair
(a method against the reference of "Which method stabilises what", `compare=[A,B]` per
language, and `compare_langs=[A,B]` per condition) both sides'. Cells are simulated in batches of equal seed counts, every world fitted to
each cell, `calibration_sims` studies per world, seeded by `random_state`.

*The choice*: per cell and interval (σ, σ ratio, mean, Δ, failed rate) each method's coverage is
its worst over the fitted worlds (normal, heavy, failed where some run failed); the resampling
world, a discrete one of the cell's own few runs, is measured and reported beside them but does not
decide. The method printed is the one nearest the nominal level among those not measurably below
it (the Monte-Carlo interval reaching nominal); else the best one if it reaches `FLOOR` (90 %),
stated with its measured coverage; else no interval: "too few seeds (measured coverage X %)", and
for a condition's overall σ and failed rate how many seeds would reach 90 % in that world.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from stability.core.markdown import num
from stability.report.compare import Condition
from stability.statistics import calibration as sim
from stability.statistics.fisher_calibration import FeatureDesign, calibrate_features
from stability.statistics.intervals import std_interval_of, std_ratio_interval_of
from stability.statistics.seeds import GROUP_KEY, condition_name
from stability.statistics.spread import MIN_SEEDS, std_interval, std_ratio_interval

log = logging.getLogger(__name__)

FILE = "calibration.csv"
CELL = ["level", "category"]
KEY = ["lang", "condition", "reference", *CELL]
COLUMNS = [*KEY, "n_seeds", "n_seeds_reference", *sim.CALIBRATION_COLUMNS]
CHOICE_COLUMNS = [*KEY, "statistic", "method", "coverage", "mc_high", "world", "usable", "seeds_needed"]
DECIDING_WORLDS = ("normal", "heavy", "failed")
INTERVALS = (sim.SIGMA, sim.MEAN, sim.FAILED_RATE, sim.RATIO, sim.DELTA)
ITEM_SIMS = 200   # simulated studies of the item-level tests at most (Monte-Carlo error ± 3 % near 5 %)
FEATURES = ("data map", "ambiguous share by feature")   # (level, category) of the data maps' Fisher rows
FAMILY_LEVEL, FAMILY_CELLS = "family", "all cells"   # calibration.csv's level and category of a whole family
TOO_FEW = "too few seeds"
UNFITTED = "no world fitted"   # a cell whose non-failed runs have no spread: nothing to simulate
# the largest σ of scores in [−1, 1] (MCCs): Popoviciu's inequality, Var ≤ (max − min)² / 4. The interval
# estimates the σ of the seeds' distribution, so its bounds are cut at it; coverage is unchanged (the
# true σ is never above it), widths are only narrower
SIGMA_CAP = 1.0
METHOD_NAMES = {"percentile": "percentile bootstrap", "chi2": "χ²", "bonett": "Bonett", "F": "F", "t": "t",
                "welch": "Welch", "wilson": "Wilson"}


@dataclass(frozen=True)
class Calibration:
    """calibration.csv (`table`), the method printed per cell and interval (`choices`), and what ran."""

    table: pd.DataFrame
    choices: pd.DataFrame
    sims: int

    def choice(self, lang: str, condition: str, reference: str, level: str, category: str,
               statistic: str) -> pd.Series | None:
        """The chosen method's row for one cell and interval; None where the cell was not calibrated."""
        key = (lang, condition, reference, level, category, statistic)
        return self._index.get(key)

    @property
    def _index(self) -> dict:
        if "_cache" not in self.__dict__:
            keys = zip(*(self.choices[column] for column in [*KEY, "statistic"]))
            object.__setattr__(self, "_cache", {key: row for key, (_, row) in zip(keys, self.choices.iterrows())})
        return self.__dict__["_cache"]


def seed_cells(results: pd.DataFrame, failed: pd.DataFrame) -> pd.DataFrame:
    """One row per (lang, setup, variant, level, category) with items: its seeds' scores and failed
    flags in seed order, what the calibration's worlds are fitted to."""
    scores = results[results["n_items"].fillna(1) > 0].dropna(subset=["mcc"])
    if not failed.empty:
        verdicts = failed[[*GROUP_KEY, "seed", "failed"]].astype({"failed": bool})
        scores = scores.merge(verdicts, on=[*GROUP_KEY, "seed"], how="left")
    else:
        scores = scores.assign(failed=False)
    scores = scores.assign(failed=scores["failed"].fillna(False).astype(bool)).sort_values("seed")
    grouped = scores.groupby([*GROUP_KEY, *CELL], sort=True)
    return pd.DataFrame({"scores": grouped["mcc"].apply(lambda v: v.to_numpy(float)),
                         "failed": grouped["failed"].apply(lambda v: v.to_numpy(bool))}).reset_index()


def fit_cells(rows: pd.DataFrame, suffix: str = "") -> sim.Fit:
    """The worlds fitted to rows of `seed_cells` (all with the same seed count)."""
    return sim.fit(np.stack(rows[f"scores{suffix}"].to_list()), np.stack(rows[f"failed{suffix}"].to_list()))


def language_reference(lang: str, condition: str) -> str:
    """calibration.csv's `reference` of a language pair's row: "fr · rte" (its `lang` is the other language)."""
    return f"{lang} · {condition}"


def _pairs(cells: pd.DataFrame, results: pd.DataFrame, references: dict[tuple[str, str], str],
           compare: list[str] | None, compare_langs: list[str] | None = None) -> pd.DataFrame:
    """Rows of (reference side, method side) cells: every other variant of a (lang, setup) against
    its reference (`references`, as "Which method stabilises what" picks them), `compare=[A,B]`'s B
    against A per language, and `compare_langs=[A,B]`'s language B against A per condition (`lang` B,
    `reference` `language_reference(A, condition)`)."""
    wanted = []
    for (lang, setup), chosen in references.items():
        others = sorted(set(results.loc[(results["lang"] == lang) & (results["setup"] == setup), "variant"]) - {chosen})
        wanted += [((lang, (setup, chosen)), (lang, (setup, other))) for other in others]
    if compare:
        a, b = (Condition.parse(text).key for text in compare)
        wanted += [((lang, a), (lang, b)) for lang in sorted(set(results["lang"]))]
    if compare_langs:
        first, second = compare_langs
        conditions = sorted(set(zip(results["setup"], results["variant"])))
        wanted += [((first, condition), (second, condition)) for condition in conditions]
    frames = []
    for (lang_a, first), (lang_b, second) in dict.fromkeys(wanted):
        side_a, side_b = (cells[(cells["lang"] == lang) & (cells["setup"] == setup) & (cells["variant"] == variant)]
                          [[*CELL, "scores", "failed"]] for lang, (setup, variant) in ((lang_a, first), (lang_b, second)))
        merged = side_a.merge(side_b, on=CELL, suffixes=("_a", "_b"))
        if merged.empty:
            continue
        reference = (condition_name(*first) if lang_a == lang_b
                     else language_reference(lang_a, condition_name(*first)))
        frames.append(merged.assign(lang=lang_b, condition=condition_name(*second), reference=reference))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _batched(frame: pd.DataFrame, sizes: list[str], run) -> pd.DataFrame:
    """`run(batch)` per group of rows with equal seed counts, its `cell` rows mapped back to `frame`'s."""
    out = []
    for _, batch in frame.groupby(sizes, sort=True):
        measured = run(batch)
        measured = measured.assign(row=batch.index.to_numpy()[measured["cell"].to_numpy(int)])
        out.append(measured.drop(columns="cell"))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=["row", *sim.CALIBRATION_COLUMNS])


def calibrate(results: pd.DataFrame, failed: pd.DataFrame, *, references: dict[tuple[str, str], str],
              compare: list[str] | None, sims: int, confidence: float, aso_iterations: int,
              random_state: int, bootstrap: int, compare_langs: list[str] | None = None) -> Calibration:
    """calibration.csv and the choices for every cell of `results` with at least `MIN_SEEDS` seeds. The
    simulated percentile bootstraps draw the report's own `bootstrap` resamples, so they are the
    intervals and the test it prints; with `bootstrap=0` it prints none, and none is simulated or chosen."""
    started = time.perf_counter()
    rng = np.random.default_rng(random_state)
    cells = seed_cells(results, failed)
    cells = cells.assign(n=cells["scores"].map(len))
    cells = cells[cells["n"] >= MIN_SEEDS].reset_index(drop=True)
    single = _batched(cells, ["n"], lambda batch: sim.calibrate_conditions(
        fit_cells(batch), sims=sims, confidence=confidence, rng=rng, resamples=bootstrap))
    single = single.join(cells[["lang", "setup", "variant", *CELL, "n"]], on="row")
    single = single.assign(condition=[condition_name(s, v) for s, v in zip(single["setup"], single["variant"])],
                           reference="", n_seeds=single["n"], n_seeds_reference=np.nan)
    pairs = _pairs(cells.drop(columns="n"), results, references, compare, compare_langs)
    frames = [single]
    if not pairs.empty:
        pairs = pairs.assign(n_a=pairs["scores_a"].map(len), n_b=pairs["scores_b"].map(len))
        paired = _batched(pairs, ["n_a", "n_b"], lambda batch: sim.calibrate_pairs(
            fit_cells(batch, "_a"), fit_cells(batch, "_b"), sims=sims, confidence=confidence, rng=rng,
            aso_iterations=aso_iterations, resamples=bootstrap))
        paired = paired.join(pairs[["lang", "condition", "reference", *CELL, "n_a", "n_b"]], on="row")
        frames.append(paired.assign(n_seeds=paired["n_b"], n_seeds_reference=paired["n_a"]))
        if bootstrap:   # the whole family's test is the bootstrap's
            frames += _families(pairs, compare, compare_langs, sims=sims, rng=rng, resamples=bootstrap)
    table = pd.concat(frames, ignore_index=True)[COLUMNS].astype({"n_seeds": int})
    choices = _with_seeds_needed(choose(table), cells, sims=sims, confidence=confidence, rng=rng,
                                 resamples=bootstrap)
    log.info("calibration: %d cells, %d pairs, %d simulations per world in %.1f s", len(cells), len(pairs), sims,
             time.perf_counter() - started)
    return Calibration(table, choices, sims)


def _families(pairs: pd.DataFrame, compare: list[str] | None, compare_langs: list[str] | None, *, sims: int,
              rng: np.random.Generator, resamples: int) -> list[pd.DataFrame]:
    """The whole-family A/A rows of the tests sections (`sim.family_false_positives`): `compare=[A,B]`'s
    family, every (language, category) cell (`lang` "all languages"), and `compare_langs=[A,B]`'s, every
    (condition, category) cell (`condition` "all conditions", `reference` "A · all conditions"); `level`
    "family", `category` "all cells"."""
    families = []
    if compare:
        a, b = (str(Condition.parse(text)) for text in compare)
        families.append((pairs[(pairs["condition"] == b) & (pairs["reference"] == a)], "all languages", b, a))
    if compare_langs:
        a, b = compare_langs
        families.append((language_rows(pairs, a, b), b, "all conditions", language_reference(a, "all conditions")))
    frames = []
    for rows, lang, condition, reference in families:
        units = []
        for _, unit in rows.groupby(["lang", "condition", "reference"], sort=True):
            runs = unit["n_a"].max()
            unit = unit[(unit["n_a"] == runs) & (unit["level"] != "all")]   # the tests' cells: categories
            units.append((np.stack(unit["scores_a"].to_list()), int(unit["n_b"].max())))
        if not units:
            continue
        events = sim.family_false_positives(units, sims=sims, rng=rng, resamples=resamples)
        measured = sim.rows(events, np.array([0]), "resampling", sim.FALSE_POSITIVES, sim.ALPHA)
        frames.append(measured.drop(columns="cell").assign(
            lang=lang, condition=condition, reference=reference, level=FAMILY_LEVEL, category=FAMILY_CELLS,
            n_seeds=int(rows["n_b"].max()), n_seeds_reference=int(rows["n_a"].max())))
    return frames


def choose(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell and interval the method to print (`CHOICE_COLUMNS`): `usable` False means none
    reaches `FLOOR` in its worst deciding world (`method` is then the best of them)."""
    coverage = table[(table["measure"] == sim.COVERAGE) & table["world"].isin(DECIDING_WORLDS)]
    group = [*KEY, "statistic"]
    worst = coverage.sort_values("measured", kind="stable").drop_duplicates([*group, "method"])
    reaches = worst["mc_high"] >= worst["nominal"]
    # reaching methods first, nearest nominal first; then the others, highest coverage first
    rank = np.where(reaches, (worst["measured"] - worst["nominal"]).abs(), 2 - worst["measured"])
    picked = worst.assign(_rank=rank, usable=reaches | (worst["measured"] >= sim.FLOOR)) \
        .sort_values("_rank", kind="stable").drop_duplicates(group)
    picked = picked.rename(columns={"measured": "coverage"}).assign(seeds_needed=np.nan)
    return picked[CHOICE_COLUMNS].reset_index(drop=True)


def _with_seeds_needed(choices: pd.DataFrame, cells: pd.DataFrame, *, sims: int, confidence: float,
                       rng: np.random.Generator, resamples: int) -> pd.DataFrame:
    """For the overall cells without a usable σ or mean interval: the seeds that reach 90 % in the
    deciding world with the best method."""
    lacking = choices[~choices["usable"] & (choices["level"] == "all") & (choices["reference"] == "")
                      & choices["statistic"].isin([sim.SIGMA, sim.FAILED_RATE])]
    if lacking.empty:
        return choices
    names = [condition_name(s, v) for s, v in zip(cells["setup"], cells["variant"])]
    keyed = cells.assign(condition=names).set_index(["lang", "condition", *CELL])
    choices = choices.copy()
    for index, row in lacking.iterrows():
        cell = keyed.loc[(row["lang"], row["condition"], row["level"], row["category"])]
        fitted = sim.fit(cell["scores"][None, :], cell["failed"][None, :])
        choices.loc[index, "seeds_needed"] = sim.seeds_for_coverage(
            fitted, row["statistic"], row["method"], row["world"], sims=sims, confidence=confidence, rng=rng,
            resamples=resamples)
    return choices


def method_name(method: str) -> str:
    return METHOD_NAMES.get(method, method)


def percent(value: float) -> str:
    return "–" if pd.isna(value) else f"{100 * value:.0f} %"


def too_few(coverage: float) -> str:
    """What a cell prints instead of an interval no method makes trustworthy: "too few seeds (measured coverage 73 %)"."""
    return f"{TOO_FEW} (measured coverage {percent(coverage)})"


def interval_method(choice: pd.Series | None, calibrated: bool) -> tuple[str, float]:
    """(method, measured coverage) a table prints for a cell: the chosen method, `TOO_FEW` where none
    is usable, `UNFITTED` where the calibration has no world for the cell, "percentile" with no
    coverage when there is no calibration (calibration_sims=0)."""
    if not calibrated:
        return "percentile", float("nan")
    if choice is None:
        return UNFITTED, float("nan")
    return (choice["method"] if choice["usable"] else TOO_FEW), float(choice["coverage"])


def std_bounds(choice: pd.Series | None, calibrated: bool, values: np.ndarray, *, bootstrap: int, confidence: float,
               random_state: int) -> tuple[float, float]:
    """σ's interval by the chosen method (`interval_method`; NaN where none is usable or the cell was not
    calibrated); without a calibration the percentile bootstrap, as before calibration existed. Bounds
    above `SIGMA_CAP` are cut to it."""
    method = interval_method(choice, calibrated)[0]
    if method in (TOO_FEW, UNFITTED):
        return float("nan"), float("nan")
    if method == "percentile":
        bounds = std_interval(values, bootstrap, confidence, random_state)
    else:
        bounds = std_interval_of(values, method, confidence)
    low, high = (float(bound) if np.isnan(bound) else min(float(bound), SIGMA_CAP) for bound in bounds)
    return low, high


def mean_bounds(choice: pd.Series | None, calibrated: bool, values: np.ndarray, *, bootstrap: int, confidence: float,
                random_state: int) -> tuple[float, float]:
    """The mean's interval by the chosen method (`interval_method`; NaN where none is usable or the cell
    was not calibrated): t (`scipy.stats.ttest_1samp`), or the percentile bootstrap over seeds
    (`scipy.stats.bootstrap`, as `spread.std_interval` for σ)."""
    method = interval_method(choice, calibrated)[0]
    values = np.asarray(values, float)
    values = values[~np.isnan(values)]
    if method in (TOO_FEW, UNFITTED) or len(values) < MIN_SEEDS:
        return float("nan"), float("nan")
    if method == "t":
        low, high = stats.ttest_1samp(values, 0.0).confidence_interval(confidence)
    elif method == "percentile" and bootstrap:
        low, high = stats.bootstrap((values,), np.mean, n_resamples=bootstrap, confidence_level=confidence,
                                    method="percentile", vectorized=True, random_state=random_state).confidence_interval
    else:
        return float("nan"), float("nan")
    return float(low), float(high)


def ratio_bounds(choice: pd.Series | None, calibrated: bool, values: np.ndarray, reference: np.ndarray, *,
                 bootstrap: int, confidence: float, random_state: int) -> tuple[float, float]:
    """The σ ratio's interval by the chosen method, as `std_bounds`."""
    method = interval_method(choice, calibrated)[0]
    if method in (TOO_FEW, UNFITTED):
        return float("nan"), float("nan")
    if method == "percentile":
        return std_ratio_interval(values, reference, bootstrap, confidence, random_state)
    return std_ratio_interval_of(values, reference, method, confidence)


def design_labels(frame: pd.DataFrame) -> pd.Series:
    """"6" for a condition's cells, "6 vs 5" (reference first) for a pair's."""
    reference = frame["n_seeds_reference"]
    pair = reference.astype("Int64").astype(str) + " vs " + frame["n_seeds"].astype(str)
    return frame["n_seeds"].astype(str).where(reference.isna(), pair)


def _aso_rows(tests: pd.DataFrame) -> pd.DataFrame:
    return tests[(tests["statistic"] == sim.ASO) & (tests["measure"] == sim.FALSE_POSITIVES)]


def aso_design_parts(tests: pd.DataFrame, none_holds: str = "") -> list[str]:
    """Per design of the A/A ASO rows of `tests` one phrase: the ε_min below which 5 % of A/A studies
    fall in every world, beside deepsig's 0.2 and its worst measured false-positive rate; or that no
    threshold holds 5 % there, followed by `none_holds`."""
    aso = _aso_rows(tests)
    parts = []
    for design, part in aso.assign(design=design_labels(aso)).groupby("design", sort=True):
        rate = part["measured"].max()
        if part["threshold"].isna().any():
            parts.append(f"at {design} seeds no ε_min threshold gives 5 % false positives (deepsig's "
                         f"{sim.ASO_THRESHOLD:g}: {percent(rate)}){none_holds}")
        else:
            parts.append(f"at {design} seeds ε_min < {part['threshold'].min():.2g} gives 5 % false positives "
                         f"(deepsig's {sim.ASO_THRESHOLD:g}: {percent(rate)})")
    return parts


def aso_text(tests: pd.DataFrame, wanted: bool) -> str:
    """The trust section's line on almost stochastic order (`aso_design_parts`, and that where no
    threshold holds ε_min cannot rank); "" without ASO rows."""
    parts = aso_design_parts(tests, ", so ε_min cannot rank methods here")
    if not parts:
        return ""
    used = "" if wanted else " (`aso=true` prints ε_min)"
    return "Almost stochastic order" + used + ": " + "; ".join(parts) + ".\n\n"


@dataclass(frozen=True)
class AsoThresholds:
    """The calibrated ε_min thresholds of one compared pair (B against A): per (lang, level, category)
    `eps_threshold`, the largest ε_min below which at most 5 % of A/A studies fall in every world
    (NaN where in some world no threshold does), and the phrases per design (`aso_design_parts`)."""

    table: pd.DataFrame
    designs: list[str]


def aso_thresholds(calibration: Calibration | None, condition: str, reference: str) -> AsoThresholds | None:
    """The thresholds of `condition` against `reference` (calibration.csv's pair rows); None where
    the calibration has none (calibration_sims=0, or a pair it does not simulate)."""
    if calibration is None:
        return None
    table = calibration.table
    return _thresholds(_aso_rows(table[(table["condition"] == condition) & (table["reference"] == reference)]),
                       ["lang"])


def language_aso_thresholds(calibration: Calibration | None, a: str, b: str) -> AsoThresholds | None:
    """The thresholds of language `b` against `a` per condition, keyed by (setup, variant, level, category)."""
    if calibration is None:
        return None
    aso = _aso_rows(language_rows(calibration.table, a, b))
    keys = [Condition.parse(name).key for name in aso["condition"]]
    return _thresholds(aso.assign(setup=[key[0] for key in keys], variant=[key[1] for key in keys]),
                       ["setup", "variant"])


def language_rows(table: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """calibration.csv's rows of language `b` against `a` (`compare_langs=[a,b]`), every condition."""
    references = [language_reference(a, condition) for condition in table["condition"]]
    return table[(table["lang"] == b) & (table["reference"] == references)]


def _thresholds(aso: pd.DataFrame, keys: list[str]) -> AsoThresholds | None:
    if aso.empty:
        return None
    grouped = aso.groupby([*keys, *CELL], sort=True)["threshold"]
    threshold = grouped.min().where(~grouped.apply(lambda values: values.isna().any()))
    return AsoThresholds(threshold.rename("eps_threshold").reset_index(), aso_design_parts(aso))


@dataclass(frozen=True)
class SeedHalf:
    """How a multi-bootstrap table names its interval (`label`, for its header) and the lowest measured
    coverage of the interval's seed half (NaN: not simulated). Below `FLOOR` the table prints no
    interval but *too few seeds* with that coverage, as the seed-level tables do."""

    label: str
    coverage: float = float("nan")

    def interval(self, estimate: float, low: float, high: float) -> str:
        """"0.31 [0.12, 0.48]", or "0.31; too few seeds (measured coverage 73 %)" (`too_few`)."""
        if self.coverage < sim.FLOOR:
            return f"{num(estimate)}; {too_few(self.coverage)}"
        return f"{num(estimate)} [{num(low)}, {num(high)}]"


def seed_half(calibration: Calibration | None, statistic: str, *, condition: str | None = None,
              reference: str = "", languages: tuple[str, str] | None = None) -> SeedHalf:
    """A multi-bootstrap table's interval (`statistic` `sim.MEAN` or `sim.DELTA`): its seed half is the
    percentile bootstrap over seeds, whose coverage the calibration measures (items are not simulated):
    "seed half: percentile bootstrap, measured ≥ 73 % at 3 seeds" (the lowest over the overall cells of
    the condition(s), of the pair `condition` against `reference`, or of the language pair `languages`
    (A, B), in the deciding worlds); or that it was not simulated."""
    if calibration is None:
        return SeedHalf("seed half not simulated (calibration_sims=0)")
    table = calibration.table
    if languages is not None:
        table, reference = language_rows(table, *languages), None
    rows = table[(table["statistic"] == statistic) & (table["method"] == "percentile")
                 & (table["measure"] == sim.COVERAGE) & table["world"].isin(DECIDING_WORLDS)
                 & (table["level"] == "all")]
    if reference is not None:
        rows = rows[rows["reference"] == reference]
    if condition is not None:
        rows = rows[rows["condition"] == condition]
    if rows.empty:
        return SeedHalf("seed half not simulated")
    worst = rows.loc[rows["measured"].idxmin()]
    designs = ", ".join(sorted(set(design_labels(rows)), key=lambda label: [int(n) for n in label.split(" vs ")]))
    flag = f", below {percent(sim.FLOOR)}: intervals not printed" if worst["measured"] < sim.FLOOR else ""
    return SeedHalf(f"seed half: percentile bootstrap, measured {'≥ ' if len(rows) > 1 else ''}"
                    f"{percent(worst['measured'])} at {designs} seeds{flag}", float(worst["measured"]))


def with_rows(calibration: Calibration, rows: pd.DataFrame) -> Calibration:
    """`calibration` with more rows of calibration.csv (`COLUMNS`), measured elsewhere."""
    if rows.empty:
        return calibration
    return Calibration(pd.concat([calibration.table, rows[COLUMNS]], ignore_index=True), calibration.choices,
                       calibration.sims)


def with_feature_tests(calibration: Calibration, designs: dict[tuple[str, str, str], FeatureDesign],
                       seeds: dict[tuple[str, str, str], list[int]], *, sims: int, random_state: int) -> Calibration:
    """`calibration` plus the A/A false-positive rates of the data maps' Fisher tests per group
    (`statistics.fisher_calibration`), at most `ITEM_SIMS` studies per item world: an item-level study
    tests every feature of thousands of items, and the Fisher rows need no finer rate than ± 3 %."""
    rng = np.random.default_rng([random_state, 1])
    frames = []
    for (lang, setup, variant), design in sorted(designs.items()):
        rows = calibrate_features(design, sims=min(sims, ITEM_SIMS), rng=rng)
        frames.append(rows.assign(lang=lang, condition=condition_name(setup, variant), reference="",
                                  level=FEATURES[0], category=FEATURES[1],
                                  n_seeds=len(seeds.get((lang, setup, variant), [])), n_seeds_reference=np.nan)[COLUMNS])
    return with_rows(calibration, pd.concat(frames, ignore_index=True) if frames else pd.DataFrame())
