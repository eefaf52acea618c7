"""`nli-stability plan [overrides]`: what a training sweep will run and cost.

    nli-stability plan experiment=mnli_size plan.samples_per_second=17
    nli-stability plan experiment=baseline seed=0..1 plan.json=true
    nli-stability plan experiment=baseline seed=0..9 plan.power_from=outputs/smoke/report

The plan's own options are the `plan.*` keys (`stability/conf/plan.yaml`); every other
override is a training override, expanded by `stability.core.jobs.job_configs` exactly as
`nli-stability train` would. The runs and GPU-hours are computed by `stability.sweep.plan`;
with `plan.power_from` the σ a previous report measured (its seed_power.csv,
`stability.report.power`) says what the planned seeds can detect.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Sequence

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from stability.adaptive.command import is_adaptive, maximum_sweep
from stability.core.command import run_command
from stability.core.config import CONFIG_NAME
from stability.core.errors import UserError, exit_on_user_error
from stability.core.jobs import job_configs
from stability.core.overrides import MULTIRUN_FLAGS, PRINT_FLAGS
from stability.core.schemas.plan import PlanOptions
from stability.report.power import planned_power, power_header, power_rows, read_seed_power, summarise
from stability.statistics.seeds import GROUP_KEY, condition_name
from stability.sweep.plan import PlannedRun, format_plan, format_power, plan_json, planned_seeds, runs_of

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
    exit_on_user_error(refuse_adaptive)(training)
    jobs: list[DictConfig] = []
    measured: list[pd.DataFrame] = []

    def check(configs: list[DictConfig]) -> None:
        jobs.extend(job_configs(training, CONFIG_NAME))
        source = configs[0].plan.power_from
        if source is not None:
            measured.append(read_seed_power(Path(str(source))))

    def task(cfg: DictConfig) -> None:
        options: PlanOptions = OmegaConf.to_object(cfg.plan)
        runs = runs_of(jobs, options.expected_epochs)
        power = seed_power_summary(runs, measured[0], options.power_delta) if measured else None
        if options.json:
            plan = plan_json(runs, options.samples_per_second)
            if power is not None:
                plan["seed_power"] = json.loads(power.to_json(orient="records"))
            print(json.dumps(plan, indent=2))
            return
        print(format_plan(runs, options.samples_per_second, options.expected_epochs))
        if power is not None:
            print_power(power, str(options.power_from), options.power_delta)

    if any(argument.split("=")[0] in PRINT_FLAGS for argument in own):
        exit_on_user_error(job_configs)(training, CONFIG_NAME)  # --cfg prints the plan's config; the training keys are checked all the same
    run_command("plan", task, own, check=check)


def refuse_adaptive(training: list[str]) -> None:
    """An adaptive sweep's seeds depend on its results: refused, with the command that plans its maximum."""
    if is_adaptive(training):
        given = " ".join(arg for arg in training if arg not in maximum_sweep(training))
        fixed = " ".join(arg for arg in maximum_sweep(training) if arg not in MULTIRUN_FLAGS)
        raise UserError(f"{given} makes an adaptive sweep, whose seeds depend on its results: plan plans fixed sweeps",
                        fix=f"plan its most seeds, which no sweep of that plan exceeds: nli-stability plan {fixed}")


def seed_power_summary(runs: list[PlannedRun], measured: pd.DataFrame, delta: float) -> pd.DataFrame:
    """Per planned condition: what its planned seeds detect with the σ `measured` (`report.power.summarise`)."""
    planned = pd.DataFrame(planned_seeds(runs), columns=[*GROUP_KEY, "n_seeds"])
    return summarise(planned_power(measured, planned, delta))


def print_power(summary: pd.DataFrame, source: str, delta: float) -> None:
    """The power table of the planned conditions the report measured, and a line naming the others."""
    known = summary["overall_sigma"].notna() | (summary["fine_categories"] > 0)
    print()
    print(format_power(power_header(f"{delta:g}"), power_rows(summary[known]), source, delta))
    unknown = [f"{r.lang} · {condition_name(r.setup, r.variant)}" for r in summary[~known].itertuples()]
    if unknown:
        print(f"no σ in {source} for: {', '.join(unknown)} (the report has no runs of them)")


if __name__ == "__main__":
    main()
