"""`python -m stability.train [overrides]`: one fine-tuning run per (experiment, lang, setup, seed).

    python -m stability.train experiment=smoke          # offline, two seeds, minutes on a CPU
    python -m stability.train seed=0..5 lang=fr,de,sv   # a sweep: 18 runs
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Iterator, Sequence

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from stability.core.command import run_command
from stability.core.config import CONFIG_NAME
from stability.core.joboutput import claim_job_folder
from stability.core.runlock import hold_run
from stability.core.schemas.train import train_settings
from stability.finetune.distributed import leave_process_group, rank_overrides
from stability.sweep.devices import job_device
from stability.sweep.guard import check_sweep
from stability.sweep.squeue import job_queued

log = logging.getLogger(__name__)


def task(cfg: DictConfig) -> float | None:
    """One Hydra job: one run, or its skip when it already finished with the same config.

    The config is converted to typed settings here, once; below this point only the run
    record sees `cfg` itself (config.yaml, the fingerprint, the tracker's copy)."""
    from stability.finetune.run import run_one  # heavy imports only once a job really runs

    settings = train_settings(cfg)
    hydra_cfg = HydraConfig.get()
    job_num = OmegaConf.select(hydra_cfg, "job.num", default=0)  # unset outside a multirun
    record = run_one(settings, cfg, Path(hydra_cfg.runtime.output_dir), claim=claim_job_folder,
                     place=partial(_on_device, job_num))
    return None if record is None else record.overall_mcc


@contextmanager
def _on_device(job_num: int) -> Iterator[None]:
    """The job's GPU or CPU share while its run trains (`sweep.devices`)."""
    with job_device(job_num) as gpu:
        if gpu is not None:
            log.info("[job %s] on GPU %s", job_num, gpu)
        yield


def interrupted(configs: list[DictConfig], multirun: bool) -> str:
    """What Ctrl-C leaves: every finished run (each is written whole, and a rerun skips it)."""
    kept = "finished runs are kept; the same command again goes on"
    return f"{kept} (nli-stability status runs={configs[0].hydra.sweep.dir})" if multirun and configs else kept


def main(argv: Sequence[str] | None = None) -> None:
    """Every job is composed before the first starts: a bad value, two jobs that would share a
    run directory or compute the same run, or a finished run another config or other data would
    replace, is refused now (`sweep.guard`) rather than a failure (or a lost run) halfway through."""
    run_command(CONFIG_NAME, task, argv, check=check_sweep, extra_overrides=rank_overrides(),
                hold=partial(hold_run, slurm_queued=job_queued), claimed=True,  # one writer per run
                interrupted=interrupted)
    leave_process_group()


if __name__ == "__main__":
    main()
