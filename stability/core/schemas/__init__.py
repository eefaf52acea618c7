"""Typed configs: the dataclass schemas under every command's config, in Hydra's ConfigStore.

Why: a value of the wrong type or out of range must be refused when the config is composed,
before any work, with one line naming the key (`core.jobs.job_configs` composes every job and
calls `OmegaConf.to_object`, which runs each schema's `__post_init__`), and code below the
entry point should receive typed settings instead of casting DictConfig values.

The pattern (Hydra's "schema in the defaults list"):
- one module here per command or config group, e.g. `schemas/train.py`, defining frozen-free
  dataclasses whose fields mirror the YAML keys exactly (a key added here would change the
  resolved config, hence every run's fingerprint) and whose `__post_init__` checks ranges
  with the helpers of `schemas.checks`;
- the module's `register(store)` stores them under top-level names, e.g.
  `store(name="trainer_schema", node=Trainer)` for a group option or
  `store(name="report_schema", node=ReportSchema)` for a primary config (not in a group:
  `--help` lists every option of a group, and a schema is no option to choose);
- the YAML lists the schema first in its defaults: `defaults: [/trainer_schema@_here_, _self_]`
  (a group option: `@_here_` merges it at the option's own package) or
  `defaults: [report_schema, _self_]` (primary config).
A group with options of different keys (`model`: mbert, tiny) gives each option its own
schema; the primary config types the group with their base class (`model: Model`), or with
Any where options differ inside nested nodes or in key order (`lang`, see `schemas.lang`).
`train.py` is the worked example: the training config and its groups.
`register_all()` runs when `stability.core.config` is imported, before anything composes.
"""
from __future__ import annotations

from hydra.core.config_store import ConfigStore

_MODULES: tuple[str, ...] = ("data", "lang", "model", "trainer", "paths", "logger", "train", "probe", "dataqa",
                            "generate", "annotate", "plan", "report", "status", "view", "adaptive")


def register_all() -> None:
    """Store every schema module's dataclasses in Hydra's ConfigStore (idempotent)."""
    import importlib

    store = ConfigStore.instance()
    for name in _MODULES:
        importlib.import_module(f"stability.core.schemas.{name}").register(store)
