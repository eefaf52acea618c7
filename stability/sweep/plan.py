"""What a sweep will run and cost: the logic behind `nli-stability plan`.

Takes the overrides of `nli-stability train` (presets, sweeps, `a..b` ranges), expands them
exactly as Hydra would, and lists the runs per (lang, setup) with their training examples;
given a device's measured training throughput (`plan.samples_per_second`), it adds the GPU-hours.

    nli-stability plan experiment=mnli_size plan.samples_per_second=17
    nli-stability plan experiment=baseline seed=0..1 plan.json=true

GPU-hours = Σ over runs (training examples × epochs) / samples per second / 3600. Epochs are
`trainer.max_epochs`, an upper bound since early stopping usually ends runs sooner, unless
plan.expected_epochs says otherwise; a run validating every N steps (`trainer.eval_every`)
trains on to whole validations, past max_epochs by less than N steps (jiant's t_total), and
its bound says so. Validation and diagnostic passes are not counted.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

from omegaconf import DictConfig

from stability.core.jobs import job_configs, without_hydra
from stability.core.markdown import counted
from stability.core.schemas.train import train_settings
from stability.core.schemas.trainer import Trainer
from stability.sweep.fused_groups import fused_groups
from stability.sweep.sizes import COUNTED, train_size
from stability.sweep.table import text_table

SECONDS_PER_HOUR = 3600
THROUGHPUT_HINT = ("training examples per second on one device; measure it with "
                   "benchmarks/packed_sweep.py on a GPU (an H100 trains mBERT at batch 4 at ~250 with 4 runs "
                   "packed) or benchmarks/train_throughput.py (all-MiniLM-L6 trains at ~17 samples/s on 2 CPU "
                   "cores, batch 4)")


@dataclass(frozen=True)
class PlannedRun:
    """One job of the sweep: what it trains on and for how long."""

    experiment: str
    lang: str
    setup: str
    variant: str
    seed: int
    n_train: int  # examples per epoch, the added MNLI pairs included (as in metrics.json)
    n_added: int
    epochs: float
    sizes: str  # "counted" from local files or "release" sizes
    fuse_seeds: int = 1  # the run trains fused with the other seeds of its block (`sweep.fused_groups`)
    validation_steps: int | None = None  # trainer.eval_every in steps (None: each epoch), which bounds `epochs`

    @property
    def example_epochs(self) -> float:
        return self.n_train * self.epochs


def planned_runs(argv: list[str], expected_epochs: float | None = None) -> list[PlannedRun]:
    """The runs `nli-stability train *argv` would launch, in launch order."""
    return runs_of(job_configs(argv), expected_epochs)


def runs_of(configs: list[DictConfig], expected_epochs: float | None = None) -> list[PlannedRun]:
    """The planned runs of composed training jobs (`core.jobs.job_configs`); a sweep whose seeds
    cannot be fused as asked is refused as `train` refuses it (`sweep.fused_groups`)."""
    fused_groups(configs)
    runs = []
    for cfg in configs:
        settings = train_settings(without_hydra(cfg))
        size = train_size(settings)
        runs.append(PlannedRun(settings.experiment_name, settings.lang.code, settings.setup, settings.variant,
                               settings.seed, size.total, size.added,
                               expected_epochs or epoch_bound(size.total, settings.trainer), size.origin,
                               settings.trainer.fuse_seeds, settings.trainer.validation_steps))
    return runs


def fused_group_count(runs: list[PlannedRun]) -> int:
    """How many fused groups the runs train in (each of K runs, one model): whole blocks of K seeds."""
    return round(sum(1 / run.fuse_seeds for run in runs if run.fuse_seeds > 1))


def epoch_bound(n_train: int, trainer: Trainer) -> float:
    """The most epochs a run trains: max_epochs, or with validation every N steps the planned
    steps rounded up to whole validations (`Trainer.planned_steps`), in epochs."""
    steps_per_epoch = math.ceil(n_train / trainer.batch_size)
    if trainer.validation_steps is None or not steps_per_epoch:
        return trainer.max_epochs
    return trainer.planned_steps(steps_per_epoch) / steps_per_epoch


def gpu_hours(example_epochs: float, samples_per_second: float) -> float:
    return example_epochs / samples_per_second / SECONDS_PER_HOUR


def hours_text(hours: float) -> str:
    """GPU-hours to two decimals with thousands separators; past a million, in powers of ten (a
    throughput of 1e-300 samples/s would otherwise print a number of 300 digits)."""
    return f"{hours:,.2f}" if hours < 1e6 else f"{hours:.3g}"


def compact_seeds(seeds: Sequence[int]) -> str:
    """0,1,2,3,5 → '0..3,5', the range syntax the command line takes."""
    parts, ordered = [], sorted(set(seeds))
    start = prev = ordered[0]
    for seed in [*ordered[1:], None]:
        if seed is not None and seed == prev + 1:
            prev = seed
            continue
        parts.append(str(start) if start == prev else f"{start}..{prev}")
        start = prev = seed
    return ",".join(parts)


def _groups(runs: list[PlannedRun]) -> dict[tuple, list[PlannedRun]]:
    """Runs that differ only by seed, in launch order."""
    groups: dict[tuple, list[PlannedRun]] = {}
    for run in runs:
        groups.setdefault((run.experiment, run.lang, run.setup, run.variant, run.n_train, run.epochs), []).append(run)
    return groups


def _unique(values) -> list:
    return list(dict.fromkeys(values))


def _rows(runs: list[PlannedRun], samples_per_second: float | None) -> list[list[str]]:
    """Header, one row per group of seeds, and the total; GPU-hours only with a throughput."""
    def cells(example_epochs: float) -> list[str]:
        hours = [hours_text(gpu_hours(example_epochs, samples_per_second))] if samples_per_second else []
        return [f"{example_epochs:,.0f}", *hours]

    # the variant column where some run has one: two trainer presets' rows differ only there
    variants = any(run.variant for run in runs)
    rows = [["experiment", "lang", "setup", *(["variant"] if variants else []), "seeds", "runs", "examples/run",
             "epochs", "example-epochs", *(["GPU-h"] if samples_per_second else [])]]
    for (experiment, lang, setup, variant, n_train, epochs), group in _groups(runs).items():
        rows.append([experiment, lang, setup, *([variant] if variants else []), compact_seeds([r.seed for r in group]),
                     str(len(group)), f"{n_train:,}", f"{epochs:g}", *cells(sum(r.example_epochs for r in group))])
    rows.append(["total", "", "", *([""] if variants else []), "", str(len(runs)), "", "",
                 *cells(sum(r.example_epochs for r in runs))])
    return rows


def format_plan(runs: list[PlannedRun], samples_per_second: float | None,
                expected_epochs: float | None) -> str:
    """The readable plan: headline, one row per (lang, setup), totals, and what the numbers assume."""
    total = sum(r.example_epochs for r in runs)
    sizes = ("counted in the local files" if all(r.sizes == COUNTED for r in runs)
             else "released sizes (data.root=DIR counts local files instead)")
    steps = sorted({r.validation_steps for r in runs if r.validation_steps})
    by_steps = (f" (for runs that validate every {'/'.join(f'{n:,}' for n in steps)} steps, trainer.eval_every: "
                "max_epochs' steps rounded up to whole validations, more epochs on a small training set)" if steps else "")
    epochs = (f"plan.expected_epochs={expected_epochs:g}" if expected_epochs else
              f"trainer.max_epochs{by_steps}, an upper bound (early stopping usually ends runs sooner; "
              "plan.expected_epochs=E for a closer estimate)")
    hours = (f"{hours_text(gpu_hours(total, samples_per_second))} at {samples_per_second:g} samples/s "
             "(training passes only; wall-clock ≈ GPU-hours / devices in parallel)" if samples_per_second
             else f"pass plan.samples_per_second=X, {THROUGHPUT_HINT}")
    groups = fused_group_count(runs)
    fused = (f" · {counted(groups, 'fused group')} of "
             f"{', '.join(map(str, sorted({r.fuse_seeds for r in runs if r.fuse_seeds > 1})))} seeds, "
             f"each trained as one model" if groups else "")
    return "\n".join([
        f"{counted(len(runs), 'run')}{fused} · languages {', '.join(_unique(r.lang for r in runs))} · setups "
        f"{', '.join(_unique(r.setup for r in runs))} · seeds {compact_seeds([r.seed for r in runs])}",
        "",
        text_table(_rows(runs, samples_per_second)),
        "",
        f"training examples: {sum(r.n_train for r in runs):,} per epoch over all runs; examples/run = "
        f"the language's train split + added MNLI pairs, {sizes}",
        f"epochs: {epochs}",
        f"GPU-hours: {hours}",
    ])


def plan_json(runs: list[PlannedRun], samples_per_second: float | None) -> dict:
    """The plan for machines: every run, and the totals."""
    total = sum(r.example_epochs for r in runs)
    return {
        "runs": [{**asdict(r), "example_epochs": r.example_epochs} for r in runs],
        "totals": {"runs": len(runs), "fused_groups": fused_group_count(runs), "train_examples": sum(r.n_train for r in runs), "example_epochs": total,
                   "samples_per_second": samples_per_second,
                   "gpu_hours": gpu_hours(total, samples_per_second) if samples_per_second else None},
    }


def planned_seeds(runs: list[PlannedRun]) -> list[tuple[str, str, str, int]]:
    """(lang, setup, variant, number of seeds) of every planned condition, in launch order."""
    seeds: dict[tuple[str, str, str], set[int]] = {}
    for run in runs:
        seeds.setdefault((run.lang, run.setup, run.variant), set()).add(run.seed)
    return [(*key, len(found)) for key, found in seeds.items()]


def format_power(header: list[str], rows: list[list[str]], source: str, delta: float) -> str:
    """The seeds-needed table of a planned sweep, under a line saying where σ came from."""
    return "\n".join([
        f"seeds: the σ of MCC measured in {source}, with the planned seeds (two-sided t-test, α = 0.05, power 0.8); "
        f"MDE = the smallest ΔMCC detected; seeds for Δ = {delta:g} per condition",
        "",
        text_table([header, *rows]),
    ])
