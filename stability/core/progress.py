"""Progress bars and log set-up shared by every long loop and command.

Bars go to stderr and only when stderr is a terminal: in a pipe, a batch job or a CI log
they would be noise, and the log lines say what happened. Processes other than the main
one of a multi-process run pass `enabled=False`, so one bar shows per run.
"""
from __future__ import annotations

import logging
import sys
from typing import Iterable, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def bars_shown() -> bool:
    """Whether a progress bar would show: stderr is an interactive terminal."""
    return sys.stderr.isatty()


def progress(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str = "",
             unit: str = "it", enabled: bool = True, leave: bool = False) -> tqdm:
    """A tqdm bar (rate and ETA included) that stays silent off a terminal or when disabled."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave, dynamic_ncols=True,
                disable=not (enabled and bars_shown()), file=sys.stderr)


def setup_cli_logging(level: int = logging.INFO) -> None:
    """Log lines of a command without Hydra (report, annotators, ...) to stderr, message only."""
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stderr)
