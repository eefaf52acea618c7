"""The multi-bootstrap over seeds and items (docs/design.md, "Metrics"), vectorised.

One bootstrap sample draws seeds with replacement and items with replacement, recomputes
each group's score per drawn seed on the drawn items of that group, and averages over the
drawn seeds. Drawing an item k times weights it by k, so the confusion counts of every
(sample, seed, group) are one matrix product (samples × items) @ (items × seeds·groups·4):
no Python loop over samples, seeds or groups. Undefined MCC is 0.0, as in the metrics.

The score is any function of the confusion counts (tp, fp, fn, tn), elementwise over
arrays: MCC by default, `accuracy_from_counts`, or a caller's own (F1, κ, ...), so the
report's category MCCs and probing's probe accuracies get intervals from the same code.
One-sided p-values are (k + 1) / (B + 1) for k of B replicates at or below 0, never 0 for a
finite B.

Items that are not independent (sharing a sentence: `stability.statistics.clusters`) carry
cluster ids; a sample then draws clusters, not items, and weights each item by how often its
cluster was drawn (`item_draw_counts`). Without cluster ids every item is its own cluster and the
draws are the item bootstrap's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from stability.core.metrics import mcc_from_counts
from stability.statistics.clusters import cluster_draw_counts, relabelled

# A score from confusion counts (tp, fp, fn, tn), elementwise over arrays.
Score = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class ItemMatrix:
    """The predictions of one group of runs (e.g. the seeds of one condition) as arrays: items in
    `idx` order, seeds as rows."""

    idx: np.ndarray          # (items,) sorted item ids
    labels: np.ndarray       # (items,) gold 0/1
    preds: np.ndarray        # (seeds, items) predicted 0/1
    membership: np.ndarray   # (items, groups) bool: which score groups (categories) an item is in
    clusters: np.ndarray | None = None   # (items,) cluster ids; None: every item its own cluster

    def select(self, idx: np.ndarray) -> ItemMatrix:
        """The same runs restricted to `idx` (a sorted subset), so two groups of runs share items."""
        at = np.searchsorted(self.idx, idx)
        clusters = None if self.clusters is None else relabelled(self.clusters[at])
        return ItemMatrix(idx, self.labels[at], self.preds[:, at], self.membership[at], clusters)

    def unclustered(self) -> ItemMatrix:
        """The same runs with every item its own cluster (the naive item bootstrap)."""
        return ItemMatrix(self.idx, self.labels, self.preds, self.membership)


def draw_counts(rng: np.random.Generator, n_boot: int, n: int) -> np.ndarray:
    """(n_boot, n): how often each of n units is drawn when resampling n with replacement."""
    draws = rng.integers(0, n, size=(n_boot, n)) + n * np.arange(n_boot)[:, None]
    return np.bincount(draws.ravel(), minlength=n_boot * n).reshape(n_boot, n)


def item_draw_counts(rng: np.random.Generator, n_boot: int, n_items: int,
                     clusters: np.ndarray | None = None) -> np.ndarray:
    """(n_boot, n_items): each item's weight in each sample, its cluster's draw count (None: its own)."""
    if clusters is None:
        return draw_counts(rng, n_boot, n_items)
    return cluster_draw_counts(rng, n_boot, clusters)


def confusion_counts(item_counts: np.ndarray, runs: ItemMatrix) -> np.ndarray:
    """(samples, seeds, categories, 4) weighted tp, fp, fn, tn for item weights (samples, items)."""
    gold = runs.labels.astype(bool)
    pred = runs.preds.astype(bool)
    outcomes = np.stack([pred & gold, pred & ~gold, ~pred & gold, ~pred & ~gold], axis=-1)
    design = np.einsum("nc,snt->nsct", runs.membership.astype(float), outcomes.astype(float))
    counts = item_counts.astype(float) @ design.reshape(len(gold), -1)
    return counts.reshape(len(item_counts), *design.shape[1:])


def accuracy_from_counts(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """Elementwise accuracy from confusion counts; NaN where there are no items."""
    total = np.asarray(tp + fp + fn + tn, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (tp + tn) / total, np.nan)


def resampled_scores(item_counts: np.ndarray, seed_counts: np.ndarray, runs: ItemMatrix,
                     score: Score = mcc_from_counts) -> np.ndarray:
    """(samples, categories): per sample, the category scores averaged over the drawn seeds."""
    scores = score(*np.moveaxis(confusion_counts(item_counts, runs), -1, 0))
    weights = seed_counts / seed_counts.sum(axis=1, keepdims=True)
    return np.einsum("bs,bsc->bc", weights, scores)


def point_estimate(runs: ItemMatrix, score: Score = mcc_from_counts) -> np.ndarray:
    """(categories,): mean over seeds of the score on all items (the identity resample)."""
    return resampled_scores(np.ones((1, runs.preds.shape[1])), np.ones((1, len(runs.preds))), runs, score)[0]


def bootstrap_samples(rng: np.random.Generator, n_boot: int, runs: ItemMatrix,
                      score: Score = mcc_from_counts) -> np.ndarray:
    """(n_boot, categories) multi-bootstrap replicates of `point_estimate`."""
    return resampled_scores(item_draw_counts(rng, n_boot, len(runs.idx), runs.clusters),
                            draw_counts(rng, n_boot, len(runs.preds)), runs, score)


def p_at_or_below_zero(replicates: np.ndarray) -> np.ndarray:
    """One-sided bootstrap p-value per column, (k + 1) / (B + 1): never 0 for finite B."""
    return ((replicates <= 0).sum(axis=0) + 1) / (len(replicates) + 1)


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column of the replicates."""
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(samples, [tail, 1.0 - tail], axis=0)
    return low, high
