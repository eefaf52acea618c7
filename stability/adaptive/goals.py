"""What decides a condition of an adaptive sweep, from its runs so far: the goals.

A goal is any object with `settings()` (what the plan records of it, `goal` its name) and
`decide(number, runs)`: given the round's number (its *look*) and, per condition that ran in it,
its finished run folders (every seed so far), one decision per condition, a dict whose `state` is
`OPEN` (more seeds) or a closing state, with the goal's detail beside it. The sweep closes a
condition still open at the plan's maximum (`MAXIMUM`); the goal never sees more seeds than that.

The precision goal is here. A decision goal (a comparison continued while undecided, with
alpha-spending boundaries at looks fixed in advance) would be a second class with the same two
methods, deciding pairs of conditions; none exists yet (docs/adaptive-sweeps.md).
"""
from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from stability.core.adaptiverecord import precision_state
from stability.core.schemas.adaptive import PRECISION, Adaptive
from stability.report.precision import condition_intervals

Decision = dict[str, Any]


class Goal(Protocol):
    def settings(self) -> dict[str, Any]:
        """What the plan records of the goal: its name (`goal`) and settings."""

    def decide(self, number: int, runs: dict[str, list[Path]]) -> dict[str, Decision]:
        """Per condition that ran in round `number`, its decision from its run folders so far."""


def _number(value: float) -> float | None:
    """JSON has no NaN: an undefined width or bound is null."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


class PrecisionGoal:
    """Stop adding seeds to a condition once the report's calibrated interval of the statistic is
    narrower than the target (for `coarse`, every coarse category's is); an interval the calibration
    cannot give ("too few seeds") is as wide as any."""

    def __init__(self, settings: Adaptive) -> None:
        self.plan = settings

    def settings(self) -> dict[str, Any]:
        keys = ("goal", "statistic", "target", "confidence", "calibration_sims", "bootstrap", "random_state")
        return {key: value for key, value in asdict(self.plan).items() if key in keys}

    def decide(self, number: int, runs: dict[str, list[Path]]) -> dict[str, Decision]:
        """Each condition on its own runs: its decision never depends on which others ran with it."""
        return {name: self._decision(folders) for name, folders in runs.items()}

    def _decision(self, folders: list[Path]) -> Decision:
        cells = condition_intervals(folders, self.plan.statistic, confidence=self.plan.confidence,
                                    sims=self.plan.calibration_sims, bootstrap=self.plan.bootstrap,
                                    random_state=self.plan.random_state)
        widths = cells["width"].to_numpy(float)
        widest = float("nan") if np.isnan(widths).any() else float(widths.max())
        return {
            "state": precision_state(widest, self.plan.target),
            "n_seeds": int(cells["n_seeds"].min()),
            "width": _number(widest),
            "cells": [{"category": row.category, "estimate": _number(row.estimate), "low": _number(row.low),
                       "high": _number(row.high), "width": _number(row.width), "method": row.method,
                       "coverage": _number(row.coverage)} for row in cells.itertuples()],
        }


GOALS = {PRECISION: PrecisionGoal}


def goal_of(settings: Adaptive) -> Goal:
    return GOALS[settings.goal](settings)
