"""Where in the network fine-tuned seeds diverge: linear CKA between the encoders of one probing run.

The inputs are the layer features the probes already read (the scored split's pair
representations, from the feature cache: no forward pass of its own), restricted to the same
`cka_items` rows for every encoder. Per fine-tuned model (`fine-tuned:<setup>[/<variant>]`), CKA
per layer between every pair of its seeds and between each seed and the pretrained encoder
(`probing.cka.seed_cka_pairs`), summarised as mean ± σ over pairs; and one layer × layer matrix
for one pair: the model's first two seeds, or its only seed against the pretrained encoder.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from probing.cka import PRETRAINED, layer_cka_matrix, seed_cka_pairs, summarise_cka

CKA_SUMMARY_FILE, CKA_PAIR_FILE, CKA_LAYER_FILE = "probing_cka.csv", "probing_cka_pairs.csv", "probing_cka_layers.csv"
CKA_PAIR_COLUMNS = ["model", "layer", "seed_a", "seed_b", "comparison", "cka"]
CKA_SUMMARY_COLUMNS = ["model", "layer", "comparison", "cka_mean", "cka_sd", "n_pairs"]
CKA_LAYER_COLUMNS = ["model", "seed_a", "seed_b", "layer_a", "layer_b", "cka"]


@dataclass(frozen=True)
class Similarity:
    """probing_cka_pairs.csv, probing_cka.csv and probing_cka_layers.csv (one pair's layer matrix)."""

    pairs: pd.DataFrame
    summary: pd.DataFrame
    layers: pd.DataFrame
    n_items: int


def cka_rows(n_items: int, limit: int | None, seed: int) -> np.ndarray:
    """The rows every encoder's CKA reads: all `n_items`, or `limit` of them drawn with `seed`
    (sorted), since each Gram matrix costs limit² · dims operations and limit² · 8 bytes."""
    if limit is None or n_items <= limit:
        return np.arange(n_items)
    return np.sort(np.random.default_rng(seed).choice(n_items, size=limit, replace=False))


def seed_name(seed: int) -> str:
    return f"seed{seed}"


def similarity(tuned: Mapping[str, Mapping[int, np.ndarray]], pretrained: np.ndarray) -> Similarity | None:
    """CKA tables of every fine-tuned model: `tuned` maps a model to {seed: (layers, n, d) features},
    `pretrained` holds the pretrained encoder's on the same rows. None without fine-tuned models."""
    if not tuned:
        return None
    pairs = []
    for model, seeds in tuned.items():
        table = seed_cka_pairs({seed_name(seed): features for seed, features in seeds.items()}, pretrained)
        pairs.append(table.assign(model=model))
    pairs_table = pd.concat(pairs, ignore_index=True)[CKA_PAIR_COLUMNS]
    summary = pd.concat([summarise_cka(part).assign(model=model) for model, part in pairs_table.groupby(
        "model", sort=False)], ignore_index=True)[CKA_SUMMARY_COLUMNS]
    model, seeds = next(iter(tuned.items()))
    first = sorted(seeds)[:2]
    name_a = seed_name(first[0])
    name_b, other = (seed_name(first[1]), seeds[first[1]]) if len(first) > 1 else (PRETRAINED, pretrained)
    matrix = layer_cka_matrix(seeds[first[0]], other)
    layer_a, layer_b = np.indices(matrix.shape)
    layers = pd.DataFrame({"model": model, "seed_a": name_a, "seed_b": name_b, "layer_a": layer_a.ravel(),
                           "layer_b": layer_b.ravel(), "cka": matrix.ravel()})[CKA_LAYER_COLUMNS]
    return Similarity(pairs_table, summary, layers, pretrained.shape[1])
