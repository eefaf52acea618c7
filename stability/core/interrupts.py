"""Ctrl-C that never lands inside OmegaConf.

A KeyboardInterrupt raised while OmegaConf builds a config leaves a half-built node, and
OmegaConf's own clean-up (`flag_override`'s `finally`) then fails on it with an AttributeError
that replaces the interrupt: Hydra prints it as a composition error and exits 1 (2 of 150
interrupts timed at random inside Hydra's `compose`, measured). So while configs are composed, Ctrl-C is
only recorded (`deferred`), and acts where no config is being built: at a checkpoint
(`raise_if_interrupted`, between two jobs' configs), at the block's end, or at once inside
`allowed` (a job that trains, a launcher that waits for its jobs).
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Iterator


class _Received:
    """Whether a Ctrl-C was recorded and not acted on yet."""
    pending = False


def _record(signum: int, frame: FrameType | None) -> None:
    _Received.pending = True


def raise_if_interrupted() -> None:
    """Act on a Ctrl-C recorded inside `deferred` (KeyboardInterrupt); nothing if none was."""
    if _Received.pending:
        _Received.pending = False
        raise KeyboardInterrupt


@contextmanager
def deferred() -> Iterator[None]:
    """Inside the block Ctrl-C is recorded, and raised as KeyboardInterrupt at the next checkpoint,
    inside `allowed`, or when the block ends. Python's own handler only: where SIGINT is ignored
    (a background job) or handled by someone else, or off the main thread, nothing changes."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    _Received.pending = False
    signal.signal(signal.SIGINT, _record)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    raise_if_interrupted()


@contextmanager
def allowed() -> Iterator[None]:
    """Inside a `deferred` block, Ctrl-C acts at once here, and one recorded before acts on entry;
    elsewhere this changes nothing."""
    if signal.getsignal(signal.SIGINT) is not _record:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        raise_if_interrupted()
        yield
    finally:
        signal.signal(signal.SIGINT, _record)
