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
- the module's `register(store)` stores them, e.g. `store(group="trainer", name="schema",
  node=TrainerSchema)` for a group option or `store(name="report_schema", node=ReportSchema)`
  for a primary config;
- the YAML lists the schema first in its defaults: `defaults: [schema, _self_]` (group
  option) or `defaults: [report_schema, _self_]` (primary config).
`register_all()` runs when `stability.core.config` is imported, before anything composes.
"""
from __future__ import annotations

from hydra.core.config_store import ConfigStore

_MODULES: tuple[str, ...] = ("status",)


def register_all() -> None:
    """Store every schema module's dataclasses in Hydra's ConfigStore (idempotent)."""
    import importlib

    store = ConfigStore.instance()
    for name in _MODULES:
        importlib.import_module(f"stability.core.schemas.{name}").register(store)
