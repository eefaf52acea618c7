"""The packaged Hydra configs (`CONF_DIR`, from `confdir`), their names, and the resolvers they use.

Importing this module registers the resolvers, so any `compose` of the configs works.
"""
from __future__ import annotations

import os
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict

from stability.core.confdir import CONF_DIR
from stability.core.errors import UserError
from stability.core.identity import run_subdir, variant_of
from stability.core.schemas import register_all
from stability.core.setups import diagnostic_tag, setup_name

CONFIG_NAME = "train"
PROBE_CONFIG_NAME = "probe"
REPORT_CONFIG_NAME = "report"
# Without GPUs, `hydra/launcher=local_gpus` runs one job per this many cores: small batches
# gain little from more threads, so parallel jobs use the machine better.
CPU_CORES_PER_JOB = 4


def jobs_for(n_gpus: int, n_cpus: int, jobs_per_device: int | None = None) -> int:
    """Parallel jobs on one machine: `jobs_per_device` per GPU, or that many on the CPU; by
    default one per GPU, or one per CPU_CORES_PER_JOB cores."""
    if jobs_per_device is None:
        return n_gpus if n_gpus > 0 else max(1, n_cpus // CPU_CORES_PER_JOB)
    if isinstance(jobs_per_device, bool) or not isinstance(jobs_per_device, int) or jobs_per_device < 1:
        raise UserError(f"hydra.launcher.jobs_per_device={jobs_per_device!r} is out of range",
                        fix="pass hydra.launcher.jobs_per_device=<an integer >= 1 or null>")
    return jobs_per_device * max(n_gpus, 1)


def local_job_count(jobs_per_device: int | None = None) -> int:
    """`${local_jobs:${.jobs_per_device}}`, the default `hydra.launcher.n_jobs` of
    `hydra/launcher=local_gpus`."""
    import torch

    n_gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return jobs_for(n_gpus, os.cpu_count() or 1, jobs_per_device)


def probe_output_dir(runs: object, output_dir: object, lang: object, labels: object) -> str:
    """`${probe_out:}`, where `nli-stability probe` writes: beside the runs it probes
    (`<runs>/probing`), else `<paths.output_dir>/probing/<lang>`; `_gold` for gold labels."""
    folder = "probing" if labels == "annotator" else f"probing_{labels}"
    if runs not in (None, "", "None"):
        return str(Path(str(runs)) / folder)
    return str(Path(str(output_dir)) / folder / str(lang))


def report_output_dir(runs: object) -> str:
    """`${report_out:${runs}}`, where the report writes by default: `<first of runs>/report` for
    a folder, `report/` beside a CSV file (`report` while runs is still empty)."""
    first = runs[0] if isinstance(runs, (list, ListConfig)) and len(runs) else runs
    if first in (None, "") or isinstance(first, (list, ListConfig)):
        return "report"
    path = Path(str(first))
    return str(path / "report" if path.is_dir() else path.parent / "report")


def run_variant(*, _root_: DictConfig) -> str:
    """`${run_variant:}`, the run's variant (see `stability.core.identity`)."""
    return variant_of(_root_)


for _name, _resolver in (("setup_name", setup_name), ("diagnostic_tag", diagnostic_tag),
                         ("local_jobs", local_job_count), ("probe_out", probe_output_dir),
                         ("run_variant", run_variant), ("run_subdir", run_subdir),
                         ("report_out", report_output_dir)):
    if not OmegaConf.has_resolver(_name):
        OmegaConf.register_new_resolver(_name, _resolver)


register_all()


def compose_config(overrides: list[str], return_hydra_config: bool = False,
                   config_name: str = CONFIG_NAME) -> DictConfig:
    """A packaged config (training by default) with these overrides, composed outside a Hydra
    run (tools, tests)."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name, overrides=overrides, return_hydra_config=True)
        if "variant" in cfg:  # resolved while Hydra's group choices are at hand
            cfg.variant = cfg.variant
    if not return_hydra_config:
        with open_dict(cfg):
            del cfg["hydra"]
    return cfg
