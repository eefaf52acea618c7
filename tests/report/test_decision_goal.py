"""The decision goal of an adaptive sweep on hand-written run scores: its z is scipy's Welch t of
B − A turned into the normal z with the same two-sided p-value, a clear difference rejects at the
first look, equal arms go on to the last look and are accepted there, the boundaries are the plan's,
conditions it cannot compare are refused before anything runs, and the report's Adaptive design
section names the looks taken and the boundaries used."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from report_runs import write_metrics
from scipy import stats

from stability.adaptive.command import parse
from stability.adaptive.goals import DecisionGoal
from stability.core.adaptiverecord import OPEN, AdaptiveRecord, Plan, Round
from stability.core.errors import UserError
from stability.core.schemas.adaptive import Adaptive
from stability.core.taxonomy import COARSE_CATEGORIES
from stability.report.collect import collect
from stability.report.sections import adaptive
from stability.statistics.sequential import ACCEPT, REJECT, boundaries

A, B = "fr/rte", "fr/rte+mnli10000"
COMPARE = ["rte", "rte+mnli10000"]
# looks at 3, 4 and 5 seeds per arm
PLAN = dict(goal="decision", compare=COMPARE, start=3, step=1, max=5)


def _runs(root, setup: str, overall: list[float], coarse: list[dict[str, float]] | None = None):
    return [write_metrics(root, "fr", setup, seed, [0.3] * 33, value, coarse_mcc=coarse[seed] if coarse else None)
            for seed, value in enumerate(overall)]


def _welch_z(a, b) -> float:
    test = stats.ttest_ind(b, a, equal_var=False)
    return float(np.sign(test.statistic) * stats.norm.isf(test.pvalue / 2))


def test_z_is_welchs_t_as_a_normal_z_and_a_clear_difference_rejects_at_the_first_look(tmp_path):
    a, b = [0.30, 0.32, 0.29], [0.61, 0.60, 0.63]
    goal = DecisionGoal(Adaptive(**PLAN))
    decisions = goal.decide(1, {A: _runs(tmp_path, "rte", a), B: _runs(tmp_path, "rte+mnli10000", b)})
    assert decisions[A]["against"] == B and decisions[B]["against"] == A
    for decision in decisions.values():
        (cell,) = decision["cells"]
        assert cell["z"] == pytest.approx(_welch_z(a, b), rel=1e-9) and cell["z"] > decision["bound"]
        assert decision["state"] == REJECT and cell["rejected_at_look"] == 1
        assert decision["bound"] == pytest.approx(boundaries([0.6, 0.8, 1.0])[0]) and decision["n_seeds"] == 3


def test_equal_arms_continue_to_the_last_look_and_are_accepted(tmp_path):
    a, b = [0.30, 0.35, 0.28, 0.33, 0.31], [0.31, 0.29, 0.34, 0.30, 0.33]
    goal = DecisionGoal(Adaptive(**PLAN))
    states = []
    for number, seeds in enumerate(goal.looks, start=1):
        runs = {A: _runs(tmp_path / str(number), "rte", a[:seeds]),
                B: _runs(tmp_path / str(number), "rte+mnli10000", b[:seeds])}
        decision = goal.decide(number, runs)[B]
        assert decision["cells"][0]["z"] == pytest.approx(_welch_z(a[:seeds], b[:seeds]), rel=1e-9)
        assert decision["look"] == number and decision["n_seeds"] == seeds
        states.append(decision["state"])
    assert states == [OPEN, OPEN, ACCEPT]


def test_each_coarse_category_is_a_test_and_the_pair_stays_open_while_one_is_undecided(tmp_path):
    """The first coarse category differs clearly, the others not: it rejects at look 1 and stays
    rejected; the pair closes at the last look."""
    rng = np.random.default_rng(5)
    first, *others = COARSE_CATEGORIES

    def coarse(shift: float) -> list[dict[str, float]]:
        return [{first: 0.2 + shift + 0.01 * seed, **{name: float(rng.normal(0.3, 0.05)) for name in others}}
                for seed in range(5)]

    arms = {A: coarse(0.0), B: coarse(0.5)}
    goal = DecisionGoal(Adaptive(**PLAN, statistic="coarse"))
    for number, seeds in enumerate(goal.looks, start=1):
        runs = {A: _runs(tmp_path / str(number), "rte", [0.3] * seeds, arms[A]),
                B: _runs(tmp_path / str(number), "rte+mnli10000", [0.3] * seeds, arms[B])}
        decision = goal.decide(number, runs)[A]
        cells = {cell["category"]: cell for cell in decision["cells"]}
        assert sorted(cells) == sorted(COARSE_CATEGORIES)
        assert cells[first]["decision"] == REJECT and cells[first]["rejected_at_look"] == 1
        undecided = [name for name in others if cells[name]["decision"] != REJECT]
        assert undecided   # the noise of the others does not cross an O'Brien–Fleming bound
    assert decision["state"] == REJECT and {cells[name]["decision"] for name in undecided} == {ACCEPT}


def test_the_plan_records_the_looks_and_the_chosen_spendings_boundaries():
    settings = DecisionGoal(Adaptive(**{**PLAN, "max": 9, "step": 2}, spending="pocock", alpha=0.1)).settings()
    assert settings["looks"] == [3, 5, 7, 9]
    assert settings["bounds"] == pytest.approx(boundaries(np.array([3, 5, 7, 9]) / 9, 0.1, "pocock"))
    assert (settings["spending"], settings["alpha"], settings["compare"]) == ("pocock", 0.1, COMPARE)


@pytest.mark.parametrize("conditions, fragment", [
    ([A, B, "fr/rte/lr0.002"], "fr/rte/lr0.002 is neither of adaptive.compare"),
    ([A, B, "en/rte"], "in en the sweep has only one of adaptive.compare"),
])
def test_conditions_the_goal_cannot_compare_are_refused(conditions, fragment):
    with pytest.raises(UserError, match=fragment):
        DecisionGoal(Adaptive(**PLAN)).refuse(conditions)


@pytest.mark.parametrize("changes, fragment", [
    ({"compare": None}, "the decision goal compares two conditions"),
    ({"compare": ["rte", "rte"]}, "the decision goal compares two conditions"),
    ({"statistic": "sigma"}, "adaptive.statistic=sigma: the decision goal compares means"),
    ({"alpha": 1.0}, "adaptive.alpha=1.0 is out of range"),
])
def test_wrong_decision_settings_are_one_line(changes, fragment):
    with pytest.raises(UserError, match="fix: ") as refused:
        Adaptive(**{**PLAN, **changes})
    assert fragment in str(refused.value)


def test_an_unknown_spending_is_one_line():
    with pytest.raises(UserError, match="adaptive.spending='linear' is not known"):
        DecisionGoal(Adaptive(**PLAN, spending="linear"))


def test_adaptive_decision_on_the_command_line_needs_its_comparison():
    with pytest.raises(UserError, match="adaptive.compare=None: the decision goal compares two conditions"):
        parse(["experiment=smoke", "adaptive=decision"])
    command = parse(["experiment=smoke", "lang=en,fr", "trainer.learning_rate=1e-3,2e-3", "adaptive=decision",
                     "adaptive.compare=[rte,rte/lr0.002]"])
    assert (command.settings.compare, command.settings.spending) == (["rte", "rte/lr0.002"], "obrien-fleming")
    DecisionGoal(command.settings).refuse(sorted(command.conditions))   # both arms in both languages


def test_the_reports_adaptive_design_names_the_looks_taken_and_the_boundaries(tmp_path):
    goal = DecisionGoal(Adaptive(**PLAN))
    runs = {A: _runs(tmp_path / "runs", "rte", [0.30, 0.32, 0.29]),
            B: _runs(tmp_path / "runs", "rte+mnli10000", [0.61, 0.60, 0.63])}
    plan = Plan(3, 1, 5, goal.settings(), [A, B], ["setup=rte,rte+mnli10000"])
    record = AdaptiveRecord(plan, [Round(1, [0, 1, 2], [A, B], goal.decide(1, runs))])
    page = adaptive.build(SimpleNamespace(paths=[tmp_path], adaptive_records=[(tmp_path, record)],
                                          collected=collect([tmp_path / "runs"]), calibration=None)).markdown
    first, second, third = boundaries([0.6, 0.8, 1.0])
    assert f"Boundaries |z| per look (seeds per arm: bound): 3: {first:.2f}, 4: {second:.2f}, 5: {third:.2f}." in page
    assert "O'Brien–Fleming alpha spending (Lan–DeMets, two-sided α = 0.05)" in page
    assert "1 of 3 looks taken" in page
    assert "goal decision: compare [rte, rte+mnli10000], statistic overall, alpha 0.05" in page
    z = _welch_z([0.30, 0.32, 0.29], [0.61, 0.60, 0.63])
    # the last look named by its seeds per arm (3: the first look), not by its number
    assert "| last look (seeds per arm) |" in page
    assert f"| {A} | {B} | 3 | reject | 3 | {first:.2f} | overall {z:.2f} (reject) |" in page
