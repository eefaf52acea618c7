"""`trainer.freeze_embeddings=true`: the word-embedding matrix stays as the run starts it, solo, under
layer-wise rate decay and fused; everything else trains; the run is its own variant."""
from __future__ import annotations

import pytest
import torch

from helpers import QUICK, runs, train_cli
from stability.core.config import compose_config
from stability.core.schemas.train import train_settings
from stability.data.container import texts
from stability.data.loading import load_run_datasets
from stability.finetune.batching import collate, epoch_batches
from stability.finetune.encoding import encode
from stability.finetune.fused import FusedMembers, build_members, collate_members
from stability.finetune.modeling import build_model, load_tokenizer
from stability.finetune.recipe import prepare

WORDS = "bert.embeddings.word_embeddings.weight"
POSITIONS = "bert.embeddings.position_embeddings.weight"
SMALL = ["experiment=smoke", "data.max_train_samples=16", "trainer.batch_size=4", "trainer.learning_rate=1e-2"]


def setup(tmp_path, *overrides: str):
    settings = train_settings(compose_config([*SMALL, *overrides, f"paths.cache_dir={tmp_path / 'cache'}"]))
    data = load_run_datasets(settings)
    tokenizer = load_tokenizer(settings.model, texts([data.train]), tmp_path / "cache")
    split, _ = encode(data.train, tokenizer, settings.data.max_length, None)
    batches = epoch_batches(split.lengths, settings.trainer.batch_size, 0, 1, settings.trainer.group_by_length)
    return settings, tokenizer, split, batches


def solo_weights(tmp_path, *overrides: str) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], int]:
    """A model's weights before and after 3 optimiser steps of the run's own recipe, and the number of
    tensors its optimiser steps."""
    settings, tokenizer, split, batches = setup(tmp_path, *overrides)
    model = build_model(settings.model, tokenizer, 0)
    recipe = prepare(model, settings.trainer, len(batches), 0)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    for indices in batches[:3]:
        model(**collate(split, indices, tokenizer.pad_token_id)).loss.backward()
        recipe.optimizer.step()
        recipe.optimizer.zero_grad()
    stepped = sum(len(group["params"]) for group in recipe.optimizer.param_groups)
    return before, dict(model.named_parameters()), stepped


@pytest.mark.parametrize("decay", ["1.0", "0.8"])
def test_only_the_word_embeddings_are_left_out(tmp_path, decay):
    before, after, stepped = solo_weights(tmp_path, "trainer.freeze_embeddings=true", f"trainer.layer_lr_decay={decay}")
    assert torch.equal(before[WORDS], after[WORDS]) and not after[WORDS].requires_grad
    assert stepped == len(before) - 1
    assert not torch.equal(before[POSITIONS], after[POSITIONS])
    _, trained, all_stepped = solo_weights(tmp_path, f"trainer.layer_lr_decay={decay}")
    assert all_stepped == len(before) and not torch.equal(before[WORDS], trained[WORDS])


def test_fused_members_keep_their_word_embeddings(tmp_path):
    settings, tokenizer, split, batches = setup(tmp_path, "trainer.freeze_embeddings=true")
    members = FusedMembers(build_members(settings.model, tokenizer, settings.trainer, [0, 1]), settings.trainer,
                           len(batches))
    words = members.params[WORDS].detach().clone()
    positions = members.params[POSITIONS].detach().clone()
    for step in range(3):
        members.step(collate_members(split, [batches[step], batches[-1 - step]], tokenizer.pad_token_id))
    assert torch.equal(members.params[WORDS], words) and not torch.equal(members.params[POSITIONS], positions)


def test_a_frozen_run_is_its_own_variant(tmp_path):
    result = train_cli([*QUICK, "seed=0", "trainer.freeze_embeddings=true"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert list(runs(tmp_path / "outputs")) == ["smoke/en/rte/ep2_frozenemb-true_ntrain32/seed0"]
