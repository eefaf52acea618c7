"""The training optimizer: fused AdamW or BERT's original BertAdam, over one parameter group or
over per-layer groups with layer-wise learning-rate decay."""
from __future__ import annotations

from typing import Callable, Iterable

import torch
from torch import nn

from stability.core.errors import UserError
from stability.core.schemas.checks import within
from stability.core.schemas.trainer import OPTIMIZERS
from stability.finetune.modeling import encoder_layers

# torch >= 2.4 has fused AdamW kernels for CPU as well as CUDA.
_FUSED_ADAMW_EVERYWHERE = torch.__version__ >= "2.4"


def adamw(params, learning_rate: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW with the fused kernel where torch has one for every device (CPU since torch 2.4).

    The default (per-tensor) CPU implementation runs ~10 elementwise passes per parameter
    tensor; for a small encoder with batch size 4 that step cost more than forward and
    backward together. The fused kernel computes the same update in one pass (results equal
    up to float rounding; runs stay deterministic). HF Trainer uses it by default too.
    """
    return torch.optim.AdamW(params, lr=learning_rate, weight_decay=weight_decay,
                             fused=True if _FUSED_ADAMW_EVERYWHERE else None)


class BertAdam(torch.optim.Optimizer):
    """BERT's own optimiser (Devlin et al. 2019; pytorch-pretrained-bert's `BertAdam`, jiant v1's
    `bert_adam`): Adam without bias correction, weight decay decoupled and added to the update,

        m = β1·m + (1−β1)·g,  v = β2·v + (1−β2)·g²,  p -= lr·(m / (√v + eps) + weight_decay·p).

    Own code because no library has it any more: torch's Adam and AdamW always correct the bias
    (which makes the first steps ≈ √(1−β2)/(1−β1) ≈ 0.32 times BertAdam's), and transformers
    removed its AdamW. The learning-rate schedule is not inside (pytorch-pretrained-bert's was):
    an LR scheduler scales group["lr"], as for every torch optimizer. As pytorch-pretrained-bert's
    (which jiant v1 ran, on top of its own global clipping), each tensor's gradient is first
    clipped to norm `max_grad_norm` (1.0; 0 turns it off).
    """

    def __init__(self, params: Iterable[torch.Tensor] | Iterable[dict], lr: float,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-6,
                 weight_decay: float = 0.0, max_grad_norm: float = 1.0) -> None:
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                                  "max_grad_norm": max_grad_norm})

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                if group["max_grad_norm"] > 0:
                    torch.nn.utils.clip_grad_norm_(param, group["max_grad_norm"])
                state = self.state[param]
                if not state:
                    state["exp_avg"] = torch.zeros_like(param, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(param, memory_format=torch.preserve_format)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.mul_(beta1).add_(param.grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(param.grad, param.grad, value=1 - beta2)
                # p - lr·(m/(√v+eps) + wd·p) = p·(1 − lr·wd) − lr·m/(√v+eps)
                if weight_decay:
                    param.mul_(1 - lr * weight_decay)
                param.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(eps), value=-lr)
        return loss


def parameter_groups(model: nn.Module, learning_rate: float, weight_decay: float,
                     layer_lr_decay: float) -> list[dict]:
    """Layer-wise learning-rate decay (Howard & Ruder 2018; Zhang et al., ICLR 2021): lower
    layers hold more general features, so they move less. Of L encoder layers, layer l
    (1 = lowest; group "layer.{l-1}", named like the module `encoder.layer.{l-1}`) gets
    learning_rate·ξ^(L−l), the embeddings learning_rate·ξ^L, everything else (pooler, classifier
    head) learning_rate, with ξ = layer_lr_decay. ξ = 1 gives one group "all" of every parameter.
    Every trained parameter is in exactly one group; a frozen one (`trainer.freeze_embeddings`) in none."""
    within("trainer.layer_lr_decay", layer_lr_decay, 0, 1, open_low=True, closed_high=True)  # as composing checks it
    if layer_lr_decay == 1.0:
        return [{"name": "all", "params": [p for p in model.parameters() if p.requires_grad], "lr": learning_rate,
                 "weight_decay": weight_decay}]
    layers = encoder_layers(model, "trainer.layer_lr_decay")
    depth = len(layers)
    parts: list[tuple[str, nn.Module, int]] = [(f"layer.{index}", layer, depth - 1 - index)
                                               for index, layer in enumerate(layers)]
    embeddings = getattr(model.base_model, "embeddings", None)
    if embeddings is not None:
        parts.insert(0, ("embeddings", embeddings, depth))
    groups: list[dict] = []
    assigned: set[int] = {id(p) for p in model.parameters() if not p.requires_grad}
    for name, module, exponent in parts:
        params = [p for p in module.parameters() if id(p) not in assigned]
        assigned.update(id(p) for p in params)
        if params:
            groups.append({"name": name, "params": params, "lr": learning_rate * layer_lr_decay ** exponent,
                           "weight_decay": weight_decay})
    head = [p for p in model.parameters() if id(p) not in assigned]
    if head:
        groups.append({"name": "head", "params": head, "lr": learning_rate, "weight_decay": weight_decay})
    return groups


def build_optimizer(model: nn.Module, optimizer: str, learning_rate: float, weight_decay: float,
                    layer_lr_decay: float) -> torch.optim.Optimizer:
    """The run's optimizer ("adamw" or "bertadam") over `parameter_groups`."""
    return optimizer_over(parameter_groups(model, learning_rate, weight_decay, layer_lr_decay), optimizer,
                          learning_rate, weight_decay)


def optimizer_over(groups: list[dict], optimizer: str, learning_rate: float,
                   weight_decay: float) -> torch.optim.Optimizer:
    """The optimizer ("adamw" or "bertadam") over given parameter groups."""
    if optimizer == "adamw":
        return adamw(groups, learning_rate, weight_decay)
    if optimizer == "bertadam":
        return BertAdam(groups, lr=learning_rate, weight_decay=weight_decay)
    raise UserError(f"unknown optimizer '{optimizer}'", fix=f"choose one of: {', '.join(OPTIMIZERS)}")
