"""Data maps (Swayamdipta et al., EMNLP 2020, "Dataset Cartography"): where each training item lies
between easy-to-learn, ambiguous and hard-to-learn, per run and over seeds.

A run trained with `trainer.dynamics=true` keeps, at every validation, the P(gold) that the
training forward passes since the previous validation gave each training item
(`stability.finetune.dynamics`). Over a run's validations an item's

- *confidence* is the mean of its P(gold),
- *variability* the standard deviation of its P(gold), with ddof = 0 (`np.std`, as
  allenai/cartography's `compute_train_dy_metrics`, cartography/selection/train_dy_filtering.py),
- *correctness* the share of validations whose training pass predicted the gold label
  (cartography counts them and its plot divides by the largest count; a share reads the same
  whatever the number of validations).

Only validations whose training passes reached the item count (`n_seen`); an item seen in fewer
than `MIN_SEEN` validations has no variability (one value has no spread) and no region, and is
left out of every share. The seed-averaged map (`seed` = `mean`) averages each coordinate over the
seeds where it is defined: the mean of the seeds' variabilities, not the spread of the pooled
trajectories, so a map stays the picture of one training run, made steadier by the seeds.

Regions. The paper names the regions from the map's shape and selects the top 33 % of items by
variability (ambiguous) or confidence (easy, hard) for its experiments; a top-33 % rule makes every
share 33 % by construction, and the cartography repository fixes no thresholds (its plots only
place the labels). The shares here need fixed thresholds:

- ambiguous: variability ≥ `AMBIGUOUS_VARIABILITY` = 0.2. In the repository's published WinoGrande
  map (data/data_map_coordinates/winogrande_roberta_0_6_*, RoBERTa-large, 40 398 items; like ours a
  two-way task) the third of items with the highest variability — the paper's ambiguous selection —
  starts at variability 0.190. 0.2 is 40 % of the largest possible variability (0.5): P(gold) swings
  by about ±0.2 between validations;
- easy-to-learn: confidence ≥ `EASY_CONFIDENCE` = 0.75 and not ambiguous: on average the model gives
  the gold label at least three times the other label's probability, steadily;
- hard-to-learn: confidence ≤ `HARD_CONFIDENCE` = 0.25 and not ambiguous: the same for the wrong label
  (symmetric to easy-to-learn around 0.5, the two-way task's chance). Confidence quantiles do not
  transfer between data sets (WinoGrande's top third starts at 0.94, its bottom third ends at 0.90),
  hence a rule on the probabilities themselves;
- other: the rest (variability < 0.2 and 0.25 < confidence < 0.75: steadily undecided).

Seed agreement of the regions: Fleiss' κ (statsmodels `aggregate_raters`, `fleiss_kappa`) with the
seeds as raters and the four regions as categories, over the items with a region in every seed,
and the share of those items with the same region in every seed.

Annotator features (`annotators`, the project's rule-based annotator, an optional extra): on the
seed-averaged map, per feature the share of each region among items with and without it, and
Fisher's exact test of "the ambiguous share is the same with and without", Holm-adjusted over the
group's tested features. Only the run's own training pairs are annotated, not the MNLI or mixed-in
pairs added after them (`n_added`): those are another data set, mostly in another language.
"""
from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from stability.core.errors import UserError
from stability.core.runrecord import Dynamics, RunDir
from stability.core.setups import n_added_from_setup
from stability.core.taxonomy import FINE_CATEGORIES
from stability.report.annotation import Annotate, by_language
from stability.report.dynamics import RunDynamics
from stability.statistics.clusters import sentence_clusters
from stability.statistics.fisher_calibration import FeatureDesign
from stability.statistics.multiplicity import adjusted_p
from stability.statistics.seeds import GROUP_KEY
from stability.statistics.spread import seed_std

log = logging.getLogger(__name__)

MAP_FILE = "data_map.csv"
REGIONS_FILE = "data_map_regions.csv"
FEATURES_FILE = "data_map_features.csv"

EASY = "easy-to-learn"
AMBIGUOUS = "ambiguous"
HARD = "hard-to-learn"
OTHER = "other"
REGIONS = (EASY, AMBIGUOUS, HARD, OTHER)
# region → its stem in column names
REGION_COLUMNS = {EASY: "easy_to_learn", AMBIGUOUS: "ambiguous", HARD: "hard_to_learn", OTHER: "other"}

# thresholds (module docstring: why these values)
EASY_CONFIDENCE = 0.75
HARD_CONFIDENCE = 0.25
AMBIGUOUS_VARIABILITY = 0.2
MIN_SEEN = 2            # validations an item needs for a variability (and a region)

MEAN_SEED = "mean"      # the `seed` of the seed-averaged rows of data_map.csv
ITEM_KEY = ["item", "idx"]
MAP_COLUMNS = ["lang", "setup", "variant", "seed", "item", "idx", "label", "added", "n_seen", "n_seeds",
               "confidence", "variability", "correctness", "region"]
REGION_SUMMARY_COLUMNS = (["lang", "setup", "variant", "n_seeds", "n_items", "n_mapped", "n_unmapped_mean"]
                          + [f"{REGION_COLUMNS[r]}_{s}" for r in REGIONS for s in ("mean", "std", "map")]
                          + ["kappa", "n_agreement_items", "same_region"])
FEATURE_COLUMNS = (["lang", "setup", "variant", "feature", "n_with", "n_without"]
                   + [f"{REGION_COLUMNS[r]}_{s}" for r in REGIONS for s in ("with", "without")]
                   + ["ambiguous_difference", "p_ambiguous", "p_ambiguous_holm"])


def item_metrics(dynamics: Dynamics) -> pd.DataFrame:
    """One row per training item, in the run's training order: `item` (its position among the
    training items), `idx`, `label`, `premise`, `hypothesis`, `n_seen`, `confidence`, `variability`,
    `correctness` (module docstring)."""
    columns = dynamics.columns("train")
    items = dynamics.items.iloc[columns]
    p_gold = dynamics.p_gold[:, columns].astype(np.float64)
    seen = ~np.isnan(p_gold)
    n_seen = seen.sum(axis=0)
    labels = items["label"].to_numpy()
    correct = (dynamics.pred[:, columns] == labels[None, :]) & seen
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)   # an item no validation saw: NaN, as meant
        confidence = np.nanmean(p_gold, axis=0) if len(p_gold) else np.full(len(columns), np.nan)
        variability = np.nanstd(p_gold, axis=0, ddof=0) if len(p_gold) else np.full(len(columns), np.nan)
        correctness = correct.sum(axis=0) / n_seen
    return pd.DataFrame({
        "item": np.arange(len(columns)), "idx": items["idx"].astype(str).to_numpy(), "label": labels.astype(int),
        "premise": items["premise"].to_numpy(), "hypothesis": items["hypothesis"].to_numpy(),
        "n_seen": n_seen.astype(int), "confidence": confidence,
        "variability": np.where(n_seen >= MIN_SEEN, variability, np.nan),
        "correctness": np.where(n_seen > 0, correctness, np.nan)})


def assign_regions(confidence: Sequence[float] | np.ndarray, variability: Sequence[float] | np.ndarray) -> np.ndarray:
    """Each item's region (`REGIONS`), None where the confidence or the variability is undefined.
    Ambiguous first: a variable item is ambiguous whatever its confidence."""
    confidence = np.asarray(confidence, dtype=float)
    variability = np.asarray(variability, dtype=float)
    regions = np.select(
        [variability >= AMBIGUOUS_VARIABILITY, confidence >= EASY_CONFIDENCE, confidence <= HARD_CONFIDENCE],
        [AMBIGUOUS, EASY, HARD], default=OTHER).astype(object)
    regions[np.isnan(confidence) | np.isnan(variability)] = None
    return regions


def added_pairs(run: RunDynamics) -> int:
    """Pairs the run added after its own training file (MNLI, a mixed-in set): metrics.json's
    `n_added`, else what the setup's name says, else 0 (all of it the run's own)."""
    try:
        n_added = RunDir(Path(run.source)).read_record().n_added
    except UserError:
        n_added = None
    value = float(n_added) if n_added is not None else n_added_from_setup(run.setup)
    return 0 if np.isnan(value) else int(value)


@dataclass(frozen=True)
class DataMaps:
    """Every run's map (`runs`, one row per (run, training item), `seed` an int) and each group's
    seed-averaged map (`items`, `seed` = `mean`), both with the items' texts."""

    runs: pd.DataFrame
    items: pd.DataFrame
    seeds: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """data_map.csv: the runs' rows, then the seed-averaged rows, per group."""
        both = pd.concat([self.runs.assign(seed=self.runs["seed"].astype(str)), self.items], ignore_index=True)
        both["_mean"] = both["seed"] == MEAN_SEED
        return both.sort_values([*GROUP_KEY, "_mean"], kind="stable")[MAP_COLUMNS].reset_index(drop=True)


def data_maps(runs: Iterable[RunDynamics], n_added: Callable[[RunDynamics], int] = added_pairs) -> DataMaps:
    """The map of every run, and per (lang, setup, variant) the map averaged over its seeds (items
    matched by position and idx, which the same training data gives every seed)."""
    frames = []
    for run in runs:
        metrics = item_metrics(run.dynamics)
        own = len(metrics) - n_added(run)
        frames.append(metrics.assign(lang=run.lang, setup=run.setup, variant=run.variant, seed=run.seed,
                                     added=metrics["item"] >= own, n_seeds=1))
    if not frames:
        empty = pd.DataFrame(columns=[*MAP_COLUMNS, "premise", "hypothesis"])
        return DataMaps(empty, empty)
    per_run = pd.concat(frames, ignore_index=True).sort_values([*GROUP_KEY, "seed", "item"], kind="stable")
    per_run["region"] = assign_regions(per_run["confidence"], per_run["variability"])
    per_run = per_run.reset_index(drop=True)
    keys = [*GROUP_KEY, *ITEM_KEY]
    grouped = per_run.groupby(keys, sort=True, dropna=False)
    mean = grouped.agg(label=("label", "first"), added=("added", "first"), premise=("premise", "first"),
                       hypothesis=("hypothesis", "first"), n_seen=("n_seen", "sum"),
                       n_seeds=("variability", "count"), confidence=("confidence", "mean"),
                       variability=("variability", "mean"), correctness=("correctness", "mean")).reset_index()
    mean["region"] = assign_regions(mean["confidence"], mean["variability"])
    mean = mean.assign(seed=MEAN_SEED).sort_values([*GROUP_KEY, "item"], kind="stable").reset_index(drop=True)
    seeds = {key: sorted(part["seed"].unique().tolist())
             for key, part in per_run.groupby(GROUP_KEY, sort=True)}
    return DataMaps(per_run, mean, seeds)


@dataclass(frozen=True)
class Agreement:
    kappa: float
    n_items: int
    same_region: float


def seed_agreement(runs: pd.DataFrame) -> Agreement:
    """Fleiss' κ of the regions one group's seeds give its items (the seeds the raters), and the share
    of items with the same region in every seed; over the items with a region in every seed. NaN
    below two seeds or without such items (κ also when all of them share one region: no chance
    agreement to exceed)."""
    codes = runs.assign(code=runs["region"].map({region: i for i, region in enumerate(REGIONS)}))
    matrix = codes.pivot_table(index=ITEM_KEY, columns="seed", values="code", aggfunc="first").dropna()
    if matrix.shape[1] < 2 or matrix.empty:
        return Agreement(float("nan"), int(len(matrix)), float("nan"))
    ratings = matrix.to_numpy(dtype=int)
    counts, _ = aggregate_raters(ratings, n_cat=len(REGIONS))
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        kappa = float(fleiss_kappa(counts, method="fleiss"))
    same = float((ratings == ratings[:, :1]).all(axis=1).mean())
    return Agreement(kappa, int(len(matrix)), same)


def region_shares(regions: pd.Series) -> dict[str, float]:
    """Share of each region among the items with one (NaN: none has)."""
    mapped = regions.dropna()
    return {region: float((mapped == region).mean()) if len(mapped) else float("nan") for region in REGIONS}


def region_summary(maps: DataMaps) -> pd.DataFrame:
    """data_map_regions.csv: per (lang, setup, variant) the region shares of each seed's map (mean and
    σ over seeds, ddof = 1) and of the seed-averaged map, and the seeds' agreement on the regions."""
    rows = []
    items = maps.items.groupby(GROUP_KEY, sort=True)
    for key, runs in maps.runs.groupby(GROUP_KEY, sort=True):
        mean_map = items.get_group(key)
        by_seed = pd.DataFrame([region_shares(part["region"]) for _, part in runs.groupby("seed", sort=True)])
        unmapped = runs.groupby("seed")["region"].apply(lambda r: r.isna().sum())
        on_map = region_shares(mean_map["region"])
        agreement = seed_agreement(runs)
        row = dict(zip(GROUP_KEY, key), n_seeds=len(by_seed), n_items=len(mean_map),
                   n_mapped=int(mean_map["region"].notna().sum()), n_unmapped_mean=float(unmapped.mean()))
        for region in REGIONS:
            stem = REGION_COLUMNS[region]
            row[f"{stem}_mean"] = float(by_seed[region].mean())
            row[f"{stem}_std"] = seed_std(by_seed[region].dropna())
            row[f"{stem}_map"] = on_map[region]
        row.update(kappa=agreement.kappa, n_agreement_items=agreement.n_items, same_region=agreement.same_region)
        rows.append(row)
    return pd.DataFrame(rows, columns=REGION_SUMMARY_COLUMNS)


@dataclass(frozen=True)
class FeatureShares:
    table: pd.DataFrame
    notes: list[str]   # languages the annotator could not annotate, and why
    # per group the design of its Fisher tests (the tested features' items, the item clusters, the
    # ambiguous share), which the calibration simulates (`statistics.fisher_calibration`)
    designs: dict[tuple[str, str, str], FeatureDesign] = field(default_factory=dict)


def feature_shares(maps: DataMaps, annotate: Annotate | None) -> FeatureShares:
    """data_map_features.csv: on each group's seed-averaged map (items with a region, the run's own
    training pairs), per feature the annotator can detect in the group's language: the items with and
    without it, each region's share among them, and Fisher's exact test (two-sided) of equal ambiguous
    shares, Holm over the group's tested features. A language the annotator fails on is skipped, with
    a note."""
    mapped = maps.items[maps.items["region"].notna() & ~maps.items["added"].astype(bool)]
    pairs = {str(lang): list(dict.fromkeys(zip(part["premise"].astype(str), part["hypothesis"].astype(str))))
             for lang, part in mapped.groupby("lang", sort=True)}
    annotated, failed = by_language(pairs, annotate)
    notes = [f"{lang}: the annotator is unavailable ({reason})" for lang, reason in failed.items()]
    for note in notes:
        log.warning("data maps: no feature shares for %s", note)
    found = {lang: ({pair: item.features for pair, item in zip(pairs[lang], items)},
                    items[0].supported if items else frozenset())
             for lang, items in annotated.items()}
    rows, designs = [], {}
    for key, part in mapped.groupby(GROUP_KEY, sort=True):
        if key[0] not in found:
            continue
        by_pair, supported = found[key[0]]
        features = [by_pair[pair] for pair in zip(part["premise"].astype(str), part["hypothesis"].astype(str))]
        group_rows = _feature_rows(key, part["region"].to_numpy(), features, supported)
        rows += group_rows
        tested = [row["feature"] for row in group_rows if not np.isnan(row["p_ambiguous"])]
        if tested:
            designs[key] = FeatureDesign(np.array([[name in item for item in features] for name in tested], bool),
                                         sentence_clusters(part["premise"].astype(str), part["hypothesis"].astype(str)),
                                         float((part["region"] == AMBIGUOUS).mean()))
    table = pd.DataFrame(rows, columns=FEATURE_COLUMNS)
    if not table.empty:
        table["p_ambiguous_holm"] = table.groupby(GROUP_KEY, sort=False)["p_ambiguous"] \
            .transform(lambda p: pd.Series(adjusted_p(p.to_numpy(), "holm"), index=p.index))
    return FeatureShares(table, notes, designs)


def _feature_rows(key: tuple, regions: np.ndarray, features: list[frozenset[str]],
                  supported: frozenset[str]) -> list[dict]:
    ambiguous = regions == AMBIGUOUS
    rows = []
    order = [name for name in FINE_CATEGORIES if name in supported] + sorted(set(supported) - set(FINE_CATEGORIES))
    for feature in order:
        has = np.array([feature in item for item in features], dtype=bool)
        row = dict(zip(GROUP_KEY, key), feature=feature, n_with=int(has.sum()), n_without=int((~has).sum()))
        for region in REGIONS:
            for side, chosen in (("with", has), ("without", ~has)):
                row[f"{REGION_COLUMNS[region]}_{side}"] = \
                    float((regions[chosen] == region).mean()) if chosen.any() else float("nan")
        row["ambiguous_difference"] = row["ambiguous_with"] - row["ambiguous_without"]
        row["p_ambiguous"] = float("nan")
        if has.any() and (~has).any():
            counts = [[int((ambiguous & has).sum()), int((~ambiguous & has).sum())],
                      [int((ambiguous & ~has).sum()), int((~ambiguous & ~has).sum())]]
            row["p_ambiguous"] = float(fisher_exact(counts, alternative="two-sided").pvalue)
        row["p_ambiguous_holm"] = float("nan")
        rows.append(row)
    return rows


def over_represented(features: pd.DataFrame, key: Mapping[str, str] | tuple, top: int) -> pd.DataFrame:
    """The `top` features of one group whose items are more often ambiguous than the others' (largest
    difference first)."""
    part = features[(features[GROUP_KEY] == pd.Series(tuple(key), index=GROUP_KEY)).all(axis=1)]
    part = part[part["ambiguous_difference"] > 0]
    return part.sort_values(["ambiguous_difference", "feature"], ascending=[False, True]).head(top)
