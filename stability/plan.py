"""`nli-stability plan [overrides]`: what a training sweep will run and cost.

    nli-stability plan experiment=mnli_size plan.samples_per_second=17
    nli-stability plan experiment=baseline seed=0..1 plan.json=true

The plan's own options are the `plan.*` keys (`stability/conf/plan.yaml`); every other
override is a training override, expanded by `stability.core.jobs.job_configs` exactly as
`nli-stability train` would. The runs and GPU-hours are computed by `stability.sweep.plan`.
"""
from __future__ import annotations

import json
import sys
from typing import Sequence

from omegaconf import DictConfig, OmegaConf

from stability.core.command import run_command
from stability.core.config import CONFIG_NAME
from stability.core.jobs import job_configs
from stability.core.overrides import MULTIRUN_FLAGS
from stability.core.schemas.plan import PlanOptions
from stability.sweep.plan import format_plan, plan_json, runs_of

PLAN_KEY = "plan"


def split_arguments(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the plan's own arguments: plan.* overrides and Hydra's flags such as --help or --cfg job;
    the training overrides, with -m)."""
    own, training = [], []
    for argument in argv:
        key = argument.split("=", 1)[0].lstrip("+~")
        is_training = argument in MULTIRUN_FLAGS or (
            "=" in argument and not argument.startswith("-") and key != PLAN_KEY and not key.startswith(PLAN_KEY + "."))
        (training if is_training else own).append(argument)
    return own, training


def main(argv: Sequence[str] | None = None) -> None:
    """Composes every training job before Hydra starts (a bad override is one line, status 2),
    then prints their plan."""
    own, training = split_arguments(list(sys.argv[1:] if argv is None else argv))
    jobs: list[DictConfig] = []

    def check(_: list[DictConfig]) -> None:
        jobs.extend(job_configs(training, CONFIG_NAME))

    def task(cfg: DictConfig) -> None:
        options: PlanOptions = OmegaConf.to_object(cfg.plan)
        runs = runs_of(jobs, options.expected_epochs)
        if options.json:
            print(json.dumps(plan_json(runs, options.samples_per_second), indent=2))
        else:
            print(format_plan(runs, options.samples_per_second, options.expected_epochs))

    run_command("plan", task, own, check=check)


if __name__ == "__main__":
    main()
