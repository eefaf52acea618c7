"""Multi-bootstrap confidence intervals that resample seeds and items together (DESIGN.md section 4).

One bootstrap sample draws seeds with replacement and diagnostic items with replacement,
recomputes each category's MCC per drawn seed on the drawn items of that category, and
averages over the drawn seeds. Drawing an item k times weights it by k, so the confusion
counts of every (sample, seed, category) are one matrix product
(samples × items) @ (items × seeds·categories·4): no Python loop over samples, seeds or
categories. Undefined MCC is 0.0, as in DESIGN.md section 4.

The score is any function of the confusion counts (tp, fp, fn, tn), elementwise over
arrays: MCC by default, `accuracy_from_counts`, or a caller's own (F1, κ, ...), so probes
and other binary decisions get intervals from the same code. One-sided p-values are
(k + 1) / (B + 1) for k of B replicates at or below 0, never 0 for a finite B.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from stability.core.metrics import mcc_from_counts
from stability.core.taxonomy import FINE_CATEGORIES
from stability.report.collect import OVERALL
from stability.report.membership import fine_membership

# A score from confusion counts (tp, fp, fn, tn), elementwise over arrays.
Score = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
# The 33 fine categories, then all items (the overall MCC).
CI_CATEGORIES: tuple[str, ...] = FINE_CATEGORIES + (OVERALL,)
CI_COLUMNS = ["lang", "setup", "category", "estimate", "ci_low", "ci_high", "n_seeds", "n_items"]
DELTA_CI_COLUMNS = ["lang", "category", "delta_mcc", "ci_low", "ci_high", "p_delta_le_0",
                    "n_items"]


@dataclass(frozen=True)
class ItemMatrix:
    """The predictions of one (lang, setup) as arrays: items in `idx` order, seeds as rows."""

    idx: np.ndarray          # (items,) sorted item ids
    labels: np.ndarray       # (items,) gold 0/1
    preds: np.ndarray        # (seeds, items) predicted 0/1
    membership: np.ndarray   # (items, len(CI_CATEGORIES)) bool

    def select(self, idx: np.ndarray) -> ItemMatrix:
        """The same runs restricted to `idx` (a sorted subset), so two setups share items."""
        at = np.searchsorted(self.idx, idx)
        return ItemMatrix(idx, self.labels[at], self.preds[:, at], self.membership[at])


def item_matrix(group: pd.DataFrame) -> ItemMatrix:
    """Arrays of one (lang, setup), keeping the items every seed predicted."""
    preds = group.pivot(index="idx", columns="seed", values="pred").dropna()
    items = group.drop_duplicates("idx").set_index("idx").loc[preds.index]
    membership = np.column_stack([fine_membership(items["categories"]), np.ones(len(items), bool)])
    return ItemMatrix(preds.index.to_numpy(), items["label"].to_numpy(np.int64),
                      preds.to_numpy(np.int64).T, membership)


def draw_counts(rng: np.random.Generator, n_boot: int, n: int) -> np.ndarray:
    """(n_boot, n): how often each of n units is drawn when resampling n with replacement."""
    draws = rng.integers(0, n, size=(n_boot, n)) + n * np.arange(n_boot)[:, None]
    return np.bincount(draws.ravel(), minlength=n_boot * n).reshape(n_boot, n)


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
    return resampled_scores(draw_counts(rng, n_boot, runs.preds.shape[1]),
                            draw_counts(rng, n_boot, len(runs.preds)), runs, score)


def p_at_or_below_zero(replicates: np.ndarray) -> np.ndarray:
    """One-sided bootstrap p-value per column, (k + 1) / (B + 1): never 0 for finite B."""
    return ((replicates <= 0).sum(axis=0) + 1) / (len(replicates) + 1)


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column of the replicates."""
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(samples, [tail, 1.0 - tail], axis=0)
    return low, high


def bootstrap_ci(predictions: pd.DataFrame, n_boot: int, confidence: float,
                 random_state: int, score: Score = mcc_from_counts) -> pd.DataFrame:
    """Per (lang, setup, category): point estimate and multi-bootstrap interval."""
    rng = np.random.default_rng(random_state)
    frames = []
    for (lang, setup), group in predictions.groupby(["lang", "setup"], sort=True):
        runs = item_matrix(group)
        low, high = percentile_interval(bootstrap_samples(rng, n_boot, runs, score), confidence)
        frames.append(pd.DataFrame({
            "lang": lang, "setup": setup, "category": CI_CATEGORIES, "estimate": point_estimate(runs, score),
            "ci_low": low, "ci_high": high, "n_seeds": len(runs.preds),
            "n_items": runs.membership.sum(axis=0).astype(int),
        }))
    return pd.concat(frames, ignore_index=True)[CI_COLUMNS]


def bootstrap_deltas(predictions: pd.DataFrame, setup_a: str, setup_b: str, n_boot: int,
                     confidence: float, random_state: int, score: Score = mcc_from_counts) -> pd.DataFrame:
    """Per (lang, category): ΔMCC = B − A with an interval and the one-sided p-value P(Δ ≤ 0).

    Both setups are scored on the same drawn items (paired over items); their seeds are
    drawn independently, since runs of different setups are independent.
    """
    rng = np.random.default_rng(random_state)
    frames = []
    for lang, group in predictions.groupby("lang", sort=True):
        by_setup = dict(tuple(group.groupby("setup")))
        if setup_a not in by_setup or setup_b not in by_setup:
            continue
        a, b = item_matrix(by_setup[setup_a]), item_matrix(by_setup[setup_b])
        shared = np.intersect1d(a.idx, b.idx)
        if shared.size == 0:
            continue
        a, b = a.select(shared), b.select(shared)
        items = draw_counts(rng, n_boot, len(shared))
        deltas = (resampled_scores(items, draw_counts(rng, n_boot, len(b.preds)), b, score)
                  - resampled_scores(items, draw_counts(rng, n_boot, len(a.preds)), a, score))
        low, high = percentile_interval(deltas, confidence)
        frames.append(pd.DataFrame({
            "lang": lang, "category": CI_CATEGORIES, "delta_mcc": point_estimate(b, score) - point_estimate(a, score),
            "ci_low": low, "ci_high": high, "p_delta_le_0": p_at_or_below_zero(deltas),
            "n_items": a.membership.sum(axis=0).astype(int),
        }))
    return pd.concat(frames, ignore_index=True)[DELTA_CI_COLUMNS] if frames \
        else pd.DataFrame(columns=DELTA_CI_COLUMNS)
