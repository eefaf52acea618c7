"""Which jobs of a sweep train as one fused model (`trainer.fuse_seeds=K`, `finetune.fused_run`).

A group is K jobs that differ only in their seed, and its seeds are a block of K: 0..K-1, K..2K-1,
and so on. Blocks fixed by the seeds, not by the sweep, make a member's group a function of its own
config: a member's numbers depend on its group (its dropout masks are drawn with the group's), so
`seed=3` fused three at a time is the same computation in `seed=0..5` and in `seed=3..5`, and its
folder, fingerprint and skip-when-finished hold as for a solo run. A sweep with part of a block is
refused (a single run is one seed of a block), and so is a fused sweep that varies seed_init or
seed_order besides seed (an init × order grid: its jobs of one seed would fall in one block).

The group's first job in the sweep trains it and writes every member's run folder; the others, run
after it by Hydra's basic launcher in the same process, find their run finished and skip it. The
launchers that run jobs apart (`local_gpus`: joblib processes, `slurm`: array tasks) would start the
other members at once, before their runs exist, so a fused sweep under them is refused in one line
(a group as one array task is not built yet).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from omegaconf import DictConfig, OmegaConf

from stability.core.errors import UserError
from stability.core.jobs import without_hydra
from stability.core.runrecord import fingerprint, semantic_config

# the launcher that runs a sweep's jobs one after another in this process (Hydra's default)
BASIC_LAUNCHER = "hydra._internal.core_plugins.basic_launcher.BasicLauncher"
_SEEDS = ("seed", "seed_init", "seed_order")


@dataclass(frozen=True)
class FusedGroup:
    """The jobs (positions in the sweep) of one fused group, in seed order; `first` trains the group."""

    jobs: tuple[int, ...]
    first: int


def fused_groups(configs: list[DictConfig]) -> list[FusedGroup]:
    """The sweep's fused groups (none when no job sets `trainer.fuse_seeds` above 1); a fused job
    that cannot be grouped here is refused in one line."""
    fused = [number for number, cfg in enumerate(configs) if int(cfg.trainer.fuse_seeds) > 1]
    if not fused:
        return []
    first = configs[fused[0]]
    size = int(first.trainer.fuse_seeds)
    launcher = str(OmegaConf.select(first, "hydra.launcher._target_", default=""))
    if launcher != BASIC_LAUNCHER:
        raise UserError(f"trainer.fuse_seeds={size} runs under Hydra's basic launcher only, not "
                        f"{launcher.rsplit('.', 1)[-1]}: its jobs would start a fused group's members apart",
                        fix="drop hydra/launcher=... to fuse the seeds here, or trainer.fuse_seeds=1 to launch "
                            "each seed as its own job")
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
        groups.append(FusedGroup(tuple(seeds[seed] for seed in wanted), min(jobs)))
    return groups


def _without_seeds(cfg: DictConfig) -> str:
    """What a job computes but for its seeds: jobs equal in it form a group."""
    semantic = semantic_config(without_hydra(cfg))
    for key in _SEEDS:
        semantic.pop(key, None)
    return fingerprint(semantic)
