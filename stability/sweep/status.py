"""What became of each run of a sweep: done, running, failed, interrupted or not started.

Everything comes from the sweep folder, so no accounting database (sacct) is needed:
- `multirun.yaml`, which Hydra writes when a sweep starts, holds its command line; expanded
  like training expands it (`core.jobs.job_configs`), it gives every run the sweep has, in
  launch order, and the config each must have finished with;
- a run's record (metrics.json of that config and input content, `core.runmatch`) says it is done;
- its job record (`job.json`, `core.jobrecord`) where it runs, or the one line why it failed;
- for SLURM, submitit's folder `.submitit/<job>_<task>/` names the array job of every task
  (task k is the sweep's k-th run; the newest array wins after a rerun), its logs say when a
  job was killed, and `squeue` (the controller itself), where it answers, whether a job is
  still queued or running.
- its lock (`core.runlock`), which process holds it now: also a single run (which writes no
  job record), or another sweep's job that took the run this sweep's job left alone.
A run whose job record says running, or whose lock names an owner, but whose process or SLURM
job is gone was *interrupted* (cancelled, killed, out of time without a requeue): the same
command again runs it.
"""
from __future__ import annotations

import re
import socket
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from stability.core.errors import UserError
from stability.core.jobrecord import FAILED, RUNNING, JobRecord, read_job_record
from stability.core.jobs import job_configs
from stability.core.markdown import counted
from stability.core.runlock import LockOwner, process_alive, read_owner, stale_reason
from stability.core.runmatch import ABSENT, OTHER, RECORD_MORE, SAME, Verdict
from stability.core.runrecord import RunDir
from stability.sweep.guard import finished_run_verdict
from stability.sweep.squeue import QueuedJob, queued_jobs, still_queued
from stability.sweep.table import text_table

DONE, INTERRUPTED, NOT_STARTED = "done", "interrupted", "not started"
STATES = (DONE, RUNNING, FAILED, INTERRUPTED, NOT_STARTED)
SWEEP_FILE = "multirun.yaml"
SUBMITIT_DIR = ".submitit"
_TASK_FOLDER = re.compile(r"^(\d+)_(\d+)$")
# submitit's log line when a job (re)starts, and slurmstepd's when SLURM kills one
_STARTED = re.compile(r"\((\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+\) - Starting with JobEnvironment")
_KILLED = re.compile(r"\*\*\* (?:JOB|STEP) [\d.]+ ON \S+ CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+?))? \*\*\*")


@dataclass(frozen=True)
class RunStatus:
    """One run of the sweep: its folder (relative to the sweep's), state and what explains it."""

    run: str
    state: str
    detail: str = ""


@dataclass(frozen=True)
class SweepStatus:
    folder: Path
    runs: list[RunStatus]

    def counts(self) -> dict[str, int]:
        tally = Counter(run.state for run in self.runs)
        return {state: tally[state] for state in STATES}


def sweep_configs(folder: Path) -> list[DictConfig]:
    """The job configs of the sweep last started in `folder`, from its multirun.yaml."""
    saved_path = folder / SWEEP_FILE
    if not saved_path.is_file():
        raise UserError(f"no {SWEEP_FILE}: not the folder of a sweep", path=folder,
                        fix="pass the experiment folder a sweep wrote, e.g. runs=outputs/smoke")
    overrides = OmegaConf.load(saved_path).hydra.overrides
    return job_configs(["--multirun", *overrides.hydra, *overrides.task])


def sweep_status(folder: Path) -> SweepStatus:
    """Every run of the sweep in `folder`, in launch order."""
    configs = sweep_configs(folder)
    tasks = _slurm_tasks(folder / SUBMITIT_DIR, len(configs))
    subdirs = [str(cfg.hydra.sweep.subdir) for cfg in configs]
    records = [read_job_record(folder / subdir) for subdir in subdirs]
    owners = [read_owner(folder / subdir) for subdir in subdirs]
    queue = queued_jobs({holder.slurm_job for holder in (*records, *owners) if holder and holder.slurm_job}
                        | set(tasks.values()))
    judge = _Judge(folder, queue)
    statuses = []
    for index, (cfg, subdir, record, owner) in enumerate(zip(configs, subdirs, records, owners)):
        run = RunDir(folder / subdir)
        state, detail = judge(run, finished_run_verdict(cfg, run), record, owner, tasks.get(index))
        statuses.append(RunStatus(subdir, state, detail))
    return SweepStatus(folder, statuses)


def _slurm_tasks(submitit: Path, n_runs: int) -> dict[int, str]:
    """Task k of the sweep -> the SLURM id of the newest job submitted for it: submitit names a
    job's folder by its id, `<array>_<k>` (or `<job>` for a sweep of one run, which is no array)."""
    newest: dict[int, tuple[int, str]] = {}
    for folder in submitit.iterdir() if submitit.is_dir() else ():
        task = _TASK_FOLDER.match(folder.name)
        if task:
            array, index = int(task.group(1)), int(task.group(2))
        elif folder.name.isdigit() and n_runs == 1 and any(folder.glob("*_log.out")):
            array, index = int(folder.name), 0
        else:
            continue
        if index < n_runs and array > newest.get(index, (-1, ""))[0]:
            newest[index] = (array, folder.name)
    return {index: name for index, (_, name) in newest.items()}


@dataclass(frozen=True)
class _Judge:
    folder: Path
    queue: dict[str, QueuedJob] | None  # None: no squeue here

    def __call__(self, run: RunDir, verdict: Verdict, record: JobRecord | None, owner: LockOwner | None,
                 task_job: str | None) -> tuple[str, str]:
        if verdict.state == SAME:
            result = run.read_record()
            return DONE, f"val acc {result.val_accuracy:.4f}, overall MCC {result.overall_mcc:.4f}"
        if owner is not None and not _records_the_owner(record, owner):
            stale = stale_reason(owner, partial(still_queued, self.queue))
            return (INTERRUPTED, f"held by {owner}, but {stale}") if stale else (RUNNING, f"held by {owner}")
        if record is not None and record.state == FAILED:
            return FAILED, record.error or ""
        if record is not None and record.state == RUNNING:
            return self._running(record)
        queued = self.queue.get(task_job) if self.queue and task_job else None
        if queued is not None and queued.active:
            return NOT_STARTED, f"SLURM job {task_job} {queued.state}"
        return NOT_STARTED, _finished_detail(verdict)

    def _running(self, record: JobRecord) -> tuple[str, str]:
        """A job that said it started and has not said it ended: is it still there?"""
        if record.slurm_job is None:
            where = f"process {record.pid} on {record.host}"
            if record.host != socket.gethostname():
                return RUNNING, f"{where} (another machine: not checked)"
            return (RUNNING, where) if process_alive(record.pid) else (INTERRUPTED, f"{where} is gone")
        job = f"SLURM job {record.slurm_job}"
        if self.queue is None:  # no squeue here: the job's own logs say whether SLURM killed it
            killed = _killed_since_last_start(self.folder / SUBMITIT_DIR / record.slurm_job)
            return (INTERRUPTED, f"{job} {killed}") if killed else (RUNNING, f"{job} (from its log; no squeue here)")
        queued = self.queue.get(record.slurm_job)
        if queued is not None and queued.active:
            return RUNNING, f"{job} {queued.state}" + (f" on {queued.node}" if queued.node else "")
        return INTERRUPTED, f"{job} {queued.state if queued else 'ended'} before the run finished"


def _records_the_owner(record: JobRecord | None, owner: LockOwner) -> bool:
    """Whether the job record is the lock owner's own, whose details (SLURM state, node) say more."""
    return record is not None and record.state == RUNNING and (record.host, record.pid) == (owner.host, owner.pid)


def _killed_since_last_start(job_folder: Path) -> str | None:
    """SLURM's reason ("CANCELLED", "DUE TO TIME LIMIT", ...) when it killed the job after its
    last start, from submitit's logs of the job; None when it did not (or no log says so)."""
    def text(stream: str) -> str:
        return "".join(path.read_text(errors="replace") for path in job_folder.glob(f"*_log.{stream}"))

    starts = [datetime.fromisoformat(stamp) for stamp in _STARTED.findall(text("out"))]
    kills = _KILLED.findall(text("err"))
    if not kills:
        return None
    stamp, reason = kills[-1]
    if starts and datetime.fromisoformat(stamp) < starts[-1]:
        return None  # killed, then started again (requeued)
    return f"cancelled due to {reason.lower()}" if reason else "cancelled"


def _finished_detail(verdict: Verdict) -> str:
    """Why a folder holding a finished run still counts as not started for this sweep."""
    if verdict.state == ABSENT and verdict.differences:  # its metrics.json is unreadable: training redoes it
        return f"{verdict.differences[0]}: the same command again redoes the run"
    if verdict.state == OTHER:
        return f"a finished run of another config or other inputs is there ({'; '.join(verdict.differences)})"
    return "finished; to be redone to record more (weights, extra sets)" if verdict.state == RECORD_MORE else ""


def format_status(status: SweepStatus) -> str:
    """One line per run, then the counts."""
    rows = [["run", "state", "detail"], *([run.run, run.state, run.detail] for run in status.runs)]
    counts = status.counts()
    summary = " · ".join(f"{state} {counts[state]}" for state in STATES)
    return "\n".join([f"Sweep {status.folder}: {counted(len(status.runs), 'run')}", "", text_table(rows), "", summary])
