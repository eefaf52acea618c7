"""`nli-stability probe [overrides]`: layer-wise probes of the runs' encoders (see `probing`).

    nli-stability probe runs=outputs/smoke                # a sweep trained with trainer.save_model=true
    nli-stability probe lang=fr data.root=/data model.name=/models/mbert   # one checkpoint
"""
from __future__ import annotations

from typing import Sequence

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from stability.core.command import run_command
from stability.core.config import PROBE_CONFIG_NAME
from stability.core.jobs import without_hydra


def check(configs: list[DictConfig]) -> None:
    """Before Hydra starts: the runs exist, agree, saved their weights (one line otherwise)."""
    from probing.run import probe_plan

    for cfg in configs:
        probe_plan(without_hydra(cfg), cfg.hydra.overrides.task)


def task(cfg: DictConfig) -> None:
    """One probing run."""
    from probing.run import probe_plan, run_probing  # heavy imports (torch, transformers) only when it runs

    out = run_probing(*probe_plan(cfg, HydraConfig.get().overrides.task))
    print(f"wrote probing.csv, probing.md and the figures to {out}")


def main(argv: Sequence[str] | None = None) -> None:
    run_command(PROBE_CONFIG_NAME, task, argv, check=check)


if __name__ == "__main__":
    main()
