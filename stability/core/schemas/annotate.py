"""`nli-stability annotate`: the annotator command's config (`conf/annotate.yaml`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.errors import UserError
from stability.core.schemas.checks import folder, one_of

# annotate: the features of every pair; stats: the share of pairs with each feature per file;
# evaluate: agreement with a diagnostic set's gold categories
ACTIONS = ("annotate", "stats", "evaluate")


@dataclass
class AnnotateConfig:
    """What to do (`action`) with which files, where to write, and whether to use the cache."""

    lang: Any = MISSING
    annotator: Any = MISSING
    paths: Any = MISSING
    action: str = MISSING
    files: Optional[List[str]] = None
    out: str = MISSING
    cache: bool = MISSING

    def __post_init__(self) -> None:
        one_of("action", self.action, ACTIONS)
        if not self.files:
            raise UserError("no input files", fix="name them: files=[a.jsonl,b.tsv]")
        if self.action == "evaluate" and len(self.files) != 1:
            raise UserError(f"action=evaluate scores one diagnostic file, not {len(self.files)}",
                            fix="pass files=[<diagnostic file>]")
        folder("out", self.out)


def register(store: ConfigStore) -> None:
    store.store(name="annotate_schema", node=AnnotateConfig)
