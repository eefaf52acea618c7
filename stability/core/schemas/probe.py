"""`nli-stability probe`: the probe config (`conf/probe.yaml`) and its `probe.*` options.

The choices below are the probing package's vocabulary; they live here so that a wrong one
is refused when the config is composed, before any encoder is loaded.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.errors import UserError
from stability.core.schemas.checks import above, at_least, folder, one_of, seed, within

# annotator: the rule-based annotator labels every split; gold: the diagnostic set's categories
LABEL_SOURCES = ("annotator", "gold")
# the split whose accuracy picks the L2 strength
HELDOUT_CHOICES = ("auto", "test", "validation")
# [u; v] or [u; v; |u - v|; u * v] from the mean-pooled sentence vectors
PAIR_FEATURES = ("uv", "uv_diff_prod")


def check_device(key: str, value: str) -> None:
    """`auto` or a device torch can name (cpu, cuda, cuda:1); torch is imported only here."""
    if value == "auto":
        return
    import torch

    try:
        torch.device(value)
    except RuntimeError:
        raise UserError(f"{key}={value!r} is not a device", fix="use auto, cpu, cuda or cuda:N") from None


@dataclass
class ProbeOptions:
    """`probe.*`: labels, tasks, the L2 grid and the fit, the bootstrap, the device, and CKA across seeds."""

    labels: str = MISSING
    tasks: List[str] = MISSING
    min_positives: int = MISSING
    folds: int = MISSING
    heldout: str = MISSING
    l2: List[float] = MISSING
    pair_features: str = MISSING
    seed: int = MISSING
    batch_size: int = MISSING
    max_iter: int = MISSING
    tol: float = MISSING
    bootstrap: int = MISSING
    confidence: float = MISSING
    device: str = MISSING
    cka: bool = MISSING
    cka_items: Optional[int] = MISSING

    def __post_init__(self) -> None:
        one_of("probe.labels", self.labels, LABEL_SOURCES)
        one_of("probe.heldout", self.heldout, HELDOUT_CHOICES)
        one_of("probe.pair_features", self.pair_features, PAIR_FEATURES)
        if not self.tasks or not self.l2:
            raise UserError("probe.tasks and probe.l2 need at least one value",
                            fix="e.g. probe.tasks=[Logic] probe.l2=[0.01,0.001]")
        for strength in self.l2:
            above("probe.l2", strength, 0)
        at_least("probe.min_positives", self.min_positives, 1)
        at_least("probe.folds", self.folds, 3)
        seed("probe.seed", self.seed)
        at_least("probe.batch_size", self.batch_size, 1)
        at_least("probe.max_iter", self.max_iter, 1)
        above("probe.tol", self.tol, 0)
        at_least("probe.bootstrap", self.bootstrap, 0)
        within("probe.confidence", self.confidence, 0, 1, open_low=True)
        check_device("probe.device", self.device)
        at_least("probe.cka_items", self.cka_items, 3, optional=True)


@dataclass
class ProbeConfig:
    """The whole probe config: the groups it shares with training (typed by their own
    schemas), which runs to probe, where to write, and `probe.*`."""

    lang: Any = MISSING
    model: Any = MISSING
    data: Any = MISSING
    annotator: Any = MISSING
    paths: Any = MISSING
    runs: Optional[str] = None
    out: str = MISSING
    probe: ProbeOptions = MISSING

    def __post_init__(self) -> None:
        folder("out", self.out)


def register(store: ConfigStore) -> None:
    store.store(name="probe_schema", node=ProbeConfig)
