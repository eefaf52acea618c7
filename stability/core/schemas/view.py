"""`nli-stability view`: which report page to serve, and where (`conf/view.yaml`)."""
from __future__ import annotations

from dataclasses import dataclass

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.schemas.checks import within


@dataclass
class ViewConfig:
    """The folder of a report (or of the runs it was written for), the address to serve it on."""

    runs: str = MISSING
    port: int = 8000
    host: str = "127.0.0.1"

    def __post_init__(self) -> None:
        within("port", self.port, 0, 65535, closed_high=True)


def register(store: ConfigStore) -> None:
    store.store(name="view_schema", node=ViewConfig)
