"""A csv or tsv data file checked row by row before `datasets` parses it.

`datasets` reads such a file with pandas, which fills a row with too few fields with missing
values (a row without its last field, SICK's `SemEval_set`, then matches no split and vanishes
without a word) and refuses one with too many in a message about its own generator. Read here
with the `csv` module under pandas' defaults (quote `"`, doubled inside quotes, blank lines
skipped), a row of another width than the header is one line naming the file and line; the
lines of the rows are kept so that later errors about a row name its line too (`rows.RowOrigin`).
"""
from __future__ import annotations

import csv
from pathlib import Path

from stability.core.errors import UserError, open_text

_SEPARATOR_NAMES = {"\t": "tab", ",": "comma", ";": "semicolon"}


def data_lines(path: Path, separator: str) -> list[int]:
    """The line (from 1) on which each data row of `path` starts; a row whose field count is not the
    header's is refused, naming its line. A header of one field is the wrong separator, which the
    columns' check names (`hub`): no lines then."""
    lines: list[int] = []
    with open_text(path, newline="") as handle:
        reader = csv.reader(handle, delimiter=separator)
        width = len(next(reader, None) or ())
        if width < 2:
            return lines
        start = reader.line_num + 1
        for cells in reader:
            if cells and len(cells) != width:
                raise _wrong_width(path, start, len(cells), width, separator, reader.line_num)
            if cells:
                lines.append(start)
            start = reader.line_num + 1
    return lines


def _wrong_width(path: Path, line: int, found: int, expected: int, separator: str, last_line: int) -> UserError:
    name = _SEPARATOR_NAMES.get(separator, repr(separator))
    if last_line > line:  # the row ran on over the next lines: a quote that opens a field and never closes
        cause = f"a quote (\") opens a field on this line and closes only on line {last_line} or never: close it or remove it"
    elif found > expected:
        cause = (f"a {name} inside a field splits it: quote that field (\"...\") or remove the {name}, "
                 "or set delimiter to the file's separator")
    else:
        cause = "a field is missing: give the row every column of the header, empty ones too"
    return UserError(f"{found} {name}-separated fields where the header has {expected}", path=path, line=line,
                     fix=cause)
