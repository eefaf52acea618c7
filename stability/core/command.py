"""Every command is one Hydra app: `nli-stability <command> [key=value ...]`.

So every command takes its options the same way (Hydra overrides, `a..b` ranges, sweeps),
and gets `--help` from its config, `--cfg job`, `--info` and multirun from Hydra. Before Hydra
starts, every job's config is composed and checked against its schema (`core.jobs`), so a
wrong key, type or range is one line and exit status 2 before any work, also for a sweep
(Hydra itself would print a multi-line message, or fail halfway through the sweep).
"""
from __future__ import annotations

import sys
from typing import Callable, Sequence

import hydra
from omegaconf import DictConfig

from stability.core.config import CONF_DIR
from stability.core.errors import exit_on_user_error
from stability.core.jobs import job_configs
from stability.core.errors import UserError
from stability.core.overrides import HYDRA_FLAGS, MULTIRUN_FLAGS, prepare_argv

Task = Callable[[DictConfig], object]
Check = Callable[[list[DictConfig]], None]


@exit_on_user_error
def run_command(config_name: str, task: Task, argv: Sequence[str] | None = None, *,
                check: Check | None = None, extra_overrides: Sequence[str] = ()) -> None:
    """Compose and check every job of `argv`, run `check` on them (e.g. no two runs share a
    directory), then hand the command line to Hydra, which calls `task(cfg)` once per job.

    `task` runs inside Hydra's job: a UserError there is one line and status 2 as well.
    """
    arguments = prepare_argv(list(sys.argv[1:] if argv is None else argv), CONF_DIR)
    unknown = [arg for arg in arguments if arg.startswith("-") and arg.split("=")[0] not in HYDRA_FLAGS]
    if unknown:  # e.g. an argparse-style --lang fr: Hydra would print its whole usage
        raise UserError(f"unknown option '{unknown[0]}'",
                        fix="options are key=value overrides, e.g. lang=fr files=[a.jsonl]; --help lists the keys")
    if all(arg in MULTIRUN_FLAGS for arg in arguments if arg.startswith("-")):  # not --help, --cfg, ...
        configs = job_configs(arguments, config_name)
        if check is not None:
            check(configs)
    sys.argv = [sys.argv[0], *arguments, *extra_overrides]
    hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name=config_name)(_job(task))()


def _job(task: Task) -> Callable[[DictConfig], object]:
    """`task` with user errors turned into one line (Hydra would print a UserError reaching it
    as a traceback, status 1)."""
    guarded = exit_on_user_error(task)

    def job(cfg: DictConfig) -> object:
        return guarded(cfg)

    job.__module__ = task.__module__  # Hydra names the job and finds the calling file from here
    return job
