"""Where each row of a split read through `datasets` came from, for the one-line errors about a row.

A delimited text file (csv, tsv) is read twice: once by `delimited.data_lines`, which knows each
row's line in its file, once by `datasets`; where both read the same rows, an error names the
file and line, as the released formats' readers do. Any other source (json files, a Hub split, a
`save_to_disk` folder) names the row by its number from 1 in the split read.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from stability.core.errors import UserError


@dataclass(frozen=True)
class RowOrigin:
    """Row i's file is `files[file_of[i]]` and its line `lines[i]`; no files: none known."""

    files: tuple[Path, ...] = ()
    file_of: Sequence[int] = ()
    lines: Sequence[int] = ()

    def select(self, rows: Sequence[int]) -> RowOrigin:
        """The origin of the rows at positions `rows` of this one, in that order."""
        if not self.files:
            return self
        return RowOrigin(self.files, [self.file_of[row] for row in rows], [self.lines[row] for row in rows])

    def error(self, row: int, problem: str, fix: str) -> UserError:
        """`problem` of the row at position `row` (from 0), named by its file and line, else by its number."""
        if self.files:
            return UserError(problem, path=self.files[self.file_of[row]], line=self.lines[row], fix=fix)
        return UserError(f"{problem} in row {row + 1}", fix=fix)

    def named_from(self, row: int, other: int) -> str:
        """The row at `row` as the message about the row at `other` names it: `line 3`, `/d/b.csv:3`, `row 3`."""
        if not self.files:
            return f"row {row + 1}"
        if self.file_of[row] == self.file_of[other]:
            return f"line {self.lines[row]}"
        return f"{self.files[self.file_of[row]]}:{self.lines[row]}"
