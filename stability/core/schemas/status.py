"""`nli-stability status`: which sweep folder to report on (`conf/status.yaml`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.errors import UserError


@dataclass
class StatusConfig:
    """The folder a training sweep wrote (its experiment folder, holding multirun.yaml)."""

    runs: str = MISSING

    def __post_init__(self) -> None:
        if not Path(self.runs).is_dir():
            raise UserError(f"runs={self.runs}: no such folder",
                            fix="pass the experiment folder a sweep wrote, e.g. runs=outputs/smoke")


def register(store: ConfigStore) -> None:
    store.store(name="status_schema", node=StatusConfig)
