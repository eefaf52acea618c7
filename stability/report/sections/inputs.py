"""The page's title and what was read; results.csv, the tidy table of every run read."""
from __future__ import annotations

from stability.report.context import Context
from stability.report.section import Built


def build(context: Context) -> Built:
    """results.csv keeps every run, also under exclude_failed (the verdicts are in failed_runs.csv)."""
    return Built(f"# Fine-tuning stability report\n\nInputs: {context.sources}.\n",
                 {"results.csv": context.all_results})
