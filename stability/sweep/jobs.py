"""The job configs `python -m stability.train ARGS` would run, expanded exactly as Hydra does.

Mirrors `hydra.multirun` with the basic sweeper: the sweep's arguments are the composed
config's `hydra.sweeper.params` followed by the command-line task overrides (a key given on
the command line replaces the preset's list), `BasicSweeper.split_arguments` itself takes
their cartesian product, and each job is composed like the launcher composes it (the
command-line `hydra.*` overrides, then the job's own overrides).
"""
from __future__ import annotations

from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from stability.core.config import CONF_DIR, CONFIG_NAME
from stability.core.errors import UserError
from stability.sweep.overrides import prepare_argv

_BASIC_SWEEPER = f"{BasicSweeper.__module__}.{BasicSweeper.__name__}"
_MULTIRUN_FLAGS = ("-m", "--multirun")


def job_overrides(master: DictConfig, task: list[Override], multirun: bool) -> list[list[str]]:
    """Each job's overrides, in Hydra's launch order."""
    if not multirun:
        return [[override.input_line for override in task]]
    sweeper = master.hydra.sweeper
    if sweeper.get("_target_") != _BASIC_SWEEPER:
        raise UserError(f"the plan knows only Hydra's basic sweeper, not {sweeper.get('_target_')}",
                        fix="plan with the default hydra/sweeper")
    params = [f"{key}={value}" for key, value in (sweeper.params or {}).items()]
    arguments = OverridesParser.create().parse_overrides(params) + task
    (jobs,) = BasicSweeper.split_arguments(arguments, max_batch_size=None)
    return jobs


def job_configs(argv: list[str], conf_dir: Path = CONF_DIR) -> list[DictConfig]:
    """The config of every job a training command line with these arguments would launch."""
    prepared = prepare_argv(argv, conf_dir)
    flags = [arg for arg in prepared if arg.startswith("-")]
    unknown = [flag for flag in flags if flag not in _MULTIRUN_FLAGS]
    if unknown:
        raise UserError(f"unknown option '{unknown[0]}'",
                        fix="pass overrides key=value and the plan's own options")
    try:
        overrides = OverridesParser.create().parse_overrides([a for a in prepared if not a.startswith("-")])
    except HydraException as err:  # prepare_argv checks only the key=value arguments
        raise UserError(str(err).strip().splitlines()[0], fix="write overrides as key=value") from None
    hydra_lines = [o.input_line for o in overrides if o.is_hydra_override()]
    task = [o for o in overrides if not o.is_hydra_override()]
    try:
        with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3", job_name=CONFIG_NAME):
            fixed = [o.input_line for o in overrides if not o.is_sweep_override()]
            master = compose(CONFIG_NAME, overrides=fixed, return_hydra_config=True)
            multirun = bool(flags) or master.hydra.mode == RunMode.MULTIRUN
            configs = [compose(CONFIG_NAME, overrides=hydra_lines + job)
                       for job in job_overrides(master, task, multirun)]
            for cfg in configs:
                OmegaConf.resolve(cfg)  # interpolation errors surface here, as user errors
            return configs
    except (HydraException, OmegaConfBaseException) as err:
        message = str(err).strip().splitlines()[0]
        raise UserError(f"cannot compose the config ({message})",
                        fix="check the overrides against conf/ "
                            "(python -m stability.train --cfg job prints the config)") from None
