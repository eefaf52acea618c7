"""Markdown table cells and tables, one format for report.md, probing.md and dataqa.md."""
from __future__ import annotations

import math


def num(value: float | None, digits: int = 3) -> str:
    """A number with `digits` decimals; NaN or None (a statistic that is undefined) shows as "–"."""
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """"1 run", "2 runs": a count with its noun in the number it takes (`plural` where not noun + s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def table(header: list[str], rows: list[list]) -> str:
    """A pipe table; `|` inside a cell is escaped (quoted texts may hold one) so it cannot split the cell."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
