"""`nli-stability dataqa`: the data-QA config (`conf/dataqa.yaml`), its thresholds checked."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.schemas.checks import at_least, folder, within


@dataclass
class DataQAConfig:
    """Which files (`files`, else the language's own), where to write, and the checks' thresholds."""

    lang: Any = MISSING
    data: Any = MISSING
    paths: Any = MISSING
    files: Optional[List[str]] = None
    out: str = MISSING
    min_words: int = MISSING
    min_confidence: float = MISSING
    lid_model: Optional[str] = None
    flag_names: bool = MISSING
    min_word_length: int = MISSING
    allow: str = MISSING
    near_threshold: float = MISSING

    def __post_init__(self) -> None:
        folder("out", self.out)
        at_least("min_words", self.min_words, 1)
        within("min_confidence", self.min_confidence, 0, 1, closed_high=True)
        at_least("min_word_length", self.min_word_length, 1)
        within("near_threshold", self.near_threshold, 0, 1, open_low=True, closed_high=True)


def register(store: ConfigStore) -> None:
    store.store(name="dataqa_schema", node=DataQAConfig)
