"""Schema of the training config (`conf/train.yaml`): the groups and the run's identity keys.

`python -m stability.train` converts the composed config once (`train_settings`) and hands
the typed settings down: `settings.trainer.batch_size` is an int, `settings.model` a
`PretrainedModel` or a `TinyModel`. Fields are in the order the config's keys have always had
(the groups in defaults-list order, then train.yaml's own keys), so config.yaml is unchanged.
`annotator` is read by the `annotators` package (`annotators.settings`), which takes a mapping.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf

from stability.core.errors import UserError
from stability.core.schemas.checks import at_least, seed
from stability.core.schemas.data import Data
from stability.core.schemas.lang import Lang
from stability.core.schemas.logger import Logger
from stability.core.schemas.model import Model
from stability.core.schemas.paths import Paths
from stability.core.schemas.trainer import Trainer, reinit_layers_within


@dataclass
class TrainConfig:
    """One training run: language, encoder, data, trainer, tracker, annotator, paths, seeds."""

    lang: Any = MISSING       # a Lang; Any keeps each lang schema's own key order and types
    model: Model = MISSING
    data: Data = MISSING
    trainer: Trainer = MISSING
    logger: Logger = MISSING
    annotator: Any = MISSING  # a mapping for annotators.settings.load_settings
    paths: Paths = MISSING
    experiment_name: str = MISSING
    out: str = MISSING         # the experiment folder
    seed: int = MISSING
    seed_init: int = MISSING   # classifier head / tiny weights and dropout
    seed_order: int = MISSING  # data order
    setup: str = MISSING       # derived from data.train_set, data.mnli, data.mix: rte, rte+mnli10000, ...
    variant: str = MISSING     # derived: what else the run changes (stability.core.identity)
    force: bool = MISSING

    def __post_init__(self) -> None:
        if not isinstance(self.lang, Lang):
            raise UserError(f"the config of lang={self.lang.get('code')} names no schema",
                            fix="start its defaults list with one of stability/core/schemas/lang.py's "
                                "schemas, e.g. `- /lang_schema@_here_`")
        for key in ("seed", "seed_init", "seed_order"):
            seed(key, getattr(self, key))
        if self.lang.code in self.data.eval_langs:
            raise UserError(f"data.eval_langs={list(self.data.eval_langs)} lists the run's own language "
                            f"{self.lang.code}, whose diagnostic set every run is scored on",
                            fix=f"leave {self.lang.code} out of data.eval_langs")
        self._check_reinit_layers()

    def _check_reinit_layers(self) -> None:
        """`trainer.reinit_layers` from 0 to the encoder's layers where these are known without
        loading the model (`Model.encoder_depth`), one range whichever side a value falls; else
        at least 0 here, and at most the layers once the run has built the model."""
        depth = self.model.encoder_depth() if self.trainer.reinit_layers else None
        if depth is None:
            at_least("trainer.reinit_layers", self.trainer.reinit_layers, 0)
        else:
            reinit_layers_within(self.trainer.reinit_layers, depth, self.model.name)


def train_settings(cfg: DictConfig) -> TrainConfig:
    """The composed training config (without its `hydra` node) as typed settings; a wrong value
    is the UserError of its schema's check (composition has already checked the types)."""
    settings = OmegaConf.to_object(cfg)
    assert isinstance(settings, TrainConfig), type(settings)
    return settings


def register(store: ConfigStore) -> None:
    store.store(name="train_schema", node=TrainConfig)
