"""Mixout (Lee et al., ICLR 2020, "Mixout: effective regularization to finetune large-scale
pretrained language models"): while training, each weight entry of the encoder's linear layers
is swapped for its pretrained value u with probability p, and the result rescaled so that its
expectation is the current weight w:

    w̃ = ((1−M)⊙u + M⊙w − p·u) / (1−p),  M_ij ~ Bernoulli(1−p),

which pulls fine-tuning towards the pretrained weights (an adaptive L2 penalty towards u) and
keeps it stable. Own code: no library has mixout. Written as a torch parametrization of each
`nn.Linear.weight`, so the layers stay as they are and the trained w stays the parameter.

While mixout is applied the model's state_dict keys change: `….weight` becomes
`….parametrizations.weight.original` (the trained w). u is a buffer kept out of the state_dict
(not persistent), so copies of the best weights and checkpoints stay the model's size: u is the
weight at the time mixout is applied, and a run rebuilt the same way (same seed, same
re-initialisation, then `apply_mixout`) derives the same u before loading such a state_dict.
`remove_mixout` gives the plain keys back, for `save_pretrained`.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils import parametrize

from stability.core.errors import UserError
from stability.finetune.modeling import encoder_of


class Mixout(nn.Module):
    """The parametrization w ↦ w̃ of one weight; the identity in eval mode and for p = 0."""

    def __init__(self, pretrained: torch.Tensor, p: float) -> None:
        super().__init__()
        self.p = p
        self.register_buffer("pretrained", pretrained.detach().clone(), persistent=False)

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return weight
        # ((1−M)u + Mw − pu)/(1−p) = u + M⊙(w−u)/(1−p): dropout of the change from u
        return self.pretrained + nn.functional.dropout(weight - self.pretrained, self.p, training=True)


def apply_mixout(model: nn.Module, p: float) -> None:
    """Put mixout with probability `p` on every nn.Linear weight of `model.base_model.encoder`,
    with u = the weight now, and turn the encoder's dropout off, since mixout replaces it there
    (as Lee et al. do). Apply it to the freshly built model (after any re-initialisation) and
    before loading a checkpoint into it."""
    if not 0 <= p < 1:
        raise UserError(f"mixout probability {p} is outside [0, 1)", fix="choose a probability from 0 up to below 1")
    modules = list(encoder_of(model, "trainer.mixout").modules())
    for module in modules:
        if isinstance(module, nn.Linear):
            mixout = Mixout(module.weight, p)
            # registering evaluates the parametrization once; in eval mode that draws no random numbers
            mixout.eval()
            parametrize.register_parametrization(module, "weight", mixout)
            mixout.train(module.training)
        elif isinstance(module, nn.Dropout):
            # this covers attention dropout too: transformers 5.x BERT-style self-attention passes
            # `self.dropout.p` (an nn.Dropout) as the dropout of its eager/sdpa/flash attention call
            module.p = 0.0


def remove_mixout(model: nn.Module) -> None:
    """Take mixout off again, keeping the trained weights w (not a last random w̃), so the state_dict
    has its plain keys for `save_pretrained`. The encoder's dropout stays off."""
    for module in model.modules():
        if parametrize.is_parametrized(module, "weight") and any(
                isinstance(step, Mixout) for step in module.parametrizations.weight):
            parametrize.remove_parametrizations(module, "weight", leave_parametrized=False)
