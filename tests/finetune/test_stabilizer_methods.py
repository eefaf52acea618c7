"""The fine-tuning stabilisers: BertAdam, layer-wise lr decay, the learning-rate policy,
re-initialised top layers, mixout and weight decay towards the pretrained weights, each
checked against values computed by hand or by the reference library."""
from __future__ import annotations

import copy
import dataclasses
import math
import re

import pytest
import torch
from torch import nn
from transformers import (
    AutoModelForSequenceClassification,
    BertConfig,
    BertForSequenceClassification,
    get_linear_schedule_with_warmup,
)

from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.core.schemas.train import train_settings
from stability.core.schemas.trainer import Trainer
from stability.finetune.mixout import Mixout, apply_mixout, remove_mixout
from stability.finetune.optimizers import BertAdam, build_optimizer, parameter_groups
from stability.finetune.pretrained_decay import PretrainedDecay
from stability.finetune.reinit import reinit_top_layers
from stability.finetune.schedules import LearningRate

BETA1, BETA2 = 0.9, 0.999


def _tiny_bert(layers: int = 3, dropout: float = 0.1, seed: int = 0) -> BertForSequenceClassification:
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32, num_labels=2,
                        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    return BertForSequenceClassification(config)


def _batch() -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    return {"input_ids": torch.randint(5, 50, (4, 12), generator=generator), "labels": torch.tensor([0, 1, 1, 0])}


def _first_step(optimizer_for, grad: float) -> torch.Tensor:
    param = nn.Parameter(torch.zeros(3, dtype=torch.float64))
    optimizer = optimizer_for([param])
    param.grad = torch.full_like(param, grad)
    optimizer.step()
    return -param.detach()  # the step taken


# --- BertAdam -----------------------------------------------------------------------------------

def test_bertadam_defaults_are_berts():
    optimizer = BertAdam([nn.Parameter(torch.zeros(1))], lr=2e-5)
    assert optimizer.defaults == {"lr": 2e-5, "betas": (0.9, 0.999), "eps": 1e-6, "weight_decay": 0.0,
                                  "max_grad_norm": 1.0}


@pytest.mark.parametrize("max_grad_norm, kept", [(1.0, 1 / 10), (0.0, 1.0)])
def test_bertadam_clips_each_tensor_before_its_moments(max_grad_norm, kept):
    """pytorch-pretrained-bert's BertAdam clips every tensor's gradient to norm 1.0 first: a
    gradient of norm 10 enters the first moment scaled by 1/10 (not at all with 0)."""
    param, other = nn.Parameter(torch.zeros(4, dtype=torch.float64)), nn.Parameter(torch.zeros(1, dtype=torch.float64))
    optimizer = BertAdam([param, other], lr=0.01, max_grad_norm=max_grad_norm)
    param.grad = torch.full_like(param, 5.0)            # norm √(4·25) = 10
    other.grad = torch.full_like(other, 0.5)            # norm 0.5: left as it is
    optimizer.step()
    torch.testing.assert_close(optimizer.state[param]["exp_avg"], (1 - BETA1) * 5.0 * kept * torch.ones(4, dtype=torch.float64))
    torch.testing.assert_close(optimizer.state[other]["exp_avg"], (1 - BETA1) * 0.5 * torch.ones(1, dtype=torch.float64))


def test_bertadam_first_step_lacks_the_bias_correction():
    lr, g, eps = 0.01, 0.1, 1e-6
    by_hand = lr * (1 - BETA1) * g / (math.sqrt((1 - BETA2) * g * g) + eps)
    step = _first_step(lambda params: BertAdam(params, lr=lr), g)
    torch.testing.assert_close(step, torch.full((3,), by_hand, dtype=torch.float64), rtol=1e-12, atol=0)
    # against torch's bias-corrected AdamW, with eps negligible in both
    bert = _first_step(lambda params: BertAdam(params, lr=lr, eps=1e-12), g)
    adamw = _first_step(lambda params: torch.optim.AdamW(params, lr=lr, eps=1e-12, weight_decay=0.0), g)
    ratio = (bert / adamw)[0].item()
    assert ratio == pytest.approx((1 - BETA1) / math.sqrt(1 - BETA2), rel=1e-9)
    assert ratio == pytest.approx(3.1623, abs=1e-4)


def test_bertadam_second_step_with_weight_decay():
    lr, wd, eps, p0, g1, g2 = 0.01, 0.1, 1e-6, 1.5, 0.1, -0.3
    m1, v1 = (1 - BETA1) * g1, (1 - BETA2) * g1 ** 2
    p1 = p0 - lr * (m1 / (math.sqrt(v1) + eps) + wd * p0)
    m2, v2 = BETA1 * m1 + (1 - BETA1) * g2, BETA2 * v1 + (1 - BETA2) * g2 ** 2
    p2 = p1 - lr * (m2 / (math.sqrt(v2) + eps) + wd * p1)

    param = nn.Parameter(torch.full((2,), p0, dtype=torch.float64))
    optimizer = BertAdam([param], lr=lr, weight_decay=wd)
    for g in (g1, g2):
        param.grad = torch.full_like(param, g)
        optimizer.step()
    torch.testing.assert_close(param.detach(), torch.full((2,), p2, dtype=torch.float64), rtol=1e-12, atol=0)


def test_bertadam_step_evaluates_the_closure():
    param = nn.Parameter(torch.ones(2))
    optimizer = BertAdam([param], lr=0.1)

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = (param ** 2).sum()
        loss.backward()
        return loss

    assert optimizer.step(closure).item() == 2.0
    assert torch.all(param < 1)


# --- layer-wise learning-rate decay and build_optimizer ------------------------------------------

def test_parameter_groups_decay_per_layer_and_cover_every_parameter_once():
    model = _tiny_bert(layers=3)
    lr, xi = 1e-3, 0.8
    groups = parameter_groups(model, lr, 0.01, xi)
    expected = {"embeddings": lr * xi ** 3, "layer.0": lr * xi ** 2, "layer.1": lr * xi, "layer.2": lr, "head": lr}
    assert {g["name"]: g["lr"] for g in groups} == pytest.approx(expected, rel=1e-12)
    assert [g["name"] for g in groups] == list(expected)
    assert all(g["weight_decay"] == 0.01 for g in groups)
    ids = [id(p) for g in groups for p in g["params"]]
    assert len(ids) == len(set(ids)) and set(ids) == {id(p) for p in model.parameters()}
    names = {id(p): n for n, p in model.named_parameters()}
    prefixes = {"embeddings": ("bert.embeddings.",), "layer.0": ("bert.encoder.layer.0.",),
                "layer.1": ("bert.encoder.layer.1.",), "layer.2": ("bert.encoder.layer.2.",),
                "head": ("bert.pooler.", "classifier.")}
    for group in groups:
        assert all(names[id(p)].startswith(prefixes[group["name"]]) for p in group["params"]), group["name"]


def test_parameter_groups_without_decay_is_one_group():
    model = _tiny_bert()
    groups = parameter_groups(model, 1e-3, 0.0, 1.0)
    assert len(groups) == 1 and groups[0]["lr"] == 1e-3
    assert [id(p) for p in groups[0]["params"]] == [id(p) for p in model.parameters()]


def test_layer_decay_needs_an_encoder_layer_stack():
    with pytest.raises(UserError, match="fix:"):
        parameter_groups(nn.Linear(2, 2), 1e-3, 0.0, 0.9)
    assert len(parameter_groups(nn.Linear(2, 2), 1e-3, 0.0, 1.0)) == 1


@pytest.mark.parametrize("name", ["adamw", "bertadam"])
def test_build_optimizer_honours_each_groups_rate(name):
    """The first step of each optimizer, by hand, with each group's own lr: AdamW (bias-corrected,
    eps 1e-8) lr·g/(|g|+eps), BertAdam lr·(1−β1)g/(√(1−β2)|g|+1e-6)."""
    model = _tiny_bert(layers=3, dropout=0.0).double()  # float64: the moves are read exactly
    optimizer = build_optimizer(model, name, learning_rate=1e-3, weight_decay=0.0, layer_lr_decay=0.5)
    assert isinstance(optimizer, torch.optim.AdamW if name == "adamw" else BertAdam)
    assert [g["lr"] for g in optimizer.param_groups] == pytest.approx([1e-3 * 0.5 ** e for e in (3, 2, 1, 0, 0)])
    before = [[p.detach().clone() for p in g["params"]] for g in optimizer.param_groups]
    model(**_batch()).loss.backward()
    optimizer.step()
    for group, olds in zip(optimizer.param_groups, before):
        for param, old in zip(group["params"], olds):
            g = param.grad
            if name == "adamw":
                step = group["lr"] * g / (g.abs() + 1e-8)
            else:
                step = group["lr"] * (1 - BETA1) * g / (math.sqrt(1 - BETA2) * g.abs() + 1e-6)
            torch.testing.assert_close(old - param.detach(), step, rtol=1e-9, atol=1e-15)


def test_build_optimizer_unknown_name():
    with pytest.raises(UserError, match="adamw, bertadam"):
        build_optimizer(_tiny_bert(), "sgd", 1e-3, 0.0, 1.0)


# --- learning-rate policy --------------------------------------------------------------------------

def _sgd(*rates: float) -> torch.optim.SGD:
    return torch.optim.SGD([{"params": [nn.Parameter(torch.zeros(1))], "lr": r} for r in rates])


def _rates(optimizer: torch.optim.Optimizer) -> list[float]:
    return [g["lr"] for g in optimizer.param_groups]


def test_linear_schedule_equals_transformers_and_the_hand_formula():
    total, ratio = 47, 0.1  # warmup int(4.7) = 4 steps
    ours, reference = _sgd(0.1), _sgd(0.1)
    policy = LearningRate(ours, "linear", ratio, total, None, 0.5, 0.0)
    schedule = get_linear_schedule_with_warmup(reference, num_warmup_steps=4, num_training_steps=total)
    for step in range(total + 1):
        lr = _rates(ours)[0]
        assert lr == _rates(reference)[0]
        by_hand = 0.1 * step / 4 if step < 4 else 0.1 * (total - step) / (total - 4)
        assert lr == pytest.approx(by_hand, abs=1e-15)
        ours.step()
        policy.after_step()
        reference.step()
        schedule.step()


def test_constant_schedule_stays_constant():
    optimizer = _sgd(0.1, 0.02)
    policy = LearningRate(optimizer, "constant", 0.1, 10, None, 0.5, 0.0)
    for _ in range(10):
        optimizer.step()
        policy.after_step()
        assert _rates(optimizer) == [0.1, 0.02]
    assert policy.after_validation(0.0) is False  # no plateau rule without lr_patience


# validation after every second step; 0.60005 is no improvement (threshold 1e-4, absolute)
_SCORES = [0.5, 0.6, 0.60005, 0.6, 0.59, 0.6, 0.7, 0.7]
_TOTAL = 2 * len(_SCORES)


def _plateau_run(optimizer, policy, start: int = 0, end: int = len(_SCORES)) -> tuple[list, list, list]:
    rates, bases, stops = [], [], []
    for index in range(start, end):
        for _ in range(2):
            optimizer.step()
            policy.after_step()
            rates.append(_rates(optimizer))
        stops.append(policy.after_validation(_SCORES[index]))
        bases.append(policy.base_rates())
        rates.append(_rates(optimizer))
    return rates, bases, stops


def test_plateau_rule_scales_the_schedule_and_stops_below_min_lr():
    optimizer = _sgd(1.0, 0.1)
    policy = LearningRate(optimizer, "linear", 0.0, _TOTAL, 1, 0.5, 0.3)
    rates, bases, stops = _plateau_run(optimizer, policy)
    # patience 1: torch cuts when the 2nd validation in a row fails to improve (validations 4 and 6)
    expected_base = [1.0, 1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.25]
    assert [b[0] for b in bases] == expected_base
    assert [b[1] for b in bases] == pytest.approx([0.1 * b for b in expected_base], rel=1e-12)
    assert stops == [base < 0.3 for base in expected_base]
    assert stops.index(True) == 5
    # every rate is base × the linear factor (T − step)/T, the cut applying at once
    for index, (lr_high, lr_low) in enumerate(rates):
        validation, within = divmod(index, 3)
        step = 2 * validation + min(within + 1, 2)
        base = expected_base[validation] if within == 2 else ([1.0] + expected_base)[validation]
        assert lr_high == pytest.approx(base * (_TOTAL - step) / _TOTAL, rel=1e-12, abs=1e-15)
        assert lr_low == pytest.approx(0.1 * lr_high, rel=1e-12, abs=1e-15)


def test_plateau_state_round_trip_continues_identically():
    optimizer = _sgd(1.0, 0.1)
    policy = LearningRate(optimizer, "linear", 0.25, _TOTAL, 1, 0.5, 0.0)
    whole = _plateau_run(optimizer, policy)

    first = _sgd(1.0, 0.1)
    first_policy = LearningRate(first, "linear", 0.25, _TOTAL, 1, 0.5, 0.0)
    _plateau_run(first, first_policy, end=5)  # after a cut and one more stale validation
    saved = copy.deepcopy((first.state_dict(), first_policy.state_dict()))
    resumed = _sgd(1.0, 0.1)
    resumed_policy = LearningRate(resumed, "linear", 0.25, _TOTAL, 1, 0.5, 0.0)
    resumed.load_state_dict(saved[0])
    resumed_policy.load_state_dict(saved[1])
    rest = _plateau_run(resumed, resumed_policy, start=5)
    assert rest[0] == whole[0][15:] and rest[1] == whole[1][5:] and rest[2] == whole[2][5:]
    assert whole[1][5] != whole[1][4]  # the part after resuming holds a cut, which needs the plateau state


def compose_trainer() -> Trainer:
    return train_settings(compose_config([])).trainer


@pytest.mark.parametrize("steps_per_epoch, max_epochs, eval_every, planned", [
    (10, 3, "epoch", 30), (10, 3, 5, 30), (10, 3, 7, 35), (10, 3, 100, 100), (623, 10, 1000, 7000)])
def test_planned_steps_rounds_up_to_whole_validation_intervals(steps_per_epoch, max_epochs, eval_every, planned):
    """jiant v1's t_total; English RTE at batch size 4 (623 steps) with val_interval 1000: 7000."""
    trainer = dataclasses.replace(compose_trainer(), max_epochs=max_epochs, eval_every=eval_every)
    assert trainer.planned_steps(steps_per_epoch) == planned


# --- re-initialising the top layers ------------------------------------------------------------------

def _load_minilm(folder) -> BertForSequenceClassification:
    torch.manual_seed(0)  # the classifier head, missing from the checkpoint, is drawn alike each time
    return AutoModelForSequenceClassification.from_pretrained(folder, num_labels=2)


def _assert_drawn_normal(weight: torch.Tensor, std: float, name: str) -> None:
    """N(0, std²) entries: the sample std has standard error std/√(2n), the mean std/√n; 5 of each."""
    n = weight.numel()
    assert abs(weight.std().item() - std) < 5 * std / math.sqrt(2 * n), name
    assert abs(weight.mean().item()) < 5 * std / math.sqrt(n), name


def test_reinit_draws_top_layers_and_pooler_anew_and_keeps_the_rest(minilm_folder):
    model, checkpoint = _load_minilm(minilm_folder), _load_minilm(minilm_folder)
    std = model.config.initializer_range
    assert std == 0.02
    torch.manual_seed(1)
    reinit_top_layers(model, 2)
    loaded = dict(checkpoint.named_parameters())
    drawn = ("bert.encoder.layer.4.", "bert.encoder.layer.5.", "bert.pooler.")
    seen = set()
    for name, module in model.named_modules():
        if not name.startswith(tuple(prefix.rstrip(".") for prefix in drawn)):
            continue
        if isinstance(module, nn.Linear):
            _assert_drawn_normal(module.weight.detach(), std, name)
            assert not torch.equal(module.weight, loaded[f"{name}.weight"]), name
            assert torch.count_nonzero(module.bias) == 0, name
            seen.add(name)
        elif isinstance(module, nn.LayerNorm):
            assert torch.all(module.weight == 1) and torch.count_nonzero(module.bias) == 0, name
            seen.add(name)
    assert "bert.pooler.dense" in seen and len(seen) == 2 * 8 + 1  # 6 linear + 2 LayerNorm per layer
    for name, param in model.named_parameters():
        if not name.startswith(drawn):
            assert torch.equal(param, loaded[name]), name


def test_reinit_is_deterministic_under_the_seed():
    first, second = _tiny_bert(), _tiny_bert()
    for model in (first, second):
        torch.manual_seed(7)
        reinit_top_layers(model, 1)
    for (name, a), b in zip(first.named_parameters(), second.parameters()):
        assert torch.equal(a, b), name
    assert not torch.equal(first.bert.encoder.layer[2].output.dense.weight,
                           _tiny_bert().bert.encoder.layer[2].output.dense.weight)


def test_reinit_zero_layers_changes_nothing_and_bad_counts_are_user_errors():
    model, reference = _tiny_bert(), _tiny_bert()
    reinit_top_layers(model, 0)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), reference.parameters()))
    with pytest.raises(UserError, match=re.escape("has 3 layers (fix: pass trainer.reinit_layers=<a number in [0, 3]>)")):
        reinit_top_layers(model, 4)
    with pytest.raises(UserError, match="fix:"):
        reinit_top_layers(nn.Linear(2, 2), 1)


# --- mixout -------------------------------------------------------------------------------------

def _encoder_linears(model: BertForSequenceClassification) -> list[nn.Linear]:
    return [m for m in model.bert.encoder.modules() if isinstance(m, nn.Linear)]


def test_mixout_with_p_zero_is_the_identity_and_turns_encoder_dropout_off():
    model = _tiny_bert(dropout=0.5)
    weights = [m.weight.detach().clone() for m in _encoder_linears(model)]
    model.bert.embeddings.dropout.p = 0.0  # dropout outside the encoder, which mixout leaves alone
    model.dropout.p = 0.0
    batch = {"input_ids": _batch()["input_ids"]}
    model.train()
    assert not torch.equal(model(**batch).logits, model(**batch).logits)  # encoder dropout is on
    apply_mixout(model, 0.0)
    model.train()
    for module, weight in zip(_encoder_linears(model), weights):
        assert torch.equal(module.weight, weight)
    # the attention dropout reads its layer's nn.Dropout, so train mode now equals eval mode
    train_logits = model(**batch).logits
    model.eval()
    assert torch.equal(train_logits, model(**batch).logits)


def test_mixout_expectation_is_the_current_weight():
    p, draws = 0.3, 4000
    model = _tiny_bert()
    apply_mixout(model, p)
    model.train()
    module = model.bert.encoder.layer[0].attention.self.query
    u = module.parametrizations.weight[0].pretrained
    with torch.no_grad():  # as if fine-tuned: w = u + delta
        module.parametrizations.weight.original.add_(torch.randn_like(u) * 0.05)
    w = module.parametrizations.weight.original.detach()
    torch.manual_seed(3)
    samples = torch.stack([module.weight.detach() for _ in range(draws)])
    # each entry is u (probability p) or u + (w − u)/(1−p)
    is_u = torch.isclose(samples, u.expand_as(samples), rtol=0, atol=1e-7)
    is_scaled = torch.isclose(samples, (u + (w - u) / (1 - p)).expand_as(samples), rtol=0, atol=1e-6)
    assert torch.all(is_u | is_scaled)
    kept_u = is_u.double().mean().item()
    assert abs(kept_u - p) < 5 * math.sqrt(p * (1 - p) / is_u.numel())
    # the mean of n draws has standard error |w − u|·√(p/((1−p)n)) per entry
    standard_error = (w - u).abs() * math.sqrt(p / ((1 - p) * draws))
    assert torch.all((samples.mean(0) - w).abs() <= 5 * standard_error + 1e-7)
    model.eval()
    assert torch.equal(module.weight, w)


def test_mixout_state_dict_round_trip_and_removal_keep_the_trained_weights():
    model = _tiny_bert()
    plain_keys = set(model.state_dict())
    apply_mixout(model, 0.1)
    keys = set(model.state_dict())
    assert "bert.encoder.layer.0.attention.self.query.parametrizations.weight.original" in keys
    assert not any(key.endswith("pretrained") for key in keys)  # u stays out of copies and checkpoints
    best = copy.deepcopy(model.state_dict())
    module = model.bert.encoder.layer[1].output.dense
    trained = module.parametrizations.weight.original
    with torch.no_grad():
        trained.add_(1.0)
    model.load_state_dict(best)  # the loop's best-weights copy loads back while mixout is on
    assert torch.equal(trained, best["bert.encoder.layer.1.output.dense.parametrizations.weight.original"])
    with torch.no_grad():
        trained.add_(0.5)
    expected = trained.detach().clone()
    remove_mixout(model)
    assert set(model.state_dict()) == plain_keys
    assert module.weight is trained and torch.equal(module.weight, expected)  # the optimizer's parameter
    assert not any(isinstance(m, Mixout) for m in model.modules())


def test_mixout_rejects_bad_probabilities():
    with pytest.raises(UserError, match="fix:"):
        apply_mixout(_tiny_bert(), 1.0)


# --- weight decay towards the pretrained weights -----------------------------------------------------

def test_pretrained_decay_gradient_is_twice_strength_times_the_change():
    model, strength = _tiny_bert(), 0.01
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    decay = PretrainedDecay(model, strength)
    assert decay.penalty().item() == 0.0
    torch.manual_seed(5)
    with torch.no_grad():
        for param in model.parameters():
            param.add_(torch.randn_like(param) * 0.1)
    penalty = decay.penalty()
    by_hand = strength * sum(((p.detach() - start[n]) ** 2).sum().item()
                             for n, p in model.named_parameters() if n.startswith("bert."))
    assert penalty.item() == pytest.approx(by_hand, rel=1e-5)
    penalty.backward()
    for name, param in model.named_parameters():
        if name.startswith("bert."):
            torch.testing.assert_close(param.grad, 2 * strength * (param.detach() - start[name]))
        else:
            assert param.grad is None, name  # the new classifier head is not held back


def test_pretrained_decay_built_before_mixout_penalises_the_trained_weights():
    model = _tiny_bert()
    decay = PretrainedDecay(model, 1.0)
    apply_mixout(model, 0.5)
    model.train()
    trained = model.bert.encoder.layer[0].intermediate.dense.parametrizations.weight.original
    with torch.no_grad():
        trained.add_(0.1)
    assert decay.penalty().item() == pytest.approx(0.01 * trained.numel(), rel=1e-4)
    decay.penalty().backward()
    torch.testing.assert_close(trained.grad, torch.full_like(trained, 0.2))
