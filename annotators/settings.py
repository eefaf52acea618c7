"""Annotator settings: the `annotator` config group of the training configs
(`stability/conf/annotator/default.yaml`) updated by a mapping, so the CLI and training runs
read one file with one set of keys."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

from stability.core.config import CONF_DIR
from stability.core.errors import UserError

DEFAULTS_PATH = CONF_DIR / "annotator" / "default.yaml"
CACHE_ENV = "NLI_STABILITY_CACHE"


@dataclass(frozen=True)
class Settings:
    spacy_models: tuple[tuple[str, tuple[str, ...]], ...]   # (lang, alternatives), hashable
    cache_dir: Path
    batch_size: int
    n_process: int

    def models_for(self, lang: str) -> tuple[str, ...]:
        return dict(self.spacy_models).get(lang, ())


def _default_cache_dir() -> Path:
    root = os.environ.get(CACHE_ENV)
    base = Path(root) if root else Path.home() / ".cache" / "nli-stability"
    return base / "annotations"


def _as_names(value: Any) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(str(v) for v in value)


def load_settings(overrides: Mapping[str, Any] | Settings | None = None) -> Settings:
    """Defaults updated by `overrides` (a plain dict or an OmegaConf DictConfig)."""
    if isinstance(overrides, Settings):
        return overrides
    values = yaml.safe_load(DEFAULTS_PATH.read_text(encoding="utf-8"))
    for key, value in (overrides or {}).items():
        if key not in values:
            raise UserError(f"unknown annotator setting '{key}'", fix=f"use one of: {', '.join(values)}")
        if key == "spacy_models":
            values[key] = {**values[key], **dict(value)}
        else:
            values[key] = value
    return Settings(
        spacy_models=tuple(sorted((lang, _as_names(names)) for lang, names in values["spacy_models"].items())),
        cache_dir=Path(values["cache_dir"]).expanduser() if values["cache_dir"] else _default_cache_dir(),
        batch_size=int(values["batch_size"]),
        n_process=int(values["n_process"]),
    )
