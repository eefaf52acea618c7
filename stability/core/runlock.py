"""One writer per run: a process holds the run folder's lock (`RunDir.lock_path`) while it trains.

Why: two sweeps started into one folder (by hand, or a SLURM sweep submitted again while its
first array still runs) would both train a run and interleave its files. The lock is a
`filelock.SoftFileLock`, a file created with O_CREAT|O_EXCL, which excludes on a local disk
and on a cluster's shared file system (NFS, Lustre) alike. It holds the owner's record (JSON:
host, pid, SLURM job, start time, launch) and its modification time is the heartbeat, touched
every HEARTBEAT_S seconds by a daemon thread for as long as the lock is held.

A lock is stale when its owner is gone; the next process to want the run breaks it (one log
line) and takes it. The owner is gone when
- it ran on this host and its process no longer exists;
- its SLURM job is this very job (an earlier start, before a requeue), or SLURM no longer
  queues it (`slurm_queued`, squeue's answer: core asks no cluster itself);
- otherwise (another host, no answer from SLURM) its heartbeat is older than STALE_AFTER_S.
Under DDP only the main rank takes the lock; the other ranks leave a run that another launch holds.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from filelock import SoftFileLock, Timeout

from stability.core.errors import UserError
from stability.core.joboutput import unwritable
from stability.core.jobrecord import slurm_job_id, utc_now
from stability.core.ranks import launch_id, launch_rank
from stability.core.runrecord import RunDir

HEARTBEAT_S = 30.0
# ten missed heartbeats: a live owner on a loaded machine or a slow shared file system still beats in time
STALE_AFTER_S = 300.0
_CANNOT_LOCK = "cannot take the run lock"
# a SLURM job id -> whether SLURM still holds the job (pending, running, suspended, ...); None: no answer
SlurmQueued = Callable[[str], "bool | None"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LockOwner:
    """Who holds a run, from its lock file; `heartbeat` is the file's modification time (epoch
    seconds). An empty host: a record not (yet) readable, e.g. one being written right now."""

    host: str
    pid: int
    started: str = ""
    slurm_job: str | None = None
    launch: str | None = None  # `core.ranks.launch_id`: shared by the ranks of one DDP launch
    heartbeat: float = 0.0

    def __str__(self) -> str:
        if not self.host:
            return "another process (its record is unreadable)"
        return f"{self.host}:{self.pid}" + (f" (SLURM job {self.slurm_job})" if self.slurm_job else "")


class RunHeld(Exception):
    """The run is held by a live owner; the message is `held by host:pid (SLURM job 123_4)`."""

    def __init__(self, owner: LockOwner) -> None:
        super().__init__(f"held by {owner}")
        self.owner = owner


def read_owner(run: Path) -> LockOwner | None:
    """The owner named in the run's lock, or None when no process holds the run."""
    return _read(RunDir(run).lock_path)


def stale_reason(owner: LockOwner, slurm_queued: SlurmQueued | None = None) -> str | None:
    """Why `owner` is gone (the rules in the module docstring), or None while it may still run."""
    if owner.slurm_job is not None and owner.slurm_job == slurm_job_id():
        return f"an earlier start of this SLURM job {owner.slurm_job}"
    if owner.host == socket.gethostname():
        return None if process_alive(owner.pid) else f"process {owner.pid} is gone"
    queued = slurm_queued(owner.slurm_job) if owner.slurm_job and slurm_queued else None
    if queued is not None:
        return None if queued else f"SLURM job {owner.slurm_job} is no longer queued"
    age = time.time() - owner.heartbeat
    return f"no heartbeat for {age:.0f} s" if age > STALE_AFTER_S else None


def process_alive(pid: int) -> bool:
    """Whether a process of this number exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process of that number: alive
        return True
    return True


@contextmanager
def hold_run(run: Path, slurm_queued: SlurmQueued | None = None) -> Iterator[None]:
    """Hold the run folder `run` for the block (released on any exit, KeyboardInterrupt included);
    RunHeld, before anything is written, when a live owner holds it."""
    if launch_rank() != 0:  # the main rank holds the run for the whole launch
        owner = read_owner(run)
        if owner is not None and owner.host and owner.launch != launch_id() and not stale_reason(owner, slurm_queued):
            raise RunHeld(owner)  # another launch's: the main rank finds it held as well
        yield
        return
    path = RunDir(run).lock_path
    lock, record = _take(path, slurm_queued)
    stop = threading.Event()
    threading.Thread(target=_beat, args=(path, record, stop), name=f"heartbeat {path}", daemon=True).start()
    try:
        yield
    finally:
        stop.set()
        if _ours(path, record):
            lock.release()
        else:
            log.warning("[lock] %s: another process broke this lock while the run was held", run)


def _take(path: Path, slurm_queued: SlurmQueued | None) -> tuple[SoftFileLock, str]:
    """Break a stale lock, take the lock and write this process's record into it."""
    owner = _read(path)
    if owner is not None:
        reason = stale_reason(owner, slurm_queued)
        if reason is None:
            raise RunHeld(owner)
        _break(path, owner)
        log.warning("[stale] %s: broke the lock of %s (%s)", path.parent, owner, reason)
    lock = SoftFileLock(path, timeout=0)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout:  # another process took it first (a TimeoutError, so an OSError: caught first)
        raise RunHeld(_read(path) or LockOwner("", 0)) from None
    except OSError as err:  # a read-only or immutable run folder
        raise unwritable(path, err, _CANNOT_LOCK) from None
    record = json.dumps({"host": socket.gethostname(), "pid": os.getpid(),
                         "started": utc_now(),
                         "slurm_job": slurm_job_id(), "launch": launch_id()})
    try:
        path.write_text(record, encoding="utf-8")  # over filelock's own marker, in the same file
    except OSError as err:
        lock.release()
        raise unwritable(path, err, _CANNOT_LOCK) from None
    return lock, record


def _break(path: Path, judged: LockOwner) -> None:
    """Remove the stale lock of `judged`: moved aside first, so that a lock another process took
    in the meantime is seen, put back, and respected (RunHeld)."""
    aside = path.with_name(f"{path.name}.stale-{socket.gethostname()}-{os.getpid()}")
    try:
        path.replace(aside)
    except FileNotFoundError:  # broken by another process already
        return
    except OSError as err:
        raise unwritable(path, err, _CANNOT_LOCK) from None
    found = _read(aside)
    if found is not None and dataclasses.replace(found, heartbeat=0) != dataclasses.replace(judged, heartbeat=0):
        aside.replace(path)
        raise RunHeld(found)
    aside.unlink(missing_ok=True)


def _beat(path: Path, record: str, stop: threading.Event) -> None:
    """The heartbeat: touch the lock while it still holds this process's record."""
    while not stop.wait(HEARTBEAT_S):
        try:
            if path.read_text(encoding="utf-8") != record:
                return  # broken by another process; the release says so
            os.utime(path)
        except FileNotFoundError:
            return
        except OSError:  # a shared file system's hiccup: try again at the next beat
            continue


def _ours(path: Path, record: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == record
    except OSError:
        return False


def _read(path: Path) -> LockOwner | None:
    """The lock's owner; a lock that is no file (a folder, one that cannot be read) is a UserError."""
    try:
        heartbeat = path.stat().st_mtime
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UserError("the run lock is a folder, not a lock file", path=path,
                        fix=f"remove it (no process holds a run through a folder): rm -r {path}") from None
    except OSError as err:
        raise UserError(f"cannot read the run lock ({err.strerror or type(err).__name__})", path=path,
                        fix="make it readable, or remove it if no process holds the run") from None
    try:
        fields = json.loads(text)
        return LockOwner(str(fields["host"]), int(fields["pid"]), str(fields.get("started", "")),
                         fields.get("slurm_job"), fields.get("launch"), heartbeat)
    except (ValueError, TypeError, KeyError):  # being written, or not our record
        return LockOwner("", 0, heartbeat=heartbeat)
