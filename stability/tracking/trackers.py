"""Experiment trackers behind one small interface; `logger=none` keeps results on disk only."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Protocol

from stability.core.errors import UserError
from stability.core.schemas.train import TrainConfig


class Tracker(Protocol):
    def log_epoch(self, entry: dict) -> None: ...
    def log_final(self, metrics: dict, predictions: list[dict]) -> None: ...
    def finish(self) -> None: ...


class NoTracker:
    """The default: the run directory is the record."""

    def log_epoch(self, entry: dict) -> None:
        pass

    def log_final(self, metrics: dict, predictions: list[dict]) -> None:
        pass

    def finish(self) -> None:
        pass


def make_tracker(settings: TrainConfig, config: Mapping[str, Any], run_dir: Path) -> Tracker:
    """The tracker `settings.logger.name` asks for; `config` is the resolved config it records."""
    if settings.logger.name == "none":
        return NoTracker()
    if settings.logger.name == "wandb":
        from stability.tracking.wandb_run import WandbTracker  # optional extra

        return WandbTracker(settings, config, run_dir)
    raise UserError(f"unknown logger '{settings.logger.name}'", fix="use logger=none or logger=wandb")
