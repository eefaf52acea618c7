"""The run directory contract (DESIGN.md section 5): what a finished run leaves behind.

metrics.json is written last and atomically, so its presence means the run is complete.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from omegaconf import DictConfig, OmegaConf

from stability.atomic import atomic_write_text

METRICS_FILE = "metrics.json"
PREDICTIONS_FILE = "predictions.jsonl"
TRAIN_LOG_FILE = "train_log.jsonl"
CONFIG_FILE = "config.yaml"
# Keys that do not change what a run computes, left out of its fingerprint.
_NON_SEMANTIC_KEYS = ("force", "paths", "logger")


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    atomic_write_text(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def append_jsonl(path: Path, row: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def config_fingerprint(cfg: DictConfig) -> str:
    """A hash of the resolved config minus bookkeeping keys: equal hash, same computation."""
    resolved = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(resolved, dict)
    for key in _NON_SEMANTIC_KEYS:
        resolved.pop(key, None)
    return hashlib.sha256(json.dumps(resolved, sort_keys=True, default=str).encode()).hexdigest()


def finished_with(run_dir: Path, fingerprint: str) -> bool:
    """True when the directory holds a complete run of exactly this config."""
    metrics = run_dir / METRICS_FILE
    if not metrics.is_file():
        return False
    try:
        return json.loads(metrics.read_text(encoding="utf-8")).get("config_fingerprint") == fingerprint
    except json.JSONDecodeError:
        return False
