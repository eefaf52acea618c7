"""User-caused errors: one line naming the file (and line) and the fix, exit status 2.

Command lines wrap their entry point with `exit_on_user_error`, so a `UserError` raised
anywhere below becomes that line; other exceptions keep their traceback because they
are bugs. `NLI_STABILITY_TRACEBACK=1` shows the traceback of user errors too.
"""
from __future__ import annotations

import functools
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, TypeVar

T = TypeVar("T")

USER_ERROR_STATUS = 2


class UserError(Exception):
    """An error the user can fix: bad file, bad label, bad override, missing data/model."""

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None,
                 fix: str | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        text = where + message
        if fix:
            text += f" (fix: {fix})"
        super().__init__(text)


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (libraries' messages run over many lines)."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def require(module: str, problem: str, fix: str) -> ModuleType:
    """Import an optional extra's package; without it the command fails with `problem` and `fix`, not a traceback."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(problem, fix=fix) from None


def exit_on_user_error(func: Callable[..., T]) -> Callable[..., T]:
    """Turn a `UserError` (also one wrapped by Hydra) into one stderr line and status 2."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except UserError as err:
            if os.environ.get("NLI_STABILITY_TRACEBACK"):
                raise
            print(f"error: {err}", file=sys.stderr)
            sys.exit(USER_ERROR_STATUS)

    return wrapper
