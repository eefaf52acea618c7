"""What decides a condition of an adaptive sweep, from its runs so far: the goals.

A goal is any object with `settings()` (what the plan records of it, `goal` its name) and
`decide(number, runs)`: given the round's number (its *look*) and, per condition that ran in it,
its finished run folders (every seed so far), one decision per condition, a dict whose `state` is
`OPEN` (more seeds) or a closing state, with the goal's detail beside it. The sweep closes a
condition still open at the plan's maximum (`MAXIMUM`); the goal never sees more seeds than that.
`refuse(conditions)`, before anything is written, raises a UserError where the goal cannot decide
the sweep's conditions.

Two goals (docs/adaptive-sweeps.md): precision decides each condition on its own runs; decision
compares two conditions per language with a group-sequential test, so both arms of a pair always
run and close together.
"""
from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from stability.core.adaptiverecord import OPEN, looks, precision_state
from stability.core.errors import UserError
from stability.core.schemas.adaptive import DECISION, PRECISION, Adaptive
from stability.core.schemas.checks import one_of
from stability.report.compare import Condition
from stability.report.precision import CELLS, condition_intervals, seed_scores
from stability.statistics.seeds import CONDITION_SEPARATOR
from stability.statistics.sequential import (ACCEPT, CONTINUE, REJECT, SPENDING, boundaries, compare_at_looks,
                                             information_fractions)

Decision = dict[str, Any]


class Goal(Protocol):
    def settings(self) -> dict[str, Any]:
        """What the plan records of the goal: its name (`goal`) and settings."""

    def refuse(self, conditions: list[str]) -> None:
        """A UserError where the goal cannot decide these conditions (`lang/setup[/variant]`)."""

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

    def refuse(self, conditions: list[str]) -> None:
        """Every condition can be decided: each on its own runs."""

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


def _bound(value: float) -> float | None:
    """A look that spends nothing has an infinite bound: null in JSON."""
    return float(value) if math.isfinite(value) else None


class DecisionGoal:
    """Per language, B against A of `compare=[A,B]`: the group-sequential Welch test of the
    statistic's cells (`sequential.compare_at_looks`) at looks fixed by the plan, with Lan–DeMets
    boundaries of the plan's α and spending. Both conditions of a pair get more seeds while some cell
    is undecided (`continue`) and close together: `reject` once some cell's |z| reached its boundary
    (a cell that did stays rejected), else `accept` at the last look. The pair differs where any of
    its cells does, so the cells share α: with `coarse` each of the four is tested at α / 4
    (Bonferroni, `cell_alpha`), which keeps the pair's false "differ" rate at most α however the
    categories' MCCs go together (uncorrected, four independent cells at α = 0.05 reach 18.5 %)."""

    def __init__(self, settings: Adaptive) -> None:
        one_of("adaptive.spending", settings.spending, SPENDING)
        self.plan = settings
        self.arms = [str(Condition.parse(text)) for text in settings.compare]
        self.looks = looks(settings.start, settings.step, settings.max)
        self.cells = len(CELLS[settings.statistic][1])
        self.bounds = boundaries(information_fractions(self.looks), settings.alpha / self.cells, settings.spending)

    def settings(self) -> dict[str, Any]:
        # `cell_alpha` only where it differs from alpha: the plans of one-cell sweeps stay as they were
        shared = {"cell_alpha": self.plan.alpha / self.cells} if self.cells > 1 else {}
        return {"goal": DECISION, "compare": list(self.plan.compare), "statistic": self.plan.statistic,
                "alpha": self.plan.alpha, **shared, "spending": self.plan.spending, "looks": self.looks,
                "bounds": [_bound(bound) for bound in self.bounds]}

    def _arm(self, condition: str) -> tuple[str, int | None]:
        """(language, index of its arm in `compare`, None when it is neither)."""
        lang, _, name = condition.partition(CONDITION_SEPARATOR)
        return lang, self.arms.index(name) if name in self.arms else None

    def refuse(self, conditions: list[str]) -> None:
        """Every condition is one arm of `compare`, and every language has both."""
        arms: dict[str, set[int]] = {}
        for condition in conditions:
            lang, arm = self._arm(condition)
            if arm is None:
                raise UserError(f"the sweep's condition {condition} is neither of adaptive.compare={self.arms}",
                                fix="sweep only the two compared conditions, or name two of the sweep's "
                                    f"conditions ({', '.join(sorted(conditions))}) without the language")
            arms.setdefault(lang, set()).add(arm)
        lacking = sorted(lang for lang, have in arms.items() if len(have) < 2)
        if lacking:
            raise UserError(f"in {', '.join(lacking)} the sweep has only one of adaptive.compare={self.arms}",
                            fix="sweep both compared conditions in every language")

    def decide(self, number: int, runs: dict[str, list[Path]]) -> dict[str, Decision]:
        """Both arms of each language's pair from the seeds of both so far (the pair runs together)."""
        pairs: dict[str, list[str | None]] = {}
        for condition in runs:
            lang, arm = self._arm(condition)
            pairs.setdefault(lang, [None, None])[arm] = condition
        decisions = {}
        for lang, (first, second) in pairs.items():
            if first is None or second is None:
                raise ValueError(f"round {number} ran one arm of {lang}'s comparison; both run until it is decided")
            decision = self._decision(number, seed_scores(runs[first], self.plan.statistic),
                                      seed_scores(runs[second], self.plan.statistic))
            decisions[first] = {**decision, "against": second}
            decisions[second] = {**decision, "against": first}
        return decisions

    def _decision(self, number: int, first: dict[str, np.ndarray], second: dict[str, np.ndarray]) -> Decision:
        """The look `number` of one pair: per cell both arms have, z (B − A), the boundary and its state."""
        categories = sorted(set(first) & set(second))
        n_seeds = min(len(scores) for scores in (*first.values(), *second.values()))
        looked = compare_at_looks(np.stack([first[name][:n_seeds] for name in categories]),
                                  np.stack([second[name][:n_seeds] for name in categories]), self.looks, self.bounds)
        if looked.z.shape[-1] != number:
            raise ValueError(f"round {number} has {n_seeds} seeds per arm, its look is {self.looks[number - 1]}")
        states = [str(state) for state in looked.decision]
        state = OPEN if CONTINUE in states else REJECT if REJECT in states else ACCEPT
        return {
            "state": state, "n_seeds": n_seeds, "look": number, "bound": _bound(self.bounds[number - 1]),
            "cells": [{"category": category, "z": _number(float(looked.z[row, -1])), "decision": states[row],
                       "rejected_at_look": int(looked.stopped_at[row]) + 1 if states[row] == REJECT else None}
                      for row, category in enumerate(categories)],
        }


GOALS = {PRECISION: PrecisionGoal, DECISION: DecisionGoal}


def goal_of(settings: Adaptive) -> Goal:
    return GOALS[settings.goal](settings)
