"""The sweep's text tables: a Hydra callback prints the results table when a multirun ends."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from stability.core.runrecord import RunRecord, iter_runs


def text_table(rows: list[list[str]]) -> str:
    """Left-aligned text columns, right-aligned numbers; the first row is the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    numeric = [all(row[i][:1].isdigit() or not row[i] for row in rows[1:]) for i in range(len(widths))]
    lines = ["  ".join(cell.rjust(w) if num else cell.ljust(w) for cell, w, num in zip(row, widths, numeric))
             .rstrip() for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def format_table(rows: list[RunRecord]) -> str:
    """Seed, validation accuracy, overall MCC and mean category MCC, one line per run; a
    `variant` column when some run has one (what the sweep changed beyond lang, setup and seed),
    and `<set> acc` / `<set> MCC` for each extra evaluation set some run was scored on."""
    width = max((len(m.variant) for m in rows), default=0)
    variant_width = max(width, len("variant")) if width else 0

    def variant(text: str) -> str:
        return f" {text:<{variant_width}}" if variant_width else ""

    extra = sorted({name for m in rows for name in m.extra_eval})
    headings = [heading for name in extra for heading in (f"{name} acc", f"{name} MCC")]

    def scores(m: RunRecord) -> str:
        cells = [f"{m.extra_eval[name][key]:.4f}" if name in m.extra_eval else "–"
                 for name in extra for key in ("accuracy", "mcc")]
        return "".join(f" {cell:>{len(heading)}}" for cell, heading in zip(cells, headings))

    header = (f"{'lang':<5} {'setup':<28}{variant('variant')} {'seed':>4} {'val acc':>8} {'overall MCC':>12} "
              f"{'mean cat MCC':>13}" + "".join(f" {heading}" for heading in headings))
    lines = [header, "-" * len(header)]
    for m in sorted(rows, key=lambda m: (m.lang, m.setup, m.variant, m.seed)):
        lines.append(f"{m.lang:<5} {m.setup:<28}{variant(m.variant)} {m.seed:>4} {m.val_accuracy:>8.4f} "
                     f"{m.overall_mcc:>12.4f} {m.mean_category_mcc:>13.4f}" + scores(m))
    return "\n".join(lines)


class SweepTable(Callback):
    """Reads the record of every finished run under the sweep directory once all jobs have returned."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        rows = [run.read_record(require=("val_accuracy", "overall_mcc", "mean_category_mcc"))
                for run in iter_runs(sweep_dir)]
        if rows:
            print(f"\nResults in {sweep_dir} ({len(rows)} runs):\n{format_table(rows)}")
