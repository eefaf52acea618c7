"""The interval an adaptive sweep's precision goal decides on is the report's for the cell: the
method the calibration chooses at the condition's seeds, its bounds as scipy computes them, and
for `coarse` the widest of the four coarse categories decides."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from report_runs import write_metrics
from scipy import stats

from stability.adaptive.goals import PrecisionGoal
from stability.core.adaptiverecord import OPEN, REACHED
from stability.core.schemas.adaptive import Adaptive
from stability.core.taxonomy import COARSE_CATEGORIES
from stability.report.calibration import mean_bounds
from stability.report.precision import condition_intervals
from stability.statistics.intervals import std_interval_of

SETTINGS = dict(confidence=0.95, sims=200, bootstrap=500, random_state=0)


@pytest.fixture
def six_seeds(tmp_path):
    rng = np.random.default_rng(3)
    return [write_metrics(tmp_path, "fr", "rte", seed, list(rng.normal(0.3, 0.1, 33)), float(rng.normal(0.3, 0.05)),
                          coarse_mcc={name: float(rng.normal(0.2, 0.1)) for name in COARSE_CATEGORIES})
            for seed in range(6)]


def _scores(folders, level: str) -> dict[str, np.ndarray]:
    records = [pd.read_json(folder / "metrics.json", typ="series") for folder in folders]
    if level == "all":
        return {"overall": np.array([record["overall_mcc"] for record in records])}
    return {name: np.array([record["coarse_mcc"][name] for record in records]) for name in COARSE_CATEGORIES}


def _t(scores: np.ndarray) -> tuple[float, float]:
    return stats.t.interval(0.95, len(scores) - 1, loc=scores.mean(), scale=stats.sem(scores))


@pytest.mark.parametrize("statistic, level", [("overall", "all"), ("coarse", "coarse")])
def test_a_mean_cells_interval_is_the_t_interval_the_calibration_chooses(six_seeds, statistic, level):
    table = condition_intervals(six_seeds, statistic, **SETTINGS)
    scores = _scores(six_seeds, level)
    assert sorted(table["category"]) == sorted(scores) and (table["n_seeds"] == 6).all()
    for row in table.itertuples():
        assert row.method == "t" and row.coverage >= 0.9
        assert (row.low, row.high) == pytest.approx(_t(scores[row.category]), rel=1e-12)
        assert row.estimate == pytest.approx(scores[row.category].mean()) and row.width == row.high - row.low


def test_sigmas_interval_is_the_chosen_methods(six_seeds):
    (row,) = condition_intervals(six_seeds, "sigma", **SETTINGS).itertuples()
    overall = _scores(six_seeds, "all")["overall"]
    assert row.estimate == pytest.approx(np.std(overall, ddof=1))
    assert row.method in ("chi2", "bonett")
    assert (row.low, row.high) == pytest.approx(std_interval_of(overall, row.method, 0.95), rel=1e-12)


def test_the_widest_coarse_category_decides(six_seeds):
    widths = {name: _t(scores)[1] - _t(scores)[0] for name, scores in _scores(six_seeds, "coarse").items()}
    widest = max(widths.values())
    for target, state in ((widest * 1.01, REACHED), (widest * 0.99, OPEN)):
        goal = PrecisionGoal(Adaptive(goal="precision", statistic="coarse", target=target, calibration_sims=200,
                                      bootstrap=500))
        decision = goal.decide(1, {"fr/rte": six_seeds})["fr/rte"]
        assert decision["state"] == state and decision["width"] == pytest.approx(widest, rel=1e-12)
        assert decision["n_seeds"] == 6 and len(decision["cells"]) == 4


def test_no_usable_method_gives_no_interval():
    """A cell the calibration marks unusable ("too few seeds") has no bounds; a usable t cell has t's."""
    chosen = pd.Series({"method": "t", "usable": False, "coverage": 0.8})
    assert np.isnan(mean_bounds(chosen, True, np.array([0.1, 0.2, 0.4]), bootstrap=100, confidence=0.95,
                                random_state=0)).all()
    usable = chosen.copy()
    usable["usable"] = True
    assert mean_bounds(usable, True, np.array([0.1, 0.2, 0.4]), bootstrap=100, confidence=0.95,
                       random_state=0) == pytest.approx(_t(np.array([0.1, 0.2, 0.4])))
