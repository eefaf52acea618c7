"""`trainer.dynamics=true`: what a run records at each validation, read off the passes it makes
anyway (training) plus one diagnostic pass; it changes no result, and a finished run without
dynamics is redone when they are asked for, as `trainer.save_model=true` does for weights."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from accelerate import Accelerator
from helpers import finished_run, predictions, train_cli

from stability.finetune.batching import epoch_batches
from stability.finetune.dynamics import DynamicsRecorder, ValidationRecord, predicted_labels
from stability.finetune.loop import train
from stability.finetune.modeling import build_model
from test_save_model import ONE_RUN, RUN
from test_training_recipe import _setup



def test_recorder_keeps_each_items_last_training_pass_since_the_previous_validation():
    records: list[ValidationRecord] = []
    recorder = DynamicsRecorder(5, None, torch.device("cpu"), records.append)
    first, second = torch.tensor([[2.0, 0.0], [0.0, 1.0]]), torch.tensor([[1.0, 1.0], [-1.0, 3.0]])
    recorder.observe(np.array([0, 2]), first)
    recorder.observe(np.array([2, 3]), second)      # item 2 again: its later pass counts
    validation, diagnostic = np.array([0.2, 0.9]), np.array([0.5])
    recorder.record(1, validation, diagnostic, Accelerator(cpu=True))
    sigmoid = lambda x: 1 / (1 + np.exp(-x))        # noqa: E731 - P(class 0) of two logits
    expected = [sigmoid(2.0), np.nan, 0.5, sigmoid(-4.0), np.nan]
    np.testing.assert_allclose(records[0].train, expected, rtol=1e-6)
    assert records[0].number == 1 and records[0].validation is validation and records[0].diagnostic is diagnostic
    recorder.record(2, validation, diagnostic, Accelerator(cpu=True))   # nothing trained since
    assert np.isnan(records[1].train).all()
    np.testing.assert_array_equal(predicted_labels(np.array([0.5, 0.49, np.nan])), [0, 1, -1])


def test_training_probabilities_are_those_of_the_training_passes(tmp_path):
    """The recorded P(entailment) of every training item is the softmax of the logits its training
    pass produced (in training mode, dropout on): no other pass is made over the training data."""
    settings, tokenizer, train_split, val_split = _setup(tmp_path, ["trainer.max_epochs=1"])
    model = build_model(settings.model, tokenizer, settings.seed_init)
    passes: list[torch.Tensor] = []
    model.register_forward_hook(lambda module, args, output: passes.append(output.logits.detach().clone())
                                if module.training else None)
    records: list[ValidationRecord] = []
    recorder = DynamicsRecorder(len(train_split), val_split, torch.device("cpu"), records.append)
    train(model, train_split, val_split, settings, Accelerator(cpu=True), int(tokenizer.pad_token_id), None,
          lambda entry: None, lambda finished: None, dynamics=recorder)
    order = np.concatenate(epoch_batches(train_split.lengths, settings.trainer.batch_size, settings.seed_order, 1,
                                         settings.trainer.group_by_length))
    expected = np.empty(len(train_split))
    expected[order] = torch.softmax(torch.cat(passes), dim=-1)[:, 0].numpy()
    assert len(records) == 1 and sorted(order) == list(range(len(train_split)))
    np.testing.assert_array_equal(records[0].train, expected)


@pytest.mark.slow
def test_dynamics_change_no_result_and_a_finished_run_is_redone_for_them(tmp_path):
    args = [*ONE_RUN, f"paths.output_dir={tmp_path / 'outputs'}"]
    run = finished_run(args, tmp_path, RUN)
    assert not run.has_dynamics() and run.read_dynamics() is None
    without = (run.path / "predictions.jsonl").read_bytes()
    record_without = run.read_record()

    redone = train_cli([*args, "trainer.dynamics=true"], tmp_path)
    assert redone.returncode == 0 and "[redo]" in redone.stdout + redone.stderr, redone.stderr
    # recording changes nothing: byte-identical predictions, the same fingerprint and variant
    assert (run.path / "predictions.jsonl").read_bytes() == without
    record = run.read_record()
    assert (record.config_fingerprint, record.variant, record.category_mcc, record.best_epoch) == \
        (record_without.config_fingerprint, record_without.variant, record_without.category_mcc,
         record_without.best_epoch)
    assert (run.replaced_runs()[0] / "predictions.jsonl").read_bytes() == without

    dynamics = run.read_dynamics()
    log = run.read_train_log()
    assert dynamics.pred.shape == (len(log), 32 + record.n_validation + record.n_items)
    assert list(dynamics.items["split"].unique()) == ["train", "validation", "diagnostic"]
    train_columns, diagnostic = dynamics.columns("train"), dynamics.columns("diagnostic")
    assert not np.isnan(dynamics.prob_entailment[:, train_columns]).any()    # every item once per epoch
    # the best validation's diagnostic predictions are the run's final ones
    final = predictions(run.path)
    assert list(dynamics.items["idx"].iloc[diagnostic]) == [row["idx"] for row in final]
    np.testing.assert_array_equal(dynamics.pred[record.best_epoch - 1, diagnostic], [row["pred"] for row in final])
    np.testing.assert_allclose(dynamics.prob_entailment[record.best_epoch - 1, diagnostic],
                               [row["prob_entailment"] for row in final], atol=1e-3)   # float16

    for asked in ("true", "false"):     # dynamics present: skipped whether or not they are asked for
        assert "[skip]" in train_cli([*args, f"trainer.dynamics={asked}"], tmp_path).stdout
