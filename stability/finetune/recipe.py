"""A run's training recipe: its optimiser, learning-rate policy and stabilisers, set up in one place.

The stabilisation methods (docs/stabilisation-methods.md) change the model before training
(re-initialised top layers, mixout on the encoder's linear layers), the optimiser (BertAdam,
layer-wise rates), the rate over time (linear schedule, jiant's plateau rule) and the loss
(decay towards the pretrained weights). With every `trainer` key at its default the recipe
is the plain one: fused AdamW over one parameter group at a constant rate, nothing else.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import torch
from transformers import PreTrainedModel

from stability.core.schemas.trainer import Trainer
from stability.finetune.mixout import apply_mixout, remove_mixout
from stability.finetune.optimizers import build_optimizer
from stability.finetune.pretrained_decay import PretrainedDecay
from stability.finetune.reinit import reinit_top_layers
from stability.finetune.schedules import LearningRate

log = logging.getLogger(__name__)


@dataclass
class Recipe:
    """What the loop steps: the optimiser, the rate policy over `total_steps` (the steps the
    schedule spans), and the loss penalty (None: off)."""

    optimizer: torch.optim.Optimizer
    learning_rate: LearningRate
    total_steps: int
    penalty: PretrainedDecay | None
    mixout: bool

    def loss(self, loss: torch.Tensor) -> torch.Tensor:
        """The task loss plus the decay towards the pretrained weights, when it is on."""
        return loss if self.penalty is None else loss + self.penalty.penalty()

    def finish(self, model: PreTrainedModel) -> None:
        """Leave the model as a plain checkpoint (mixout's parametrisations removed, trained weights kept)."""
        if self.mixout:
            remove_mixout(model)


def initialise(model: PreTrainedModel, trainer: Trainer, init_seed: int) -> None:
    """The run's own draws before training: its re-initialised top layers (from `init_seed`), when asked;
    and its word-embedding matrix frozen (`trainer.freeze_embeddings`), which the optimiser then leaves out."""
    if trainer.freeze_embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    if trainer.reinit_layers:
        torch.manual_seed(init_seed)
        reinit_top_layers(model, trainer.reinit_layers)


def prepare(model: PreTrainedModel, trainer: Trainer, steps_per_epoch: int, init_seed: int) -> Recipe:
    """Apply the model-side stabilisers and build the optimiser and rate policy.

    Re-initialisation draws from its own seed (`init_seed`), so it is the same for a run and its
    resumption. The decay and mixout both pull towards the weights training starts from, taken
    after re-initialisation.
    """
    initialise(model, trainer, init_seed)
    penalty = PretrainedDecay(model, trainer.pretrained_decay) if trainer.pretrained_decay else None
    if trainer.mixout:
        apply_mixout(model, trainer.mixout)
    optimizer = build_optimizer(model, trainer.optimizer, trainer.learning_rate, trainer.weight_decay,
                                trainer.layer_lr_decay)
    total = trainer.planned_steps(steps_per_epoch)
    if (past_max := trainer.epochs_past_max(steps_per_epoch)) is not None:
        log.info(past_max)
    rate = LearningRate(optimizer, trainer.schedule, trainer.warmup_ratio, total, trainer.lr_patience,
                        trainer.lr_decay_factor, trainer.min_lr)
    return Recipe(optimizer, rate, total, penalty, bool(trainer.mixout))
