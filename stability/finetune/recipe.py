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

from stability.core.schemas.trainer import EVERY_EPOCH, Trainer
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


def described(trainer: Trainer, preset: str | None) -> str:
    """The recipe a run trains with, as composed: its trainer preset, then the values that preset's
    file, the experiment preset and the command line left, the stabilisers only where on. An
    experiment's `trainer:` keys override the trainer preset's (`experiment=smoke trainer=mosbach`
    trains at smoke's batch size and epochs), which this line, at the start of each run's log, makes plain."""
    every = "each epoch" if trainer.eval_every == EVERY_EPOCH else f"every {trainer.eval_every} steps"
    parts = [f"batch size {trainer.batch_size}", f"learning rate {trainer.learning_rate:g}",
             f"at most {trainer.max_epochs} epochs", f"patience {trainer.patience}", f"validated {every}",
             f"{trainer.optimizer}, weight decay {trainer.weight_decay:g}", f"{trainer.schedule} schedule"]
    if trainer.schedule != "constant":
        parts[-1] += f", warm-up {trainer.warmup_ratio:g}"
    on = {"reinit_layers": trainer.reinit_layers, "layer_lr_decay": trainer.layer_lr_decay != 1.0 and trainer.layer_lr_decay,
          "mixout": trainer.mixout, "pretrained_decay": trainer.pretrained_decay, "lr_patience": trainer.lr_patience}
    parts += [f"{key} {value:g}" for key, value in on.items() if value]
    return f"trainer={preset or 'default'} as composed: " + ", ".join(parts)


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
