"""Progress bars and log set-up shared by every long loop and command.

Bars go to stderr and only when stderr is a terminal: in a pipe, a batch job or a CI log
they would be noise, and the log lines say what happened. Processes other than the main
one of a multi-process run pass `enabled=False`, so one bar shows per run.
"""
from __future__ import annotations

import logging
import os
import sys
from typing import Iterable, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")
_FALLBACK_SIZE = (100, 24)   # columns, lines


def bars_shown() -> bool:
    """Whether a progress bar would show: stderr is an interactive terminal."""
    return sys.stderr.isatty()


def _fixed_size() -> tuple[int, int] | None:
    """None to follow the terminal's size; a fixed size when the terminal reports none (a pseudo
    terminal without a size, as under `script` or some CI runners), where tqdm would draw nothing."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError):
        return _FALLBACK_SIZE
    return None if size.columns > 0 and size.lines > 0 else _FALLBACK_SIZE


def progress(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str = "",
             unit: str = "it", enabled: bool = True, leave: bool = False) -> tqdm:
    """A tqdm bar (rate and ETA included) that stays silent off a terminal or when disabled."""
    shown = enabled and bars_shown()
    fixed = _fixed_size() if shown else None
    columns, lines = fixed or (None, None)
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave, file=sys.stderr,
                disable=not shown, ncols=columns, nrows=lines, dynamic_ncols=fixed is None)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time of the message (a test may have replaced it)."""

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


# The project's top-level packages, whose loggers a command without Hydra sends to stderr.
_PACKAGES = ("stability", "annotators", "probing")


def setup_cli_logging(level: int = logging.INFO) -> None:
    """Log lines of a command without Hydra (report, annotators, ...) on stderr, message only.

    Only the project's own loggers are set (once), so an application embedding a command keeps
    its own logging; Hydra commands configure logging themselves and do not call this.
    """
    for name in _PACKAGES:
        logger = logging.getLogger(name)
        if not any(isinstance(handler, _StderrHandler) for handler in logger.handlers):
            handler = _StderrHandler()
            handler.setFormatter(logging.Formatter("%(message)s"))
            logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
