"""Seeds fused into one model (`stability.finetune.fused`, `fused_loop`): with dropout off each member
trains as its solo run does, step by step, and early-stops as it does; dropout masks are each member's
own; clipping is by each member's own norm; a stopped member stops changing."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from accelerate import Accelerator

from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.core.schemas.train import train_settings
from stability.data.container import texts
from stability.data.loading import load_run_datasets
from stability.finetune.batching import aligned_orders, collate, epoch_batches
from stability.finetune.encoding import encode
from stability.finetune.fused import (FusedMembers, build_members, clip_per_member, collate_members,
                                      refuse_unfusable, storage_free_copy)
from stability.finetune.fused_loop import train_members
from stability.finetune.loop import predict_entailment_probability, train, train_step
from stability.finetune.modeling import build_model, load_tokenizer
from stability.finetune.precision import forget_previous_precision
from stability.finetune.recipe import prepare

SEEDS_INIT = (0, 1, 2)
SEEDS_ORDER = (10, 11, 12)   # other than the init seeds: each member's batches are its own
STEPS = 5
# 32 pairs in batches of 4: 8 steps an epoch
SMALL = ["experiment=smoke", "data.max_train_samples=32", "trainer.batch_size=4", "trainer.learning_rate=1e-3"]


def _setup(tmp_path, overrides: list[str]):
    settings = train_settings(compose_config([*SMALL, *overrides, f"paths.cache_dir={tmp_path / 'cache'}"]))
    data = load_run_datasets(settings)
    tokenizer = load_tokenizer(settings.model, texts([data.train]), tmp_path / "cache")
    split, _ = encode(data.train, tokenizer, settings.data.max_length, None)
    return settings, tokenizer, split


def _member_batches(settings, split, seed_order: int) -> list[np.ndarray]:
    trainer = settings.trainer
    return epoch_batches(split.lengths, trainer.batch_size, seed_order, 1, trainer.group_by_length)


def _accelerator(mixed_precision: str = "no") -> Accelerator:
    """A CPU accelerator of this precision, whatever the tests before asked of this process."""
    forget_previous_precision()
    return Accelerator(cpu=True, mixed_precision=mixed_precision)


def _solo(settings, tokenizer, split, seed_init: int, seed_order: int, steps: int = STEPS,
          batches: list[np.ndarray] | None = None):
    """The seed's losses, gradient norms and final weights over `steps` steps, by the solo loop's own step,
    on its epoch's batches (or on `batches`)."""
    model = build_model(settings.model, tokenizer, seed_init)
    batches = _member_batches(settings, split, seed_order) if batches is None else batches
    recipe = prepare(model, settings.trainer, len(batches), seed_init * 1000)
    accelerator = _accelerator(settings.trainer.mixed_precision)
    model, optimizer = accelerator.prepare(model, recipe.optimizer)
    model.train()
    losses, norms = [], []
    for indices in batches[:steps]:
        output, norm = train_step(model, collate(split, indices, tokenizer.pad_token_id), optimizer, recipe,
                                  accelerator, settings.trainer.max_grad_norm)
        losses.append(output.loss.item())
        norms.append(float(norm))
    return losses, norms, model.state_dict()


def _fused(settings, tokenizer, split, seeds_init=SEEDS_INIT, seeds_order=SEEDS_ORDER, steps: int = STEPS,
           stop: tuple[int, int] | None = None, rate_factors: list[float] | None = None):
    """The fused members after `steps` steps (member stop[0] stopped after step stop[1]; the members'
    rates scaled by `rate_factors`, as their plateau rules scale them), with the members' losses and
    gradient norms, a row per step."""
    members = build_members(settings.model, tokenizer, settings.trainer, seeds_init)
    orders = [_member_batches(settings, split, seed) for seed in seeds_order]
    fused = FusedMembers(members, settings.trainer, len(orders[0]))
    if rate_factors is not None:
        fused.rate_factors = torch.tensor(rate_factors)
    fused.train()
    losses, norms = [], []
    for step in range(steps):
        loss, _, norm = fused.step(collate_members(split, [order[step] for order in orders], tokenizer.pad_token_id))
        losses.append(loss.tolist())
        norms.append(norm.tolist())
        if stop is not None and step + 1 == stop[1]:
            fused.stop(stop[0])
    return fused, np.array(losses), np.array(norms)


@pytest.mark.parametrize("overrides", [
    [],
    # the stabilisers that fuse: each member's re-initialised layers, layer-wise rates, the linear schedule
    ["trainer.reinit_layers=1", "trainer.layer_lr_decay=0.9", "trainer.schedule=linear", "trainer.weight_decay=0.01",
     "trainer.max_grad_norm=0.5"],
    ["trainer.mixed_precision=bf16"],
], ids=["plain", "reinit-llrd-linear", "bf16"])
def test_fused_members_train_as_their_solo_runs_step_by_step(tmp_path, overrides):
    settings, tokenizer, split = _setup(tmp_path, ["model.dropout=0.0", *overrides])
    # in bf16 both sides round the forward to bf16, not necessarily in the same places (a batched
    # product against one per member): losses agree to 1 %, gradient norms to 5 % or a few thousandths
    # (the small ones); the weights, which Adam's normalisation moves by about the rate whatever the
    # gradient's size, are compared in float32 only
    bf16 = settings.trainer.mixed_precision == "bf16"
    loss_tolerance, norm_tolerance, norm_floor = (1e-2, 5e-2, 5e-3) if bf16 else (1e-5, 1e-4, 1e-6)
    fused, losses, norms = _fused(settings, tokenizer, split)
    # clipping acts on some steps and members and not on others (the per-member rule is on the path)
    bound = settings.trainer.max_grad_norm
    assert (norms > bound).any() and (norms < bound).any()
    for member, (seed_init, seed_order) in enumerate(zip(SEEDS_INIT, SEEDS_ORDER)):
        solo_losses, solo_norms, solo_weights = _solo(settings, tokenizer, split, seed_init, seed_order)
        np.testing.assert_allclose(losses[:, member], solo_losses, rtol=loss_tolerance, atol=1e-6)
        np.testing.assert_allclose(norms[:, member], solo_norms, rtol=norm_tolerance, atol=norm_floor)
        if bf16:
            continue
        model = fused.load_member(member, build_model(settings.model, tokenizer, seed_init))
        for name, weight in model.state_dict().items():
            torch.testing.assert_close(weight, solo_weights[name], rtol=1e-4, atol=1e-5, msg=name)
    # the members are different seeds: their first losses differ
    assert len(set(np.round(losses[0], 6))) == len(SEEDS_INIT)



def test_members_whose_partial_batch_falls_at_different_steps_train_as_their_solo_runs(tmp_path):
    """30 pairs in batches of 4, grouped by length: each member's epoch ends in a batch of 2 at a step
    of its own order, so at some step the members' batches differ in size; over the whole epoch every
    member's losses and gradient norms are still its solo run's."""
    settings, tokenizer, split = _setup(tmp_path, ["model.dropout=0.0", "data.max_train_samples=30"])
    assert settings.trainer.group_by_length
    orders = [_member_batches(settings, split, seed) for seed in SEEDS_ORDER]
    steps = len(orders[0])
    assert any(len({len(order[step]) for order in orders}) > 1 for step in range(steps))
    _, losses, norms = _fused(settings, tokenizer, split, steps=steps)
    for member, (seed_init, seed_order) in enumerate(zip(SEEDS_INIT, SEEDS_ORDER)):
        solo_losses, solo_norms, _ = _solo(settings, tokenizer, split, seed_init, seed_order, steps=steps)
        np.testing.assert_allclose(losses[:, member], solo_losses, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(norms[:, member], solo_norms, rtol=1e-4, atol=1e-6)

def test_a_member_at_a_cut_rate_steps_as_its_solo_run_at_that_rate(tmp_path):
    """The plateau rule's factors: members at 1, 1/2 and 1/4 of the rate train as solo runs at those rates."""
    settings, tokenizer, split = _setup(tmp_path, ["model.dropout=0.0", "trainer.weight_decay=0.01"])
    factors = [1.0, 0.5, 0.25]
    fused, losses, norms = _fused(settings, tokenizer, split, rate_factors=factors)
    for member, factor in enumerate(factors):
        rate = settings.trainer.learning_rate * factor
        at_rate = replace(settings, trainer=replace(settings.trainer, learning_rate=rate))
        solo_losses, solo_norms, solo_weights = _solo(at_rate, tokenizer, split, SEEDS_INIT[member], SEEDS_ORDER[member])
        np.testing.assert_allclose(losses[:, member], solo_losses, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(norms[:, member], solo_norms, rtol=1e-4, atol=1e-6)
        model = fused.load_member(member, build_model(settings.model, tokenizer, SEEDS_INIT[member]))
        for name, weight in model.state_dict().items():
            torch.testing.assert_close(weight, solo_weights[name], rtol=1e-4, atol=1e-5, msg=name)


def test_members_predict_as_their_solo_models_with_one_pass_per_batch(tmp_path):
    settings, tokenizer, split = _setup(tmp_path, [])
    fused, _, _ = _fused(settings, tokenizer, split, steps=2)
    fused.train()       # predicting turns dropout off itself
    pad_id = int(tokenizer.pad_token_id)
    probs = fused.predict_entailment_probability(split, 8, pad_id, tokens_per_batch=200)
    accelerator = _accelerator()
    for member, seed_init in enumerate(SEEDS_INIT):
        model = fused.load_member(member, build_model(settings.model, tokenizer, seed_init))
        np.testing.assert_allclose(probs[member], predict_entailment_probability(model, split, 8, accelerator, pad_id,
                                                                                 tokens_per_batch=200), atol=1e-5)
    assert not np.allclose(probs[0], probs[1])


def test_each_member_draws_its_own_dropout_masks(tmp_path):
    """Three copies of one seed on one batch: in training their losses differ only through dropout,
    so equal losses would mean shared masks; in evaluation they agree."""
    settings, tokenizer, split = _setup(tmp_path, ["model.dropout=0.3"])
    fused = FusedMembers(build_members(settings.model, tokenizer, settings.trainer, (0, 0, 0)), settings.trainer, 8)
    batch = collate_members(split, [np.arange(4)] * 3, tokenizer.pad_token_id)
    fused.train()
    losses, _ = fused.forward(batch)
    assert len(set(losses.tolist())) == 3
    fused.train(False)
    losses, _ = fused.forward(batch)
    torch.testing.assert_close(losses, losses[:1].expand(3))


def test_the_shared_structure_is_the_model_on_meta_never_copying_a_weight(monkeypatch):
    model = torch.nn.Sequential(torch.nn.Embedding(7, 4), torch.nn.Linear(4, 7), torch.nn.BatchNorm1d(7))
    model[1].weight = model[0].weight            # tied, as a language model head is to its embeddings
    model[1].bias.requires_grad_(False)
    weights = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    with monkeypatch.context() as copying:       # its own patches only: the autouse cache fixture's stay
        for kind in (torch.Tensor, torch.nn.Parameter):
            copying.setattr(kind, "__deepcopy__", lambda *_: pytest.fail("a weight was copied"))
        skeleton = storage_free_copy(model)
    assert skeleton[1].weight is skeleton[0].weight and isinstance(skeleton[0].weight, torch.nn.Parameter)
    assert [(n, p.shape, p.dtype, p.requires_grad, p.is_meta) for n, p in skeleton.named_parameters()] == \
        [(n, p.shape, p.dtype, p.requires_grad, True) for n, p in model.named_parameters()]
    assert [(n, b.shape, b.dtype, b.is_meta) for n, b in skeleton.named_buffers()] == \
        [(n, b.shape, b.dtype, True) for n, b in model.named_buffers()]
    assert all(torch.equal(tensor, weights[name]) and not tensor.is_meta for name, tensor in model.state_dict().items())


def test_clipping_scales_only_the_member_above_the_bound_as_its_solo_run_would():
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.zeros(3, 5, 4)), torch.nn.Parameter(torch.zeros(3, 7))]
    for param in params:
        param.grad = 0.05 * torch.randn_like(param)
        param.grad[1] *= 100.0          # member 1 far above max_norm, members 0 and 2 below
    before = [param.grad.clone() for param in params]
    norms = clip_per_member(params, max_norm=1.0)
    for member in range(3):
        alone = [torch.nn.Parameter(torch.zeros(g[member].shape)) for g in before]
        for param, grad in zip(alone, before):
            param.grad = grad[member].clone()
        solo_norm = torch.nn.utils.clip_grad_norm_(alone, max_norm=1.0)
        torch.testing.assert_close(norms[member], solo_norm)
        for param, solo in zip(params, alone):
            torch.testing.assert_close(param.grad[member], solo.grad)
    assert norms[1] > 1.0 > max(norms[0], norms[2])
    for param, grad in zip(params, before):
        assert torch.equal(param.grad[0], grad[0]) and torch.equal(param.grad[2], grad[2])
        assert not torch.allclose(param.grad[1], grad[1])


def test_a_stopped_member_stops_changing_and_the_others_train_on_as_before(tmp_path):
    settings, tokenizer, split = _setup(tmp_path, ["model.dropout=0.0"])
    two_steps, _, _ = _fused(settings, tokenizer, split, steps=2)
    reference, reference_losses, _ = _fused(settings, tokenizer, split)
    stopped, losses, _ = _fused(settings, tokenizer, split, stop=(1, 2))   # member 1 stops after step 2
    for name, tensor in stopped.params.items():
        assert torch.equal(tensor[1], two_steps.params[name][1]), name
        state, at_two = stopped.optimizer.state[tensor], two_steps.optimizer.state[two_steps.params[name]]
        for key in ("exp_avg", "exp_avg_sq"):
            assert torch.equal(state[key][1], at_two[key][1]), (name, key)
        for member in (0, 2):       # the others train as if no member had stopped
            assert torch.equal(tensor[member], reference.params[name][member]), name
    assert any(not torch.equal(tensor[0], two_steps.params[name][0]) for name, tensor in stopped.params.items())
    np.testing.assert_array_equal(losses[:, [0, 2]], reference_losses[:, [0, 2]])


def test_what_does_not_fuse_yet_is_refused_in_one_line():
    trainer = train_settings(compose_config(SMALL)).trainer
    refuse_unfusable(trainer)
    with pytest.raises(UserError) as refused:
        refuse_unfusable(replace(trainer, optimizer="bertadam", mixout=0.2))
    message = str(refused.value)
    assert "\n" not in message
    assert "trainer.optimizer=bertadam" in message and "trainer.mixout=0.2" in message
    assert "trainer.optimizer=adamw" in message   # the fix names what fuses


def test_aligned_members_train_as_their_solo_runs_on_the_aligned_batches(tmp_path):
    """`trainer.fuse_align_lengths=true`: each member's first epoch is its solo run's over its own batches
    in the order `batching.aligned_orders` gives them with the group's generator of that epoch."""
    settings, tokenizer, split = _setup(tmp_path, ["model.dropout=0.0", "trainer.max_epochs=1", "trainer.fuse_seeds=3",
                                                   "trainer.fuse_align_lengths=true"])
    members = build_members(settings.model, tokenizer, settings.trainer, SEEDS_INIT)
    (result, *_), = [train_members(members, SEEDS_INIT, SEEDS_ORDER, split, split, settings, _accelerator(),
                                   int(tokenizer.pad_token_id))]
    orders = aligned_orders([_member_batches(settings, split, seed) for seed in SEEDS_ORDER], split.lengths,
                            np.random.default_rng([*SEEDS_ORDER, 1]))
    unaligned = _member_batches(settings, split, SEEDS_ORDER[0])
    assert [batch.tolist() for batch in orders[0]] != [batch.tolist() for batch in unaligned]   # another order
    losses, _, _ = _solo(settings, tokenizer, split, SEEDS_INIT[0], SEEDS_ORDER[0], len(orders[0]), orders[0])
    assert result.log[0]["loss"] == pytest.approx(np.mean(losses), rel=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("stopping", [
    ["trainer.patience=2"],
    # jiant's plateau rule alone: the rate halves at each validation without a better accuracy, and a
    # member stops at its second cut (3e-3 / 4 < min_lr); patience never ends a run within 8 epochs
    ["trainer.patience=8", "trainer.lr_patience=0", "trainer.min_lr=1e-3"],
], ids=["patience", "plateau"])
def test_each_member_early_stops_as_its_solo_run_does(tmp_path, stopping):
    """Members that stop at different epochs: each one's validations, best epoch, stop and best
    weights are its solo run's (`loop.train`, dropout off). Validated on its 32 training pairs,
    which the tiny model learns within a few epochs (on the held-out pairs it stays at chance, and
    every member would stop after its first patience)."""
    settings, tokenizer, split = _setup(tmp_path, ["model.dropout=0.0", "trainer.learning_rate=3e-3",
                                                   "trainer.max_epochs=8", *stopping])
    val_split = split
    pad_id = int(tokenizer.pad_token_id)
    members = build_members(settings.model, tokenizer, settings.trainer, SEEDS_INIT)
    accelerator = _accelerator()
    results = train_members(members, SEEDS_INIT, SEEDS_ORDER, split, val_split, settings, accelerator, pad_id)
    stopped_at = [result.epochs_trained for result in results]
    assert min(stopped_at) < settings.trainer.max_epochs and len(set(stopped_at)) > 1, stopped_at
    for member, (seed_init, seed_order) in zip(members, zip(SEEDS_INIT, SEEDS_ORDER)):
        solo_settings = replace(settings, seed_init=seed_init, seed_order=seed_order)
        model = build_model(settings.model, tokenizer, seed_init)
        solo = train(model, split, val_split, solo_settings, _accelerator(), pad_id, None,
                     lambda entry: None, lambda finished: None)
        fused = results[SEEDS_INIT.index(seed_init)]
        assert [e["val_accuracy"] for e in fused.log] == [e["val_accuracy"] for e in solo.log]
        np.testing.assert_allclose([e["loss"] for e in fused.log], [e["loss"] for e in solo.log], rtol=1e-4)
        assert (fused.best_epoch, fused.epochs_trained) == (solo.best_epoch, solo.epochs_trained)
        # the best weights answer as the solo run's do (compared by their answers: the attention's key
        # biases get gradients that are zero but for rounding, which Adam's normalisation blows up)
        np.testing.assert_allclose(predict_entailment_probability(member, split, 64, accelerator, pad_id),
                                   predict_entailment_probability(model, split, 64, accelerator, pad_id), atol=1e-4)
