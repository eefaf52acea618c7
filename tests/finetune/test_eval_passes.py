"""The evaluation passes: batched by items or by a token budget, they give every item the same
P(entailment); a run with dynamics takes its final diagnostic predictions from the pass it
recorded at the best validation, which are the numbers a pass of its own would compute."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from accelerate import Accelerator

from stability.core.config import compose_config
from stability.core.schemas.train import train_settings
from stability.data.container import texts
from stability.data.loading import load_run_datasets
from stability.finetune.batching import eval_batches
from stability.finetune.dynamics import DynamicsRecorder, ValidationRecord
from stability.finetune.encoding import encode
from stability.finetune.loop import predict_diagnostic, predict_entailment_probability, train
from stability.finetune.modeling import build_model, load_tokenizer

# 32 training pairs in batches of 8: 4 optimiser steps per epoch
SMALL = ["experiment=smoke", "data.max_train_samples=32", "data.max_eval_samples=16", "trainer.batch_size=8"]


def _setup(tmp_path, overrides: list[str]):
    settings = train_settings(compose_config([*SMALL, *overrides, f"paths.cache_dir={tmp_path / 'cache'}"]))
    data = load_run_datasets(settings)
    tokenizer = load_tokenizer(settings.model, texts([data.train]), tmp_path / "cache")
    return settings, tokenizer, *(encode(split, tokenizer, settings.data.max_length, None)[0]
                                  for split in (data.train, data.validation, data.diagnostic))


@pytest.mark.parametrize("overrides", [
    ["trainer.max_epochs=4", "trainer.patience=4"],
    # mixout (taken off after training), validation every 3 steps inside epochs, the plateau rule
    ["trainer.max_epochs=3", "trainer.patience=10", "trainer.eval_every=3", "trainer.mixout=0.2",
     "trainer.lr_patience=0", "trainer.reinit_layers=1"],
], ids=["epochs", "mixout-every-3-steps"])
def test_the_best_validations_recorded_diagnostic_pass_is_the_trained_models(tmp_path, overrides):
    """Bit for bit: the final diagnostic predictions of a run with dynamics (taken from the
    recording) are those of a pass over the trained model, also when the best validation is not
    the last one (training then restores its weights)."""
    settings, tokenizer, train_split, val_split, diagnostic = _setup(tmp_path, overrides)
    model = build_model(settings.model, tokenizer, settings.seed_init)
    records: list[ValidationRecord] = []
    recorder = DynamicsRecorder(len(train_split), diagnostic, torch.device("cpu"), records.append)
    accelerator, pad_id = Accelerator(cpu=True), int(tokenizer.pad_token_id)
    result = train(model, train_split, val_split, settings, accelerator, pad_id, None,
                   lambda entry: None, lambda finished: None, dynamics=recorder)
    accuracies = [entry["val_accuracy"] for entry in result.log]
    best_line = accuracies.index(max(accuracies))      # the first of the best: later equal ones keep it
    assert best_line < len(records) - 1, "the case needs a best validation before the last"
    assert recorder.best_diagnostic is records[best_line].diagnostic

    batch_size = settings.trainer.eval_batch_size
    own_pass = predict_entailment_probability(model, diagnostic, batch_size, accelerator, pad_id)
    reused = predict_diagnostic(model, diagnostic, batch_size, accelerator, pad_id, recorder)
    assert reused is recorder.best_diagnostic
    np.testing.assert_array_equal(reused, own_pass)
    # without a recorded best (no dynamics) it is that pass
    np.testing.assert_array_equal(predict_diagnostic(model, diagnostic, batch_size, accelerator, pad_id, None),
                                  own_pass)


def test_a_token_budget_fills_each_batch_up_to_it_longest_first():
    lengths = np.array([5, 30, 12, 30, 7, 64, 9, 12, 3, 40])
    batches = eval_batches(lengths, batch_size=4, tokens_per_batch=64)
    # 64 alone; 40 alone (two would pad to 80); 30, 30 (60); 12, 12, 9, 7 (4 x 12 = 48 and the
    # batch size caps it); 5, 3
    assert [lengths[batch].tolist() for batch in batches] == [[64], [40], [30, 30], [12, 12, 9, 7], [5, 3]]
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    # a pair longer than the budget still gets a batch of its own
    assert [batch.tolist() for batch in eval_batches(np.array([100, 10]), 8, tokens_per_batch=50)] == [[0], [1]]
    # without a budget: batch_size examples each, in the same longest-first order
    assert [lengths[batch].tolist() for batch in eval_batches(lengths, 4)] == \
        [[64, 40, 30, 30], [12, 12, 9, 7], [5, 3]]


@pytest.mark.parametrize("tokens_per_batch", [1, 96, 400])
def test_batching_by_tokens_gives_every_item_the_probability_of_batching_by_items(tmp_path, tokens_per_batch):
    """Padding is masked, so an item's P(entailment) does not depend on its batch, up to the
    rounding of sums in another order: a budget of 1 puts every pair alone, 96 and 400 mix batches
    of different sizes. In float64 that rounding is far below the float32 step the probabilities are
    returned in, so what is left to differ is at most that step, 100 times below the items' spread
    (the untrained model says 0.4936 +- 0.00004 to all)."""
    settings, tokenizer, _, _, diagnostic = _setup(tmp_path, [])
    model = build_model(settings.model, tokenizer, settings.seed_init).double()
    accelerator, pad_id = Accelerator(cpu=True), int(tokenizer.pad_token_id)
    by_items = predict_entailment_probability(model, diagnostic, 128, accelerator, pad_id)
    by_tokens = predict_entailment_probability(model, diagnostic, 128, accelerator, pad_id,
                                               tokens_per_batch=tokens_per_batch)
    assert len(eval_batches(diagnostic.lengths, 128, tokens_per_batch)) > 1
    assert np.ptp(by_items) > 1e-5      # the items differ: the comparison is one item by one
    np.testing.assert_allclose(by_tokens, by_items, rtol=0, atol=1e-7)
