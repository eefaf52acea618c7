"""The sweep's text tables: a Hydra callback prints the results table when a multirun ends.

The table lists the runs of the sweep that ended (the training command remembers its jobs' run
folders, `remember_sweep`), not every run its folder holds: a folder extended by several sweeps, or
an adaptive sweep's round, would otherwise list the runs of other commands as this one's. The other
finished runs there are counted in the header."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from stability.core.markdown import counted, num
from stability.core.runrecord import RunDir, RunRecord, iter_runs
from stability.sweep.guard import run_directory

# a cell of a right-aligned column: a number, or missing
_NUMBER = re.compile(r"-?\d|–$|$")
# per sweep folder, the run folders of the sweep this process checked last there
_SWEEP_RUNS: dict[Path, tuple[Path, ...]] = {}


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


def remember_sweep(configs: list[DictConfig]) -> None:
    """Remember the run folders of the sweep of `configs` (checked, about to launch) for its table."""
    if configs:
        _SWEEP_RUNS[Path(str(configs[0].hydra.sweep.dir))] = tuple(run_directory(cfg) for cfg in configs)


class SweepTable(Callback):
    """Reads the record of every finished run of the sweep once all jobs have returned (of every run
    under the sweep directory where this process did not check the sweep)."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        everything = list(iter_runs(sweep_dir))
        folders = _SWEEP_RUNS.get(sweep_dir)
        runs = everything if folders is None else [run for run in map(RunDir, folders) if run.is_finished()]
        rows = [run.read_record(require=("val_accuracy", "overall_mcc", "mean_category_mcc")) for run in runs]
        more = len(everything) - len(rows)
        if rows:
            print(f"\nResults in {sweep_dir} ({counted(len(rows), 'run')}{f'; {more} more in the folder' if more else ''}):"
                  f"\n{format_table(rows)}")
