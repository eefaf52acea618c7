"""Fine-tuning with early stopping on validation accuracy, placed on devices by accelerate.

Under `accelerate launch` (DDP) every process takes an equal slice of each global batch, so
the configured batch size stays the global one; evaluation is sharded and gathered.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from accelerate import Accelerator
from accelerate.utils import gather_object
from transformers import PreTrainedModel

from stability.core.atomic import atomic_path
from stability.core.errors import UserError
from stability.core.metrics import accuracy
from stability.core.progress import progress
from stability.core.schemas.train import TrainConfig
from stability.finetune.batching import collate, epoch_batches, eval_batches
from stability.finetune.encoding import EncodedSplit

# torch >= 2.4 has fused AdamW kernels for CPU as well as CUDA.
_FUSED_ADAMW_EVERYWHERE = torch.__version__ >= "2.4"
# Steps between updates of the loss shown on the progress bar (each reads the loss off the device).
_LOSS_SHOWN_EVERY = 25


@dataclass
class TrainResult:
    """What training produced: the per-epoch log and where early stopping ended."""

    log: list[dict] = field(default_factory=list)
    best_epoch: int = 0
    best_val_accuracy: float = float("-inf")
    epochs_trained: int = 0
    seconds: float = 0.0


@dataclass
class _State:
    """Everything needed to continue a run after its last finished epoch."""

    result: TrainResult
    best_weights: dict[str, torch.Tensor] | None = None
    epochs_without_improvement: int = 0


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """Move a collated batch; on CUDA through pinned memory without blocking.

    A copy from pageable host memory synchronises the stream first, so every step would wait
    for the previous step's kernels before queueing its own; a pinned, non-blocking copy does
    not (the caching host allocator keeps the buffer alive until the copy has run).
    """
    if device.type != "cuda":
        return {key: value.to(device) for key, value in batch.items()}
    return {key: value.pin_memory().to(device, non_blocking=True) for key, value in batch.items()}


def predict_entailment_probability(model: PreTrainedModel, split: EncodedSplit, batch_size: int,
                                   accelerator: Accelerator, pad_id: int, desc: str = "evaluate") -> np.ndarray:
    """P(entailment) for every example, in the split's order, gathered from all processes."""
    # the bare model: a DDP wrapper syncs buffers in every forward, and processes run unequal
    # numbers of evaluation batches, so going through it would hang
    model = accelerator.unwrap_model(model)
    model.eval()
    batches = eval_batches(split.lengths, batch_size)
    mine = batches[accelerator.process_index::accelerator.num_processes]
    pieces: list[tuple[int, float]] = []
    with torch.inference_mode():
        for indices in progress(mine, desc=desc, unit="batch", enabled=accelerator.is_main_process):
            inputs = collate(split, indices, pad_id)
            del inputs["labels"]
            batch = to_device(inputs, accelerator.device)
            probs = torch.softmax(model(**batch).logits.float(), dim=-1)[:, 0].cpu().numpy()
            pieces.extend(zip(indices.tolist(), probs.tolist()))
    if accelerator.num_processes > 1:
        pieces = gather_object(pieces)
    out = np.empty(len(split), dtype=np.float64)
    for index, prob in pieces:
        out[index] = prob
    return out


def labels_from_probability(prob_entailment: np.ndarray) -> np.ndarray:
    """Label 0 (entailment) when it is the more probable class."""
    return np.where(prob_entailment >= 0.5, 0, 1)


def adamw(params, learning_rate: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW with the fused kernel where torch has one for every device (CPU since torch 2.4).

    The default (per-tensor) CPU implementation runs ~10 elementwise passes per parameter
    tensor; for a small encoder with batch size 4 that step cost more than forward and
    backward together. The fused kernel computes the same update in one pass (results equal
    up to float rounding; runs stay deterministic). HF Trainer uses it by default too.
    """
    return torch.optim.AdamW(params, lr=learning_rate, weight_decay=weight_decay,
                             fused=True if _FUSED_ADAMW_EVERYWHERE else None)


def _process_slice(indices: np.ndarray, accelerator: Accelerator) -> np.ndarray:
    return indices[accelerator.process_index::accelerator.num_processes]


def train(model: PreTrainedModel, train_split: EncodedSplit, val_split: EncodedSplit,
          settings: TrainConfig, accelerator: Accelerator, pad_id: int, checkpoint: Path | None,
          on_epoch: Callable[[dict], None],
          on_resume: Callable[[list[dict]], None], name: str = "train") -> TrainResult:
    """Train up to max_epochs, stop after `patience` epochs without a better validation accuracy,
    and leave the model holding the best epoch's weights. `on_resume` receives the epochs a
    checkpoint already holds, which may be fewer than a killed run had logged. `name` labels
    the progress bars."""
    trainer = settings.trainer
    world = accelerator.num_processes
    if trainer.batch_size % world:
        raise UserError(f"trainer.batch_size={trainer.batch_size} is not divisible by {world} processes",
                        fix="choose a global batch size that is a multiple of the process count")
    optimizer = adamw(model.parameters(), trainer.learning_rate, trainer.weight_decay)
    model, optimizer = accelerator.prepare(model, optimizer)
    state = _State(TrainResult())
    start_epoch = 1
    if checkpoint is not None and checkpoint.is_file():
        state, start_epoch = _load_checkpoint(checkpoint, model, optimizer, accelerator)
        on_resume(state.result.log)
    train_lengths = train_split.lengths
    started = time.perf_counter() - state.result.seconds
    for epoch in range(start_epoch, trainer.max_epochs + 1):
        epoch_start = time.perf_counter()
        # the dropout stream restarts each epoch, so a resumed run equals an uninterrupted one
        torch.manual_seed(settings.seed_init * 1000 + epoch)
        model.train()
        # the loss stays on the device: reading it every step would wait for the GPU each time
        loss_sum = torch.zeros((), device=accelerator.device)
        steps = 0
        bar = progress(epoch_batches(train_lengths, trainer.batch_size, settings.seed_order, epoch,
                                     trainer.group_by_length),
                       desc=f"[{name}] epoch {epoch}", unit="batch", enabled=accelerator.is_main_process)
        for indices in bar:
            if len(indices) < world:
                continue  # a tail too small to give every process an example
            batch = to_device(collate(train_split, _process_slice(indices, accelerator), pad_id),
                              accelerator.device)
            loss = model(**batch).loss
            accelerator.backward(loss)
            accelerator.clip_grad_norm_(model.parameters(), trainer.max_grad_norm)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            loss_sum += loss.detach().float()
            steps += 1
            if not bar.disable and steps % _LOSS_SHOWN_EVERY == 0:
                bar.set_postfix(loss=f"{loss_sum.item() / steps:.4f}", refresh=False)
        bar.close()
        probs = predict_entailment_probability(model, val_split, trainer.eval_batch_size,
                                               accelerator, pad_id, desc=f"[{name}] validation")
        val_acc = accuracy(val_split.labels.tolist(), labels_from_probability(probs).tolist())
        entry = {"epoch": epoch, "loss": loss_sum.item() / steps if steps else float("nan"),
                 "val_accuracy": val_acc, "seconds": time.perf_counter() - epoch_start}
        result = state.result
        result.log.append(entry)
        result.epochs_trained = epoch
        if val_acc > result.best_val_accuracy:
            result.best_val_accuracy, result.best_epoch = val_acc, epoch
            state.best_weights = copy.deepcopy(accelerator.unwrap_model(model).state_dict())
            state.epochs_without_improvement = 0
        else:
            state.epochs_without_improvement += 1
        result.seconds = time.perf_counter() - started
        on_epoch(entry)
        if checkpoint is not None and accelerator.is_main_process:
            _save_checkpoint(checkpoint, state, model, optimizer, accelerator, epoch)
        if state.epochs_without_improvement >= trainer.patience:
            break
    if state.best_weights is not None:
        accelerator.unwrap_model(model).load_state_dict(state.best_weights)
    return state.result


def _save_checkpoint(path: Path, state: _State, model, optimizer, accelerator: Accelerator,
                     epoch: int) -> None:
    """Atomically store the state after `epoch`, so a killed run resumes from the next one."""
    with atomic_path(path) as tmp:
        torch.save({"epoch": epoch, "model": accelerator.unwrap_model(model).state_dict(),
                    "optimizer": optimizer.state_dict(), "best_weights": state.best_weights,
                    "result": state.result, "stale": state.epochs_without_improvement}, tmp)


def _load_checkpoint(path: Path, model, optimizer, accelerator: Accelerator) -> tuple[_State, int]:
    saved = torch.load(path, map_location="cpu", weights_only=False)
    accelerator.unwrap_model(model).load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    state = _State(saved["result"], saved["best_weights"], saved["stale"])
    return state, saved["epoch"] + 1
