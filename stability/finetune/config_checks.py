"""Check override values before a run starts, so a typo costs one line, not a traceback later."""
from __future__ import annotations

from omegaconf import DictConfig

from stability.core.errors import UserError, as_int

_POSITIVE_INTS = ("trainer.batch_size", "trainer.eval_batch_size", "trainer.max_epochs",
                  "trainer.patience", "data.max_length")
_OPTIONAL_POSITIVE_INTS = ("data.max_train_samples", "data.max_eval_samples")
_INTS = ("seed", "seed_init", "seed_order", "data.mnli.seed")
_POSITIVE_FLOATS = ("trainer.learning_rate", "trainer.max_grad_norm")
_UNIT_FLOATS = ("model.dropout",)
_MIXED_PRECISION = ("no", "fp16", "bf16")


def _value(cfg: DictConfig, key: str) -> object:
    node: object = cfg
    for part in key.split("."):
        node = node[part]  # type: ignore[index]
    return node


def _as_float(key: str, value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UserError(f"{key}={value!r} is not a number", fix=f"pass {key}=<number>, e.g. 1e-5") from None


def check_run_config(cfg: DictConfig) -> None:
    """Raise a UserError naming the first override whose value cannot work."""
    for key in _INTS:
        as_int(key, _value(cfg, key))
    for key in _POSITIVE_INTS:
        if as_int(key, _value(cfg, key)) < 1:
            raise UserError(f"{key} must be at least 1", fix=f"pass {key}=<positive integer>")
    for key in _OPTIONAL_POSITIVE_INTS:
        value = _value(cfg, key)
        if value is not None and as_int(key, value) < 1:
            raise UserError(f"{key} must be at least 1", fix=f"pass {key}=<positive integer> or null")
    for key in _POSITIVE_FLOATS:
        if _as_float(key, _value(cfg, key)) <= 0:
            raise UserError(f"{key} must be positive", fix=f"pass {key}=<positive number>")
    for key in _UNIT_FLOATS:
        if not 0 <= _as_float(key, _value(cfg, key)) < 1:
            raise UserError(f"{key} must lie in [0, 1)", fix=f"pass e.g. {key}=0.1")
    if cfg.trainer.mixed_precision not in _MIXED_PRECISION:
        raise UserError(f"trainer.mixed_precision={cfg.trainer.mixed_precision!r} is not known",
                        fix=f"use one of: {', '.join(_MIXED_PRECISION)}")
