"""`nli-stability plan`: the plan's own options (`conf/plan.yaml`, the `plan.*` keys); every
other override is a training override, expanded as training would expand it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.schemas.checks import above


@dataclass
class PlanOptions:
    """One run's measured throughput (GPU-hours need it), epochs per run instead of
    trainer.max_epochs, JSON instead of the table, and a previous report whose seed σ tells
    what the planned seeds can detect."""

    samples_per_second: Optional[float] = None
    expected_epochs: Optional[float] = None
    json: bool = False
    power_from: Optional[str] = None
    power_delta: float = 0.1

    def __post_init__(self) -> None:
        above("plan.samples_per_second", self.samples_per_second, 0, optional=True)
        above("plan.expected_epochs", self.expected_epochs, 0, optional=True)
        above("plan.power_delta", self.power_delta, 0)


@dataclass
class PlanConfig:
    plan: PlanOptions = MISSING


def register(store: ConfigStore) -> None:
    store.store(name="plan_schema", node=PlanConfig)
