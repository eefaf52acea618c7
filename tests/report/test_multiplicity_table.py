"""docs/reading-the-report.md's one table of multiple-comparison corrections ("Which correction, where")
names columns the page documents for the report's files, each with the correction its name says
(`multiplicity.ADJUSTMENTS`: p_holm Holm, p_bh Benjamini–Hochberg; *_holm Holm)."""
from __future__ import annotations

import re
from pathlib import Path

from stability.statistics.multiplicity import ADJUSTMENTS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reading-the-report.md"
# what the table calls each statsmodels method
NAMES = {"holm": "Holm", "fdr_bh": "Benjamini–Hochberg"}


def _rows() -> list[list[str]]:
    section = PAGE.read_text(encoding="utf-8").split("**Which correction, where.**", 1)[1].split("\n\n| ", 1)[1]
    table = ("| " + section).split("\n\n", 1)[0]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]


def test_every_named_column_is_a_documented_column_and_its_correction_is_named():
    # every column the page lists for a file: its backticked comma lists (`lang, setup, ...`)
    documented = {name.strip() for listed in re.findall(r"`([a-z_0-9]+(?:,\s+[a-z_0-9<>]+)+)`", PAGE.read_text(
        encoding="utf-8")) for name in listed.split(",")}
    rows = _rows()
    assert len(rows) == 5
    for _, _, correction, columns in rows:
        for column in re.findall(r"`(\w+)`", columns):
            assert column in documented, column
            method = ADJUSTMENTS.get(column) or ("holm" if column.endswith("_holm") else None)
            if method is not None:
                assert NAMES[method] in correction, (column, correction)
    assert any("Bonferroni" in correction and "`eps_min`" in columns for _, _, correction, columns in rows)
