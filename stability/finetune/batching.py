"""Batches with dynamic padding, optionally grouped by length, in a seed-controlled order."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from stability.finetune.encoding import EncodedSplit

# Sorting inside windows of this many batches keeps batches random yet similar in length.
_GROUP_WINDOW_BATCHES = 50


def epoch_batches(lengths: np.ndarray, batch_size: int, seed_order: int, epoch: int,
                  group_by_length: bool) -> list[np.ndarray]:
    """Index batches for one training epoch; the same (seed_order, epoch) gives the same order."""
    rng = np.random.default_rng([seed_order, epoch])
    order = rng.permutation(len(lengths))
    if not group_by_length:
        return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    window = batch_size * _GROUP_WINDOW_BATCHES
    batches: list[np.ndarray] = []
    for start in range(0, len(order), window):
        chunk = order[start:start + window]
        chunk = chunk[np.argsort(-lengths[chunk], kind="stable")]
        batches.extend(chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def eval_batches(lengths: np.ndarray, batch_size: int, tokens_per_batch: int | None = None) -> list[np.ndarray]:
    """Evaluation batches sorted by length, longest first (callers restore the original order): of
    `batch_size` examples each, or, with `tokens_per_batch`, of as many as fit in that many tokens
    once padded to the batch's longest (at most `batch_size`, at least one). A budget keeps batches
    of short pairs large and those of long pairs small, where on a CPU a large padded batch is slower
    per example."""
    order = np.argsort(-lengths, kind="stable")
    if tokens_per_batch is None:
        return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        size = min(batch_size, max(1, tokens_per_batch // int(lengths[order[start]])))
        batches.append(order[start:start + size])
        start += size
    return batches


def collate(split: EncodedSplit, indices: np.ndarray, pad_id: int) -> dict[str, torch.Tensor]:
    """Pad a batch to its own longest sequence."""
    width = max(len(split.input_ids[i]) for i in indices)
    input_ids = np.full((len(indices), width), pad_id, dtype=np.int64)
    token_type_ids = np.zeros((len(indices), width), dtype=np.int64)
    attention_mask = np.zeros((len(indices), width), dtype=np.int64)
    for row, i in enumerate(indices):
        n = len(split.input_ids[i])
        input_ids[row, :n] = split.input_ids[i]
        token_type_ids[row, :n] = split.token_type_ids[i]
        attention_mask[row, :n] = 1
    return {
        "input_ids": torch.from_numpy(input_ids),
        "token_type_ids": torch.from_numpy(token_type_ids),
        "attention_mask": torch.from_numpy(attention_mask),
        "labels": torch.from_numpy(split.labels[indices]),
    }


def aligned_orders(orders: Sequence[list[np.ndarray]], lengths: np.ndarray,
                   rng: np.random.Generator) -> list[list[np.ndarray]]:
    """Fused members' epoch batches (each member's own, as `epoch_batches` drew them) in orders aligned by
    width: member k's step t is its batch of width rank π(t), with one random permutation π shared by the
    members. A member's order stays uniformly random (a uniform permutation of its batches sorted by
    width), so each member trains on its own batches in a random order as a seed does; the members' orders
    are coupled so that a step's batches are of similar width and little of the fused step is padding."""
    shared = rng.permutation(len(orders[0]))
    aligned = []
    for batches in orders:
        by_width = np.argsort([-int(lengths[batch].max()) for batch in batches], kind="stable")
        aligned.append([batches[by_width[rank]] for rank in shared])
    return aligned
