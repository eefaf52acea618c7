"""Write-then-rename, so a reader (or a parallel job, or a killed run) never sees half a file."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator


@contextmanager
def atomic_path(path: Path, suffix: str = "") -> Iterator[Path]:
    """A fresh temporary path beside `path`, moved onto it when the block succeeds.

    The name is unique per call, so parallel jobs filling the same cache entry never write
    into each other's file; `suffix` is for writers that append one (np.savez adds .npz).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=f".part{suffix}")
    os.close(handle)
    tmp = Path(name)
    try:
        yield tmp
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(path: Path, text: str) -> None:
    """Write text durably (fsync) and atomically."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def jsonl_text(rows: Iterable[dict[str, Any]]) -> str:
    """One JSON object a line, non-ASCII left as it is so the texts stay readable in the file."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def atomic_write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write JSON lines durably and atomically."""
    atomic_write_text(path, jsonl_text(rows))


@contextmanager
def atomic_directory(path: Path) -> Iterator[Path]:
    """A fresh temporary folder beside `path` that replaces it when the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part"))
    try:
        yield tmp
        if path.exists():
            shutil.rmtree(path)
        tmp.replace(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
