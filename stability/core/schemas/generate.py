"""`nli-stability generate`: the test-suite config (`conf/generate.yaml`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.schemas.checks import folder, items_per_template


@dataclass
class GenerateConfig:
    """Which suite, how many items per template (`n`: an integer, or all / null for every
    combination), the sampling seed, and the folder the jsonl goes to."""

    lang: Any = MISSING
    paths: Any = MISSING
    suite: str = MISSING
    n: Any = None
    seed: int = MISSING
    out: str = MISSING

    def __post_init__(self) -> None:
        self.n = items_per_template("n", self.n)
        folder("out", self.out)


def register(store: ConfigStore) -> None:
    store.store(name="generate_schema", node=GenerateConfig)
