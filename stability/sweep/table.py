"""The sweep's text tables: a Hydra callback prints the results table when a multirun ends."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from stability.core.markdown import counted, num
from stability.core.runrecord import RunRecord, iter_runs

# a cell of a right-aligned column: a number, or missing
_NUMBER = re.compile(r"-?\d|–$|$")


def text_table(rows: list[list[str]]) -> str:
    """Left-aligned text columns, right-aligned numbers (a column whose cells all start with a digit or
    a minus and a digit, or are missing: "–" or empty); the first row is the header. Every column is as
    wide as its widest cell, so every row's columns start where the header's do."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    numeric = [all(_NUMBER.match(row[i]) for row in rows[1:]) for i in range(len(widths))]
    lines = ["  ".join(cell.rjust(w) if num else cell.ljust(w) for cell, w, num in zip(row, widths, numeric))
             .rstrip() for row in rows]
    lines.insert(1, "-" * max(len(line) for line in lines))
    return "\n".join(lines)


def format_table(rows: list[RunRecord]) -> str:
    """Seed, validation accuracy, overall MCC and mean category MCC, one line per run and language it
    was scored in (`data.eval_langs`: a line per language, the training's validation accuracy on each); a
    `variant` column when some run has one (what the sweep changed beyond lang, setup and seed),
    and `<set> acc` / `<set> MCC` for each extra evaluation set some run was scored on."""
    rows = [run.scored_in(code) for run in rows for code in run.languages]
    with_variant = any(m.variant for m in rows)
    extra = sorted({name for m in rows for name in m.extra_eval})
    header = ["lang", "setup", *(["variant"] if with_variant else []), "seed", "val acc", "overall MCC",
              "mean cat MCC", *(f"{name} {score}" for name in extra for score in ("acc", "MCC"))]
    lines = [header]
    for m in sorted(rows, key=lambda m: (m.lang, m.setup, m.variant, m.seed)):
        scores = [num(m.extra_eval[name][key], 4) if name in m.extra_eval else "–"
                  for name in extra for key in ("accuracy", "mcc")]
        lines.append([m.lang, m.setup, *([m.variant] if with_variant else []), str(m.seed),
                      num(m.val_accuracy, 4), num(m.overall_mcc, 4), num(m.mean_category_mcc, 4), *scores])
    return text_table(lines)


class SweepTable(Callback):
    """Reads the record of every finished run under the sweep directory once all jobs have returned."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        rows = [run.read_record(require=("val_accuracy", "overall_mcc", "mean_category_mcc"))
                for run in iter_runs(sweep_dir)]
        if rows:
            print(f"\nResults in {sweep_dir} ({counted(len(rows), 'run')}):\n{format_table(rows)}")
