"""Training dynamics (`trainer.dynamics=true`): what the model said about every item at each validation.

As in dataset cartography (Swayamdipta et al., 2020), a training item's P(gold) is read off the
training forward passes themselves: no extra pass over the training data. Each pass writes its
batch's P(entailment) into a buffer on the device (no host synchronisation per step); a
validation takes the buffer, which holds each item's last pass since the previous validation,
and starts a new one. The validation and diagnostic predictions come from the evaluation passes
(one extra diagnostic pass per validation). Recording reads outputs only: it draws no random
number and changes no weight, so a run's results are the same with it and without. The
diagnostic pass of the best validation is kept: the run's final diagnostic pass, over the same
weights in the same batches, would compute the same numbers (`loop.predict_diagnostic`), so a
run with dynamics makes one diagnostic pass per validation and none after training.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import torch
from accelerate import Accelerator

from stability.core.metrics import score_diagnostic
from stability.core.records import Example, labels_from_probability
from stability.core.runrecord import DYNAMICS_SPLITS, RunDir
from stability.finetune.encoding import EncodedSplit


@dataclass(frozen=True)
class ValidationRecord:
    """One validation's predictions: P(entailment) per item of each split (NaN for a training item no
    training pass reached since the previous validation)."""

    number: int                  # 1-based: the train_log line of this validation
    train: np.ndarray
    validation: np.ndarray
    diagnostic: np.ndarray


class DynamicsRecorder:
    """Collects the training passes' P(entailment) between validations and hands each validation's
    predictions to `on_record` (every process calls it; the caller writes from the main one).
    `best_diagnostic` is the diagnostic P(entailment) of the best validation recorded (None until one
    is; a resumed run whose best validation came before the kill has none)."""

    def __init__(self, n_train: int, diagnostic: EncodedSplit, device: torch.device,
                 on_record: Callable[[ValidationRecord], None]) -> None:
        self.diagnostic = diagnostic
        self._on_record = on_record
        self.best_diagnostic: np.ndarray | None = None
        # summed over processes at a validation: each process fills the items of its slices
        self._prob_sum = torch.zeros(n_train, device=device)
        self._seen = torch.zeros(n_train, device=device)

    def observe(self, indices: np.ndarray, logits: torch.Tensor) -> None:
        """A training pass over the items `indices` (positions in the training split) gave `logits`."""
        at = torch.as_tensor(indices, device=logits.device)
        self._prob_sum[at] = torch.softmax(logits.detach().float(), dim=-1)[:, 0]
        self._seen[at] = 1.0

    def record(self, number: int, validation: np.ndarray, diagnostic: np.ndarray, accelerator: Accelerator,
               best: bool = False) -> None:
        """Validation `number` happened (`best`: its weights are the best so far, the ones training keeps):
        pass on what was collected since the last one, and start anew."""
        if best:
            self.best_diagnostic = diagnostic
        prob_sum, seen = self._prob_sum, self._seen
        if accelerator.num_processes > 1:
            prob_sum, seen = accelerator.reduce(prob_sum, "sum"), accelerator.reduce(seen, "sum")
        seen_host = seen.cpu().numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            train = np.where(seen_host > 0, prob_sum.cpu().numpy() / seen_host, np.nan)
        self._prob_sum.zero_()
        self._seen.zero_()
        self._on_record(ValidationRecord(number, train, validation, diagnostic))


def predicted_labels(prob_entailment: np.ndarray) -> np.ndarray:
    """The run's labels (`records.labels_from_probability`), -1 where nothing was predicted (NaN): what
    the float32 probabilities say, before they are stored as float16."""
    return np.where(np.isnan(prob_entailment), -1, labels_from_probability(prob_entailment)).astype(np.int8)


class DynamicsWriter:
    """Stores each validation's predictions in the run directory (`RunDir.write_dynamics_validation`)
    and keeps that validation's diagnostic MCCs, which the tracker logs as learning curves."""

    def __init__(self, run_dir: RunDir, splits: dict[str, list[Example]], write: bool) -> None:
        self._run_dir = run_dir
        self._write = write
        self._diagnostic = splits["diagnostic"]
        self._items = pd.DataFrame(
            [{"split": split, "idx": e.idx, "label": e.label, "premise": e.premise, "hypothesis": e.hypothesis,
              "categories": list(e.categories) if split == "diagnostic" else []}
             for split in DYNAMICS_SPLITS for e in splits[split]])
        self.latest_mcc: dict[str, float] = {}
        self._started = False

    def start(self, validations_kept: int = 0) -> None:
        """The run starts, or resumes with `validations_kept` validations behind it (files of later
        ones, written before a kill, go); a run that does not resume starts at its first validation."""
        if self._write:
            self._run_dir.start_dynamics(self._items, validations_kept)
        self._started = True

    def __call__(self, record: ValidationRecord) -> None:
        if not self._started:
            self.start()
        if not self._write:     # another process than the main one: it writes and logs nothing
            return
        prob = np.concatenate([record.train, record.validation, record.diagnostic])
        pred = predicted_labels(prob)
        diagnostic_pred = pred[len(prob) - len(record.diagnostic):]
        scores = score_diagnostic([e.label for e in self._diagnostic], diagnostic_pred.tolist(),
                                  [e.categories for e in self._diagnostic], [e.coarse for e in self._diagnostic])
        self.latest_mcc = {"overall": scores.overall_mcc, **scores.coarse_mcc, **scores.category_mcc}
        self._run_dir.write_dynamics_validation(record.number, prob, pred)
