"""What a job writes into its folder besides its task's own files: Hydra's `.hydra/` (the job's
config, Hydra's config, the overrides), its log file, and in a sweep its record (`core.jobrecord`).

Why: Hydra writes `.hydra/` and opens the job's log in the job's folder before the task runs.
A training job's folder is a run, maybe one another process holds (the job leaves it alone) or
one already finished with the same config (the job skips it): such a job must write nothing
there. So a command whose jobs claim their folders (`run_command(..., claimed=True)`: train)
has Hydra write neither (`hydra.output_subdir: null`, the log file a `JobLog`), and the job
writes them once its task claims the folder (`claim_job_folder()`, when it starts to write
there). A job that ends without claiming its folder writes nothing into it, except a failed
job of a sweep: its record, which the sweep's end and `status` read.
"""
from __future__ import annotations

import errno
import logging
from contextlib import contextmanager
from contextvars import ContextVar
from logging.handlers import MemoryHandler
from pathlib import Path
from typing import Iterator

from hydra.core.hydra_config import HydraConfig
from hydra.core.utils import _save_config
from omegaconf import DictConfig

from stability.core.errors import UserError
from stability.core.jobrecord import DONE, JobRecord, read_job_record, write_job_record
from stability.core.ranks import launch_rank

# where Hydra would have written the job's configs (its default `hydra.output_subdir`)
JOB_CONFIG_DIR = ".hydra"

log = logging.getLogger(__name__)
_current: ContextVar[JobOutputs | None] = ContextVar("current job outputs", default=None)


class JobLog(MemoryHandler):
    """The job's log file (`hydra.job_logging`'s `file` handler in a claiming command): its
    records are held back until the job claims its folder, then written as they come; a job
    that never claims it leaves no file. The file opens only on the first write (`delay`)."""

    def __init__(self, filename: str, mode: str = "a", encoding: str | None = None) -> None:
        super().__init__(capacity=0, target=logging.FileHandler(filename, mode, encoding, delay=True),
                         flushOnClose=False)
        self.claimed = False

    def shouldFlush(self, record: logging.LogRecord) -> bool:
        return self.claimed

    def flush(self) -> None:
        if self.claimed:  # logging.shutdown flushes every handler: not into an unclaimed folder
            super().flush()

    def setFormatter(self, fmt: logging.Formatter | None) -> None:
        super().setFormatter(fmt)
        if self.target is not None:  # the file handler formats what this one passes on
            self.target.setFormatter(fmt)

    def claim(self, folder: Path | None = None) -> None:
        """Write from now on, into `folder` where given (the file keeps its name)."""
        if folder is not None and self.target is not None:
            folder.mkdir(parents=True, exist_ok=True)
            self.target.baseFilename = str((folder / Path(self.target.baseFilename).name).absolute())
        self.claimed = True
        self.flush()

    def close(self) -> None:
        target = self.target
        super().close()  # drops the records of a job that never claimed its folder
        if target is not None:
            target.close()


class JobOutputs:
    """One job's `.hydra/`, log and record, written into `directory` once the job claims it
    (at once where the command's jobs do not claim their folders: Hydra wrote `.hydra/` then).
    Only the main rank writes (under DDP every rank runs the job)."""

    def __init__(self, directory: Path, cfg: DictConfig, *, deferred: bool, recorded: bool) -> None:
        self.directory, self.cfg, self.deferred = directory, cfg, deferred
        self.main = launch_rank() == 0
        self.record = JobRecord.started_here() if recorded and self.main else None
        self.claimed = False
        self.recording = True   # the job's record is written into its folder (`claim`'s `own_run`)

    def claim(self, folder: Path | None = None, own_run: bool = True) -> None:
        """The job writes into its folder from now on: its configs, record and log go there too;
        its configs and log into `folder` where given (a redo's staging folder, so a finished run's
        own stay as they are until the redo takes its place). `own_run` False: the job writes only
        into `folder` (a fused group's first job whose own run is finished trains the others), so
        its own folder stays as it was, its record too where it says done (one a killed job left
        running is put right), unless the job fails."""
        if self.claimed:
            return
        self.claimed = True
        if not own_run:
            left = read_job_record(self.directory)
            self.recording = left is None or left.state != DONE
        try:
            if self.deferred and self.main:
                _save_job_configs(self.cfg, (folder or self.directory) / JOB_CONFIG_DIR)
            if self.record is not None and self.recording:
                write_job_record(self.directory, self.record)
        except OSError as err:
            raise unwritable(self.directory, err) from None
        for handler in logging.getLogger().handlers:
            if isinstance(handler, JobLog):
                handler.claim(folder)

    def finish(self, error: str | None = None) -> None:
        """The job's end in its record: always where it failed (the sweep's end names it), else
        only where it claimed its folder (a skipped or held job leaves the folder as it was)."""
        if self.record is None or not ((self.claimed and self.recording) or error):
            return
        try:
            write_job_record(self.directory, self.record.finished(error))
        except OSError as err:  # the folder cannot be written: the error it failed with is logged already
            log.error("error: %s", unwritable(self.directory, err))

    @contextmanager
    def current(self) -> Iterator[None]:
        """Make these the outputs `claim_job_folder()` claims while the block runs."""
        token = _current.set(self)
        try:
            yield
        finally:
            _current.reset(token)


def claim_job_folder(folder: Path | None = None, own_run: bool = True) -> None:
    """Called by a task when it starts to write into its job's folder (a training job: when it
    trains; `folder`: where this attempt writes, when not the job's folder itself; `own_run` as
    `JobOutputs.claim`); a no-op outside a job (a task called directly)."""
    outputs = _current.get()
    if outputs is not None:
        outputs.claim(folder, own_run)


def unwritable(path: Path, err: OSError, doing: str = "cannot write here") -> UserError:
    """An OSError writing `path` as one line (a read-only or immutable folder, a full disk or quota),
    its fix the one for its cause: space is not a permission."""
    full = err.errno in (errno.ENOSPC, errno.EDQUOT)
    fix = ("free space on that disk (or raise your quota), or pass out= a folder on another disk" if full
           else "make the folder writable, or pass out= a folder you can write into")
    return UserError(f"{doing} ({err.strerror or type(err).__name__})", path=err.filename or path, fix=fix)


def _save_job_configs(cfg: DictConfig, folder: Path) -> None:
    """What Hydra writes into `hydra.output_subdir`, written as Hydra writes it."""
    hydra_cfg = HydraConfig.instance().cfg
    _save_config(cfg, "config.yaml", folder)
    _save_config(hydra_cfg, "hydra.yaml", folder)
    _save_config(hydra_cfg.hydra.overrides.task, "overrides.yaml", folder)
