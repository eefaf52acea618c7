"""When each category is learned: the diagnostic MCC of every category at every validation of
training (`trainer.dynamics=true`), and the first validation at which it is reliably above 0.

Per (lang, setup, variant) the seeds' diagnostic predictions at validation v are scored exactly
as a finished run is (`core.metrics`: MCC from the confusion counts, undefined → 0.0) for all
items, the 4 coarse and the 33 fine categories, and summarised as mean ± σ over the seeds that
reached v (early stopping ends some runs sooner). The multi-bootstrap of the project
(`statistics.bootstrap`: seeds and items resampled together) gives the interval of that mean; a
category is *reliably above 0* at v when its lower bound is. The same item draws also give each
seed's own item-bootstrap interval, so the onset — the first reliable validation — is known both
for the pooled seeds and per seed, and its spread over seeds says how much the moment a category
is learned depends on the seed.

Two tables: `category_learning.csv` (one row per group, category and validation) and
`category_learning_onset.csv` (one row per group and category).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from stability.core.metrics import mcc_from_counts
from stability.core.taxonomy import COARSE_CATEGORIES, FINE_CATEGORIES
from stability.report.clusters import ItemClusters
from stability.report.collect import OVERALL
from stability.report.dynamics import RunDynamics
from stability.statistics.bootstrap import (ItemMatrix, confusion_counts, draw_counts, item_draw_counts,
                                            percentile_interval)
from stability.statistics.membership import coarse_membership, fine_membership
from stability.statistics.seeds import GROUP_KEY

FILE = "category_learning.csv"
ONSET_FILE = "category_learning_onset.csv"
# the scored cells, in table order: all items, the coarse categories, the fine ones
LEVELS: tuple[str, ...] = ("all",) + ("coarse",) * len(COARSE_CATEGORIES) + ("fine",) * len(FINE_CATEGORIES)
CATEGORIES: tuple[str, ...] = (OVERALL,) + COARSE_CATEGORIES + FINE_CATEGORIES
CURVE_COLUMNS = [*GROUP_KEY, "level", "category", "validation", "epoch", "n_seeds", "mean_mcc", "std_mcc",
                 "mcc_low", "mcc_high", "reliably_above_zero"]
ONSET_COLUMNS = [*GROUP_KEY, "level", "category", "n_seeds", "first_reliable_validation", "first_reliable_epoch",
                 "n_seeds_reached", "onset_mean", "onset_std", "onset_min", "onset_max", "onset_epoch_mean",
                 "onset_epoch_std", "onset_epoch_min", "onset_epoch_max", "final_mean_mcc", "final_std_mcc"]


@dataclass(frozen=True)
class GroupDynamics:
    """The diagnostic predictions of one (lang, setup, variant) over its validations, its seeds
    aligned on the diagnostic items they all have (`idx` order)."""

    lang: str
    setup: str
    variant: str
    seeds: list[int]
    idx: np.ndarray                   # (items,) sorted
    labels: np.ndarray                # (items,) gold 0/1
    membership: np.ndarray            # (items, CATEGORIES) bool
    preds: list[np.ndarray]           # per seed (its validations, items) predicted 0/1
    validations: list[pd.DataFrame]   # per seed its validations (epoch, step, ...), one row per validation
    recorded: list[np.ndarray]        # per seed and validation, whether its predictions were recorded
    clusters: np.ndarray | None = None   # (items,) what the bootstrap draws together (`report.clusters`)

    @property
    def n_validations(self) -> int:
        """The most validations any seed reached."""
        return max(len(pred) for pred in self.preds)

    def reached(self, validation: int) -> np.ndarray:
        """Positions of the seeds that reached `validation` (0-based) and recorded it (a seed whose
        file of it is missing is a gap there, `Dynamics.missing`)."""
        return np.flatnonzero([len(pred) > validation and recorded[validation]
                               for pred, recorded in zip(self.preds, self.recorded)])

    def runs(self, validation: int) -> ItemMatrix:
        """The seeds that reached `validation` (0-based) as the bootstrap's item matrix."""
        return ItemMatrix(self.idx, self.labels,
                          np.stack([self.preds[s][validation] for s in self.reached(validation)]).astype(np.int64),
                          self.membership, self.clusters)

    def logged(self, column: str) -> np.ndarray:
        """Per validation, `column` of the train log (epoch, step) as the longest run logged it; NaN where
        absent. Runs of one condition validate at the same epochs and steps, early stopping only ends some sooner."""
        longest = max(self.validations, key=len)
        values = longest[column] if column in longest.columns else pd.Series(dtype=float)
        return values.reindex(range(self.n_validations)).to_numpy(float)


def category_membership(categories: list) -> np.ndarray:
    """(items, CATEGORIES) bool from each item's list of fine categories: all items, coarse, fine
    (`statistics.membership`, so the columns match the report's bootstrap intervals)."""
    fine = fine_membership(pd.Series([";".join(item) for item in categories], dtype=object))
    return np.column_stack([np.ones(len(fine), bool), coarse_membership(fine), fine])


def group_dynamics(runs: list[RunDynamics], clusters: ItemClusters | None = None) -> list[GroupDynamics]:
    """The runs grouped by (lang, setup, variant) in sorted order, seeds sorted, each keeping the
    diagnostic items every seed of its group has, in `clusters`' clusters of its language."""
    by_group: dict[tuple[str, str, str], list[RunDynamics]] = {}
    for run in runs:
        if not len(run.dynamics.pred):
            continue   # started, no validation recorded yet
        by_group.setdefault((run.lang, run.setup, run.variant), []).append(run)
    groups = []
    for key in sorted(by_group):
        members = sorted(by_group[key], key=lambda run: run.seed)
        diagnostic = []
        for run in members:
            columns = run.dynamics.columns("diagnostic")
            items = run.dynamics.items.iloc[columns].assign(column=columns).set_index("idx")
            diagnostic.append(items[~items.index.duplicated()])
        shared = np.array(sorted(set.intersection(*(set(items.index) for items in diagnostic))), dtype=object)
        items = diagnostic[0].loc[shared]
        groups.append(GroupDynamics(
            *key, seeds=[run.seed for run in members], idx=shared,
            labels=items["label"].to_numpy(np.int64),
            membership=category_membership([[] if c is None else list(c) for c in items["categories"]]),
            preds=[run.dynamics.pred[:, found.loc[shared, "column"].to_numpy()] for run, found in zip(members, diagnostic)],
            validations=[run.validations for run in members], recorded=[run.dynamics.recorded for run in members],
            clusters=None if clusters is None else clusters.of(key[0], shared)))
    return groups


def seed_scores(runs: ItemMatrix) -> np.ndarray:
    """(seeds, CATEGORIES) MCC of each seed on all its items: what `score_diagnostic` gives its
    predictions (the identity resample of the bootstrap's counts)."""
    return mcc_from_counts(*np.moveaxis(confusion_counts(np.ones((1, len(runs.idx))), runs)[0], -1, 0))


def resampled(rng: np.random.Generator, n_boot: int, runs: ItemMatrix) -> tuple[np.ndarray, np.ndarray]:
    """The multi-bootstrap replicates of the seed mean, (n_boot, CATEGORIES), and on the same item
    draws each seed's own replicates, (n_boot, seeds, CATEGORIES).

    The pooled replicates are `bootstrap.bootstrap_samples(rng, n_boot, runs)` exactly (same draws,
    same order); they are computed here from the per-seed scores so one matrix product gives both.
    """
    item_counts = item_draw_counts(rng, n_boot, len(runs.idx), runs.clusters)
    seed_counts = draw_counts(rng, n_boot, len(runs.preds))
    per_seed = mcc_from_counts(*np.moveaxis(confusion_counts(item_counts, runs), -1, 0))
    weights = seed_counts / seed_counts.sum(axis=1, keepdims=True)
    return np.einsum("bs,bsc->bc", weights, per_seed), per_seed


@dataclass(frozen=True)
class _Scored:
    """One group's scores: per validation and seed the point MCC and the seed's own lower bound
    (NaN where the seed did not reach the validation), and the pooled bounds per validation."""

    scores: np.ndarray       # (validations, seeds, CATEGORIES)
    seed_low: np.ndarray     # (validations, seeds, CATEGORIES)
    low: np.ndarray          # (validations, CATEGORIES)
    high: np.ndarray         # (validations, CATEGORIES)


def _score_group(group: GroupDynamics, rng: np.random.Generator, n_boot: int, confidence: float) -> _Scored:
    shape = (group.n_validations, len(group.seeds), len(CATEGORIES))
    scores, seed_low = np.full(shape, np.nan), np.full(shape, np.nan)
    low, high = np.full(shape[::2], np.nan), np.full(shape[::2], np.nan)
    for v in range(group.n_validations):
        seeds = group.reached(v)
        if not len(seeds):
            continue   # a validation every seed lacks the file of: no score
        runs = group.runs(v)
        scores[v, seeds] = seed_scores(runs)
        if n_boot:
            pooled, per_seed = resampled(rng, n_boot, runs)
            low[v], high[v] = percentile_interval(pooled, confidence)
            seed_low[v, seeds] = percentile_interval(per_seed.reshape(n_boot, -1), confidence)[0] \
                .reshape(len(seeds), -1)
    return _Scored(scores, seed_low, low, high)


def _first_above_zero(low: np.ndarray) -> np.ndarray:
    """Along axis 0 (validations): the 1-based first position with low > 0, NaN where none."""
    above = low > 0
    return np.where(above.any(axis=0), above.argmax(axis=0) + 1.0, np.nan)


def _std(values: np.ndarray, axis: int) -> np.ndarray:
    """σ over seeds (ddof=1) ignoring NaN (seeds that stopped sooner, or never got there); NaN below
    two values."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # fewer than two values: NaN, as meant
        return np.nanstd(values, axis=axis, ddof=1)


def _nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    """Mean over `axis` ignoring NaN; NaN where every value is."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # no value: NaN, as meant
        return np.nanmean(values, axis=axis)


def _at(values: np.ndarray, position: np.ndarray) -> np.ndarray:
    """values[position - 1] for 1-based positions, NaN where the position is NaN or past the end."""
    valid = ~np.isnan(position) & (np.nan_to_num(position) <= len(values))
    out = np.full(position.shape, np.nan)
    out[valid] = values[position[valid].astype(int) - 1]
    return out


def learning_tables(runs: list[RunDynamics], n_boot: int, confidence: float, random_state: int,
                    clusters: ItemClusters | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`category_learning.csv` and `category_learning_onset.csv` of the runs' dynamics.

    One generator seeded with `random_state` draws every bootstrap, groups in sorted order and
    validations in order; `n_boot=0` leaves the intervals, and so the onsets, empty.
    """
    rng = np.random.default_rng(random_state)
    curves, onsets = [], []
    step = any("step" in run.validations.columns for run in runs)
    for group in group_dynamics(runs, clusters):
        scored = _score_group(group, rng, n_boot, confidence)
        epochs = group.logged("epoch")
        n_val = group.n_validations
        curve = pd.DataFrame({
            "lang": group.lang, "setup": group.setup, "variant": group.variant,
            "level": np.tile(LEVELS, n_val), "category": np.tile(CATEGORIES, n_val),
            "validation": np.repeat(np.arange(1, n_val + 1), len(CATEGORIES)),
            "epoch": np.repeat(epochs, len(CATEGORIES)),
            **({"step": np.repeat(group.logged("step"), len(CATEGORIES))} if step else {}),
            "n_seeds": np.repeat([len(group.reached(v)) for v in range(n_val)], len(CATEGORIES)),
            "mean_mcc": _nanmean(scored.scores, axis=1).ravel(), "std_mcc": _std(scored.scores, axis=1).ravel(),
            "mcc_low": scored.low.ravel(), "mcc_high": scored.high.ravel(),
            "reliably_above_zero": (scored.low > 0).ravel(),
        })
        curves.append(curve)
        onsets.append(_onset_rows(group, scored, epochs))
    columns = CURVE_COLUMNS[:6] + (["step"] if step else []) + CURVE_COLUMNS[6:]
    if not curves:
        return pd.DataFrame(columns=columns), pd.DataFrame(columns=ONSET_COLUMNS)
    curve_table = _integral(pd.concat(curves, ignore_index=True)[columns], ["epoch", "step"])
    onset_table = _integral(pd.concat(onsets, ignore_index=True)[ONSET_COLUMNS],
                            ["first_reliable_validation", "first_reliable_epoch", "onset_min", "onset_max",
                             "onset_epoch_min", "onset_epoch_max"])
    return curve_table, onset_table


def _integral(table: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Whole-number columns as integers (nullable: an empty cell where undefined), so the CSV reads `2`, not `2.0`."""
    for column in columns:
        values = table[column].astype(float) if column in table else None
        if values is not None and (values.dropna() % 1 == 0).all():
            table[column] = values.astype("Int64")
    return table


def _onset_rows(group: GroupDynamics, scored: _Scored, epochs: np.ndarray) -> pd.DataFrame:
    """Per category: the pooled onset, each seed's onset summarised over seeds, the final MCC."""
    per_seed = _first_above_zero(scored.seed_low)                              # (seeds, CATEGORIES)
    seed_epochs = np.stack([_at(run["epoch"].to_numpy(float) if "epoch" in run else np.full(len(pred), np.nan),
                                onset) for run, pred, onset in zip(group.validations, group.preds, per_seed)])
    last = np.array([len(pred) - 1 for pred in group.preds])
    final = scored.scores[last, np.arange(len(last))]                          # (seeds, CATEGORIES)
    first = _first_above_zero(scored.low)
    with np.errstate(all="ignore"):
        return pd.DataFrame({
            "lang": group.lang, "setup": group.setup, "variant": group.variant, "level": LEVELS,
            "category": CATEGORIES, "n_seeds": len(group.seeds),
            "first_reliable_validation": first,
            "first_reliable_epoch": _at(epochs, first),
            "n_seeds_reached": (~np.isnan(per_seed)).sum(axis=0),
            "onset_mean": _nanmean(per_seed, axis=0), "onset_std": _std(per_seed, axis=0),
            "onset_min": np.nanmin(np.where(np.isnan(per_seed), np.inf, per_seed), axis=0),
            "onset_max": np.nanmax(np.where(np.isnan(per_seed), -np.inf, per_seed), axis=0),
            "onset_epoch_mean": _nanmean(seed_epochs, axis=0), "onset_epoch_std": _std(seed_epochs, axis=0),
            "onset_epoch_min": np.nanmin(np.where(np.isnan(seed_epochs), np.inf, seed_epochs), axis=0),
            "onset_epoch_max": np.nanmax(np.where(np.isnan(seed_epochs), -np.inf, seed_epochs), axis=0),
            "final_mean_mcc": final.mean(axis=0), "final_std_mcc": _std(final, axis=0),
        }).replace([np.inf, -np.inf], np.nan)
