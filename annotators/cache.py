"""On-disk annotation cache keyed by content: sha256(annotator fingerprint, sentence text).

Keys hash the text itself, not file names or positions, so a file read again, a copy of
it, or a pool sharing sentences with an annotated file is never annotated twice; the
fingerprint covers the rule code, word lists and analyser version, so editing any of them
invalidates old entries. SQLite keeps concurrent training runs safe.
"""
from __future__ import annotations

import hashlib
import sqlite3
import warnings
from pathlib import Path
from typing import Iterable

from annotators.features import ordered

_SEPARATOR = "|"
_CHUNK = 500  # SQLite variables per query


class AnnotationCache:
    def __init__(self, directory: Path, fingerprint: str) -> None:
        self.fingerprint = fingerprint
        self.path = directory / "annotations.sqlite"
        self._conn: sqlite3.Connection | None = None
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, timeout=60)
            self._conn.execute("CREATE TABLE IF NOT EXISTS sentences (key TEXT PRIMARY KEY, features TEXT NOT NULL)")
        except (OSError, sqlite3.Error) as err:
            warnings.warn(f"annotation cache disabled ({self.path}: {err})", stacklevel=2)
            self._conn = None

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.fingerprint}\0{text}".encode()).hexdigest()

    def get_many(self, texts: Iterable[str]) -> dict[str, frozenset[str]]:
        if self._conn is None:
            return {}
        by_key = {self.key(text): text for text in texts}
        keys = list(by_key)
        found: dict[str, frozenset[str]] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start:start + _CHUNK]
            rows = self._conn.execute(
                f"SELECT key, features FROM sentences WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            for key, features in rows:
                found[by_key[key]] = frozenset(features.split(_SEPARATOR)) - {""}
        return found

    def put_many(self, annotations: dict[str, frozenset[str]]) -> None:
        if self._conn is None or not annotations:
            return
        rows = [(self.key(text), _SEPARATOR.join(ordered(features))) for text, features in annotations.items()]
        with self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO sentences VALUES (?, ?)", rows)
