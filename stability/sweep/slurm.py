"""`hydra/launcher=slurm`: Hydra's submitit launcher, made to work without SLURM accounting.

submitit follows its jobs with `sacct`, which answers only where the cluster runs an
accounting database (slurmdbd). Without one, every poll logged "Bypassing sacct error ...",
and a job that ended without a result (`scancel`, a lost node, out of memory) stayed
UNKNOWN, so the sweep waited for it forever. This launcher hands submitit a watcher that
asks `sacct` while it answers and the controller itself (`squeue`) once it does not, saying
so once. A job that ends without a result then ends the command with one line naming it and
what to do next; runs that finished are kept, and the same command again runs only the rest.
On a machine without SLURM's programs the sweep is refused before anything is written
(`require_slurm`, the launcher's preflight).
"""
from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

from hydra.core.utils import JobReturn
from submitit.core.utils import UncompletedJobError
from submitit.slurm.slurm import SlurmInfoWatcher, SlurmJob

from stability.core.errors import UserError
from stability.sweep.squeue import queued_jobs

log = logging.getLogger(__name__)
# what a SLURM sweep runs on the submitting machine: sbatch submits, submitit looks for srun
PROGRAMS = ("sbatch", "srun")
# The state a job gets once squeue no longer lists it: it ended, how is no longer known.
ENDED = "ENDED"


class SacctOrSqueueWatcher(SlurmInfoWatcher):
    """submitit's job watcher, falling back on squeue where sacct fails."""

    def __init__(self, delay_s: int = 600) -> None:
        super().__init__(delay_s=delay_s)
        self.sacct_works = True

    def update(self) -> None:
        """One poll (submitit decides when), then the finished jobs marked as the base class does."""
        command = self._make_command()
        if command is None:
            return
        self._num_calls += 1
        if self.sacct_works:
            self._update_from_sacct(command)
        if not self.sacct_works:
            self._update_from_squeue()
        self._last_status_check = time.time()
        for job_id in self._registered - self._finished:
            if self.is_done(job_id, mode="cache"):
                self._finished.add(job_id)

    def _update_from_sacct(self, command: list[str]) -> None:
        try:
            self._output = subprocess.check_output(command, stderr=subprocess.PIPE)
        except (subprocess.CalledProcessError, OSError) as err:
            stderr = getattr(err, "stderr", None)
            reason = stderr.decode(errors="replace").strip() if stderr else str(err)
            log.info("sacct cannot report job states (%s): following the jobs with squeue", reason)
            self.sacct_works = False
        else:
            self._info_dict.update(self.read_info(self._output))

    def _update_from_squeue(self) -> None:
        waiting = self._registered - self._finished
        jobs = queued_jobs(waiting)
        if jobs is None:  # the controller did not answer this time: keep what was known
            return
        for job_id in waiting:
            job = jobs.get(job_id)
            self._info_dict[job_id] = {"JobID": job_id, "State": job.state if job else ENDED,
                                       "NodeList": job.node if job else ""}


def require_slurm() -> None:
    """Refuse a SLURM sweep where SLURM's programs are not on PATH: submitit finds out only once
    Hydra has written the sweep's multirun.yaml (which `status` would read as runs not started),
    and says so in a traceback."""
    missing = [program for program in PROGRAMS if shutil.which(program) is None]
    if missing:
        raise UserError(f"hydra/launcher=slurm needs SLURM, and this machine has no {' or '.join(missing)} on PATH",
                        fix="submit from a login node of the cluster, or drop hydra/launcher=slurm to run here "
                            "(hydra/launcher=local_gpus spreads the jobs over this machine's GPUs)")


@contextmanager
def _watched_by(watcher: SlurmInfoWatcher) -> Iterator[None]:
    """submitit's SLURM jobs share one class-level watcher: ours while this sweep runs."""
    previous = SlurmJob.watcher
    SlurmJob.watcher = watcher
    try:
        yield
    finally:
        SlurmJob.watcher = previous


def launch_watched(launch: Callable[[], Sequence[JobReturn]], sweep_dir: str) -> Sequence[JobReturn]:
    """Run submitit's `launch` with the watcher above; a job that ended without a result ends
    the command with one line (submitit's message is many, with the job's whole stderr)."""
    with _watched_by(SacctOrSqueueWatcher()):
        try:
            return launch()
        except UncompletedJobError as err:
            what = " ".join(line.strip() for line in str(err).splitlines()[:2])
            sys.exit(f"error: {what} (fix: `nli-stability status runs={sweep_dir}` shows every run; "
                     "the same command again runs only the runs that did not finish)")
