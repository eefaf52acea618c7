"""The training loop with the stabilisation methods on: validation every N steps up to jiant's
t_total, and a run killed between two validations inside an epoch resumes to the same result."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from accelerate import Accelerator

from stability.core.config import compose_config
from stability.core.schemas.train import train_settings
from stability.data.container import texts
from stability.data.loading import load_run_datasets
from stability.finetune.encoding import encode
from stability.finetune.loop import train
from stability.finetune.modeling import build_model, load_tokenizer

# 32 training pairs in batches of 8: 4 optimiser steps per epoch
SMALL = ["experiment=smoke", "data.max_train_samples=32", "data.max_eval_samples=16", "trainer.batch_size=8"]
# every method at once, validating every 3 steps
ALL_ON = ["trainer.eval_every=3", "trainer.schedule=linear", "trainer.lr_patience=0", "trainer.optimizer=bertadam",
          "trainer.reinit_layers=1", "trainer.layer_lr_decay=0.9", "trainer.mixout=0.2",
          "trainer.pretrained_decay=0.01", "trainer.patience=10"]


class _Killed(Exception):
    pass


def _setup(tmp_path: Path, overrides: list[str]):
    settings = train_settings(compose_config([*SMALL, *overrides, f"paths.cache_dir={tmp_path / 'cache'}"]))
    data = load_run_datasets(settings)
    tokenizer = load_tokenizer(settings.model, texts([data.train]), tmp_path / "cache")
    train_split, _ = encode(data.train, tokenizer, settings.data.max_length, None)
    val_split, _ = encode(data.validation, tokenizer, settings.data.max_length, None)
    return settings, tokenizer, train_split, val_split


def _train(tmp_path: Path, overrides: list[str], checkpoint: Path | None = None, kill_at: int | None = None):
    settings, tokenizer, train_split, val_split = _setup(tmp_path, overrides)
    model = build_model(settings.model, tokenizer, settings.seed_init)
    log: list[dict] = []

    def on_validation(entry: dict) -> None:
        log.append(entry)
        if kill_at is not None and len(log) == kill_at:
            raise _Killed

    result = train(model, train_split, val_split, settings, Accelerator(cpu=True), int(tokenizer.pad_token_id),
                   checkpoint, on_validation, lambda finished: log.extend(finished))
    return model, result, log


@pytest.mark.slow
def test_validating_every_n_steps_runs_on_to_whole_validations(tmp_path):
    """max_epochs=2 plans 8 steps; validating every 3 rounds them up to 9 (jiant's t_total), so
    validations fall at steps 3, 6 (epochs 1, 2) and 9, the first step of epoch 3."""
    _, result, log = _train(tmp_path, ["trainer.max_epochs=2", "trainer.eval_every=3", "trainer.patience=10"])
    assert [(entry["epoch"], entry["step"]) for entry in log] == [(1, 3), (2, 6), (3, 9)]
    assert result.epochs_trained == 3


def test_patience_counts_validations(tmp_path):
    """A learning rate too small to change any prediction: the first validation is the best, and
    patience=2 stops training at the third, whatever the epoch."""
    _, _, log = _train(tmp_path, ["trainer.max_epochs=5", "trainer.eval_every=2", "trainer.patience=2",
                                  "trainer.learning_rate=1e-12"])
    assert [entry["step"] for entry in log] == [2, 4, 6]


@pytest.mark.slow
def test_a_run_killed_between_validations_resumes_to_the_same_result(tmp_path):
    overrides = [*ALL_ON, "trainer.max_epochs=3"]
    model, result, log = _train(tmp_path, overrides)
    checkpoint = tmp_path / "checkpoint" / "last.pt"
    checkpoint.parent.mkdir()
    # killed at the 3rd validation (step 9, mid-epoch 3): the checkpoint holds step 6, mid-epoch 2
    with pytest.raises(_Killed):
        _train(tmp_path, overrides, checkpoint, kill_at=3)
    assert torch.load(checkpoint, weights_only=False)["state"].step == 6
    resumed_model, resumed, resumed_log = _train(tmp_path, overrides, checkpoint)
    assert [entry["step"] for entry in log] == [3, 6, 9, 12]
    # the training loss of every segment: equal only if the resumed run drew the same dropout,
    # mixout masks and rates as the uninterrupted one
    assert [(e["step"], e["loss"], e["val_accuracy"]) for e in resumed_log] == \
        [(e["step"], e["loss"], e["val_accuracy"]) for e in log]
    assert resumed.best_epoch == result.best_epoch
    for (name, value), (_, resumed_value) in zip(model.state_dict().items(), resumed_model.state_dict().items()):
        torch.testing.assert_close(resumed_value, value, rtol=0, atol=0, msg=name)
    assert "parametrizations" not in " ".join(model.state_dict())   # mixout removed after training


def test_an_experiments_trainer_keys_win_over_a_trainer_preset_as_the_docs_say():
    """docs/configs-and-presets.md, "Which value wins": `experiment=smoke trainer=mosbach` trains with
    Mosbach's optimiser, schedule and warm-up at smoke's batch size, rate and epochs, and the run's
    log starts with those values."""
    from omegaconf import OmegaConf

    from stability.finetune.recipe import described

    docs = (Path(__file__).resolve().parents[2] / "docs" / "configs-and-presets.md").read_text(encoding="utf-8")
    line = " ".join(docs.split("`[en rte trainer-mosbach seed 0] ", 1)[1].split("`", 1)[0].split())
    trainer = OmegaConf.to_object(compose_config(["experiment=smoke", "trainer=mosbach"]).trainer)
    assert (trainer.batch_size, trainer.learning_rate, trainer.max_epochs) == (8, 1e-3, 10)
    assert (trainer.schedule, trainer.warmup_ratio, trainer.weight_decay) == ("linear", 0.1, 0.01)
    assert described(trainer, "mosbach") == line
    reinit = OmegaConf.to_object(compose_config(["trainer=reinit"]).trainer)
    assert described(reinit, "reinit").endswith(f", reinit_layers {reinit.reinit_layers}")
