"""Schema of the `trainer` group (`conf/trainer/default.yaml`): the fine-tuning settings."""
from __future__ import annotations

from dataclasses import dataclass

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.schemas.checks import above, at_least, one_of

# accelerate's mixed precision; a str, not an Enum, so config.yaml and the fingerprint keep "no"
MIXED_PRECISION = ("no", "fp16", "bf16")


@dataclass
class Trainer:
    """Batch sizes, optimiser, early stopping and what a run keeps."""

    batch_size: int = MISSING
    eval_batch_size: int = MISSING
    learning_rate: float = MISSING
    weight_decay: float = MISSING
    max_grad_norm: float = MISSING
    max_epochs: int = MISSING
    patience: int = MISSING
    group_by_length: bool = MISSING
    mixed_precision: str = MISSING
    resume: bool = MISSING
    save_model: bool = MISSING

    def __post_init__(self) -> None:
        for key in ("batch_size", "eval_batch_size", "max_epochs", "patience"):
            at_least(f"trainer.{key}", getattr(self, key), 1)
        above("trainer.learning_rate", self.learning_rate, 0)
        above("trainer.max_grad_norm", self.max_grad_norm, 0)
        at_least("trainer.weight_decay", self.weight_decay, 0)
        one_of("trainer.mixed_precision", self.mixed_precision, MIXED_PRECISION)


def register(store: ConfigStore) -> None:
    store.store(name="trainer_schema", node=Trainer)
