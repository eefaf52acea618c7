"""flagged.jsonl, the data-QA findings per item: written by `stability.dataqa`, read by the report.

One line per finding. `check` names the test that fired: `line` (language identification
of the whole text), `word` (English words in Cyrillic-script text, letters outside the
alphabet in Latin-script text), `same_text` (premise == hypothesis), `duplicate` /
`near_duplicate` (within a file), `leak` (the pair also occurs in a file of another role,
e.g. a train item in the diagnostic file), `repeated_idx` (the idx of an earlier item of the
file: the readers refuse such a file, data QA reads it to report it). `role` is the file's
part: train, validation, test, diagnostic (or `other`). The findings that make an item's
translation suspect (`TRANSLATION_CHECKS`: the two language checks, and premise ==
hypothesis, which in a diagnostic set means the translation erased the contrast the item
tests) are what the report joins with cross-lingual consistency.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from stability.core.atomic import atomic_write_jsonl
from stability.core.errors import UserError

FLAGGED_FILE = "flagged.jsonl"
TRANSLATION_CHECKS = ("line", "word", "same_text")


@dataclass(frozen=True)
class Flag:
    """One finding about one text (field premise / hypothesis) or pair (field pair) of a file."""

    file: str
    lang: str
    role: str
    idx: str
    field: str
    check: str
    reason: str
    text: str
    detected: str | None = None
    score: float | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def write_flags(path: Path, flags: Iterable[Flag]) -> None:
    atomic_write_jsonl(path, (flag.to_json() for flag in flags))


def read_flags(path: Path) -> list[Flag]:
    """Every finding of a flagged.jsonl; a malformed line is a user error naming it."""
    if not path.is_file():
        raise UserError(f"no {FLAGGED_FILE} here", path=path.parent,
                        fix="pass the out folder of `nli-stability dataqa`")
    names = {f.name for f in dataclasses.fields(Flag)}
    flags = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            flags.append(Flag(**{key: value for key, value in row.items() if key in names}))
        except (json.JSONDecodeError, TypeError, AttributeError) as err:
            raise UserError(f"malformed finding ({err})", path=path, line=line_no,
                            fix="rerun `nli-stability dataqa` to rewrite the file") from None
    return flags
