"""The job configs `python -m stability.train ARGS` would run, expanded exactly as Hydra does.

Mirrors `hydra.multirun` with the basic sweeper: the sweep's arguments are the composed
config's `hydra.sweeper.params` followed by the command-line task overrides (a key given on
the command line replaces the preset's list), the jobs are their cartesian product in the
basic sweeper's order (`sweep_jobs`, built on Hydra's public override API; a test checks it
against the basic sweeper itself), and each job is composed like the launcher composes it
(the command-line `hydra.*` overrides, then the job's own overrides).
"""
from __future__ import annotations

import itertools
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from stability.core.config import CONF_DIR, CONFIG_NAME
from stability.core.errors import UserError, first_line
from stability.sweep.overrides import MULTIRUN_FLAGS, prepare_argv

# The `_target_` of hydra/sweeper=basic, the only sweeper whose expansion the plan knows.
BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"


def sweep_jobs(arguments: list[Override]) -> list[list[str]]:
    """The basic sweeper's jobs: one value per key (a later override of a key replaces an
    earlier one in its place), the cartesian product in key order."""
    by_key: dict[str, list[str]] = {}
    for override in arguments:
        key = override.get_key_element()
        if not override.is_sweep_override():
            by_key[key] = [f"{key}={override.get_value_element_as_str()}"]
        elif override.is_discrete_sweep():
            by_key[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
        else:
            raise UserError(f"the basic sweeper cannot sweep '{override.input_line}'",
                            fix="list the values (key=a,b,c) or use an integer range key=a..b")
    return [list(job) for job in itertools.product(*by_key.values())]


def job_overrides(master: DictConfig, task: list[Override], multirun: bool) -> list[list[str]]:
    """Each job's overrides, in Hydra's launch order."""
    if not multirun:
        return [[override.input_line for override in task]]
    sweeper = master.hydra.sweeper
    if sweeper.get("_target_") != BASIC_SWEEPER:
        raise UserError(f"the plan knows only Hydra's basic sweeper, not {sweeper.get('_target_')}",
                        fix="plan with the default hydra/sweeper")
    params = [f"{key}={value}" for key, value in (sweeper.params or {}).items()]
    arguments = OverridesParser.create().parse_overrides(params) + task
    return sweep_jobs(arguments)


def job_configs(argv: list[str], conf_dir: Path = CONF_DIR) -> list[DictConfig]:
    """The config of every job a training command line with these arguments would launch."""
    prepared = prepare_argv(argv, conf_dir)
    flags = [arg for arg in prepared if arg.startswith("-")]
    unknown = [flag for flag in flags if flag not in MULTIRUN_FLAGS]
    if unknown:
        raise UserError(f"unknown option '{unknown[0]}'",
                        fix="pass overrides key=value and the plan's own options")
    try:
        overrides = OverridesParser.create().parse_overrides([a for a in prepared if not a.startswith("-")])
    except HydraException as err:  # prepare_argv checks only the key=value arguments
        raise UserError(first_line(err), fix="write overrides as key=value") from None
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
        message = first_line(err)
        raise UserError(f"cannot compose the config ({message})",
                        fix="check the overrides against conf/ "
                            "(python -m stability.train --cfg job prints the config)") from None
