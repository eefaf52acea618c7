"""Schema of the `paths` group (`conf/paths/default.yaml`): where outputs and caches go."""
from __future__ import annotations

from dataclasses import dataclass

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING


@dataclass
class Paths:
    output_dir: str = MISSING  # experiment folders go under it
    cache_dir: str = MISSING   # downloads, tokenization and tokenizer caches, shared by all runs


def register(store: ConfigStore) -> None:
    store.store(name="paths_schema", node=Paths)
