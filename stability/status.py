"""`nli-stability status runs=DIR`: done / running / failed / interrupted / not started,
for each run of the sweep in DIR, with the counts (see `stability.sweep.status`); for an adaptive
sweep first its plan, its rounds and the conditions still open (`core.adaptiverecord`), the runs
being those of its latest round."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from omegaconf import DictConfig

from stability.core.adaptiverecord import read_record, summary_lines
from stability.core.command import run_command
from stability.sweep.status import SWEEP_FILE, format_status, sweep_status


def main(argv: Sequence[str] | None = None) -> None:
    """The sweep's training jobs are composed before Hydra starts this command (Hydra composes
    one app's configs at a time), then printed by its job."""
    lines: list[str] = []

    def check(configs: list[DictConfig]) -> None:
        folder = Path(configs[0].runs)
        record = read_record(folder)
        if record is not None:
            lines.extend(summary_lines(record))
            if not (folder / SWEEP_FILE).is_file():   # the plan is written, round 1 not yet started
                return
            lines.append("")
        lines.append(format_status(sweep_status(folder)))

    def task(_: DictConfig) -> None:
        print("\n".join(lines))

    run_command("status", task, argv, check=check)


if __name__ == "__main__":
    main()
