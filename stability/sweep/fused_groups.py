"""Which jobs of a sweep train as one fused model (`trainer.fuse_seeds=K`, `finetune.fused_run`).

A group is K jobs that differ only in their seed, and its seeds are a block of K: 0..K-1, K..2K-1,
and so on. Blocks fixed by the seeds, not by the sweep, make a member's group a function of its own
config: a member's numbers depend on its group (its dropout masks are drawn with the group's), so
`seed=3` fused three at a time is the same computation in `seed=0..5` and in `seed=3..5`, and its
folder, fingerprint and skip-when-finished hold as for a solo run. A sweep with part of a block is
refused (a single run is one seed of a block), and so is a fused sweep that varies seed_init or
seed_order besides seed (an init × order grid: its jobs of one seed would fall in one block).

The group's first job trains it and writes every member's run folder, its members derived from its
own config (`group_members`), so it needs nothing of the sweep and trains where it is launched. Under
Hydra's basic launcher the others run after it in the same process and find their runs finished; the
launchers that run jobs apart (`local_gpus`: joblib processes, `slurm`: array tasks) launch only the
first job of each group, a group being one job or array task, and then run the others here, where
they find their runs written (`launch_groups`).
"""
from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from hydra.core.utils import JobReturn
from omegaconf import DictConfig, open_dict

from stability.core.errors import UserError
from stability.core.jobs import without_hydra
from stability.core.runrecord import fingerprint, semantic_config
from stability.sweep.guard import run_directory

_SEEDS = ("seed", "seed_init", "seed_order")
# What this process knows of the fused groups of the sweep it checked (`register_followers`): per
# sweep folder, the positions of the jobs a group's first job trains (for the launchers), and each such
# job's run folder -> its first job's (for the jobs, which run in this process)
_FOLLOWER_JOBS: dict[str, frozenset[int]] = {}
_FIRST_OF: dict[Path, Path] = {}


@dataclass(frozen=True)
class FusedGroup:
    """The jobs (positions in the sweep) of one fused group, in seed order; `first` trains the group."""

    jobs: tuple[int, ...]
    first: int

    @property
    def followers(self) -> tuple[int, ...]:
        """The jobs the first one trains."""
        return tuple(number for number in self.jobs if number != self.first)


def fused_groups(configs: list[DictConfig]) -> list[FusedGroup]:
    """The sweep's fused groups (none when no job sets `trainer.fuse_seeds` above 1); a fused job
    that cannot be grouped here is refused in one line."""
    fused = [number for number, cfg in enumerate(configs) if int(cfg.trainer.fuse_seeds) > 1]
    if not fused:
        return []
    blocks: dict[tuple[str, int], list[int]] = defaultdict(list)
    for number in fused:
        cfg = configs[number]
        blocks[(_without_seeds(cfg), int(cfg.seed) // int(cfg.trainer.fuse_seeds))].append(number)
    groups = []
    for (_, block), jobs in blocks.items():
        k = int(configs[jobs[0]].trainer.fuse_seeds)
        seeds = {int(configs[number].seed): number for number in jobs}
        if len(seeds) < len(jobs):      # jobs of one seed: the sweep varies seed_init or seed_order too
            raise UserError(f"trainer.fuse_seeds={k} fuses jobs that differ only in seed, and this sweep also varies "
                            f"seed_init or seed_order ({len(jobs)} jobs of seeds {block * k}..{block * k + k - 1})",
                            fix="sweep seed alone with trainer.fuse_seeds, or seed_init and seed_order with "
                                "trainer.fuse_seeds=1")
        wanted = range(block * k, block * k + k)
        missing = [seed for seed in wanted if seed not in seeds]
        if missing:
            raise UserError(f"trainer.fuse_seeds={k} trains seeds in blocks of {k} ({wanted[0]}..{wanted[-1]} is "
                            f"one): this sweep has seed {', '.join(map(str, sorted(seeds)))} of it without "
                            f"{', '.join(map(str, missing))}",
                            fix=f"sweep whole blocks, e.g. seed={wanted[0]}..{wanted[-1]}")
        group = FusedGroup(tuple(seeds[seed] for seed in wanted), min(jobs))
        _refuse_underivable(configs, group)
        groups.append(group)
    return groups


def group_members(cfg: DictConfig, folder: Path) -> list[tuple[DictConfig, Path]]:
    """The group of the fused job `cfg` (a task's config, without Hydra's node, unresolved: seed_init
    and seed_order follow `seed` where they interpolate it) whose run folder is `folder`: each member's
    config (the job's, with the member's seed) and run folder (`seed<N>` beside the job's), in seed
    order. From the job's own config, so that a job launched apart trains its group without the sweep;
    `fused_groups` checks that the folders are the sweep's own."""
    size = int(cfg.trainer.fuse_seeds)
    block = int(cfg.seed) // size
    members = []
    for seed in range(block * size, block * size + size):
        member = copy.deepcopy(cfg)
        with open_dict(member):
            member.seed = seed
        members.append((member, member_folder(folder, seed)))
    return members


def member_folder(folder: Path, seed: int) -> Path:
    """The run folder of seed `seed` of the group whose member's folder is `folder`."""
    return folder.parent / f"seed{seed}"


def _refuse_underivable(configs: list[DictConfig], group: FusedGroup) -> None:
    """The members `group_members` derives from the first job must be the sweep's own jobs. Their configs
    are, since a group's jobs differ only in their seeds; their run folders must be too, which holds
    where they lie beside each other, as the default `hydra.sweep.subdir` puts them."""
    first = run_directory(configs[group.first])
    for number in group.jobs:
        if member_folder(first, int(configs[number].seed)) != run_directory(configs[number]):
            raise UserError(f"trainer.fuse_seeds trains a group's members in run folders beside each other "
                            f"(…/seed<N>); this sweep puts seed {int(configs[number].seed)} in "
                            f"{run_directory(configs[number])}", fix=_apart_fix(configs, group))


def _apart_fix(configs: list[DictConfig], group: FusedGroup) -> str:
    """What puts a group's members apart: seed_init or seed_order set (not following `seed`, so some
    members' variant is `init<N>`), else a `hydra.sweep.subdir` of one's own."""
    set_apart = [f"{key}={configs[group.jobs[0]][key]}" for key in _SEEDS[1:]
                 if any(str(configs[number][key]) != str(configs[number].seed) for number in group.jobs)]
    if set_apart:
        return (f"drop {' and '.join(set_apart)}, which fused seeds follow (each member's seed_init and seed_order "
                "are its seed), or pass trainer.fuse_seeds=1")
    return "drop the hydra.sweep.subdir override, or pass trainer.fuse_seeds=1"


def register_followers(configs: list[DictConfig], groups: Sequence[FusedGroup]) -> None:
    """Remember which jobs of the sweep of `configs` the groups' first jobs train: for the launchers
    (`launch_groups`) and for those jobs (`first_job_folder`). What a command checked before in this
    process (a test's) is forgotten."""
    _FIRST_OF.clear()
    if not configs:
        return
    _FOLLOWER_JOBS[str(configs[0].hydra.sweep.dir)] = frozenset(number for group in groups
                                                                for number in group.followers)
    for group in groups:
        first = run_directory(configs[group.first]).absolute()
        for number in group.followers:
            _FIRST_OF[run_directory(configs[number]).absolute()] = first


def first_job_folder(folder: Path) -> Path | None:
    """The run folder of the job that trains the group of the job in `folder`; None unless that is another
    job of the sweep this process checked."""
    return _FIRST_OF.get(folder.absolute())


Launch = Callable[[Sequence[Sequence[str]], int], Sequence[JobReturn]]


def launch_groups(job_overrides: Sequence[Sequence[str]], initial_job_idx: int, sweep_dir: str, *,
                  apart: Launch, here: Launch) -> list[JobReturn]:
    """A launcher's batch (`initial_job_idx` is its first job's position) with each fused group as one
    job: `apart` (the launcher's own) launches every job but those a group's first job trains, which
    `here` (Hydra's basic launcher, in this process) then runs: they find their runs written. Jobs
    launched apart are numbered consecutively (a job's number only chooses its device)."""
    followers = _FOLLOWER_JOBS.get(sweep_dir, frozenset())
    numbered = list(enumerate(job_overrides, start=initial_job_idx))
    launched = [overrides for number, overrides in numbered if number not in followers]
    returns = list(apart(launched, initial_job_idx)) if launched else []
    for number, overrides in numbered:
        if number in followers:
            returns.extend(here([overrides], number))
    return returns


def _without_seeds(cfg: DictConfig) -> str:
    """What a job computes but for its seeds: jobs equal in it form a group."""
    semantic = semantic_config(without_hydra(cfg))
    for key in _SEEDS:
        semantic.pop(key, None)
    return fingerprint(semantic)
