"""Pearson correlation between rows, averaged over pairs: RS corr. (docs/design.md, "Metrics").

The report applies it to seeds' category-MCC vectors (RS corr.) and to languages'
seed-averaged vectors; probing to seeds' layer profiles. A pair where a row is constant has
no correlation: it is skipped and counted, never scored 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PairwiseCorr:
    """Mean Pearson r over unordered pairs, with how many pairs were used and skipped."""

    mean: float
    pairs: int
    skipped: int


def pearson_matrix(vectors: np.ndarray) -> np.ndarray:
    """Pearson r between every two rows; NaN where either row is constant (r undefined)."""
    if vectors.shape[1] == 0:
        return np.full((len(vectors), len(vectors)), np.nan)
    constant = np.ptp(vectors, axis=1) == 0
    centred = vectors - vectors.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(centred, axis=1)
    norms[constant] = np.nan
    corr = (centred @ centred.T) / np.outer(norms, norms)
    return np.clip(corr, -1.0, 1.0)


def mean_pairwise(corr: np.ndarray) -> PairwiseCorr:
    """Average the upper triangle of a correlation matrix; NaN cells are skipped pairs."""
    upper = corr[np.triu_indices(len(corr), k=1)]
    used = upper[~np.isnan(upper)]
    return PairwiseCorr(float(used.mean()) if used.size else float("nan"), int(used.size),
                        int(upper.size - used.size))
