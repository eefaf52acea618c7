"""The training dynamics of the runs a report reads (`trainer.dynamics=true`), for the sections
*When each category is learned*, *Data maps* and *Instability atlas*.

Each run that recorded them contributes a `RunDynamics`: its condition and seed, its validations
(train_log.jsonl: epoch, step) and its `Dynamics` matrices. Runs without dynamics contribute
nothing, so a sweep trained without them reports exactly as before. Validations are matched by
their number: one whose file is missing is a gap (`Dynamics.missing`), which `gap_notes` names
and the sections count as not reached, never as the next validation.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stability.core.runrecord import Dynamics, RunDir

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunDynamics:
    """One run's recorded dynamics and where it belongs."""

    lang: str
    setup: str
    variant: str
    seed: int
    source: str
    validations: pd.DataFrame   # one row per validation, in order: epoch, and step when validated by steps
    dynamics: Dynamics


def read_run_dynamics(runs: pd.DataFrame) -> list[RunDynamics]:
    """The dynamics of the runs in `runs` (collect's RUN_COLUMNS: one row per run directory and
    language scored) that recorded them, in the table's order: in the language each trained in, whose
    diagnostic set its dynamics hold (a run's rows in its `eval_langs` languages have none)."""
    found = []
    for run in runs.itertuples(index=False):
        if run.lang != run.train_lang:
            continue
        run_dir = RunDir(Path(run.source))
        dynamics = run_dir.read_dynamics()
        if dynamics is None:
            continue
        validations = pd.DataFrame(run_dir.read_train_log()).head(len(dynamics.pred))
        found.append(RunDynamics(str(run.lang), str(run.setup), str(run.variant), int(run.seed), str(run.source),
                                 validations.reset_index(drop=True), dynamics))
    for note in gap_notes(found):
        log.warning("warning: %s", note)
    return found


def gap_notes(runs: list[RunDynamics]) -> list[str]:
    """One line per run whose dynamics miss validations its train log has, naming them."""
    return [f"{run.source}: no training dynamics of validation {', '.join(map(str, run.dynamics.missing))} "
            f"(file missing): a gap, counted as not reached there" for run in runs if run.dynamics.missing]
