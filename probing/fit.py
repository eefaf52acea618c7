"""Many L2-regularised logistic regressions at once: one batched L-BFGS over a stack of problems.

A probe grid (layers × tasks × L2 strengths, plus the control tasks) is hundreds of small
independent convex problems on a few feature matrices. Fitting them one by one (a loop
of scikit-learn fits) reads each layer's feature matrix twice per step of every problem;
here the problems of a layer share those two passes (one batched matrix product each,
`torch.bmm` over the layers), which is what the time goes into. Each problem keeps its
own L-BFGS history and step length, so it follows the path a separate L-BFGS would and
reaches the same optimum (the objective is strictly convex); problems that have
converged leave the batch. `benchmarks/probing.py` compares accuracies and time with
scikit-learn.

Objective of problem (layer l, column c), with sample weights m (1 = in the fit set):
    Σ_i m_i·logloss(y_ic, x_li·w + b) / Σ_i m_i  +  λ_c/2 · ‖w‖²     (bias not penalised)
which is scikit-learn's `LogisticRegression(C=1 / (λ·n))` on the same n examples.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

_HISTORY = 10          # L-BFGS memory (curvature pairs per problem)
_ARMIJO = 1e-4         # sufficient-decrease constant of the backtracking line search
_MAX_HALVINGS = 30
_CURVATURE_EPS = 1e-10
_COMPACT_BELOW = 0.75  # drop converged problems once every layer has fewer than this share active
# BLAS matrix kernels work on blocks of columns: on the development machine (x86, AVX2,
# one thread) a product with 8 columns costs less than one with 6, so batches are padded
# to a multiple of 8.
_COLUMN_BLOCK = 8


def standardise(fit: np.ndarray, others: dict[str, np.ndarray], device: str = "cpu") -> dict[str, torch.Tensor]:
    """Every split (layers, n, dims) scaled by the mean and standard deviation of `fit`, so no
    other split leaks into the probe, with a trailing column of ones for the bias."""
    fit_t = torch.as_tensor(fit, dtype=torch.float32, device=device)
    mean = fit_t.mean(dim=1, keepdim=True)
    std = fit_t.std(dim=1, keepdim=True)
    std = torch.where(std > 0, std, torch.ones_like(std))

    def scaled(x: torch.Tensor) -> torch.Tensor:
        ones = torch.ones(*x.shape[:2], 1, dtype=x.dtype, device=x.device)
        return torch.cat([(x - mean) / std, ones], dim=2)

    return {"fit": scaled(fit_t), **{name: scaled(torch.as_tensor(array, dtype=torch.float32, device=device))
                                     for name, array in others.items()}}


@dataclass(frozen=True)
class FitResult:
    """Weights (layers, columns, dims + 1), the last entry being the bias; the steps taken;
    and which problems reached the gradient tolerance (layers, columns)."""

    weights: torch.Tensor
    iterations: int
    converged: np.ndarray

    def predict(self, x: torch.Tensor) -> np.ndarray:
        """(layers, columns, n) 0/1 predictions for x (layers, n, dims + 1)."""
        return (torch.bmm(self.weights, x.transpose(1, 2)) > 0).cpu().numpy().astype(np.int8)


@dataclass
class _Batch:
    """The problems still being optimised: each layer keeps its own `columns`, so tensors are
    (layers, kept columns, ...) and a problem leaves the batch when it converges, whatever the
    other layers' problems in its column do."""

    columns: torch.Tensor        # (layers, kept) indices into the full column set
    y: torch.Tensor              # (layers, kept, n)
    mask: torch.Tensor           # (layers, kept, n) sample weights summing to 1 per problem
    penalty: torch.Tensor        # (layers, kept, dims + 1): λ, 0 for the bias
    params: torch.Tensor
    z: torch.Tensor              # (layers, kept, n) logits at params
    loss: torch.Tensor           # (layers, kept)
    grad: torch.Tensor
    history: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]

    def keep(self, index: torch.Tensor) -> None:
        """Restrict every tensor to the problems at `index` (layers, kept'), per layer."""
        self.columns = self.columns.gather(1, index)
        for name in ("y", "mask", "penalty", "params", "z", "grad"):
            setattr(self, name, _rows(getattr(self, name), index))
        self.loss = self.loss.gather(1, index)
        self.history = [(_rows(s, index), _rows(y, index), rho.gather(1, index)) for s, y, rho in self.history]


def _rows(tensor: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """tensor[l, index[l, k], :] for every layer l."""
    return tensor.gather(1, index.unsqueeze(2).expand(-1, -1, tensor.shape[2]))


def _data_loss(batch: _Batch, z: torch.Tensor) -> torch.Tensor:
    return ((F.softplus(z) - batch.y * z) * batch.mask).sum(dim=2)


def _penalty(batch: _Batch, params: torch.Tensor) -> torch.Tensor:
    return 0.5 * (batch.penalty * params * params).sum(dim=2)


def _gradient(batch: _Batch, x: torch.Tensor, params: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    return torch.bmm((torch.sigmoid(z) - batch.y) * batch.mask, x) + batch.penalty * params


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per-problem inner product: (layers, columns, p) -> (layers, columns)."""
    return torch.linalg.vecdot(a, b)


def _direction(grad: torch.Tensor, history: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
               ) -> torch.Tensor:
    """The L-BFGS two-loop recursion, per problem; pairs with rho = 0 are no-ops."""
    q = grad.clone()
    alphas = []
    for s, y, rho in reversed(history):
        alpha = rho * _dot(s, q)
        q -= alpha.unsqueeze(2) * y
        alphas.append(alpha)
    if history:
        s, y, rho = history[-1]
        yy = _dot(y, y)
        gamma = torch.where((rho > 0) & (yy > 0), _dot(s, y) / yy.clamp_min(1e-30), torch.ones_like(yy))
        q *= gamma.unsqueeze(2)
    else:
        q /= grad.norm(dim=2, keepdim=True).clamp_min(1.0)
    for (s, y, rho), alpha in zip(history, reversed(alphas)):
        beta = rho * _dot(y, q)
        q += (alpha - beta).unsqueeze(2) * s
    return -q


def _step(batch: _Batch, x: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
    """One L-BFGS step of every active problem, with a per-problem Armijo backtracking;
    returns where the step did not lower the loss (the problem cannot improve in float32).

    The logits are linear in the step length (z + t·Xd), so after one pass for Xd the
    line search tries step lengths without touching the features again.
    """
    direction = _direction(batch.grad, batch.history)
    slope = _dot(batch.grad, direction)
    downhill = slope < 0
    direction = torch.where(downhill.unsqueeze(2), direction, -batch.grad)   # reset where not descent
    slope = torch.where(downhill, slope, -_dot(batch.grad, batch.grad))
    direction = direction * active.unsqueeze(2)
    along = torch.bmm(direction, x.transpose(1, 2))
    step = torch.ones_like(batch.loss)
    for _ in range(_MAX_HALVINGS):
        params = batch.params + step.unsqueeze(2) * direction
        z = batch.z + step.unsqueeze(2) * along
        loss = _data_loss(batch, z) + _penalty(batch, params)
        accepted = (loss <= batch.loss + _ARMIJO * step * slope) | ~active
        if bool(accepted.all()):
            break
        step = torch.where(accepted, step, 0.5 * step)
    grad = _gradient(batch, x, params, z)
    s, y = params - batch.params, grad - batch.grad
    sy = _dot(s, y)
    rho = torch.where(sy > _CURVATURE_EPS, 1.0 / sy.clamp_min(_CURVATURE_EPS), torch.zeros_like(sy))
    batch.history = [*batch.history[-(_HISTORY - 1):], (s, y, rho)]
    stalled = ~accepted | (loss >= batch.loss)        # not even a float32 rounding step lower
    batch.params, batch.z, batch.loss, batch.grad = params, z, loss, grad
    return stalled


def _padded(n: int) -> int:
    return -(-n // _COLUMN_BLOCK) * _COLUMN_BLOCK


def _keep_padded(active: torch.Tensor) -> torch.Tensor:
    """Per layer, the indices of its active problems, topped up with finished ones so that
    every layer keeps the same whole number of column blocks."""
    kept = _padded(int(active.sum(dim=1).max()))
    order = torch.argsort((~active).to(torch.int8), dim=1, stable=True)[:, :kept]
    return torch.sort(order, dim=1).values


def fit_logistic(x: torch.Tensor, y: np.ndarray, l2: np.ndarray, sample_weight: np.ndarray | None = None,
                 max_iter: int = 100, tol: float = 1e-4) -> FitResult:
    """Fit every (layer, column) problem: x (layers, n, dims + 1) standardised with a bias
    column, y (n, columns) 0/1, l2 (columns,) strengths, sample_weight (n, columns) or None.

    A problem stops when its largest gradient entry is below `tol` (scikit-learn's lbfgs
    criterion) or when no step along its direction lowers the loss any more (float32
    precision); all stop after `max_iter` steps.
    """
    device, dtype = x.device, x.dtype
    n_layers, n, width = x.shape
    y = np.asarray(y, dtype=np.float32)
    n_columns = y.shape[1]
    pad = _padded(n_columns) - n_columns          # extra columns that start (and stay) converged
    total = n_columns + pad

    def per_layer(array: np.ndarray) -> torch.Tensor:
        """(n, columns) -> (layers, columns + pad, n), the pad columns filled with ones."""
        padded = np.pad(np.asarray(array, dtype=np.float32), ((0, 0), (0, pad)), constant_values=1.0)
        return torch.as_tensor(padded.T, dtype=dtype, device=device).expand(n_layers, -1, -1).contiguous()

    weights = per_layer(np.ones_like(y) if sample_weight is None else sample_weight)
    penalty = torch.as_tensor(np.pad(np.asarray(l2, dtype=np.float32), (0, pad), constant_values=1.0),
                              dtype=dtype, device=device)[None, :, None].expand(n_layers, -1, width).clone()
    penalty[..., -1] = 0.0
    params = torch.zeros(n_layers, total, width, dtype=dtype, device=device)
    z = torch.zeros(n_layers, total, n, dtype=dtype, device=device)
    columns = torch.arange(total, device=device).expand(n_layers, -1).contiguous()
    batch = _Batch(columns, per_layer(y), weights / weights.sum(dim=2, keepdim=True), penalty, params, z,
                   torch.zeros(n_layers, total, dtype=dtype, device=device), params, [])
    batch.loss = _data_loss(batch, z)
    batch.grad = _gradient(batch, x, params, z)
    result = params.clone()
    converged = torch.ones(n_layers, total, dtype=torch.bool, device=device)

    def write_back(active: torch.Tensor) -> None:
        result.scatter_(1, batch.columns.unsqueeze(2).expand(-1, -1, width), batch.params)
        converged.scatter_(1, batch.columns, ~active)

    iteration = 0
    active = batch.grad.abs().amax(dim=2) > tol
    active[:, n_columns:] = False
    while iteration < max_iter and bool(active.any()):
        iteration += 1
        stalled = _step(batch, x, active)
        active = active & (batch.grad.abs().amax(dim=2) > tol) & ~stalled
        if _padded(int(active.sum(dim=1).max())) <= _COMPACT_BELOW * active.shape[1]:
            write_back(active)
            keep = _keep_padded(active)
            batch.keep(keep)
            active = active.gather(1, keep)
    write_back(active)
    return FitResult(result[:, :n_columns], iteration, converged[:, :n_columns].cpu().numpy())
