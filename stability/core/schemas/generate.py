"""`nli-stability generate`: the test-suite config (`conf/generate.yaml`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.errors import UserError
from stability.core.schemas.checks import folder, items_per_template, seed


@dataclass
class GenerateConfig:
    """Which suite, how many items per template (`n`: an integer, or all / null for every
    combination), the sampling seed, the folder the jsonl goes to, and where the suites are
    (`suites_dir`; null: the shipped ones), so a language of the user's own can be generated."""

    lang: Any = MISSING
    paths: Any = MISSING
    suite: str = MISSING
    n: Any = None
    seed: int = MISSING
    out: str = MISSING
    suites_dir: Optional[str] = None

    def __post_init__(self) -> None:
        self.n = items_per_template("n", self.n)
        seed("seed", self.seed)
        folder("out", self.out)
        if self.suites_dir is not None and not Path(self.suites_dir).expanduser().is_dir():
            raise UserError(f"suites_dir={self.suites_dir} is not a folder",
                            fix="pass suites_dir=<a folder holding <lang>/lexicon.yaml>, or null for the shipped suites")


def register(store: ConfigStore) -> None:
    store.store(name="generate_schema", node=GenerateConfig)
