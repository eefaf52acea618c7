"""The decision goal's false "differ" rate is measured at the sweep's own looks, boundaries and worlds, as
every other test of the report is, and printed: against an outside reference at the default design
(10⁶ simulated studies by independent code: 5.12 % [5.08, 5.16] of normal A/A pairs at 3..10 seeds), and
for `coarse` its four cells share α (Bonferroni), which keeps the pair's rate at most α where four
uncorrected cells reach 18.5 % (1 − 0.95⁴)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from report_runs import write_metrics

from stability.adaptive.goals import DecisionGoal
from stability.core.adaptiverecord import AdaptiveRecord, Plan, write_record
from stability.core.schemas.adaptive import Adaptive
from stability.core.taxonomy import COARSE_CATEGORIES
from stability.report.collect import collect
from stability.report.decision_calibration import DECISION_TEST, decision_calibration, measured_text
from stability.report.sections import adaptive
from stability.statistics.calibration import UNIT
from stability.statistics.rates import wilson_interval
from stability.statistics.sequential import boundaries, information_fractions
from stability.statistics.sequential_calibration import family_false_differ

LOOKS = np.arange(3, 11)          # the goal's default looks: start 3, step 1, max 10
REFERENCE_RATE = 0.0512           # the independent code's 10⁶ normal A/A studies at these looks


def _rate(events: np.ndarray) -> tuple[float, float]:
    low, high = wilson_interval(events.sum(), events.size, 0.95)
    return float(low), float(high)


def test_the_default_designs_false_differ_rate_is_the_outside_references():
    rejected = family_false_differ("normal", UNIT, LOOKS, boundaries(information_fractions(LOOKS)), sims=40_000,
                                   rng=np.random.default_rng(1))
    low, high = _rate(rejected)
    assert low <= REFERENCE_RATE <= high


def test_four_cells_at_alpha_each_are_a_family_above_alpha_and_bonferroni_holds_it():
    four = UNIT.rows(np.zeros(4, int))
    uncorrected = family_false_differ("normal", four, LOOKS, boundaries(information_fractions(LOOKS)), sims=4_000,
                                      rng=np.random.default_rng(2)).any(axis=0)
    low, high = _rate(uncorrected)
    assert low <= 1 - (1 - REFERENCE_RATE) ** 4 <= high          # independent cells: 18.9 %
    goal = DecisionGoal(Adaptive(goal="decision", compare=["rte", "rte/x"], statistic="coarse"))
    assert goal.settings()["cell_alpha"] == 0.0125
    assert goal.bounds == pytest.approx(boundaries(information_fractions(LOOKS), 0.0125))
    shared = family_false_differ("normal", four, LOOKS, goal.bounds, sims=4_000, rng=np.random.default_rng(3))
    assert _rate(shared.any(axis=0))[0] <= 0.05 and "cell_alpha" not in DecisionGoal(
        Adaptive(goal="decision", compare=["rte", "rte/x"])).settings()   # one cell: the plan as it was


def _record(statistic: str) -> AdaptiveRecord:
    goal = DecisionGoal(Adaptive(goal="decision", compare=["rte", "rte+mnli16"], statistic=statistic, max=6))
    return AdaptiveRecord(Plan(3, 1, 6, goal.settings(), ["fr/rte", "fr/rte+mnli16"], []), [])


def test_the_report_measures_and_prints_the_pairs_rate_at_its_design(tmp_path):
    """Reference arm fr/rte with six runs, one failed (every category at chance): every world is fitted,
    the failed one too, each run failing in all four coarse cells at once."""
    rng = np.random.default_rng(4)
    folders = [write_metrics(tmp_path, "fr", "rte", seed, [0.3] * 33, float(rng.normal(0.3, 0.05)),
                             coarse_mcc={name: float(rng.normal(0.3, 0.05)) for name in COARSE_CATEGORIES})
               for seed in range(6)]
    failed = pd.DataFrame({"lang": "fr", "setup": "rte", "variant": "", "seed": range(6),
                           "failed": [True, False, False, False, False, False]})
    record = _record("coarse")
    collected = collect(folders)
    rows = decision_calibration([record], collected.results, failed, sims=500, random_state=0)
    assert set(rows["world"]) == {"normal", "heavy", "failed", "resampling"}
    assert (rows["statistic"] == DECISION_TEST).all() and (rows["method"] == "sequential obrien-fleming").all()
    assert (set(rows["lang"]), set(rows["condition"]), set(rows["reference"])) == ({"fr"}, {"rte+mnli16"}, {"rte"})
    family = rows[rows["level"] == "family"]
    cells = rows[rows["level"] == "coarse"]
    assert len(family) == 4 and len(cells) == 16 and set(cells["category"]) == set(COARSE_CATEGORIES)
    assert (family["nominal"] == 0.05).all() and (cells["nominal"] == 0.0125).all()
    assert (rows["measured"] == rows["hits"] / rows["sims"]).all() and (rows["sims"] == 500).all()
    for world, part in rows.groupby("world"):   # the pair rejects where some cell does: at least each cell's rate
        assert part.loc[part["level"] == "family", "measured"].item() >= part.loc[part["level"] == "coarse",
                                                                                   "measured"].max()
    write_record(tmp_path / "runs", record)
    page = adaptive.build(SimpleNamespace(adaptive_records=[(tmp_path / "runs", record)], collected=collected,
                                          calibration=SimpleNamespace(table=rows))).markdown
    worst = family.set_index("world")["measured"]
    assert "each of its cells was tested at α / 4 = 0.0125 (Bonferroni: " in page
    assert (f"measured in A/A pairs (some cell of the pair rejecting; both arms from rte's world fitted to its runs, "
            f"500 simulated sweeps per world, the highest over the languages): normal {100 * worst['normal']:.0f} %, "
            f"heavy {100 * worst['heavy']:.0f} %, failed {100 * worst['failed']:.0f} %, resampling "
            f"{100 * worst['resampling']:.0f} %, against α = 5 %") in page


def test_without_a_calibration_the_section_says_it_is_not_simulated():
    assert "not simulated (calibration_sims=0)" in measured_text(None, _record("overall"))
