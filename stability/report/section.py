"""The one way to add to the report: a *section*.

A section is a function `build(context) -> Built | None` (`Section`). From the shared
`Context` (options, collected runs, shared tables) it computes its tables, draws its
figures into `context.out`, and renders its part of report.md; it returns None when its
inputs are absent (no predictions, no `compare`, ...). `report.cli` writes every section's
tables as CSVs and joins their markdown in the order of `sections.SECTIONS`, so a new section
is one new module under `sections/` and one entry in that list.

Also here: the cell formats the sections share.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from stability.core.markdown import num
from stability.report.context import Context

LISTED = 3   # categories named per list (most/least stable, lowest agreement, least consistent)


@dataclass(frozen=True)
class Built:
    """A section's output: report.md text ("" for none), tables to write (file name → table),
    and the figures it drew."""

    markdown: str = ""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: list[Path] = field(default_factory=list)


Section = Callable[[Context], Built | None]


def pm(mean: float, std: float) -> str:
    """`mean ± σ`, or – when the mean is undefined."""
    if isinstance(mean, float) and math.isnan(mean):
        return "–"
    return f"{num(mean)} ± {num(std)}"


def with_variant(cells: list, variant: str, shown: bool) -> list:
    """`cells` followed by the variant when the report shows variants (`Context.has_variants`),
    so a page without variants has no empty column."""
    return [*cells, variant] if shown else list(cells)


def figure_links(paths: list[Path]) -> str:
    """Markdown images of figures written beside report.md."""
    return "".join(f"![{path.stem}]({path.name})\n\n" for path in paths)
