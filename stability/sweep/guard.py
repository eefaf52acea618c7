"""What a sweep may not do, checked before any job starts, for every launcher.

- **Two jobs in one run directory** would overwrite each other. The run directory names the
  run's identity (`stability.core.identity`), so two jobs can only collide when they differ in
  keys the identity leaves out on purpose (a data location, `trainer.resume`, ...) or when a
  user's own `hydra.sweep.subdir` drops a part of it.
- **One computation twice** in two directories would be counted as two seeds by the report
  (σ shrinks for no reason): e.g. `seed=0,1 seed_init=0 seed_order=0`, where `seed` feeds
  nothing once both of its parts are set.
- **A finished run replaced** by a job of another config or other input content
  (`stability.core.runmatch`): the folder is left alone and the command refuses, one line per
  folder, naming what differs; `force=true` redoes such runs and keeps the finished ones.
- **Two configs pooled as one condition's seeds**: the finished seeds beside a job's run (its
  condition's folder) that this sweep leaves as they are must share the job's config but for what
  seeds may differ in (`runmatch.condition_config`). The variant names only what differs from the
  experiment's defaults as composed now, so a user preset edited between two commands into one
  folder would add seeds of the new config to those of the old.
Each is refused with what makes it so and how to proceed; nothing is written.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from stability.core.errors import UserError
from stability.core.jobs import without_hydra
from stability.core.runmatch import ABSENT, OTHER, Verdict, condition_config, condition_differences, judge, leaves
from stability.core.runrecord import RunDir, fingerprint, semantic_config
from stability.core.schemas.train import train_settings

# derived from the other keys: they differ whenever the keys they are built from do
_DERIVED = ("variant", "out")


def run_directory(cfg: DictConfig) -> Path:
    """Where Hydra puts this job of a sweep."""
    return Path(str(cfg.hydra.sweep.dir)) / str(cfg.hydra.sweep.subdir)


def check_sweep(configs: list[DictConfig]) -> None:
    """Every check of this module, cheapest first."""
    semantics = [semantic_config(without_hydra(cfg)) for cfg in configs]
    refuse_shared_run_dirs(configs)
    refuse_repeated_computations(configs, semantics)
    refuse_replacing_finished_runs(configs)
    refuse_pooling_other_configs(configs, semantics)


def refuse_shared_run_dirs(configs: list[DictConfig]) -> None:
    """Raise a UserError naming the first directory two jobs would share and the keys they differ in."""
    by_directory: dict[Path, list[DictConfig]] = defaultdict(list)
    for cfg in configs:
        by_directory[run_directory(cfg)].append(cfg)
    for directory, sharing in by_directory.items():
        if len(sharing) > 1 and not _differing(sharing):
            raise UserError(f"{len(sharing)} jobs of this sweep are the same job, in {directory}",
                            fix="list each value of a swept key once")
        if len(sharing) > 1:
            raise UserError(f"{len(sharing)} jobs of this sweep would share the run directory {directory}: "
                            f"they differ only in {_differences(sharing)}, which the run's identity leaves out",
                            fix="sweep such a key in separate commands, each with its own paths.output_dir")


def refuse_repeated_computations(configs: list[DictConfig], semantics: list[dict]) -> None:
    """Raise a UserError naming two jobs that would compute the same thing in two directories
    (`semantics`: each job's semantic config)."""
    by_computation: dict[str, list[DictConfig]] = defaultdict(list)
    for cfg, semantic in zip(configs, semantics):
        by_computation[_computation(semantic)].append(cfg)
    for same in by_computation.values():
        if len(same) > 1:
            why = " (seed does nothing when seed_init and seed_order are both set)" \
                if list(_differing(same)) == ["seed"] else ""
            raise UserError(f"{len(same)} jobs of this sweep would compute the same run in "
                            f"{', '.join(str(run_directory(cfg)) for cfg in same)}: they differ only in "
                            f"{_differences(same)}{why}",
                            fix="sweep seed alone, or seed_init and seed_order, not both"
                            if why else "drop the key that changes nothing from the sweep")


def refuse_replacing_finished_runs(configs: list[DictConfig]) -> None:
    """Raise a UserError with one line per run directory whose finished run another config or
    other input content would replace (jobs with `force=true` redo theirs, keeping it)."""
    refusals = []
    for cfg in configs:
        run = RunDir(run_directory(cfg))
        if not cfg.force and (verdict := finished_run_verdict(cfg, run)).state == OTHER:
            refusals.append(verdict.refusal(run, str(cfg.out)))
    if refusals:
        raise UserError("\nerror: ".join(refusals))


def finished_run_verdict(cfg: DictConfig, run: RunDir) -> Verdict:
    """How the finished run in `run` (if any) compares with the job `cfg`: its config and its
    inputs' content (hashed only where a run finished: a fresh sweep reads no file here)."""
    if not run.is_finished():
        return Verdict(ABSENT)
    from stability.data.inputs import run_inputs  # `datasets` loads only where a run finished

    task_cfg = without_hydra(cfg)
    settings = train_settings(task_cfg)
    return judge(run, task_cfg, run_inputs(settings, settings.model), settings.trainer.save_model,
                 settings.trainer.dynamics)


def refuse_pooling_other_configs(configs: list[DictConfig], semantics: list[dict]) -> None:
    """Raise a UserError naming the first condition folder whose finished seeds, left as they are by
    this sweep, were trained with another config than the sweep's jobs of that condition."""
    jobs = {run_directory(cfg): (cfg, semantic) for cfg, semantic in zip(configs, semantics)}
    folders, checked = set(jobs), set()
    for directory, (cfg, semantic) in jobs.items():
        if directory.parent in checked:
            continue
        checked.add(directory.parent)
        mine = condition_config(semantic)
        others = [(run, differences) for run in _seeds_beside(directory, cfg, folders)
                  if (values := run.read_config_values()) is not None
                  and (differences := condition_differences(condition_config(semantic_config(values)), mine))]
        if others:
            names = ", ".join(run.path.name for run, _ in others)
            condition = "/".join(filter(None, (str(cfg.lang.code), str(cfg.setup), str(cfg.variant))))
            raise UserError(f"{directory.parent}: the finished runs {names} there were trained with another config "
                            f"than this sweep's {condition} runs ({'; '.join(others[0][1])}), and "
                            "would be pooled with them as the seeds of one condition",
                            fix="train with their config again (the preset and overrides they were trained with) to "
                                "add seeds to them, sweep their seeds too with force=true to redo them with this "
                                "config, or pass out=<another folder> to keep both")


def _seeds_beside(directory: Path, cfg: DictConfig, jobs: set[Path]) -> list[RunDir]:
    """The finished runs in the folders beside the job's run folder that are of its condition
    (lang, setup, variant) and no job of this sweep: the condition's other seeds, left as they are."""
    folder = directory.parent
    runs = [RunDir(child) for child in sorted(folder.iterdir()) if child not in jobs] if folder.is_dir() else []
    condition = (str(cfg.lang.code), str(cfg.setup), str(cfg.variant))
    return [run for run in runs if run.is_finished() and _condition_of(run) == condition]


def _condition_of(run: RunDir) -> tuple[str, str, str] | None:
    """(lang, setup, variant) of a finished run; None where its record cannot be read."""
    try:
        record = run.read_record()
    except UserError:
        return None
    return record.lang, record.setup, record.variant


def _computation(semantic: dict) -> str:
    """A hash of what a job computes: its semantic config without `seed`, whose effect is all
    in `seed_init` and `seed_order` once they are resolved."""
    semantic = dict(semantic)
    semantic.pop("seed", None)
    return fingerprint(semantic)


def _differing(configs: list[DictConfig]) -> dict[str, list[object]]:
    """The values of each key (derived keys aside) the configs do not all agree on."""
    values = [dict(leaves(OmegaConf.to_container(cfg, resolve=True))) for cfg in configs]
    keys = sorted({key for value in values for key in value
                   if key not in _DERIVED and len({repr(other.get(key)) for other in values}) > 1})
    return {key: [value.get(key) for value in values] for key in keys}


def _differences(configs: list[DictConfig]) -> str:
    """`key = a, b; ...` for the keys the configs differ in."""
    return "; ".join(f"{key} = {', '.join(map(str, values))}"
                     for key, values in _differing(configs).items())
