"""What became of one job of a sweep: `job.json` in the job's folder, written by the job itself.

Why: a sweep of hundreds of runs must survive one bad job, say at its end which jobs failed
and why, and let `status` tell done / running / failed / not started apart without the
cluster's accounting database. The job wrapper (`core.command`) writes the record when a job
of a multirun starts (where it runs: host, process, SLURM job id) and again when it ends
(`done`, or `failed` with its one-line error). A job killed from outside (a time limit,
`scancel`, a lost node) leaves `running` behind; whoever reads the record checks whether
that process or SLURM job is still alive.
"""
from __future__ import annotations

import dataclasses
import json
import os
import socket
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping

from omegaconf import DictConfig, OmegaConf

from stability.core.atomic import atomic_write_text

JOB_FILE = "job.json"
RUNNING, DONE, FAILED = "running", "done", "failed"


@dataclass(frozen=True)
class JobRecord:
    """One job's last known state; `error` is the one line that names why it failed."""

    state: str
    host: str
    pid: int
    started: str
    slurm_job: str | None = None
    ended: str | None = None
    error: str | None = None

    @classmethod
    def started_here(cls, env: Mapping[str, str] = os.environ) -> JobRecord:
        return cls(RUNNING, socket.gethostname(), os.getpid(), utc_now(), slurm_job_id(env))

    def finished(self, error: str | None = None) -> JobRecord:
        return dataclasses.replace(self, state=FAILED if error else DONE, ended=utc_now(), error=error)


def slurm_job_id(env: Mapping[str, str] = os.environ) -> str | None:
    """The SLURM id of the job this process runs in: `<array job>_<task>` for a job array (the
    name submitit gives its log folder), else the job id; None outside SLURM."""
    if env.get("SLURM_ARRAY_JOB_ID") and env.get("SLURM_ARRAY_TASK_ID"):
        return f"{env['SLURM_ARRAY_JOB_ID']}_{env['SLURM_ARRAY_TASK_ID']}"
    return env.get("SLURM_JOB_ID")


def job_dir(cfg: DictConfig, number: int) -> Path:
    """The folder Hydra gives job `number` of a sweep (`hydra.sweep.dir`/`hydra.sweep.subdir`).
    A subdir left unresolved in a config composed before the sweep names the job by its number
    (`${hydra.job.num}`, Hydra's default), which Hydra sets only once the job runs."""
    subdir = str(number) if OmegaConf.is_missing(cfg.hydra.sweep, "subdir") else str(cfg.hydra.sweep.subdir)
    return Path(str(cfg.hydra.sweep.dir)) / subdir


def write_job_record(directory: Path, record: JobRecord) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write_text(directory / JOB_FILE, json.dumps(dataclasses.asdict(record), indent=2))


def read_job_record(directory: Path) -> JobRecord | None:
    """The record, or None where the job never started (or the file is not one of ours)."""
    try:
        data = json.loads((directory / JOB_FILE).read_text(encoding="utf-8"))
        return JobRecord(**data)
    except (OSError, ValueError, TypeError):
        return None


def utc_now() -> str:
    """Now, UTC, to the second, in ISO 8601: the times every record of a run carries."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
