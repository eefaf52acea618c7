"""Schema of the `trainer` group (`conf/trainer/default.yaml`): the fine-tuning settings.

The stabilisation methods (docs/stabilisation-methods.md) are keys here too, each off by
default: at its off value a key is left out of the run's fingerprint
(`core.runrecord.OFF_VALUES`), so runs finished before it existed keep theirs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.errors import UserError
from stability.core.schemas.checks import above, at_least, one_of, within

# accelerate's mixed precision, or "auto": bf16 where the run's device has it, else float32
# (`finetune.precision`); a str, not an Enum, so config.yaml and the fingerprint keep "no"
AUTO_PRECISION = "auto"
MIXED_PRECISION = ("no", "fp16", "bf16", AUTO_PRECISION)
OPTIMIZERS = ("adamw", "bertadam")
SCHEDULES = ("constant", "linear")
EVERY_EPOCH = "epoch"


@dataclass
class Trainer:
    """Batch sizes, optimiser, learning-rate policy, early stopping, stabilisers and what a run keeps."""

    batch_size: int = MISSING
    eval_batch_size: int = MISSING
    # evaluation batches of at most this many padded tokens (and eval_batch_size examples); null: by examples
    eval_tokens_per_batch: Optional[int] = None
    learning_rate: float = MISSING
    weight_decay: float = MISSING
    max_grad_norm: float = MISSING
    max_epochs: int = MISSING
    patience: int = MISSING
    group_by_length: bool = MISSING
    mixed_precision: str = MISSING
    resume: bool = MISSING
    save_model: bool = MISSING
    # record the training dynamics at every validation (docs/concepts-and-metrics.md); adds files, changes no result
    dynamics: bool = False
    optimizer: str = "adamw"
    schedule: str = "constant"
    warmup_ratio: float = 0.1
    lr_patience: Optional[int] = None
    lr_decay_factor: float = 0.5
    min_lr: float = 0.0
    # "epoch" or a number of optimiser steps (OmegaConf has no Union: checked below)
    eval_every: Any = EVERY_EPOCH
    reinit_layers: int = 0
    layer_lr_decay: float = 1.0
    mixout: float = 0.0
    pretrained_decay: float = 0.0
    # train the seeds of a sweep K at a time as one fused model (`finetune.fused_run`); 1: each alone
    fuse_seeds: int = 1
    # fused members take their batches in orders aligned by width (`batching.aligned_orders`): less padding
    fuse_align_lengths: bool = False
    # the word-embedding matrix left as pretrained: neither its gradient nor its optimiser step is computed
    freeze_embeddings: bool = False

    def __post_init__(self) -> None:
        for key in ("batch_size", "eval_batch_size", "max_epochs", "patience"):
            at_least(f"trainer.{key}", getattr(self, key), 1)
        at_least("trainer.eval_tokens_per_batch", self.eval_tokens_per_batch, 1, optional=True)
        above("trainer.learning_rate", self.learning_rate, 0)
        above("trainer.max_grad_norm", self.max_grad_norm, 0)
        at_least("trainer.weight_decay", self.weight_decay, 0)
        one_of("trainer.mixed_precision", self.mixed_precision, MIXED_PRECISION)
        one_of("trainer.optimizer", self.optimizer, OPTIMIZERS)
        one_of("trainer.schedule", self.schedule, SCHEDULES)
        within("trainer.warmup_ratio", self.warmup_ratio, 0, 1)
        at_least("trainer.lr_patience", self.lr_patience, 0, optional=True)
        within("trainer.lr_decay_factor", self.lr_decay_factor, 0, 1, open_low=True)
        self._check_min_lr()
        self.eval_every = eval_steps(self.eval_every)
        # reinit_layers: checked by the training config (`TrainConfig`), which knows the model's layers
        within("trainer.layer_lr_decay", self.layer_lr_decay, 0, 1, open_low=True, closed_high=True)
        within("trainer.mixout", self.mixout, 0, 1)
        at_least("trainer.pretrained_decay", self.pretrained_decay, 0)
        at_least("trainer.fuse_seeds", self.fuse_seeds, 1)
        if self.fuse_align_lengths and self.fuse_seeds == 1:
            raise UserError("trainer.fuse_align_lengths=true aligns the batches of fused seeds, and "
                            "trainer.fuse_seeds=1 trains each seed alone",
                            fix="pass trainer.fuse_seeds=<K > 1> with it, or drop trainer.fuse_align_lengths")

    def _check_min_lr(self) -> None:
        """With the plateau rule on, training stops after the first validation whose base rate
        is below min_lr: above the learning rate, that is the first validation, and the run
        would end after one epoch (or one interval) without a word."""
        if self.lr_patience is None:
            at_least("trainer.min_lr", self.min_lr, 0)
            return
        stops_at_once = (f"with trainer.lr_patience set, training stops at the first validation whose rate is "
                         f"below trainer.min_lr, and trainer.learning_rate={self.learning_rate:g} is below it already")
        within("trainer.min_lr", self.min_lr, 0, self.learning_rate, closed_high=True,
               why=stops_at_once if self.min_lr > self.learning_rate else "", otherwise="trainer.lr_patience=null")

    @property
    def validation_steps(self) -> int | None:
        """Optimiser steps between validations, or None to validate after each epoch."""
        return None if self.eval_every == EVERY_EPOCH else int(self.eval_every)

    def planned_steps(self, steps_per_epoch: int) -> int:
        """t_total, the steps a run trains at most and its schedule spans: every step of max_epochs
        epochs; validating every N steps, rounded up to whole N-step intervals, as jiant v1 did
        (it checked max_epochs only at validations)."""
        total = steps_per_epoch * self.max_epochs
        every = self.validation_steps
        return total if every is None else math.ceil(total / every) * every

    def epochs_past_max(self, steps_per_epoch: int) -> str | None:
        """One line when validating every N steps makes a run train at least one whole epoch more
        than max_epochs (a small training set under trainer=jiant_superglue's 1,000 steps: its
        first validation comes after dozens of epochs), else None."""
        planned, bound = self.planned_steps(steps_per_epoch), steps_per_epoch * self.max_epochs
        if not steps_per_epoch or planned - bound < steps_per_epoch:
            return None
        return (f"this run trains {planned:,} steps, {planned / steps_per_epoch:.3g} epochs of {steps_per_epoch:,} steps "
                f"(its training set at batch size {self.batch_size}), not trainer.max_epochs={self.max_epochs}: "
                f"trainer.eval_every={self.eval_every} rounds training up to whole validations; "
                f"trainer.eval_every=epoch keeps to max_epochs")


def reinit_layers_within(reinit_layers: int, depth: int, model_name: str) -> None:
    """`trainer.reinit_layers` at most the `depth` layers of the encoder `model_name`: checked when
    composed where the depth is known (`TrainConfig`), else when the model is built."""
    encoder = f"the encoder of model.name={model_name}" if model_name else "the encoder"
    within("trainer.reinit_layers", reinit_layers, 0, depth, closed_high=True, why=f"{encoder} has {depth} layers")


def eval_steps(value: object) -> str | int:
    """`epoch`, or a positive whole number of steps."""
    if value == EVERY_EPOCH:
        return EVERY_EPOCH
    if isinstance(value, bool) or not str(value).isdigit() or int(value) < 1:
        raise UserError(f"trainer.eval_every={value!r} is neither 'epoch' nor a number of steps",
                        fix="pass trainer.eval_every=epoch or trainer.eval_every=<steps, e.g. 1000>")
    return int(value)


def register(store: ConfigStore) -> None:
    store.store(name="trainer_schema", node=Trainer)
