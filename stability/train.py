"""`python -m stability.train [overrides]`: one fine-tuning run per (experiment, lang, setup, seed).

    python -m stability.train experiment=smoke          # offline, two seeds, minutes on a CPU
    python -m stability.train seed=0..5 lang=fr,de,sv   # a sweep: 18 runs
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from stability.core.config import CONF_DIR, CONFIG_NAME
from stability.core.errors import exit_on_user_error
from stability.finetune.distributed import leave_process_group, rank_overrides
from stability.sweep.devices import job_device
from stability.sweep.overrides import prepare_argv

log = logging.getLogger(__name__)


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name=CONFIG_NAME)
def task(cfg: DictConfig) -> float | None:
    """One Hydra job; user errors end this job with one line and status 2."""
    from stability.finetune.run import (
        run_one,  # heavy imports only once a job really runs
    )

    hydra_cfg = HydraConfig.get()
    job_num = OmegaConf.select(hydra_cfg, "job.num", default=0)  # unset outside a multirun
    with job_device(job_num) as gpu:
        if gpu is not None:
            log.info("[job %s] on GPU %s", job_num, gpu)
        # inside the job: Hydra would print a UserError reaching it as a traceback, status 1
        record = exit_on_user_error(run_one)(cfg, Path(hydra_cfg.runtime.output_dir))
    return None if record is None else record.overall_mcc


@exit_on_user_error
def main() -> None:
    sys.argv = [sys.argv[0], *prepare_argv(sys.argv[1:], CONF_DIR), *rank_overrides()]
    task()
    leave_process_group()


if __name__ == "__main__":
    main()
