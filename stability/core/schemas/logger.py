"""Schemas of the `logger` group: `none` has only its name, `wandb` the W&B run's settings."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING


@dataclass
class Logger:
    """An experiment tracker; the training config's type for `logger`."""

    name: str = MISSING


@dataclass
class WandbLogger(Logger):
    """Weights & Biases: where the run goes (null: W&B's environment variables decide)."""

    project: str = MISSING
    entity: Optional[str] = None
    mode: Optional[str] = None
    job_type: str = MISSING
    tags: List[str] = field(default_factory=list)
    dir: Optional[str] = None


def register(store: ConfigStore) -> None:
    store.store(name="logger_schema", node=Logger)
    store.store(name="wandb_logger_schema", node=WandbLogger)
