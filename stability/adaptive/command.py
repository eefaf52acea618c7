"""An adaptive sweep's command line: its own settings, its conditions, and each round's multiruns.

The `adaptive=<goal>` and `adaptive.<key>=...` overrides (and `seed=adaptive`) are the sweep's own,
composed apart (`conf/adaptive_sweep.yaml`); the goal is always chosen on the command line, so a stray
`adaptive.<key>=` never starts a sweep of a default goal. The rest is an ordinary training sweep's
command line with the seeds left to the plan. Its jobs at seed 0 give the conditions (lang, setup,
variant), the overrides that make each and its composed config. A round runs some conditions at its
seeds: the basic sweeper takes only cartesian products, so the open conditions are covered by as few
products of their overrides as the grouping below finds (one while every condition is open), each one
multirun. A schedule no round of which could run is refused before anything is written: a round
larger than one command composes (`MAX_JOBS`), or one that would split a fused block of seeds.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from stability.core.confdir import CONF_DIR
from stability.core.errors import UserError
from stability.core.identity import run_subdir
from stability.core.jobs import job_configs, without_hydra
from stability.core.markdown import counted
from stability.core.overrides import MAX_JOBS, MULTIRUN_FLAGS, prepare_argv, split_flags
from stability.core.runmatch import condition_config
from stability.core.runrecord import semantic_config
from stability.core.schemas.adaptive import GOALS, MAX_SEEDS, Adaptive

ADAPTIVE_KEY, SEED_KEY = "adaptive", "seed"
SEED_ADAPTIVE = "seed=adaptive"   # the seeds are the plan's
CONFIG_NAME = "adaptive_sweep"


def _key(argument: str) -> str:
    return argument.split("=", 1)[0].lstrip("+~")


def is_adaptive(argv: list[str]) -> bool:
    """Whether the command line asks for an adaptive sweep: an `adaptive` key or `seed=adaptive`."""
    return any(_is_adaptive_key(arg) or arg == SEED_ADAPTIVE for arg in argv)


def _is_adaptive_key(argument: str) -> bool:
    key = _key(argument)
    return "=" in argument and (key == ADAPTIVE_KEY or key.startswith(ADAPTIVE_KEY + "."))


@dataclass(frozen=True)
class Condition:
    """One condition of the sweep: its name (`lang/setup[/variant]`), identity, overrides (no seed),
    composed config (`runmatch.condition_config`) and engine (`trainer.fuse_seeds`)."""

    name: str
    lang: str
    setup: str
    variant: str
    overrides: dict[str, str]
    config: dict
    fuse_seeds: int

    def run(self, folder: Path, seed: int) -> Path:
        return folder / run_subdir(self.lang, self.setup, self.variant, seed)


@dataclass(frozen=True)
class AdaptiveCommand:
    settings: Adaptive
    folder: Path                  # the sweep's folder (`out`): run folders and the record
    conditions: dict[str, Condition]
    hydra: list[str]              # hydra overrides (launcher, ...), kept on every round
    overrides: list[str]          # the training overrides as given (ranges expanded), for the plan

    def round_commands(self, conditions: list[str], seeds: list[int]) -> list[list[str]]:
        """The multirun command lines that train exactly `conditions` × `seeds`."""
        rows = [self.conditions[name].overrides for name in conditions]
        seed = f"{SEED_KEY}={','.join(map(str, seeds))}"
        return [[MULTIRUN_FLAGS[1], *self.hydra, *(f"{key}={','.join(values)}" for key, values in product.items()),
                 seed] for product in products(rows)]


def products(rows: list[dict[str, str]]) -> list[dict[str, list[str]]]:
    """Cartesian products of values per key whose union is exactly `rows` (each row a value per key,
    all rows the same keys): split on the first key, and merge its values whose rows below are the
    same products."""
    if not rows:
        return []
    return _products(rows, list(rows[0]))


def _products(rows: list[dict[str, str]], keys: list[str]) -> list[dict[str, list[str]]]:
    if not keys:
        return [{}]
    key, rest = keys[0], keys[1:]
    by_value: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_value.setdefault(row[key], []).append(row)
    merged: dict[str, tuple[list[dict[str, list[str]]], list[str]]] = {}
    for value, subset in by_value.items():
        below = _products(subset, rest)
        merged.setdefault(json.dumps(below), (below, []))[1].append(value)
    return [{key: values, **product} for below, values in merged.values() for product in below]


def maximum_sweep(argv: list[str]) -> list[str]:
    """The fixed sweep of an adaptive command line's most seeds (`adaptive.max`, default goal
    precision's where none is chosen): its training overrides with `seed=0..<max - 1>`, what no
    sweep of its plan exceeds (`plan` plans that)."""
    own = [arg for arg in argv if _is_adaptive_key(arg)]
    if not any(_key(arg) == ADAPTIVE_KEY for arg in own):
        own = [f"{ADAPTIVE_KEY}={GOALS[0]}", *own]
    settings = OmegaConf.to_object(without_hydra(job_configs(own, CONFIG_NAME)[0]))
    training = [arg for arg in argv if not _is_adaptive_key(arg) and arg != SEED_ADAPTIVE and _key(arg) != SEED_KEY]
    return [*training, f"{SEED_KEY}=0..{settings.adaptive.max - 1}"]


def parse(argv: list[str]) -> AdaptiveCommand:
    """The adaptive settings, the conditions and the hydra overrides of an adaptive command line;
    a flag other than -m, or seeds given on it, is one UserError."""
    _refuse_flags_and_seeds(argv)
    own = [arg for arg in argv if _is_adaptive_key(arg)]
    if not any(_key(arg) == ADAPTIVE_KEY for arg in own):
        given = own[0] if own else SEED_ADAPTIVE
        raise UserError(f"'{given}' without adaptive=<goal>: an adaptive sweep's goal is chosen on the command line",
                        fix=f"add {' or '.join(f'{ADAPTIVE_KEY}={goal}' for goal in GOALS)} (docs/adaptive-sweeps.md)")
    training = [arg for arg in argv if not arg.startswith("-") and not _is_adaptive_key(arg) and arg != SEED_ADAPTIVE]
    settings = OmegaConf.to_object(without_hydra(job_configs(own, CONFIG_NAME)[0]))
    configs = job_configs([MULTIRUN_FLAGS[1], *training, f"{SEED_KEY}=0"])
    _refuse_conditions_that_move(configs, job_configs([MULTIRUN_FLAGS[1], *training, f"{SEED_KEY}=1"]))
    folders = sorted({str(cfg.hydra.sweep.dir) for cfg in configs})
    if len(folders) > 1:
        raise UserError(f"the sweep writes into {len(folders)} folders ({', '.join(folders)}); an adaptive sweep "
                        "keeps one record", fix="sweep out (or experiment_name) in separate adaptive sweeps")
    parsed = OverridesParser.create().parse_overrides(
        [arg for arg in prepare_argv(training, CONF_DIR) if not arg.startswith("-")])
    hydra = [o.input_line for o in parsed if o.is_hydra_override()]   # the launcher: no part of the plan
    conditions = _conditions(configs)
    _refuse_schedules_that_cannot_run(settings.adaptive, conditions)
    return AdaptiveCommand(settings.adaptive, Path(folders[0]), conditions, hydra,
                           [o.input_line for o in parsed if not o.is_hydra_override()])


def _refuse_flags_and_seeds(argv: list[str]) -> None:
    flags, _ = split_flags(argv)
    other = [flag for flag in flags if flag not in MULTIRUN_FLAGS]
    if other:
        raise UserError(f"an adaptive sweep takes overrides only, not '{other[0]}'",
                        fix=f"drop {other[0]}; docs/adaptive-sweeps.md says what an adaptive sweep writes")
    seeds = [arg for arg in argv if not arg.startswith("-") and _key(arg) == SEED_KEY and arg != SEED_ADAPTIVE]
    if seeds:
        raise UserError(f"'{seeds[0]}': an adaptive sweep chooses its seeds",
                        fix="drop it (or write seed=adaptive); adaptive.start, adaptive.step and adaptive.max "
                            "set the seeds")


def _refuse_conditions_that_move(first: list[DictConfig], second: list[DictConfig]) -> None:
    """Each job's condition is the same at seed 0 and seed 1: a seed_init or seed_order set apart from
    the seed names a variant (`init0`) at every seed but its own, so its seeds would not be one condition."""
    for at_zero, at_one in zip(first, second):
        moved = str(at_zero.hydra.sweep.subdir).rsplit("/", 1)[0], str(at_one.hydra.sweep.subdir).rsplit("/", 1)[0]
        if moved[0] != moved[1]:
            raise UserError(f"the runs' folder changes with the seed ({moved[0]} at seed 0, {moved[1]} at seed 1), "
                            "so the seeds of an adaptive sweep would not be one condition",
                            fix="leave seed_init and seed_order to follow seed in an adaptive sweep")


def _conditions(configs: list[DictConfig]) -> dict[str, Condition]:
    """Each job's condition (its run folder without the seed) with the overrides that make it."""
    conditions = {}
    for cfg in configs:
        overrides = dict(line.split("=", 1) for line in cfg.hydra.overrides.task if _key(line) != SEED_KEY)
        name = str(cfg.hydra.sweep.subdir).rsplit("/", 1)[0]
        conditions[name] = Condition(name, str(cfg.lang.code), str(cfg.setup), str(cfg.variant), overrides,
                                     condition_config(semantic_config(without_hydra(cfg))),
                                     int(cfg.trainer.fuse_seeds))
    return conditions


def _refuse_schedules_that_cannot_run(settings: Adaptive, conditions: dict[str, Condition]) -> None:
    """Every round is one training command of at most `MAX_JOBS` jobs (the last, every condition at
    `max` seeds, is the largest: a round trains each open condition's seeds so far), and holds whole
    blocks of each fused condition's seeds (`trainer.fuse_seeds=K` trains seeds K at a time)."""
    if settings.max * len(conditions) > MAX_JOBS:
        most = MAX_JOBS // len(conditions)
        raise UserError(f"adaptive.max={settings.max} seeds of {counted(len(conditions), 'condition')} is a round of "
                        f"{settings.max * len(conditions):,} jobs, more than the {MAX_JOBS:,} one command composes "
                        "and checks before it starts",
                        fix=f"pass adaptive.max=<at most {most}>, or split the conditions over adaptive sweeps "
                            "with an out= each" if most >= settings.start else
                            "split the conditions over adaptive sweeps with an out= each")
    for condition in conditions.values():
        k = condition.fuse_seeds
        schedule = {"start": settings.start, "step": settings.step, "max": settings.max}
        split = {key: value for key, value in schedule.items() if value % k}
        if split:
            whole = " ".join(f"adaptive.{key}={_whole_blocks(value, k)}" for key, value in schedule.items())
            raise UserError(f"trainer.fuse_seeds={k} trains {condition.name}'s seeds in blocks of {k}, and "
                            f"{', '.join(f'adaptive.{key}={value}' for key, value in split.items())} would end a round "
                            "inside a block",
                            fix=f"give every round whole blocks: {whole} (multiples of {k})")


def _whole_blocks(seeds: int, k: int) -> int:
    """`seeds` rounded up to whole blocks of `k`, or down where up is more than `MAX_SEEDS`."""
    up = -(-seeds // k) * k
    return up if up <= MAX_SEEDS else seeds // k * k
