"""Plain-text and markdown rendering of feature tables, NaN shown as a word ("unsupported")."""
from __future__ import annotations

import math

import pandas as pd


def _cell(value: object, na: str) -> str:
    if isinstance(value, float):
        return na if math.isnan(value) else f"{value:.3f}"
    return str(value)


def to_markdown(frame: pd.DataFrame, na: str = "unsupported") -> str:
    """A GitHub markdown table of `frame` (index not included)."""
    header = [str(c) for c in frame.columns]
    rows = [[_cell(v, na) for v in row] for row in frame.itertuples(index=False)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def to_text(frame: pd.DataFrame, na: str = "unsupported") -> str:
    """Aligned columns for the terminal."""
    cells = [[str(c) for c in frame.columns]]
    cells += [[_cell(v, na) for v in row] for row in frame.itertuples(index=False)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells) + "\n"
