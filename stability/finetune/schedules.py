"""The learning-rate policy of a run: a per-step schedule (transformers) and, on top, jiant v1's
plateau rule, which cuts the rate when validation accuracy stalls and ends training once the
rate is too small to matter."""
from __future__ import annotations

from typing import Any

import torch
from transformers import get_constant_schedule, get_linear_schedule_with_warmup

from stability.core.errors import UserError
from stability.core.schemas.trainer import SCHEDULES


def plateau_rule(optimizer: torch.optim.Optimizer, lr_patience: int,
                 lr_decay_factor: float) -> torch.optim.lr_scheduler.ReduceLROnPlateau:
    """jiant v1's plateau rule as torch's ReduceLROnPlateau (mode max, abs threshold 1e-4) on `optimizer`."""
    return torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=lr_decay_factor,
                                                      patience=lr_patience, threshold=0.0001, threshold_mode="abs",
                                                      min_lr=0)


class LearningRate:
    """Steps the schedule after every optimizer step (`after_step`) and applies the plateau rule
    after every validation (`after_validation`).

    The schedule is a LambdaLR: group lr = base rate × factor(step), with a linear warmup over
    int(warmup_ratio · total_steps) steps as pytorch-pretrained-bert and jiant (warmup = a
    fraction of t_total). The plateau rule (only with `lr_patience`) is torch's
    ReduceLROnPlateau with jiant v1's settings (mode max, abs threshold 1e-4): once more than
    `lr_patience` validations in a row fail to beat the best accuracy by 1e-4 (torch counts
    "more than patience"), the base rates are multiplied by `lr_decay_factor`. It acts on the
    base rates, not on group["lr"], because the schedule's next step would overwrite a change
    of group["lr"] (and a warmup at factor 0 would hide it); the current rates are scaled by the
    same ratio, so the schedule keeps its shape, scaled.
    """

    def __init__(self, optimizer: torch.optim.Optimizer, schedule: str, warmup_ratio: float, total_steps: int,
                 lr_patience: int | None, lr_decay_factor: float, min_lr: float) -> None:
        if schedule == "constant":
            self._schedule = get_constant_schedule(optimizer)
        elif schedule == "linear":
            self._schedule = get_linear_schedule_with_warmup(
                optimizer, num_warmup_steps=int(warmup_ratio * total_steps), num_training_steps=total_steps)
        else:
            raise UserError(f"unknown learning-rate schedule '{schedule}'",
                            fix=f"choose one of: {', '.join(SCHEDULES)}")
        self._optimizer = optimizer
        self._plateau = None if lr_patience is None else plateau_rule(optimizer, lr_patience, lr_decay_factor)
        self._min_lr = min_lr

    def after_step(self) -> None:
        """Advance the schedule; call after each optimizer.step()."""
        self._schedule.step()

    def after_validation(self, score: float) -> bool:
        """Feed the validation accuracy to the plateau rule; True when training must stop because
        the base rate η fell below min_lr. Without lr_patience always False. η is the largest
        group's rate: with layer-wise decay the first group is the embeddings' η·ξ^L, whose floor
        would stop a run that `trainer.min_lr <= trainer.learning_rate` lets start."""
        if self._plateau is None:
            return False
        groups = self._optimizer.param_groups
        current = [group["lr"] for group in groups]
        old_bases = list(self._schedule.base_lrs)
        for group, base in zip(groups, old_bases):
            group["lr"] = base
        self._plateau.step(score)
        new_bases = [group["lr"] for group in groups]
        for group, lr, old, new in zip(groups, current, old_bases, new_bases):
            group["lr"] = lr * new / old if new != old else lr
        self._schedule.base_lrs = new_bases
        return max(new_bases) < self._min_lr

    def base_rates(self) -> list[float]:
        """The base rate of each parameter group (the schedule's factor not applied), for logging."""
        return list(self._schedule.base_lrs)

    def state_dict(self) -> dict[str, Any]:
        return {"schedule": self._schedule.state_dict(),
                "plateau": None if self._plateau is None else self._plateau.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue where `state_dict` was taken (the optimizer's own state restores group["lr"])."""
        self._schedule.load_state_dict(state["schedule"])
        if self._plateau is not None:
            self._plateau.load_state_dict(state["plateau"])
