"""Representation similarity across seeds: linear CKA per layer (Kornblith et al. 2019).

Probe accuracies say *whether* a layer encodes a property; they do not say whether two
fine-tuned seeds encode it the same way. Linear centred kernel alignment compares two
representations of the same n inputs, X (n × d1) and Y (n × d2), with columns centred:

    CKA(X, Y) = ‖Y_cᵀ X_c‖_F² / (‖X_cᵀ X_c‖_F · ‖Y_cᵀ Y_c‖_F)

It is 1 for identical representations and invariant to orthogonal transformations and
isotropic scaling of either, so it ignores the arbitrary basis a seed lands in; it equals
the normalised HSIC of the linear kernels XXᵀ and YYᵀ. Per layer, between every pair of
fine-tuned seeds and between each seed and the pretrained encoder, it shows where in the
network seeds diverge.

Inputs are the probing cache's per-layer features, (layers, n, d) float16 arrays
(`probing.features`), centred and multiplied in float64. `linear_cka` works in feature space,
one block of rows at a time, so no float64 copy of a whole (n × d) layer is made (n ≈ 3000,
d = 1536 costs two d × d float64 matrices, ~3 s per call on one core). Comparing many
representations of the *same* inputs (every seed pair, every layer pair) uses the kernel form
instead, ‖Y_cᵀX_c‖_F² = ⟨X_c X_cᵀ, Y_c Y_cᵀ⟩_F: each representation's centred Gram matrix
(n × n) is computed once, n²·d operations, and each pair then costs an n × n inner product
rather than n·d² operations, which is what makes every pair of seeds at every layer affordable
(`seed_cka_pairs`, `layer_cka_matrix`; memory: one n × n float64 matrix per representation held).
A constant representation has no similarity: NaN.
"""
from __future__ import annotations

from itertools import combinations
from typing import Iterator, Mapping

import numpy as np
import pandas as pd

PRETRAINED = "pretrained"
PAIR_COLUMNS = ["layer", "seed_a", "seed_b", "comparison", "cka"]
SUMMARY_COLUMNS = ["layer", "comparison", "cka_mean", "cka_sd", "n_pairs"]
SEED_VS_SEED = "seed_vs_seed"
SEED_VS_PRETRAINED = "seed_vs_pretrained"
_BLOCK = 1024  # rows centred in float64 at once


def _centred_blocks(x: np.ndarray) -> Iterator[np.ndarray]:
    mean = x.mean(axis=0, dtype=np.float64)
    for start in range(0, len(x), _BLOCK):
        yield x[start:start + _BLOCK].astype(np.float64) - mean


def _cross_sq(x: np.ndarray, y: np.ndarray) -> float:
    """‖X_cᵀ Y_c‖_F², accumulated over row blocks in float64."""
    cross = np.zeros((x.shape[1], y.shape[1]))
    for block_x, block_y in zip(_centred_blocks(x), _centred_blocks(y)):
        cross += block_x.T @ block_y
    return float(np.sum(cross ** 2))


def _gram(x: np.ndarray) -> np.ndarray:
    """X_c X_cᵀ (n × n, float64) of an (n × d) representation, columns centred."""
    centred = x.astype(np.float64) - x.mean(axis=0, dtype=np.float64)
    return centred @ centred.T


def _cka(cross_sq: float, self_x: float, self_y: float) -> float:
    """CKA from ‖Y_cᵀX_c‖_F² and the two ‖X_cᵀX_c‖_F² (NaN when either is constant)."""
    denominator = np.sqrt(self_x * self_y)
    return cross_sq / denominator if denominator > 0 else np.nan


def _check_rows(*arrays: np.ndarray) -> None:
    if len({a.shape[-2] for a in arrays}) > 1:
        raise ValueError(f"CKA compares the same inputs: row counts differ {[a.shape for a in arrays]}")


def linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Linear CKA between (n × d1) and (n × d2) representations of the same n inputs."""
    _check_rows(x, y)
    return _cka(_cross_sq(x, y), _cross_sq(x, x), _cross_sq(y, y))


def layer_cka_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(layers_a, layers_b): CKA between every layer of `a` and every layer of `b`, both (layers, n, d).

    The Gram matrices of `b`'s layers are held; `a`'s are made one at a time.
    """
    _check_rows(a, b)
    grams_b = [_gram(layer) for layer in b]
    self_b = [np.vdot(gram, gram) for gram in grams_b]
    rows = []
    for layer in a:
        gram = _gram(layer)
        own = np.vdot(gram, gram)
        rows.append([_cka(np.vdot(gram, other), own, other_self) for other, other_self in zip(grams_b, self_b)])
    return np.array(rows)


def seed_cka_pairs(seeds: Mapping[str, np.ndarray], pretrained: np.ndarray | None = None) -> pd.DataFrame:
    """CKA per layer between every pair of seeds, and between each seed and the pretrained encoder.

    `seeds` maps a seed's name to its (layers, n, d) features, `pretrained` (optional)
    holds the encoder's before fine-tuning, on the same inputs. Per layer, the Gram matrix of
    every representation is made once and every pair read from those. Columns: `layer` (0 =
    embeddings); `seed_a`, `seed_b` (names; `seed_b` is "pretrained" for the encoder);
    `comparison` (seed_vs_seed or seed_vs_pretrained); `cka`.
    """
    named = dict(seeds) if pretrained is None else {**seeds, PRETRAINED: pretrained}
    _check_rows(*named.values())
    if len({features.shape[0] for features in named.values()}) > 1:
        raise ValueError("CKA per layer needs the same number of layers in every representation")
    pairs = [(a, b, SEED_VS_SEED) for a, b in combinations(seeds, 2)]
    if pretrained is not None:
        pairs += [(seed, PRETRAINED, SEED_VS_PRETRAINED) for seed in seeds]
    n_layers = next(iter(named.values())).shape[0] if named else 0
    rows = []
    for layer in range(n_layers):
        grams = {name: _gram(features[layer]) for name, features in named.items()}
        own = {name: np.vdot(gram, gram) for name, gram in grams.items()}
        rows += [(layer, a, b, kind, _cka(np.vdot(grams[a], grams[b]), own[a], own[b])) for a, b, kind in pairs]
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def summarise_cka(pairs: pd.DataFrame) -> pd.DataFrame:
    """Mean ± σ (ddof = 1) of CKA per (layer, comparison) over the pairs of `seed_cka_pairs`.

    Columns: `layer`; `comparison`; `cka_mean`; `cka_sd` (NaN for a single pair);
    `n_pairs`.
    """
    grouped = pairs.groupby(["layer", "comparison"], sort=True)["cka"]
    return grouped.agg(cka_mean="mean", cka_sd="std", n_pairs="count").reset_index()[SUMMARY_COLUMNS]
