"""A Hydra callback that prints the sweep's results table when a multirun ends."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from stability.rundir import METRICS_FILE


def format_table(rows: list[dict]) -> str:
    """Seed, validation accuracy, overall MCC and mean category MCC, one line per run."""
    header = f"{'lang':<5} {'setup':<28} {'seed':>4} {'val acc':>8} {'overall MCC':>12} {'mean cat MCC':>13}"
    lines = [header, "-" * len(header)]
    for m in sorted(rows, key=lambda m: (m["lang"], m["setup"], m["seed"])):
        lines.append(f"{m['lang']:<5} {m['setup']:<28} {m['seed']:>4} {m['val_accuracy']:>8.4f} "
                     f"{m['overall_mcc']:>12.4f} {m['mean_category_mcc']:>13.4f}")
    return "\n".join(lines)


class SweepTable(Callback):
    """Reads every metrics.json under the sweep directory once all jobs have returned."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        rows = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(sweep_dir.rglob(METRICS_FILE))]
        if rows:
            print(f"\nResults in {sweep_dir} ({len(rows)} runs):\n{format_table(rows)}")
