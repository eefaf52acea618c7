"""The typed `probe` options (checked by their schema when the config was composed) as the
settings the probing code runs with: the fit's grid and device, the encoder's max length."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from omegaconf import DictConfig, OmegaConf

from probing.probe import FitSettings
from stability.core.schemas.probe import ProbeOptions


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
    cka: bool
    cka_items: int | None

    @property
    def device(self) -> torch.device:
        return torch.device(self.fit.device)


def probe_settings(cfg: DictConfig) -> ProbeSettings:
    """The settings of a composed probe config; `probe.device=auto` becomes cuda when there is one."""
    options: ProbeOptions = OmegaConf.to_object(cfg.probe)
    device = options.device if options.device != "auto" else "cuda" if torch.cuda.is_available() else "cpu"
    return ProbeSettings(
        labels=options.labels, tasks=list(options.tasks), min_positives=options.min_positives,
        folds=options.folds, pair_features=options.pair_features, batch_size=options.batch_size,
        max_length=int(cfg.data.max_length), bootstrap=options.bootstrap, confidence=options.confidence,
        fit=FitSettings.of(list(options.l2), max_iter=options.max_iter, tol=options.tol, seed=options.seed,
                           device=device),
        cka=options.cka, cka_items=options.cka_items,
    )
