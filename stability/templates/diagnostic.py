"""Generated items as rows of the diagnostic jsonl format (docs/design.md, "Data contract" and "Analysis outputs"):
`idx`, `label`, `sentence1`, `sentence2`, the non-empty coarse fields, `template`, `features`.
"""
from __future__ import annotations

from pathlib import Path

from stability.core.atomic import atomic_write_jsonl
from stability.core.records import LABEL_NAMES, Example
from stability.core.taxonomy import COARSE_FIELDS, COARSE_OF


def diagnostic_row(example: Example) -> dict:
    """One line of a diagnostic file; `stability.data.formats.read_examples` reads it back."""
    row: dict = {"idx": example.idx, "label": LABEL_NAMES[example.label],
                 "sentence1": example.premise, "sentence2": example.hypothesis}
    for field, coarse in COARSE_FIELDS.items():
        names = [name for name in example.categories if COARSE_OF[name] == coarse]
        if names:
            row[field] = ";".join(names)
    row["template"] = example.template
    row["features"] = example.features or {}
    return row


def write_diagnostic_jsonl(examples: list[Example], path: Path) -> None:
    """Write atomically: an interrupted run never leaves half a suite behind."""
    atomic_write_jsonl(path, (diagnostic_row(example) for example in examples))
