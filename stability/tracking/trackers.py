"""Experiment trackers behind one small interface; `logger=none` keeps results on disk only."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from omegaconf import DictConfig

from stability.core.errors import UserError


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


def make_tracker(cfg: DictConfig, run_dir: Path) -> Tracker:
    """The tracker `cfg.logger.name` asks for."""
    if cfg.logger.name == "none":
        return NoTracker()
    if cfg.logger.name == "wandb":
        from stability.tracking.wandb_run import WandbTracker  # optional extra

        return WandbTracker(cfg, run_dir)
    raise UserError(f"unknown logger '{cfg.logger.name}'", fix="use logger=none or logger=wandb")
