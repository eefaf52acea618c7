"""Uncertainty of probe accuracies: item bootstrap per probe, and stability over fine-tuned seeds.

Both reuse the report's statistics. A probe's interval resamples diagnostic items
(`stability.statistics.bootstrap` with one "seed" row and the accuracy score). Over the
fine-tuned seeds of one setup, per task and layer: mean ± σ (ddof = 1), a multi-bootstrap
interval of the seed mean (seeds and items resampled together), and the pairwise Pearson
correlation of the seeds' layer profiles (the report's RS corr. applied to probe curves:
`stability.statistics.correlation`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from stability.statistics.bootstrap import (
    ItemMatrix,
    accuracy_from_counts,
    bootstrap_samples,
    percentile_interval,
)
from stability.statistics.correlation import mean_pairwise, pearson_matrix

CI_COLUMNS = ["model", "seed", "task", "layer", "test_acc", "ci_low", "ci_high", "n_test"]
SEED_COLUMNS = ["model", "task", "layer", "n_seeds", "test_acc_mean", "test_acc_std", "ci_low", "ci_high",
                "selectivity_mean", "selectivity_std", "majority_acc", "profile_corr", "profile_pairs",
                "profile_skipped"]


def prediction_key(model: str, seed: object, task: str, layer: object) -> tuple:
    """How per-probe test predictions are keyed: a row's (model, seed, task, layer), the
    missing seed of the pretrained encoder as None."""
    return model, None if pd.isna(seed) else int(seed), task, int(layer)


def _items(preds: np.ndarray, labels: np.ndarray) -> ItemMatrix:
    """Predictions (runs, items) of one task as the bootstrap's item matrix (all items, one group)."""
    n = labels.shape[0]
    return ItemMatrix(np.arange(n), labels.astype(np.int64), preds.astype(np.int64), np.ones((n, 1), dtype=bool))


def accuracy_interval(preds: np.ndarray, labels: np.ndarray, rng: np.random.Generator, n_boot: int,
                      confidence: float) -> tuple[float, float]:
    """(low, high): the bootstrap interval of the mean accuracy over the rows of preds (runs,
    items), resampling runs and items together (items only for one row). The accuracy itself
    is in probing.csv already."""
    if n_boot == 0:
        return float("nan"), float("nan")
    samples = bootstrap_samples(rng, n_boot, _items(preds, labels), accuracy_from_counts)
    low, high = percentile_interval(samples, confidence)
    return float(low[0]), float(high[0])


def probe_intervals(rows: pd.DataFrame, predictions: dict[tuple, np.ndarray], labels: dict[str, np.ndarray],
                    n_boot: int, confidence: float, seed: int) -> pd.DataFrame:
    """probing_ci.csv: one interval per probe (row of probing.csv), over diagnostic items.

    `predictions[(model, seed, task, layer)]` are the probe's test predictions and
    `labels[task]` the test labels."""
    rng = np.random.default_rng(seed)
    out = []
    for row in rows.itertuples(index=False):
        preds = predictions[prediction_key(row.model, row.seed, row.task, row.layer)]
        low, high = accuracy_interval(preds[None], labels[row.task], rng, n_boot, confidence)
        out.append((row.model, row.seed, row.task, row.layer, row.test_acc, low, high, len(preds)))
    return pd.DataFrame(out, columns=CI_COLUMNS)


def seed_stability(rows: pd.DataFrame, predictions: dict[tuple, np.ndarray], labels: dict[str, np.ndarray],
                   n_boot: int, confidence: float, seed: int) -> pd.DataFrame:
    """probing_seeds.csv: per fine-tuned setup, task and layer, the statistics over seeds."""
    rng = np.random.default_rng(seed)
    tuned = rows[rows["seed"].notna()]
    out = []
    for (model, task), group in tuned.groupby(["model", "task"], sort=True):
        profiles = group.pivot(index="seed", columns="layer", values="test_acc")
        corr = mean_pairwise(pearson_matrix(profiles.to_numpy()))
        for layer, cell in group.groupby("layer", sort=True):
            preds = np.stack([predictions[prediction_key(model, s, task, layer)] for s in cell["seed"]])
            low, high = accuracy_interval(preds, labels[task], rng, n_boot, confidence)
            out.append((model, task, layer, len(cell), cell["test_acc"].mean(), cell["test_acc"].std(ddof=1),
                        low, high, cell["selectivity"].mean(), cell["selectivity"].std(ddof=1),
                        cell["majority_acc"].iloc[0], corr.mean, corr.pairs, corr.skipped))
    return pd.DataFrame(out, columns=SEED_COLUMNS)
