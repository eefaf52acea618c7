"""The report's Adaptive design section prints, for a precision goal, the coverage of its intervals
under the sweep's own stopping rule: the simulator's value (`precision_coverage` in the normal and
heavy worlds fitted here to the condition's seeds, at the plan's looks 3, 4, 5 written by hand),
the lowest over the worlds; with calibration_sims=0 it says it was not simulated."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from report_runs import write_metrics

from stability.adaptive.goals import PrecisionGoal
from stability.core.adaptiverecord import AdaptiveRecord, Plan, Round, read_record, write_record
from stability.core.schemas.adaptive import Adaptive
from stability.report.calibration import percent
from stability.report.collect import collect
from stability.report.sections import adaptive
from stability.report.stopping import stopping_coverage
from stability.statistics import calibration as sim
from stability.statistics.sequential_calibration import precision_coverage

SCORES = [0.31, 0.24, 0.36, 0.29, 0.33]
TARGET = 0.15


@pytest.fixture
def sweep(tmp_path):
    folder = tmp_path / "sweep"
    runs = [write_metrics(folder, "fr", "rte", seed, [0.3] * 33, score) for seed, score in enumerate(SCORES)]
    goal = PrecisionGoal(Adaptive(goal="precision", start=3, step=1, max=5, target=TARGET))
    cell = [{"category": "overall", "method": "t"}]
    rounds = [Round(1, [0, 1, 2], ["fr/rte"], {"fr/rte": {"state": "open", "n_seeds": 3, "width": 0.3, "cells": cell}}),
              Round(2, [3], ["fr/rte"], {"fr/rte": {"state": "open", "n_seeds": 4, "width": 0.2, "cells": cell}}),
              Round(3, [4], ["fr/rte"], {"fr/rte": {"state": "maximum", "n_seeds": 5, "width": 0.16, "cells": cell}})]
    record = AdaptiveRecord(Plan(3, 1, 5, goal.settings(), ["fr/rte"], ["lang=fr"]), rounds)
    write_record(folder, record)
    return folder, record, collect(runs)


def _context(folder, collected, sims: int) -> SimpleNamespace:
    return SimpleNamespace(paths=[folder], options=SimpleNamespace(calibration_sims=sims, random_state=0),
                           all_results=collected.results, failed=pd.DataFrame(), collected=collected,
                           adaptive_records=[(folder, read_record(folder))])


def test_the_printed_coverage_is_the_simulators_under_the_plans_rule(sweep):
    folder, record, collected = sweep
    results = collected.results
    rng = np.random.default_rng(0)
    fitted = sim.fit(np.array([SCORES]), np.zeros((1, 5), bool))
    expected = min(precision_coverage(world, fitted, [3, 4, 5], TARGET, statistic="mean", method="t",
                                      confidence=0.95, sims=400, rng=rng, groups=np.zeros(1)).covered.mean()
                   for world in ("normal", "heavy"))   # no run failed: no failed world
    measured = stopping_coverage(record, results, pd.DataFrame(), sims=400, random_state=0)["fr/rte"]
    assert measured.coverage == pytest.approx(expected, abs=1e-12) and measured.method == "t"
    assert 0.5 < expected < 1   # a real simulation, not a constant
    page = adaptive.build(_context(folder, collected, 400)).markdown
    assert "Their coverage under this stopping rule is simulated (400 sweeps per world" in page
    assert f"| fr/rte | 5 | maximum | 0.160 | {percent(expected)} (t, {measured.world} world) |" in page


def test_without_calibration_the_section_says_coverage_was_not_simulated(sweep):
    folder, _, collected = sweep
    page = adaptive.build(_context(folder, collected, 0)).markdown
    assert "not simulated (calibration_sims=0)" in page and "coverage under the stopping rule |" not in page
