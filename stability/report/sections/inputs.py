"""The page's title and what was read, and from which code; results.csv, the tidy table of every run read."""
from __future__ import annotations

from stability.report.context import Context
from stability.report.provenance import code_sentence, unrecorded_note
from stability.report.section import Built


def build(context: Context) -> Built:
    """results.csv keeps every run, also under exclude_failed (the verdicts are in failed_runs.csv).
    The page says which runs predate input hashes (their inputs went unchecked) and, when the
    pooled runs ran different commits or edited code, which."""
    read = "; ".join(filter(None, [f"Inputs: {context.sources}", unrecorded_note(context.collected.runs)]))
    code = code_sentence(context.all_results)
    return Built(f"# Fine-tuning stability report\n\n{read}.\n" + (f"\n{code}\n" if code else ""),
                 {"results.csv": context.all_results})
