"""Content hashes of input files, computed once per (path, size, mtime) and kept in a cache.

A run's identity covers the content of what it reads (`stability.data.inputs`), so every run
of a sweep hashes its data files and its model's weights. Hashing a 1 GB file takes seconds; a
sweep of 100 runs over the same files must pay that once, not 100 times. The cache entry is a
small file under `<cache_dir>/hashes/`, named by a hash of the file's resolved path, size and
modification time (nanoseconds), so a file changed in place (new mtime or size) is hashed
again, and parallel jobs share entries without a database (entries are written atomically).
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from stability.core.atomic import atomic_write_text

_BLOCK = 1 << 22
_CACHE_FOLDER = "hashes"


def sha256_of_file(path: Path) -> str:
    """The file's sha256, read in 4 MiB blocks (`hashlib.file_digest` needs Python 3.11)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def file_hash(path: Path, cache_dir: Path | None) -> str:
    """The sha256 of `path`'s content, from the cache when the file is unchanged since it was
    last hashed (same size and mtime); None as `cache_dir` hashes without a cache."""
    if cache_dir is None:
        return sha256_of_file(path)
    resolved = path.resolve()
    stat = resolved.stat()
    key = hashlib.sha256(f"{resolved}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()
    entry = cache_dir / _CACHE_FOLDER / key[:2] / key
    try:
        cached = entry.read_text(encoding="ascii").strip()
    except OSError:
        cached = ""
    if len(cached) == 64:
        return cached
    digest = sha256_of_file(resolved)
    atomic_write_text(entry, digest)
    return digest


def folder_hash(folder: Path, cache_dir: Path | None, names: tuple[str, ...] = ()) -> str:
    """One hash over the files of a folder (recursively, by relative path), or over the files
    named `names` (globs) where given: a model checkpoint or a `save_to_disk` dataset."""
    files = sorted({p for pattern in names or ("**/*",) for p in folder.glob(pattern) if p.is_file()})
    return files_hash(files, cache_dir, folder)


def files_hash(files: Sequence[Path], cache_dir: Path | None, folder: Path | None = None) -> str:
    """One hash over several files, each named by its path (relative to `folder`, where given)
    and its content: a renamed or reordered file is another input too."""
    digest = hashlib.sha256()
    for path in files:
        name = path.relative_to(folder).as_posix() if folder is not None else str(path)
        digest.update(f"{name}\0{file_hash(path, cache_dir)}\n".encode())
    return digest.hexdigest()
