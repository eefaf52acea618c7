"""Weight decay towards the pretrained weights instead of towards zero (Chelba & Acero 2006;
"L2-SP", Li et al. 2018; compared by Zhang et al., ICLR 2021): it keeps fine-tuning near the
pretrained solution, which the usual decay towards zero does not. Own code: torch's optimizers
only decay towards zero."""
from __future__ import annotations

import torch
from torch import nn


class PretrainedDecay:
    """strength · Σ ||w − w₀||² over the encoder's parameters (`model.base_model`, not the new
    classifier head), with w₀ the values at construction; the caller adds `penalty()` to the
    loss, so each w gets the gradient 2·strength·(w − w₀).

    It holds the parameter objects themselves, so build it after any re-initialisation (w₀ is
    the starting point of fine-tuning) and before loading a checkpoint on resume; before or
    after `apply_mixout` alike (mixout keeps the same parameter object as
    `parametrizations.weight.original`, and the penalty is on w, not on mixout's random w̃).
    """

    def __init__(self, model: nn.Module, strength: float) -> None:
        self._strength = strength
        self._pairs = [(param, param.detach().clone()) for param in model.base_model.parameters()]

    def penalty(self) -> torch.Tensor:
        """strength · Σ ||w − w₀||², a scalar on the parameters' device."""
        if self._pairs[0][1].device != self._pairs[0][0].device:
            # the model was moved (accelerator.prepare) after construction: follow it, once
            self._pairs = [(param, start.to(param.device)) for param, start in self._pairs]
        return self._strength * sum((param - start).pow(2).sum() for param, start in self._pairs)
