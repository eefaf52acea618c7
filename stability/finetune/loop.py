"""Fine-tuning with early stopping on validation accuracy, placed on devices by accelerate.

Under `accelerate launch` (DDP) every process takes an equal slice of each global batch, so
the configured batch size stays the global one; evaluation is sharded and gathered.
"""
from __future__ import annotations

import copy
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np
import torch
from accelerate import Accelerator
from accelerate.utils import gather_object
from transformers import PreTrainedModel

from stability.core.atomic import atomic_path
from stability.core.errors import UserError, first_line
from stability.core.metrics import accuracy
from stability.core.progress import progress
from stability.core.records import labels_from_probability
from stability.core.schemas.train import TrainConfig
from stability.finetune.batching import collate, epoch_batches, eval_batches
from stability.finetune.encoding import EncodedSplit
from stability.finetune.recipe import Recipe, prepare

if TYPE_CHECKING:   # the recorder imports this module's labelling rule
    from stability.finetune.dynamics import DynamicsRecorder

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
class BestSoFar:
    """Early stopping's bookkeeping: the run's log, its best weights, and the validations since the best one
    (a solo run's, and each fused member's: `fused_loop`)."""

    result: TrainResult = field(default_factory=TrainResult)
    best_weights: dict[str, torch.Tensor] | None = None
    stale: int = 0

    def validated(self, entry: dict, weights: Callable[[], dict[str, torch.Tensor]]) -> bool:
        """Log a validation `entry`; keep a copy of `weights()` when it is the best accuracy so far (True),
        else count it as stale."""
        self.result.log.append(entry)
        self.result.epochs_trained = entry["epoch"]
        improved = entry["val_accuracy"] > self.result.best_val_accuracy
        if improved:
            self.result.best_val_accuracy, self.result.best_epoch = entry["val_accuracy"], entry["epoch"]
            self.best_weights = copy.deepcopy(weights())
            self.stale = 0
        else:
            self.stale += 1
        return improved


@dataclass
class _State(BestSoFar):
    """Everything needed to continue a run from its last checkpoint: where it stands (the epoch,
    the batches of it done, the optimiser steps), besides its early stopping's bookkeeping."""

    epoch: int = 1
    batches_done: int = 0
    step: int = 0


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
                                   accelerator: Accelerator, pad_id: int, desc: str = "evaluate",
                                   tokens_per_batch: int | None = None) -> np.ndarray:
    """P(entailment) for every example, in the split's order, gathered from all processes; batches
    as `batching.eval_batches` makes them."""
    # the bare model: a DDP wrapper syncs buffers in every forward, and processes run unequal
    # numbers of evaluation batches, so going through it would hang
    model = accelerator.unwrap_model(model)
    model.eval()
    batches = eval_batches(split.lengths, batch_size, tokens_per_batch)
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


def _process_slice(indices: np.ndarray, accelerator: Accelerator) -> np.ndarray:
    return indices[accelerator.process_index::accelerator.num_processes]


def train(model: PreTrainedModel, train_split: EncodedSplit, val_split: EncodedSplit,
          settings: TrainConfig, accelerator: Accelerator, pad_id: int, checkpoint: Path | None,
          on_validation: Callable[[dict], None],
          on_resume: Callable[[list[dict]], None], name: str = "train",
          dynamics: DynamicsRecorder | None = None, identity: Mapping[str, Any] | None = None) -> TrainResult:
    """Train up to max_epochs, validating after each epoch or every `trainer.eval_every` steps;
    stop after `patience` validations without a better accuracy (or once jiant's plateau rule
    takes the rate below `min_lr`), and leave the model holding the best validation's weights.
    `on_resume` receives the validations a checkpoint already holds, which may be fewer than a
    killed run had logged. `name` labels the progress bars. `dynamics`, when given, sees every
    training pass and records each validation (`stability.finetune.dynamics`). `identity`, what
    the run is (`core.runmatch.checkpoint_identity`), is stored in every checkpoint, so a resume
    can tell whether the checkpoint is of the same job (`saved_identity`)."""
    trainer = settings.trainer
    world = accelerator.num_processes
    if trainer.batch_size % world:
        raise UserError(f"trainer.batch_size={trainer.batch_size} is not divisible by {world} processes",
                        fix="choose a global batch size that is a multiple of the process count")
    every = trainer.validation_steps
    steps_per_epoch = sum(len(indices) >= world for indices in _batches(train_split, settings, 1))
    recipe = prepare(model, trainer, steps_per_epoch, settings.seed_init * 1000)
    model, optimizer = accelerator.prepare(model, recipe.optimizer)
    state = _State(TrainResult())
    if checkpoint is not None and checkpoint.is_file():
        state = _load_checkpoint(checkpoint, model, optimizer, recipe, accelerator)
        on_resume(state.result.log)
    started = time.perf_counter() - state.result.seconds
    stop = False
    # validating every N steps, training runs on to the planned steps rounded up to whole
    # validations (jiant v1's t_total), past max_epochs by less than one validation interval
    last_epoch = trainer.max_epochs if every is None else -(-recipe.total_steps // max(steps_per_epoch, 1))
    for epoch in range(state.epoch, last_epoch + 1):
        segment_start = time.perf_counter()
        _seed_dropout(settings.seed_init, epoch, state)
        model.train()
        # the loss stays on the device: reading it every step would wait for the GPU each time
        loss_sum = torch.zeros((), device=accelerator.device)
        steps = 0
        batches = _batches(train_split, settings, epoch)
        bar = progress(batches[state.batches_done:], desc=f"[{name}] epoch {epoch}", unit="batch",
                       enabled=accelerator.is_main_process)
        for indices in bar:
            state.batches_done += 1
            if len(indices) < world:
                continue  # a tail too small to give every process an example
            mine = _process_slice(indices, accelerator)
            batch = to_device(collate(train_split, mine, pad_id), accelerator.device)
            output, _ = train_step(model, batch, optimizer, recipe, accelerator, trainer.max_grad_norm)
            loss = output.loss
            if dynamics is not None:
                dynamics.observe(mine, output.logits)
            state.step += 1
            loss_sum += loss.detach().float()
            steps += 1
            if not bar.disable and steps % _LOSS_SHOWN_EVERY == 0:
                bar.set_postfix(loss=f"{loss_sum.item() / steps:.4f}", refresh=False)
            if every is not None and state.step % every == 0:
                stop = _validate(model, val_split, settings, accelerator, pad_id, name, state, recipe,
                                 epoch, loss_sum.item() / steps, segment_start, started, on_validation, dynamics)
                stop = stop or state.step >= recipe.total_steps
                _save_checkpoint(checkpoint, state, model, optimizer, recipe, accelerator, identity)
                if stop:
                    break
                _seed_dropout(settings.seed_init, epoch, state)
                model.train()
                loss_sum.zero_()
                steps, segment_start = 0, time.perf_counter()
        bar.close()
        state.epoch, state.batches_done = epoch + 1, 0
        if every is None:
            stop = _validate(model, val_split, settings, accelerator, pad_id, name, state, recipe, epoch,
                             loss_sum.item() / steps if steps else float("nan"), segment_start, started,
                             on_validation, dynamics)
            _save_checkpoint(checkpoint, state, model, optimizer, recipe, accelerator, identity)
        if stop:
            break
    if state.best_weights is not None:
        accelerator.unwrap_model(model).load_state_dict(state.best_weights)
    recipe.finish(accelerator.unwrap_model(model))
    return state.result


def train_step(model: PreTrainedModel, batch: dict[str, torch.Tensor], optimizer: torch.optim.Optimizer,
               recipe: Recipe, accelerator: Accelerator, max_grad_norm: float) -> tuple[Any, torch.Tensor]:
    """One optimiser step of a run on `batch`: forward, backward of the recipe's loss, clipping to
    `max_grad_norm`, the optimiser's and the schedule's step. Returns the model's output and the
    gradients' norm before clipping (what the fused engine's members are checked against)."""
    output = model(**batch)
    accelerator.backward(recipe.loss(output.loss))
    norm = accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    recipe.learning_rate.after_step()
    return output, norm


def predict_diagnostic(model: PreTrainedModel, split: EncodedSplit, batch_size: int, accelerator: Accelerator,
                       pad_id: int, dynamics: DynamicsRecorder | None, desc: str = "diagnostic",
                       tokens_per_batch: int | None = None) -> np.ndarray:
    """The trained model's P(entailment) on the diagnostic `split`: the one the dynamics recorded at the
    best validation when there is one, else a pass of its own. The two are the same numbers: `train`
    leaves the model holding that validation's weights (mixout's parametrisation, which `finish` takes
    off, is the identity in evaluation), and the pass runs the same batches through the same model."""
    if dynamics is not None and dynamics.best_diagnostic is not None:
        return dynamics.best_diagnostic
    return predict_entailment_probability(model, split, batch_size, accelerator, pad_id, desc, tokens_per_batch)


def _batches(split: EncodedSplit, settings: TrainConfig, epoch: int) -> list[np.ndarray]:
    trainer = settings.trainer
    return epoch_batches(split.lengths, trainer.batch_size, settings.seed_order, epoch, trainer.group_by_length)


def _seed_dropout(seed_init: int, epoch: int, state: _State) -> None:
    """Restart the dropout (and mixout) stream at each epoch, and after each validation inside
    one, so a run resumed from any checkpoint draws what the uninterrupted run drew."""
    if not state.batches_done:
        torch.manual_seed(seed_init * 1000 + epoch)
    else:
        torch.manual_seed(int(np.random.SeedSequence([seed_init, epoch, state.batches_done]).generate_state(1)[0]))


def _validate(model, val_split: EncodedSplit, settings: TrainConfig, accelerator: Accelerator, pad_id: int,
              name: str, state: _State, recipe: Recipe, epoch: int, loss: float, segment_start: float,
              started: float, on_validation: Callable[[dict], None], dynamics: DynamicsRecorder | None) -> bool:
    """Score the validation set, log it (after recording the dynamics, if asked), keep the best
    weights; True when training must stop."""
    batch_size, tokens = settings.trainer.eval_batch_size, settings.trainer.eval_tokens_per_batch
    probs = predict_entailment_probability(model, val_split, batch_size, accelerator, pad_id, f"[{name}] validation",
                                           tokens)
    val_acc = accuracy(val_split.labels.tolist(), labels_from_probability(probs).tolist())
    entry = {"epoch": epoch, "loss": loss, "val_accuracy": val_acc,
             "seconds": time.perf_counter() - segment_start}
    if settings.trainer.validation_steps is not None:
        entry["step"] = state.step
    result = state.result
    improved = state.validated(entry, lambda: accelerator.unwrap_model(model).state_dict())
    result.seconds = time.perf_counter() - started
    if dynamics is not None:
        diagnostic = predict_entailment_probability(model, dynamics.diagnostic, batch_size, accelerator, pad_id,
                                                    f"[{name}] diagnostic", tokens)
        dynamics.record(len(result.log), probs, diagnostic, accelerator, best=improved)
    on_validation(entry)
    below_min_lr = recipe.learning_rate.after_validation(val_acc)
    return state.stale >= settings.trainer.patience or below_min_lr


def _save_checkpoint(path: Path | None, state: _State, model, optimizer, recipe: Recipe,
                     accelerator: Accelerator, identity: Mapping[str, Any] | None) -> None:
    """Atomically store the state and the run's identity, so a killed run resumes where it stood
    (main process only)."""
    if path is None or not accelerator.is_main_process:
        return
    with atomic_path(path) as tmp:
        torch.save({"model": accelerator.unwrap_model(model).state_dict(), "optimizer": optimizer.state_dict(),
                    "learning_rate": recipe.learning_rate.state_dict(), "state": state,
                    "identity": None if identity is None else dict(identity)}, tmp)


def saved_identity(path: Path) -> dict[str, Any] | None:
    """The identity the checkpoint at `path` was saved with; None for a checkpoint written before
    checkpoints stored one. Memory-mapped: the weights it holds are not read. A checkpoint that does
    not load (truncated, not one of ours) is a user error whose fix starts the run over."""
    try:
        saved = torch.load(path, map_location="cpu", weights_only=False, mmap=True)
    except (OSError, RuntimeError, EOFError, pickle.UnpicklingError) as err:
        raise UserError(f"unreadable checkpoint ({first_line(err)})", path=path,
                        fix="force=true starts the run over from its first epoch") from None
    return saved.get("identity") if isinstance(saved, dict) else None


def _load_checkpoint(path: Path, model, optimizer, recipe: Recipe, accelerator: Accelerator) -> _State:
    """The state a checkpoint of this job holds (`run.py` has compared its identity with the job's:
    older checkpoints, of other formats, are never resumed)."""
    saved = torch.load(path, map_location="cpu", weights_only=False)
    accelerator.unwrap_model(model).load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    recipe.learning_rate.load_state_dict(saved["learning_rate"])
    return saved["state"]
