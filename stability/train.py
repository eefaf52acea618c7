"""`python -m stability.train [overrides]`: one fine-tuning run per (experiment, lang, setup, seed).

    python -m stability.train experiment=smoke          # offline, two seeds, minutes on a CPU
    python -m stability.train seed=0..5 lang=fr,de,sv   # a sweep: 18 runs
"""
from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from stability.errors import USER_ERROR_STATUS, UserError, exit_on_user_error
from stability.overrides import prepare_argv
from stability.setup_name import setup_name

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"

if not OmegaConf.has_resolver("setup_name"):
    OmegaConf.register_new_resolver("setup_name", setup_name)


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="train")
def task(cfg: DictConfig) -> float | None:
    """One Hydra job; user errors end this job with one line and status 2."""
    from stability.run import run_one  # heavy imports only once a job really runs

    try:
        metrics = run_one(cfg, Path(HydraConfig.get().runtime.output_dir))
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(USER_ERROR_STATUS)
    return None if metrics is None else metrics["overall_mcc"]


@exit_on_user_error
def main() -> None:
    sys.argv = [sys.argv[0], *prepare_argv(sys.argv[1:], CONF_DIR)]
    task()


if __name__ == "__main__":
    main()
