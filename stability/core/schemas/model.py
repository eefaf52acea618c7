"""Schemas of the `model` group: each option has its own keys, so each has its own schema.

`model/mbert.yaml` (any HF id or local folder) is a `PretrainedModel`; `model/tiny.yaml`, the
small BERT built for offline runs, a `TinyModel` with its architecture. The training config
types `model` with their base `Model`. `kind` decides what a run builds: a `PretrainedModel`
is always `pretrained`; a `TinyModel` is `tiny`, or `pretrained` when a preset built on the
tiny model is pointed at a checkpoint (`experiment=smoke model.kind=pretrained
model.name=DIR`: its architecture keys are then unused, as before the schemas).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.errors import UserError
from stability.core.schemas.checks import at_least, one_of, within

# a Hugging Face checkpoint's architecture, beside its weights
CHECKPOINT_CONFIG = "config.json"


@dataclass
class Model:
    """What every encoder option has: its name, its kind and the dropout used in fine-tuning."""

    KINDS: ClassVar[tuple[str, ...]] = ("pretrained",)  # the kinds the option can build

    name: str = MISSING
    kind: str = MISSING
    dropout: float = MISSING

    def __post_init__(self) -> None:
        one_of("model.kind", self.kind, self.KINDS)
        within("model.dropout", self.dropout, 0, 1)

    def encoder_depth(self) -> int | None:
        """The encoder's layers where they are known without loading the model: the
        `num_hidden_layers` of the checkpoint's config.json in a local folder or the Hugging Face
        cache; None for a Hub id not downloaded yet. The file is read as JSON: importing
        transformers for its AutoConfig costs ~3 s of CPU, on every command line composed."""
        local = Path(self.name).expanduser() / CHECKPOINT_CONFIG
        path = local if local.is_file() else _cached_hub_file(self.name, CHECKPOINT_CONFIG)
        if path is None:
            return None
        try:
            depth = json.loads(path.read_text(encoding="utf-8")).get("num_hidden_layers")
        except (OSError, ValueError, AttributeError):
            return None  # loading the model says what is wrong with its config
        return depth if isinstance(depth, int) and not isinstance(depth, bool) else None


@dataclass
class PretrainedModel(Model):
    """A pretrained checkpoint: `name` is an HF id or a local folder."""


@dataclass
class TinyModel(Model):
    """A randomly initialised BERT whose WordPiece vocabulary is trained on the run's own text."""

    KINDS: ClassVar[tuple[str, ...]] = ("tiny", "pretrained")

    vocab_size: int = MISSING
    hidden_size: int = MISSING
    num_hidden_layers: int = MISSING
    num_attention_heads: int = MISSING
    intermediate_size: int = MISSING

    def __post_init__(self) -> None:
        super().__post_init__()
        for key in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"):
            at_least(f"model.{key}", getattr(self, key), 1)
        if self.hidden_size % self.num_attention_heads:
            raise UserError(f"model.hidden_size={self.hidden_size} is not a multiple of "
                            f"model.num_attention_heads={self.num_attention_heads}",
                            fix="choose a hidden size divisible by the number of heads")

    def encoder_depth(self) -> int | None:
        """`num_hidden_layers` when the run builds the tiny model, else the checkpoint's."""
        return self.num_hidden_layers if self.kind == "tiny" else super().encoder_depth()


def _cached_hub_file(repo_id: str, filename: str) -> Path | None:
    """A Hub repository's file in the local Hugging Face cache, or None (not cached, or not a
    valid repository id)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, filename)
    except ValueError:  # HFValidationError: a name that can be no Hub id
        return None
    return Path(found) if isinstance(found, str) else None


def register(store: ConfigStore) -> None:
    store.store(name="pretrained_model_schema", node=PretrainedModel)
    store.store(name="tiny_model_schema", node=TinyModel)
