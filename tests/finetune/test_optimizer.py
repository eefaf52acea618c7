"""The training optimizer: fused AdamW that updates exactly as AdamW with the configured settings."""
from __future__ import annotations

import pytest
import torch

from stability.finetune.optimizers import adamw


def _two_steps(optimizer_for) -> list[torch.Tensor]:
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(7, 5)), torch.nn.Parameter(torch.randn(5))]
    optimizer = optimizer_for(params)
    for step in range(2):
        for i, param in enumerate(params):
            param.grad = torch.full_like(param, 0.1 * (step + 1) * (i + 1))
        optimizer.step()
    return [p.detach().clone() for p in params]


def test_adamw_matches_the_reference_update():
    ours = _two_steps(lambda params: adamw(params, learning_rate=0.01, weight_decay=0.1))
    reference = _two_steps(lambda params: torch.optim.AdamW(params, lr=0.01, weight_decay=0.1,
                                                             foreach=False, fused=False))
    plain = _two_steps(lambda params: torch.optim.AdamW(params, lr=0.01, weight_decay=0.0))
    for got, want, without_decay in zip(ours, reference, plain):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)
        assert not torch.allclose(got, without_decay)  # the weight decay was applied


@pytest.mark.skipif(torch.__version__ < "2.4", reason="no fused CPU AdamW before torch 2.4")
def test_adamw_is_fused_on_cpu():
    optimizer = adamw([torch.nn.Parameter(torch.zeros(3))], learning_rate=1e-3, weight_decay=0.0)
    assert optimizer.defaults["fused"] is True
