"""One run: skip it when finished with the same inputs, refuse a finished run of other inputs,
else train it (`finetune.attempt`) and, for a redo, put it in the finished run's place.

The training libraries (torch, transformers, accelerate) load only once the run is to be
trained: a skip or a refusal answers without them, in a second rather than several."""
from __future__ import annotations

import copy
import logging
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from omegaconf import DictConfig, read_write

from stability.core.errors import UserError
from stability.core.jobrecord import utc_now
from stability.core.runmatch import OTHER, RECORD_MORE, SAME, judge
from stability.core.runrecord import RunDir, RunRecord
from stability.core.schemas.train import TrainConfig
from stability.data.inputs import run_inputs

log = logging.getLogger(__name__)


def run_one(settings: TrainConfig, composed: DictConfig, run_path: Path,
            claim: Callable[[Path], None] = lambda folder: None,
            place: Callable[[], AbstractContextManager[object]] = nullcontext) -> RunRecord | None:
    """Run (or skip, when the folder already holds this computation) and return the run's record.

    `settings` is the typed config everything reads; `composed`, the same config as Hydra
    composed it, is only recorded: written to config.yaml, fingerprinted (so runs made before
    the typed configs keep their fingerprint) and sent to the tracker.
    A finished run of another config or other input content is refused (`core.runmatch`);
    one that is redone (`force=true`, or to record more) trains in a staging folder and takes
    the finished run's place only once it finishes, the finished run moving to `replaced/`.
    A redo to record more also records the weights and dynamics the finished run has, so asking
    for one artefact never leaves another behind in `replaced/`.
    Under several processes only the main one writes; the others return None. `claim` is
    called once the run is to be trained, before anything is written (a skip or a refusal
    writes nothing), with the folder it trains in: the job's own files (`.hydra/`, its log) go
    there from then on, so a redo leaves the finished run's as they are until it takes its place.
    `place` is held while the run trains: the job's device (`sweep.devices.job_device`), chosen
    only for a run that trains.
    """
    attempt = plan_attempt(settings, composed, run_path)
    if isinstance(attempt, RunRecord):
        return attempt
    from stability.finetune.attempt import train_and_record  # the training libraries, only now

    with place():
        record = train_and_record(attempt.settings, attempt.composed, attempt.target, attempt.inputs, claim)
    if record is not None:
        attempt.take_place()
    return record


@dataclass(frozen=True)
class Attempt:
    """A job to train: its settings and config (amended to keep a redone run's artefacts), the run it
    is for, and where it trains (the run's folder, or its staging folder when it redoes a finished run)."""

    settings: TrainConfig
    composed: DictConfig
    inputs: dict[str, dict[str, str]]
    run_dir: RunDir
    target: RunDir

    def take_place(self) -> None:
        """Once the attempt has finished: a redo takes the finished run's place, which moves to `replaced/`."""
        if self.target is not self.run_dir:
            kept = self.run_dir.take_over_from(self.target, _stamp())
            log.info("[redo] %s: the previous run is kept in %s", self.run_dir.path, kept)


def plan_attempt(settings: TrainConfig, composed: DictConfig, run_path: Path) -> Attempt | RunRecord:
    """The job's attempt, or the finished run's record where the job is skipped (the folder holds its
    computation and `force` is off); a finished run of another computation is refused (`run_one`)."""
    run_dir = RunDir(run_path)
    inputs = run_inputs(settings, settings.model)
    verdict = judge(run_dir, composed, inputs, settings.trainer.save_model, settings.trainer.dynamics)
    if not settings.force and verdict.state == SAME:
        log.info("[skip] %s: finished with the same config and inputs (force=true reruns it)", run_dir.path)
        return run_dir.read_record()
    if not settings.force and verdict.state == OTHER:
        raise UserError(verdict.refusal(run_dir, str(composed.out)))
    if verdict.state == RECORD_MORE:
        settings, composed = _keeping_artefacts(run_dir, settings, composed)
    # a finished run (also one whose metrics.json no longer reads) is never trained over
    target = run_dir.staging if run_dir.is_finished() else run_dir
    return Attempt(settings, composed, inputs, run_dir, target)


def _keeping_artefacts(run_dir: RunDir, settings: TrainConfig,
                       composed: DictConfig) -> tuple[TrainConfig, DictConfig]:
    """The job, also saving weights and recording dynamics where the finished run in `run_dir` has
    them: a redo to record more computes the same run, so it makes them again, said before it starts."""
    kept = [key for key, present in (("save_model", run_dir.has_model()), ("dynamics", run_dir.has_dynamics()))
            if present and not getattr(settings.trainer, key)]
    if not kept:
        return settings, composed
    log.info("[redo] %s: also %s, as the finished run has them", run_dir.path,
             " and ".join(f"trainer.{key}=true" for key in kept))
    composed = copy.deepcopy(composed)
    with read_write(composed):
        for key in kept:
            composed.trainer[key] = True
    return replace(settings, trainer=replace(settings.trainer, **dict.fromkeys(kept, True))), composed


def _stamp() -> str:
    """A folder name for now: `2026-11-25T22:30:00+00:00` -> `20261125T223000Z`."""
    return utc_now().replace("-", "").replace(":", "").replace("+0000", "Z")
