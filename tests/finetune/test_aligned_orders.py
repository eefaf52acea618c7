"""Fused members' batch orders aligned by width (`batching.aligned_orders`, `trainer.fuse_align_lengths`):
each member keeps its own batches, in an order that is still uniformly random, and a fused step pads
its members' batches less than with each member's own order."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.core.schemas.train import train_settings
from stability.finetune.batching import aligned_orders, epoch_batches

RNG = np.random.default_rng(0)
LENGTHS = RNG.integers(12, 120, size=400)     # token counts of 400 pairs, SICK-like spread
SEEDS_ORDER = (0, 1, 2, 3)


def _orders(group_by_length: bool, epoch: int = 1) -> list[list[np.ndarray]]:
    return [epoch_batches(LENGTHS, 4, seed, epoch, group_by_length) for seed in SEEDS_ORDER]


def _padding_share(orders: list[list[np.ndarray]]) -> float:
    """The share of a fused step's tokens that are padding: each member's batch padded to the step's widest."""
    real = padded = 0
    for step in zip(*orders):
        width = max(int(LENGTHS[batch].max()) for batch in step)
        real += sum(int(LENGTHS[batch].sum()) for batch in step)
        padded += sum(len(batch) for batch in step) * width
    return 1 - real / padded


# grouped by length (the default): a member's batches hold similar lengths, so aligning their widths
# leaves almost no padding (here 33 % -> 1.6 %); random batches are all about as wide (40 % -> 34 %)
@pytest.mark.parametrize("group_by_length, at_most", [(True, 0.1), (False, 0.9)])
def test_each_member_keeps_its_own_batches_and_a_step_pads_less(group_by_length, at_most):
    orders = _orders(group_by_length)
    aligned = aligned_orders(orders, LENGTHS, np.random.default_rng(7))
    for own, realigned in zip(orders, aligned):
        assert sorted(map(tuple, own)) == sorted(map(tuple, realigned)) and len(realigned) == len(own)
    assert aligned_orders(orders, LENGTHS, np.random.default_rng(7)) == aligned   # the group's seed decides
    assert _padding_share(aligned) < at_most * _padding_share(orders)


def test_a_members_aligned_order_is_uniformly_random():
    """Where a member's widest batch lands over 2,000 epochs' generators: every step equally often
    (chi-square), as in an unaligned random order; a sorted order would always put it first."""
    orders = [batches[:10] for batches in _orders(True)]
    widest = int(np.argmax([LENGTHS[batch].max() for batch in orders[0]]))
    steps = [next(step for step, batch in enumerate(aligned_orders(orders, LENGTHS, np.random.default_rng(draw))[0])
                  if batch is orders[0][widest]) for draw in range(2000)]
    assert stats.chisquare(np.bincount(steps, minlength=10)).pvalue > 1e-3


def test_aligning_seeds_that_are_not_fused_is_one_line():
    with pytest.raises(UserError, match="trainer.fuse_align_lengths=true aligns the batches of fused seeds"):
        train_settings(compose_config(["experiment=smoke", "trainer.fuse_align_lengths=true"]))
