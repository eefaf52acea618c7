"""The settings of an adaptive training sweep (`nli-stability train adaptive=precision ...`).

They are composed apart from the runs' own config (`conf/adaptive_sweep.yaml`, group `adaptive`),
so an adaptive sweep's runs have exactly the config, fingerprint and folder of an ordinary sweep's
and each is found, not retrained, by either. The calibration keys default to the report's own
(`ReportSchema`), so the interval a round decides on is the one `nli-stability report` prints.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.errors import UserError
from stability.core.schemas.checks import EXAMPLE, above, at_least, one_of, seed, within
from stability.core.schemas.report import CALIBRATION_SIMS_MAX, ReportSchema

PRECISION, DECISION = "precision", "decision"
GOALS = (PRECISION, DECISION)
# the statistic whose interval the precision goal narrows: the overall MCC's mean, every coarse
# category's mean MCC (the widest decides), or σ of the overall MCC over seeds
STATISTICS = ("overall", "coarse", "sigma")
COMPARED = ("overall", "coarse")   # the statistics the decision goal compares: means, by Welch's t
# The most seeds an adaptive sweep gives a condition: a study's 3-10, ten times over. The decision
# goal's boundaries are computed before round 1, a look per round (100 looks: about 2 s); more seeds
# than this are a fixed sweep's (`seed=0..N`).
MAX_SEEDS = 100
# The calibration's simulated studies per world: the interval a round decides on is the one whose
# coverage in them reaches the floor, measured to ±3 percentage points at 100 (at 90 %); one study
# cannot tell. At most the report's own bound.
CALIBRATION_SIMS = (100, CALIBRATION_SIMS_MAX)
_REPORT = {field.name: field.default for field in fields(ReportSchema)}


@dataclass
class Adaptive:
    """The plan: seeds to start with, seeds added a round, the most seeds, and the goal."""

    goal: str = MISSING
    start: int = 3
    step: int = 1
    max: int = 10
    statistic: str = "overall"
    target: float = 0.1
    confidence: float = _REPORT["confidence"]
    calibration_sims: int = _REPORT["calibration_sims"]
    bootstrap: int = _REPORT["bootstrap"]
    random_state: int = _REPORT["random_state"]
    # the decision goal: the two conditions compared per language (the report's `compare` dialect:
    # setup or setup/variant), the design's two-sided level and its alpha-spending function
    compare: Optional[List[str]] = field(default=None, metadata={EXAMPLE: "[rte,rte/lr3e-05]"})
    alpha: float = 0.05
    spending: str = "obrien-fleming"

    def __post_init__(self) -> None:
        one_of("adaptive.goal", self.goal, GOALS)
        why = f"an adaptive sweep gives a condition at most {MAX_SEEDS} seeds (more: a fixed sweep, seed=0..N)"
        within("adaptive.start", self.start, 2, MAX_SEEDS, closed_high=True,   # no interval from one seed
               why=why if self.start > MAX_SEEDS else "")
        at_least("adaptive.step", self.step, 1)
        if self.max < self.start:
            raise UserError(f"adaptive.max={self.max} is below adaptive.start={self.start}",
                            fix=f"pass adaptive.max=<an integer >= {self.start}>")
        within("adaptive.max", self.max, self.start, MAX_SEEDS, closed_high=True, why=why)
        one_of("adaptive.statistic", self.statistic, STATISTICS)
        above("adaptive.target", self.target, 0)
        within("adaptive.confidence", self.confidence, 0, 1, open_low=True)
        within("adaptive.calibration_sims", self.calibration_sims, *CALIBRATION_SIMS, closed_high=True)
        at_least("adaptive.bootstrap", self.bootstrap, 0)
        seed("adaptive.random_state", self.random_state)
        within("adaptive.alpha", self.alpha, 0, 1, open_low=True)
        if self.goal == DECISION:
            self._check_decision()

    def _check_decision(self) -> None:
        if self.compare is None or len(self.compare) != 2 or self.compare[0] == self.compare[1]:
            raise UserError(f"adaptive.compare={self.compare}: the decision goal compares two conditions",
                            fix="pass adaptive.compare=[A,B], two setups or setup/variants of the sweep, "
                                "e.g. adaptive.compare=[rte,rte/lr3e-05]")
        if self.statistic not in COMPARED:
            raise UserError(f"adaptive.statistic={self.statistic}: the decision goal compares means of MCC",
                            fix=f"use one of: {', '.join(COMPARED)}")


@dataclass
class AdaptiveSweep:
    """conf/adaptive_sweep.yaml: the chosen `adaptive` option with its overrides."""

    adaptive: Adaptive = MISSING


def register(store: ConfigStore) -> None:
    store.store(name="adaptive_schema", node=Adaptive)
    store.store(name="adaptive_sweep_schema", node=AdaptiveSweep)
