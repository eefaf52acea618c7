"""What the page shows beyond report.md's text: a `View`, data that the page's script draws."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

# the tables of every section, by file name (what the report writes as CSVs)
Tables = dict[str, pd.DataFrame]


@dataclass(frozen=True)
class View:
    """`kind` names the script's drawing (seeds, languages, data map, atlas); `figure` is the PNG of
    report.md it stands in for ("": none, it goes at its section's end)."""

    kind: str
    data: dict[str, Any]
    figure: str = ""
