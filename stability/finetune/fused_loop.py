"""Training fused seeds: K members (`fused.FusedMembers`) stepped together epoch after epoch, each
validated after every epoch and early-stopping on its own validation accuracy (patience, and jiant's
plateau rule with its min_lr) as its solo run (`loop.train`) does, its training dynamics recorded
where asked; a member that stops is frozen in the stack while the others train on."""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import torch
from accelerate import Accelerator
from transformers import PreTrainedModel

from stability.core.errors import UserError
from stability.core.metrics import accuracy
from stability.core.records import labels_from_probability
from stability.core.schemas.train import TrainConfig
from stability.finetune.batching import aligned_orders, epoch_batches
from stability.finetune.dynamics import DynamicsRecorder
from stability.finetune.encoding import EncodedSplit
from stability.finetune.fused import FusedMembers, collate_members
from stability.finetune.loop import BestSoFar, TrainResult, to_device


def train_members(members: Sequence[PreTrainedModel], seeds_init: Sequence[int], seeds_order: Sequence[int],
                  train_split: EncodedSplit, val_split: EncodedSplit, settings: TrainConfig, accelerator: Accelerator,
                  pad_id: int, name: str = "fused",
                  dynamics: Sequence[DynamicsRecorder | None] | None = None) -> list[TrainResult]:
    """Train the members (built by `fused.build_members` from `seeds_init`) up to max_epochs, member k
    on the batches of `seeds_order[k]` (in an order aligned by width with the others' with
    `trainer.fuse_align_lengths`, `batching.aligned_orders`); validate each member after every epoch
    and stop it after `patience` validations without a better accuracy or once its plateau rule takes its rate below
    min_lr; leave each member holding its best validation's
    weights. Validation passes each batch of the solo run's (`batching.eval_batches`) once through all
    members (`FusedMembers.predict_entailment_probability`). `dynamics`, per member where given, sees
    the member's training passes and records each of its validations as a solo run's recorder does
    (`loop._validate`), the diagnostic set passed once through all members per validation."""
    trainer = settings.trainer
    if accelerator.num_processes > 1:
        raise UserError(f"fused seeds train in one process, not {accelerator.num_processes}",
                        fix="run without accelerate launch, or train these seeds one by one")
    steps_per_epoch = len(epoch_batches(train_split.lengths, trainer.batch_size, seeds_order[0], 1,
                                        trainer.group_by_length))
    fused = FusedMembers([member.to(accelerator.device) for member in members], trainer, steps_per_epoch)
    tracks = [BestSoFar() for _ in members]
    recorders = list(dynamics) if dynamics is not None else [None] * len(members)
    started = time.perf_counter()
    for epoch in range(1, trainer.max_epochs + 1):
        segment_start = time.perf_counter()
        # every member's dropout from one stream, restarted at each epoch as `loop.train` restarts a run's
        torch.manual_seed(int(np.random.SeedSequence([*seeds_init, epoch]).generate_state(1)[0]))
        fused.train()
        orders = [epoch_batches(train_split.lengths, trainer.batch_size, seed, epoch, trainer.group_by_length)
                  for seed in seeds_order]
        if trainer.fuse_align_lengths:   # the group's one permutation of width ranks, per epoch
            orders = aligned_orders(orders, train_split.lengths, np.random.default_rng([*seeds_order, epoch]))
        loss_sum = torch.zeros(len(members), device=accelerator.device)
        for step_indices in zip(*orders):
            losses, logits, _ = fused.step(to_device(collate_members(train_split, step_indices, pad_id),
                                                     accelerator.device))
            loss_sum += losses
            for member, recorder in enumerate(recorders):
                if recorder is not None and not fused.stopped[member]:
                    recorder.observe(step_indices[member], logits[member, :len(step_indices[member])])
        probs = fused.predict_entailment_probability(val_split, trainer.eval_batch_size, pad_id,
                                                     trainer.eval_tokens_per_batch)
        recording = [recorder for recorder in recorders if recorder is not None]
        diagnostic = fused.predict_entailment_probability(recording[0].diagnostic, trainer.eval_batch_size, pad_id,
                                                          trainer.eval_tokens_per_batch) if recording else None
        for member, track in enumerate(tracks):
            if fused.stopped[member]:
                continue
            entry = {"epoch": epoch, "loss": loss_sum[member].item() / len(orders[member]),
                     "val_accuracy": accuracy(val_split.labels.tolist(), labels_from_probability(probs[member]).tolist()),
                     "seconds": time.perf_counter() - segment_start}
            improved = track.validated(entry, lambda: fused.load_member(member, members[member]).state_dict())
            track.result.seconds = time.perf_counter() - started
            if recorders[member] is not None:
                recorders[member].record(len(track.result.log), probs[member], diagnostic[member], accelerator,
                                         best=improved)
            below_min_lr = fused.after_validation(member, entry["val_accuracy"])
            if track.stale >= trainer.patience or below_min_lr:
                fused.stop(member)
        if fused.stopped.all():
            break
    for member, track in zip(members, tracks):
        if track.best_weights is not None:
            member.load_state_dict(track.best_weights)
    return [track.result for track in tracks]
