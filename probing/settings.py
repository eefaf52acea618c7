"""The `probe` section of the config, checked before anything is loaded or encoded."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from omegaconf import DictConfig, ListConfig

from probing.data import HELDOUT_CHOICES
from probing.features import PAIR_FEATURES
from probing.probe import FitSettings
from probing.tasks import LABEL_SOURCES
from stability.core.errors import UserError


@dataclass(frozen=True)
class ProbeSettings:
    labels: str
    tasks: list[str]
    min_positives: int
    folds: int
    pair_features: str
    batch_size: int
    max_length: int
    bootstrap: int
    confidence: float
    fit: FitSettings

    @property
    def device(self) -> torch.device:
        return torch.device(self.fit.device)


def _number(key: str, value: object, kind: type, low: float, high: float | None = None) -> float:
    try:
        number = kind(value)
        if kind is int and (isinstance(value, bool) or number != float(value)):
            raise ValueError
    except (TypeError, ValueError):
        raise UserError(f"{key}={value!r} is not a{'n integer' if kind is int else ' number'}",
                        fix=f"pass {key}=<{'integer' if kind is int else 'number'}>") from None
    if number < low or (high is not None and number >= high):
        bound = f"in [{low:g}, {high:g})" if high is not None else f">= {low:g}"
        raise UserError(f"{key}={value!r} must be {bound}", fix=f"pass {key}=<value {bound}>")
    return number


def _device(value: str) -> str:
    if value == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        torch.device(value)
    except RuntimeError:
        raise UserError(f"probe.device={value!r} is not a device", fix="use auto, cpu, cuda or cuda:N") from None
    return value


def probe_settings(cfg: DictConfig) -> ProbeSettings:
    """The checked settings; a bad value is a one-line user error naming the key."""
    probe = cfg.probe
    for key, value, choices in (("probe.labels", probe.labels, LABEL_SOURCES),
                                ("probe.heldout", probe.heldout, HELDOUT_CHOICES),
                                ("probe.pair_features", probe.pair_features, PAIR_FEATURES)):
        if value not in choices:
            raise UserError(f"{key}={value!r} is not known", fix=f"use one of: {', '.join(choices)}")
    tasks = list(probe.tasks) if isinstance(probe.tasks, (list, ListConfig)) else [str(probe.tasks)]
    l2 = list(probe.l2) if isinstance(probe.l2, (list, ListConfig)) else [probe.l2]
    if not tasks or not l2:
        raise UserError("probe.tasks and probe.l2 need at least one value",
                        fix="e.g. probe.tasks=[Logic] probe.l2=[0.01,0.001]")
    strengths = [_number("probe.l2", value, float, 1e-12) for value in l2]
    return ProbeSettings(
        labels=str(probe.labels), tasks=[str(task) for task in tasks],
        min_positives=int(_number("probe.min_positives", probe.min_positives, int, 1)),
        folds=int(_number("probe.folds", probe.folds, int, 3)),
        pair_features=str(probe.pair_features),
        batch_size=int(_number("probe.batch_size", probe.batch_size, int, 1)),
        max_length=int(_number("data.max_length", cfg.data.max_length, int, 2)),
        bootstrap=int(_number("probe.bootstrap", probe.bootstrap, int, 0)),
        confidence=_number("probe.confidence", probe.confidence, float, 1e-9, 1.0),
        fit=FitSettings.of(strengths, max_iter=int(_number("probe.max_iter", probe.max_iter, int, 1)),
                           tol=_number("probe.tol", probe.tol, float, 1e-12),
                           seed=int(_number("probe.seed", probe.seed, int, 0)),
                           device=_device(str(probe.device))),
    )
