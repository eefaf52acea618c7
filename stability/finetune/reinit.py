"""Re-initialising the top encoder layers (Zhang et al., ICLR 2021, "Revisiting few-sample BERT
fine-tuning"): the top layers of a pretrained encoder are specialised to the pretraining tasks and
transfer worse than fresh weights, which makes few-sample fine-tuning less stable."""
from __future__ import annotations

import torch
from torch import nn
from transformers import PreTrainedModel

from stability.core.schemas.trainer import reinit_layers_within
from stability.finetune.modeling import encoder_layers


def reinit_top_layers(model: PreTrainedModel, k: int) -> None:
    """Draw the top `k` encoder layers and the pooler anew with the model's own initialiser
    (`_init_weights`, e.g. N(0, initializer_range) for linear weights, zero biases, unit
    LayerNorms). The caller seeds torch first; the draws follow the module order, so they are
    deterministic. k = 0 changes nothing.

    transformers 5.x marks every weight loaded from a checkpoint with `_is_hf_initialized`, and
    its init functions skip marked tensors (so `from_pretrained` never overwrites loaded
    weights); the mark is lifted here for the modules drawn anew, else `_init_weights` would
    silently leave them as they were.
    """
    if k == 0:
        return
    layers = encoder_layers(model, "trainer.reinit_layers")
    reinit_layers_within(k, len(layers), model.name_or_path)
    targets: list[nn.Module] = list(layers[len(layers) - k:])
    pooler = getattr(model.base_model, "pooler", None)
    if pooler is not None:
        targets.append(pooler)
    with torch.no_grad():
        for target in targets:
            tensors = [*target.parameters(), *target.buffers()]
            for tensor in tensors:
                tensor._is_hf_initialized = False
            target.apply(model._init_weights)
            for tensor in tensors:
                tensor._is_hf_initialized = True
