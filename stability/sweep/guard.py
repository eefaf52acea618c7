"""No two jobs of a sweep share a run directory: checked before any job starts, for every launcher.

Two jobs in one directory would overwrite each other (the resume fingerprint sees another
config and reruns), silently losing a run. The run directory names the run's identity
(`stability.core.identity`), so two jobs can only collide when they differ in keys the
identity leaves out on purpose (a data location, `trainer.resume`, ...) or when a user's own
`hydra.sweep.subdir` drops a part of it. Such a sweep is refused with the keys that differ.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

from omegaconf import DictConfig, OmegaConf

from stability.core.errors import UserError


def run_directory(cfg: DictConfig) -> Path:
    """Where Hydra puts this job of a sweep."""
    return Path(str(cfg.hydra.sweep.dir)) / str(cfg.hydra.sweep.subdir)


def refuse_shared_run_dirs(configs: list[DictConfig]) -> None:
    """Raise a UserError naming the first directory two jobs would share and the keys they differ in."""
    by_directory: dict[Path, list[DictConfig]] = defaultdict(list)
    for cfg in configs:
        by_directory[run_directory(cfg)].append(cfg)
    for directory, sharing in by_directory.items():
        if len(sharing) > 1:
            leaves = [dict(_leaves(OmegaConf.to_container(cfg, resolve=True))) for cfg in sharing]
            keys = sorted({key for values in leaves for key in values
                           if len({repr(other.get(key)) for other in leaves}) > 1})
            differences = "; ".join(f"{key} = {', '.join(str(values.get(key)) for values in leaves)}"
                                    for key in keys)
            raise UserError(f"{len(sharing)} jobs of this sweep would share the run directory {directory}: "
                            f"they differ only in {differences}, which the run's identity leaves out",
                            fix="sweep such a key in separate commands, each with its own paths.output_dir")


def _leaves(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted keys and values of a resolved config, without Hydra's own node."""
    for key, value in node.items():
        if not prefix and key == "hydra":
            continue
        if isinstance(value, dict):
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value
