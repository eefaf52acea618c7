"""`logger=wandb`: one Weights & Biases run per training run, grouped per (experiment, lang, setup, variant).

The group `<experiment>/<lang>/<setup>` (plus `/<variant>` for a run that changes anything
else, e.g. the learning rate) gathers the seeds of one condition, so a dashboard compares
them directly and never pools two variants; W&B's grouped run tables give mean ± σ of any summary key
(`overall_mcc`, `category_mcc/<name>`, ...) over the group without extra code.

Offline by default: the mode is `logger.mode`, else `$WANDB_MODE`, else `online` only when
`$WANDB_API_KEY` is set and `offline` otherwise, so a run never prompts or touches the network
without a key (upload later with `wandb sync`).

The category × seed heat map: a run knows only its own seed, so at its end each run draws the
matrix of itself plus the finished runs of its group found beside its run directory (Hydra's
layout puts the seeds of one (experiment, lang, setup, variant) in sibling directories). The last seed
to finish logs the complete map; seeds finishing at the same moment under a parallel launcher
may miss each other, and `python -m stability.report` stays the reference figure. The map is
drawn by the code the report draws it with (`stability.statistics.figures`), so both look the same.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from stability.core.errors import UserError, require
from stability.core.runrecord import RunDir
from stability.core.schemas.train import TrainConfig
from stability.core.taxonomy import COARSE_OF, FINE_CATEGORIES

MODES = ("online", "offline", "disabled", "shared")
TABLE_COLUMNS = ["category", "coarse", "n_items", "mcc"]
_GROUP_KEYS = ("experiment", "lang", "setup", "variant")
_EPOCH_METRICS = ("loss", "val_accuracy", "epoch_seconds")
# prefix of the per-validation diagnostic MCCs (`trainer.dynamics=true`), plotted against the epoch
_CURVES = "diagnostic_mcc"


def resolve_mode(configured: str | None, env: Mapping[str, str] = os.environ) -> str:
    """logger.mode, else $WANDB_MODE, else online iff an API key is set: never a login prompt."""
    if configured:
        if configured not in MODES:
            raise UserError(f"unknown logger.mode '{configured}'",
                            fix=f"use one of: {', '.join(MODES)}, or null for the automatic choice")
        return configured
    if env.get("WANDB_MODE"):
        return env["WANDB_MODE"]
    return "online" if env.get("WANDB_API_KEY") else "offline"


def resolve_dir(configured: str | None, run_dir: Path, env: Mapping[str, str] = os.environ) -> Path:
    """logger.dir, else $WANDB_DIR, else the run directory (the run's record stays in one place)."""
    return Path(configured or env.get("WANDB_DIR") or run_dir).expanduser()


def group_name(experiment: str, lang: str, setup: str, variant: str = "") -> str:
    """The W&B group: the runs that differ only by seed."""
    return "/".join(part for part in (experiment, lang, setup, variant) if part)


def run_name(lang: str, setup: str, variant: str, seed: int) -> str:
    """The W&B run name, e.g. `fr-rte-lr3e-05-seed2`."""
    return "-".join(part for part in (lang, setup, variant, f"seed{seed}") if part)


def summary_values(metrics: dict) -> dict[str, Any]:
    """metrics.json without its text fields, nested dicts flattened to `category_mcc/<name>` keys."""
    summary: dict[str, Any] = {}
    for key, value in metrics.items():
        if isinstance(value, dict):
            summary.update({f"{key}/{name}": v for name, v in value.items()
                            if isinstance(v, (int, float))})
        elif isinstance(value, (int, float, list)):
            summary[key] = value
    return summary


def category_rows(metrics: dict) -> list[list]:
    """The per-category MCC table of one run, in canonical category order."""
    mcc, n_items = metrics["category_mcc"], metrics.get("category_n", {})
    return [[name, COARSE_OF[name], n_items.get(name), mcc[name]]
            for name in FINE_CATEGORIES if name in mcc]


def group_metrics(run_dir: Path, metrics: dict) -> list[dict]:
    """This run's metrics, then those of finished sibling runs of its group, one per seed."""
    key = _group_key(metrics)
    runs = {metrics["seed"]: metrics}
    for sibling in sorted(run_dir.parent.iterdir()):
        if sibling == run_dir or not RunDir(sibling).is_finished():
            continue
        try:
            other = RunDir(sibling).read_record(require=("category_mcc",)).to_json()
        except UserError:
            continue  # not ours to judge; the report names broken runs
        if _group_key(other) == key:
            runs.setdefault(other.get("seed"), other)
    return list(runs.values())


def _group_key(metrics: dict) -> tuple[str, ...]:
    """(experiment, lang, setup, variant); records without a variant are of the empty one."""
    return tuple(str(metrics.get(key) or "") for key in _GROUP_KEYS)


def tidy_fine_rows(runs: list[dict]) -> pd.DataFrame:
    """The runs' category MCCs as the tidy results table the report's statistics read."""
    from stability.statistics.seeds import TIDY_COLUMNS

    rows = [(m["lang"], m["setup"], m.get("variant") or "", int(m["seed"]), "fine", name,
             m.get("category_n", {}).get(name), mcc)
            for m in runs for name, mcc in m["category_mcc"].items()]
    return pd.DataFrame(rows, columns=TIDY_COLUMNS)


def draw_seed_heatmap(runs: list[dict], out_dir: Path) -> Path:
    """The report's category × seed heat map (diverging, centred on 0, −1 … 1) for one group."""
    from stability.statistics.figures import seed_heatmaps
    from stability.statistics.seeds import category_stats

    (path,) = seed_heatmaps(category_stats(tidy_fine_rows(runs)), out_dir)
    return path


class WandbTracker:
    """Logs config, per-epoch loss and validation accuracy, final metrics, table and heat map."""

    def __init__(self, settings: TrainConfig, config: Mapping[str, Any], run_dir: Path) -> None:
        """`config`: the resolved config as composed, W&B's record of the run's settings."""
        self._wandb = require("wandb", "logger=wandb needs the wandb package",
                              fix="pip install 'nli-stability[wandb]', or use logger=none")
        self._run_dir = run_dir
        logger, lang, setup = settings.logger, settings.lang.code, settings.setup
        wandb_dir = resolve_dir(logger.dir, run_dir)
        wandb_dir.mkdir(parents=True, exist_ok=True)
        self._run = self._wandb.init(
            project=logger.project, entity=logger.entity, job_type=logger.job_type,
            group=group_name(settings.experiment_name, lang, setup, settings.variant),
            name=run_name(lang, setup, settings.variant, settings.seed),
            tags=[settings.experiment_name, lang, setup, settings.model.name, *logger.tags],
            config=dict(config), dir=str(wandb_dir), mode=resolve_mode(logger.mode))
        self._run.define_metric("epoch")
        for name in (*_EPOCH_METRICS, f"{_CURVES}/*"):
            self._run.define_metric(name, step_metric="epoch")

    def log_epoch(self, entry: dict) -> None:
        """One validation: after an epoch, or every `trainer.eval_every` steps (then with its step);
        with `trainer.dynamics=true` also the diagnostic MCCs at that validation (overall, per
        coarse and fine category) as `diagnostic_mcc/<category>`: the learning curves."""
        steps = {"train_step": entry["step"]} if "step" in entry else {}
        curves = {f"{_CURVES}/{name}": value for name, value in entry.get("diagnostic_mcc", {}).items()}
        self._run.log({"epoch": entry["epoch"], "loss": entry["loss"], "val_accuracy": entry["val_accuracy"],
                       "epoch_seconds": entry["seconds"], **steps, **curves})

    def log_final(self, metrics: dict, predictions: list[dict]) -> None:
        """Summary numbers, the category table, and the heat map of the group's seeds so far."""
        runs = group_metrics(self._run_dir, metrics)
        seeds = ", ".join(str(m["seed"]) for m in sorted(runs, key=lambda m: m["seed"]))
        caption = f"{group_name(*(metrics[k] for k in _GROUP_KEYS))}: seeds {seeds}"
        with tempfile.TemporaryDirectory() as tmp:
            image = self._wandb.Image(str(draw_seed_heatmap(runs, Path(tmp))), caption=caption)
            self._run.log({
                "category_mcc_table": self._wandb.Table(columns=TABLE_COLUMNS, data=category_rows(metrics)),
                "category_seed_heatmap": image,
            })
        self._run.summary.update(summary_values(metrics))

    def finish(self) -> None:
        self._run.finish()
