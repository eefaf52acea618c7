"""`python -m stability.train [overrides]`: one fine-tuning run per (experiment, lang, setup, seed).

    python -m stability.train experiment=smoke          # offline, two seeds, minutes on a CPU
    python -m stability.train seed=0..5 lang=fr,de,sv   # a sweep: 18 runs
"""
from __future__ import annotations

import logging
import sys
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from pathlib import Path
from typing import Callable, Iterator, Sequence

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from stability.adaptive.command import is_adaptive
from stability.core.command import run_command
from stability.core.config import CONFIG_NAME
from stability.core.errors import exit_on_interrupt, exit_on_user_error
from stability.core.joboutput import claim_job_folder
from stability.core.jobs import without_hydra
from stability.core.runlock import hold_run
from stability.core.runrecord import RunRecord
from stability.core.schemas.train import TrainConfig, train_settings
from stability.finetune.distributed import leave_process_group, rank_overrides
from stability.sweep.devices import job_device
from stability.sweep.fused_groups import first_job_folder, fused_groups, group_members, register_followers
from stability.sweep.guard import check_sweep
from stability.sweep.squeue import job_queued
from stability.sweep.table import remember_sweep

log = logging.getLogger(__name__)


def task(cfg: DictConfig) -> float | None:
    """One Hydra job: one run, or its skip when it already finished with the same config; a fused
    group's first job trains the group, its other jobs (run in this process) skip their runs it wrote.

    The config is converted to typed settings here, once; below this point only the run
    record sees `cfg` itself (config.yaml, the fingerprint, the tracker's copy)."""
    from stability.finetune.run import run_one  # the run's input hashing: only once a job runs

    settings = train_settings(cfg)
    hydra_cfg = HydraConfig.get()
    job_num = OmegaConf.select(hydra_cfg, "job.num", default=0)  # unset outside a multirun
    path = Path(hydra_cfg.runtime.output_dir)
    place = partial(_on_device, job_num)
    first = first_job_folder(path)
    if first is not None:   # trained by its group's first job, which ran before it in this process
        from stability.finetune.fused_run import follow_group

        record = follow_group(settings, cfg, path, first)
    elif settings.trainer.fuse_seeds > 1:
        record = _train_group(settings, cfg, path.absolute(), place)
    else:
        record = run_one(settings, cfg, path, claim=claim_job_folder, place=place)
    return None if record is None else record.overall_mcc


@contextmanager
def _on_device(job_num: int) -> Iterator[None]:
    """The job's GPU or CPU share while its run trains (`sweep.devices`)."""
    with job_device(job_num) as gpu:
        if gpu is not None:
            log.info("[job %s] on GPU %s", job_num, gpu)
        yield


def _train_group(settings: TrainConfig, cfg: DictConfig, path: Path,
                 place: Callable[[], AbstractContextManager[object]]) -> RunRecord:
    """The record of a fused group's first job, which trains the group (`finetune.fused_run`) holding
    `place`, the job's device, as a solo run does; its members are derived from its own config
    (`sweep.fused_groups.group_members`), so it trains wherever its launcher started it."""
    from stability.finetune.fused_run import Member, run_group

    members = [Member(settings, cfg, path) if folder == path else Member(train_settings(member), member, folder)
               for member, folder in group_members(cfg, path)]
    with place():
        records = run_group(members, path, partial(hold_run, slurm_queued=job_queued), claim=claim_job_folder)
    return next(record for record, member in zip(records, members) if member.path == path)


def check(configs: list[DictConfig]) -> None:
    """`sweep.guard`'s checks, then the sweep's fused groups (`sweep.fused_groups`), each refused in
    one line where it cannot be fused, and kept for the jobs to find; the run folders kept for the
    sweep's table."""
    check_sweep(configs)
    remember_sweep(configs)
    groups = fused_groups(configs)
    for group in groups:
        from stability.finetune.fused import refuse_unfusable   # torch: only for a fused sweep

        refuse_unfusable(train_settings(without_hydra(configs[group.first])).trainer)
    if any(cfg.trainer.mixed_precision == "fp16" for cfg in configs) and _runs_here(configs[0]):
        from stability.finetune.precision import refuse_fp16_without_gpu   # torch: only for fp16

        refuse_fp16_without_gpu()
    register_followers(configs, groups)


def _runs_here(cfg: DictConfig) -> bool:
    """Whether the jobs run on this machine: every launcher but SLURM's (whose nodes' devices are
    not known here)."""
    launcher = str(OmegaConf.select(cfg, "hydra.launcher._target_", default="") or "")
    return cfg.hydra.mode != RunMode.MULTIRUN or "slurm" not in launcher.lower()


def interrupted(configs: list[DictConfig], multirun: bool) -> str:
    """What Ctrl-C leaves: every finished run (each is written whole, and a rerun skips it)."""
    kept = "finished runs are kept; the same command again goes on"
    return f"{kept} (nli-stability status runs={configs[0].hydra.sweep.dir})" if multirun and configs else kept


def main(argv: Sequence[str] | None = None) -> None:
    """Every job is composed before the first starts: a bad value, two jobs that would share a
    run directory or compute the same run, or a finished run another config or other data would
    replace, is refused now (`sweep.guard`) rather than a failure (or a lost run) halfway through.
    With `adaptive=...` the sweep runs in rounds, each such a command (`stability.adaptive`)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if is_adaptive(arguments):
        adaptive(arguments)
        return
    train(arguments)


@exit_on_user_error
def adaptive(arguments: list[str]) -> None:
    """The adaptive sweep: Ctrl-C between or inside rounds keeps every recorded round."""
    from stability.adaptive.sweep import run_adaptive  # the report's statistics, only for an adaptive sweep

    with exit_on_interrupt("finished runs and decided rounds are kept; the same command again goes on"):
        run_adaptive(arguments, train)


def train(argv: Sequence[str], ready: Callable[[], None] | None = None) -> None:
    """One training command: a single run or a multirun; `ready` is called once every check has
    passed, before the first job starts (an adaptive sweep records its plan there)."""
    run_command(CONFIG_NAME, task, argv, check=check, extra_overrides=rank_overrides(),
                hold=partial(hold_run, slurm_queued=job_queued), claimed=True,  # one writer per run
                interrupted=interrupted, ready=ready)
    leave_process_group()


if __name__ == "__main__":
    main()
