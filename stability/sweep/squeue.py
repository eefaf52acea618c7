"""What SLURM's controller says about jobs, through `squeue`: no accounting database needed.

`sacct` answers only where the cluster runs slurmdbd; `squeue` asks slurmctld itself, which
keeps every job while it is pending or running and for `MinJobAge` seconds (300 by default)
after it ended. A job squeue no longer lists has ended.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from typing import Iterable

# States in which a job still holds, or waits for, its place on the cluster.
ACTIVE = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "REQUEUE_HOLD",
                    "REQUEUE_FED", "RESIZING", "SUSPENDED", "SIGNALING", "STAGE_OUT", "STOPPED"})
_UNKNOWN_ID = "Invalid job id specified"


@dataclass(frozen=True)
class QueuedJob:
    """One job (array task as `<job>_<task>`) as squeue lists it."""

    job_id: str
    state: str
    node: str

    @property
    def active(self) -> bool:
        return self.state in ACTIVE


def squeue_available() -> bool:
    return shutil.which("squeue") is not None


def queued_jobs(job_ids: Iterable[str]) -> dict[str, QueuedJob] | None:
    """The jobs among `job_ids` (or their arrays) the controller still holds, one entry per
    array task; None when squeue is missing or cannot reach the controller."""
    arrays = sorted({job_id.split("_")[0] for job_id in job_ids})
    if not arrays:
        return {}
    if not squeue_available():
        return None
    try:
        listed = subprocess.run(["squeue", "--noheader", "--array", "--states=all", "--format=%i|%T|%N",
                                 f"--jobs={','.join(arrays)}"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if listed.returncode != 0:
        # every id unknown: all of them ended long enough ago for the controller to forget them
        return {} if _UNKNOWN_ID in listed.stderr else None
    jobs = {}
    for line in listed.stdout.splitlines():
        fields = line.strip().split("|")
        if len(fields) == 3:
            jobs[fields[0]] = QueuedJob(*fields)
    return jobs


def still_queued(jobs: dict[str, QueuedJob] | None, job_id: str) -> bool | None:
    """Whether `jobs` (an answer of `queued_jobs`) hold the job pending, running, suspended, ...;
    None where squeue gave no answer. The run lock's rules ask it of a run's owner (`core.runlock`)."""
    return None if jobs is None else job_id in jobs and jobs[job_id].active


def job_queued(job_id: str) -> bool | None:
    """`still_queued` for one job, asking squeue now."""
    return still_queued(queued_jobs([job_id]), job_id)
