"""User-caused errors: one line naming the file (and line) and the fix, exit status 2.

Command lines wrap their entry point with `exit_on_user_error`, so a `UserError` raised
anywhere below becomes that line; other exceptions keep their traceback because they
are bugs. `NLI_STABILITY_TRACEBACK=1` shows the traceback of user errors too. Ctrl-C is no
bug either: `exit_on_interrupt` makes it one line and status 130. Data files are read as text
through `open_text`, so a file in another encoding is a user error too, not a traceback.
"""
from __future__ import annotations

import functools
import importlib
import os
import select
import stat
import sys
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator, NoReturn, TextIO, TypeVar

T = TypeVar("T")

USER_ERROR_STATUS = 2
# what a shell reports for a command ended by Ctrl-C (128 + SIGINT)
INTERRUPTED_STATUS = 130
# and for one whose output's reader went away (128 + SIGPIPE): `nli-stability train --help | head`
BROKEN_PIPE_STATUS = 141
_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
# what Ctrl-C leaves unless a command says more: a command's outputs are written anew each time
STARTS_OVER = "the same command again starts over"


class UserError(Exception):
    """An error the user can fix: bad file, bad label, bad override, missing data/model."""

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None,
                 fix: str | None = None) -> None:
        self.problem = message  # without the place and the fix, for a caller that says them its own way
        self.fix = fix
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
            with exit_on_broken_pipe():
                return func(*args, **kwargs)
        except UserError as err:
            if os.environ.get("NLI_STABILITY_TRACEBACK"):
                raise
            print(f"error: {err}", file=sys.stderr)
            sys.exit(USER_ERROR_STATUS)

    return wrapper


@contextmanager
def exit_on_broken_pipe() -> Iterator[None]:
    """Status 141 and not a word when stdout's reader has gone (`| head` read its lines), as `cat`
    ends; Python's own BrokenPipeError is a traceback, and another one as it flushes stdout at exit.
    A broken pipe of anything else (a worker's) is left a traceback: that is a bug."""
    try:
        yield
        sys.stdout.flush()  # what is still buffered: the reader may have gone before it
    except BrokenPipeError:
        if not _stdout_reader_gone():
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush writes nowhere
        sys.exit(BROKEN_PIPE_STATUS)


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe no process reads any more: its write end polls as an error."""
    try:
        fd = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
    except (AttributeError, OSError, ValueError):  # replaced by an object without a descriptor, or closed
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def exit_interrupted(what: str) -> NoReturn:
    """Ctrl-C as one stderr line saying what is kept and how to go on, and status 130: Python's
    own KeyboardInterrupt traceback runs to a hundred lines of library frames."""
    print(f"interrupted: {what}", file=sys.stderr)
    sys.exit(INTERRUPTED_STATUS)


@contextmanager
def exit_on_interrupt(what: str = STARTS_OVER) -> Iterator[None]:
    """`exit_interrupted(what)` when Ctrl-C reaches the block."""
    try:
        yield
    except KeyboardInterrupt:
        exit_interrupted(what)


@contextmanager
def open_text(path: Path, *, newline: str | None = None) -> Iterator[TextIO]:
    """`path` opened as UTF-8 text (a leading byte-order mark skipped); a byte that is no UTF-8,
    met while the block reads, is one UserError naming the line (`not_utf8`)."""
    with path.open(encoding="utf-8-sig", newline=newline) as handle:
        try:
            yield handle
        except UnicodeDecodeError:
            raise not_utf8(path) from None


def require_utf8(path: Path) -> None:
    """Read `path` through `open_text`, for files another library parses (whose message for a
    file in another encoding would not name it)."""
    with open_text(path) as handle:
        while handle.read(1 << 20):
            pass


def not_utf8(path: Path) -> UserError:
    """The UserError of a file that is not UTF-8: its first undecodable line, the byte and column
    (Python's message counts bytes from wherever its decoder's buffer began, not lines)."""
    with path.open("rb") as handle:
        for line_no, line in enumerate(handle, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as err:
                column = len(line[:err.start].decode("utf-8")) + 1
                utf16 = ": the file is UTF-16" if line_no == 1 and line.startswith(_UTF16_MARKS) else ""
                return UserError(f"not UTF-8 text (byte 0x{line[err.start]:02x} at column {column}{utf16})",
                                 path=path, line=line_no, fix="save it as UTF-8")
    return UserError("not UTF-8 text", path=path, fix="save it as UTF-8")
