"""A fused group of a sweep (`trainer.fuse_seeds=K`): K jobs that differ only in their seed, trained
as one fused model (`fused_loop.train_members`) by the group's first job, each member written to its
own run folder exactly as its solo run writes one (`run.evaluate_and_record`): config, train log,
predictions, weights and training dynamics where asked, and the record, whose `engine` (`fused<K>`)
and `fused_with` (the group's seeds) say how it was trained. The group's other jobs find their run
finished and skip it.

A member's result depends on its group, not on its own seeds alone: vmap draws the K members' dropout
masks from one stream, seeded by the group, and pads each step's K batches to the widest. So the
groups are fixed by the seeds (`sweep.fused_groups`: blocks of K), a fused run is its own variant
(`fused<K>`), and a group is always trained whole.

Resuming: a group writes its members one by one once all have trained, each folder finished when its
record is written. A group killed before they all finished is trained again from its start, whole,
on the same seeds and batches, which on one device computes the same numbers: members already
finished are skipped as the same computation (kept, not rewritten), the others written. There is no
checkpoint inside a group's training (`trainer.resume` continues solo runs only).
"""
from __future__ import annotations

import logging
import time
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from accelerate import Accelerator
from omegaconf import DictConfig

from stability.core.errors import UserError
from stability.core.identity import group_choices
from stability.core.jobrecord import JobRecord, utc_now, write_job_record
from stability.core.runmatch import SAME, judge
from stability.core.runrecord import RunDir, RunRecord
from stability.core.schemas.train import TrainConfig
from stability.data.inputs import run_inputs
from stability.finetune.distributed import cpu_only_distributed
from stability.finetune.fused import build_members
from stability.finetune.fused_loop import train_members
from stability.finetune.recipe import described
from stability.finetune.precision import forget_previous_precision, refuse_precision_not_run, resolve_mixed_precision, \
    run_device
from stability.finetune.dynamics import DynamicsRecorder
from stability.finetune.attempt import (EncodedData, dynamics_recording, evaluate_and_record, load_encoded,
                                        recorded_config, run_name)
from stability.finetune.run import Attempt, plan_attempt
from stability.tracking.trackers import make_tracker

log = logging.getLogger(__name__)

Hold = Callable[[Path], AbstractContextManager[object]]


@dataclass(frozen=True)
class Member:
    """One job of a fused group: its typed settings, its composed config, its run folder."""

    settings: TrainConfig
    composed: DictConfig
    path: Path


def run_group(members: Sequence[Member], first: Path, hold: Hold,
              claim: Callable[..., None] = lambda folder, own_run=True: None) -> list[RunRecord]:
    """Train the group (`members` in seed order; `first`, the folder of the job that trains it, is
    held by the command, `hold` holds the others') and return every member's record: the finished
    ones' as they are (skipped as the same computation), the others' once written. Refusals are
    `run.run_one`'s, member by member, before anything is written; `claim` gets the folder the
    job's own files go to (where its member trains, or the first member that does, `own_run` False:
    the job's own run is kept, and so is its folder)."""
    with ExitStack() as held:
        for member in members:
            if member.path != first:
                held.enter_context(hold(member.path))
        attempts = [plan_attempt(member.settings, member.composed, member.path) for member in members]
        if all(isinstance(attempt, RunRecord) for attempt in attempts):
            return list(attempts)
        own = [attempt for attempt, member in zip(attempts, members)
               if member.path == first and isinstance(attempt, Attempt)]
        records = _train_group(members, attempts, lambda folder: claim(own[0].target.path) if own
                               else claim(folder, own_run=False))
    for member, attempt in zip(members, attempts):
        if member.path != first and isinstance(attempt, Attempt):
            # the member's job did its work here: its record says finished (one an earlier command left,
            # e.g. failed because the group's first job failed then, would name it at the sweep's end)
            write_job_record(member.path, JobRecord.started_here().finished())
    return records


def _train_group(members: Sequence[Member], attempts: list[Attempt | RunRecord],
                 claim: Callable[[Path], None]) -> list[RunRecord]:
    """Train all members (a finished one too: the others' numbers depend on it) and write those whose
    attempt is due."""
    started_at, started = utc_now(), time.perf_counter()
    first = members[0].settings
    forget_previous_precision()
    cpu = cpu_only_distributed()
    accelerator = Accelerator(mixed_precision=resolve_mixed_precision(first.trainer.mixed_precision, run_device(cpu)),
                              cpu=cpu)
    refuse_precision_not_run(first.trainer.mixed_precision, accelerator)
    due = [attempt for attempt in attempts if isinstance(attempt, Attempt)]
    for attempt in due:
        removed = attempt.target.clear_leftovers(False, attempt.settings.trainer.dynamics)
        if removed:
            log.info("[clean] %s: removed %s, left by an unfinished attempt", attempt.target.path, ", ".join(removed))
    claim(due[0].target.path)
    log.info("[fused] %s", described(first.trainer, group_choices(due[0].composed).get("trainer")))
    loaded = load_encoded(first)
    for attempt in due:
        attempt.target.write_config(attempt.composed)
        attempt.target.write_train_log([])
    seeds = [member.settings.seed for member in members]
    models = build_members(first.model, loaded.tokenizer, first.trainer, [m.settings.seed_init for m in members])
    log.info("[fused] seeds %s as one model of %d members", ", ".join(map(str, seeds)), len(members))
    if first.trainer.resume:
        log.info("[fused] trainer.resume=true: a fused group keeps no checkpoint; killed, it is trained again "
                 "from its start, its finished members kept")
    recorders = [_recorder(attempt, loaded, accelerator) for attempt in attempts]
    results = train_members(models, [m.settings.seed_init for m in members], [m.settings.seed_order for m in members],
                            loaded.encoded["train"][0], loaded.encoded["validation"][0], first, accelerator,
                            loaded.pad_id, f"fused seeds {','.join(map(str, seeds))}", recorders)
    records = []
    for attempt, model, result, recorder in zip(attempts, models, results, recorders):
        if isinstance(attempt, RunRecord):
            records.append(attempt)
            continue
        settings, target = attempt.settings, attempt.target
        target.write_train_log(result.log)
        tracker = make_tracker(settings, recorded_config(attempt.composed), target.path)
        for entry in result.log:
            tracker.log_epoch(entry)
            log.info("[%s] epoch %d: loss %.4f, val acc %.4f", run_name(settings), entry["epoch"], entry["loss"],
                     entry["val_accuracy"])
        # prepared as a solo run's model is: its evaluation under the run's mixed precision
        record = evaluate_and_record(accelerator.prepare_model(model), settings, attempt.composed, target, loaded,
                                     accelerator, result, recorder, tracker, attempt.inputs, started_at, started, seeds)
        attempt.take_place()
        records.append(record)
    return records


def _recorder(attempt: Attempt | RunRecord, loaded: EncodedData, accelerator: Accelerator) -> DynamicsRecorder | None:
    """The recorder of a member that is written with `trainer.dynamics=true`, writing into its folder
    as a solo run's does (`attempt.train_and_record`); None for the others."""
    if not isinstance(attempt, Attempt) or not attempt.settings.trainer.dynamics:
        return None
    return dynamics_recording(attempt.target, loaded, accelerator)[0]


def follow_group(settings: TrainConfig, composed: DictConfig, path: Path, first: Path) -> RunRecord:
    """A job of a fused group that is not its first: the first job trained the group, so its run is
    finished with this computation and is skipped; otherwise that job failed, which this one says."""
    run_dir = RunDir(path)
    verdict = judge(run_dir, composed, run_inputs(settings, settings.model), settings.trainer.save_model,
                    settings.trainer.dynamics)
    if verdict.state != SAME:
        raise UserError(f"seed {settings.seed} is trained by its fused group's first job, in {first}, which did "
                        f"not finish it", fix=f"see that job's error in {first}; the same command again trains the "
                                              f"group")
    log.info("[skip] %s: trained by its fused group's first job, in %s", path, first)
    return run_dir.read_record()
