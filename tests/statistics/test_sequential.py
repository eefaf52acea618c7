"""Group-sequential boundaries (`stability.statistics.sequential`) against published values, the
decision and precision rules on hand-made numbers, and (`sequential_calibration`) their error rates
in simulated seed studies: the sequential boundary holds α where naive repeated testing does not."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from stability.statistics.calibration import UNIT, fit, rows
from stability.statistics.rates import wilson_interval
from stability.statistics.sequential import (ACCEPT, CONTINUE, REJECT, boundaries, compare_at_looks, condition_open,
                                             crossing_probabilities, decision, information_fractions,
                                             interval_bounds, interval_width, spent, stopping_look, welch_z)
from stability.statistics.sequential_calibration import (coverage_at_stop, decision_false_positives, decision_rows,
                                                         precision_coverage, precision_stops, sequential_tests)

THIRDS = [1 / 3, 2 / 3, 1]


# Published values. rpact's own unit tests (rpact-com/rpact, tests/testthat/test-f_design_group_sequential.R,
# 2022: objects x6a, x6b, x7a, x7e, every critical value to 1e-7) and rpact/gsDesign's Lan–DeMets
# O'Brien–Fleming design at 3 equally spaced looks, one-sided α = 0.025
# (`getDesignGroupSequential(kMax = 3, alpha = 0.025, typeOfDesign = "asOF")`,
# `gsDesign(k = 3, test.type = 1, sfu = sfLDOF)`): 3.7103, 2.5114, 1.9930.
@pytest.mark.parametrize("fractions, alpha, spending, sides, published", [
    (THIRDS, 0.025, "obrien-fleming", 1, [3.7103, 2.5114, 1.9930]),
    ([0.4, 0.75, 1], 0.13, "obrien-fleming", 1, [2.1280732, 1.4368565, 1.2468994]),          # rpact x7a
    ([0.4, 0.65, 1], 0.09, "obrien-fleming", 2, [2.9623919, 2.2442359, 1.7391729]),          # rpact x7e
    ([0.35, 0.7, 1], 0.13, "pocock", 1, [1.5446617, 1.4828682, 1.4620058]),                  # rpact x6a
    ([0.4, 0.7], 0.025, "pocock", 1, [2.223875, 2.3050796]),                                 # rpact x6b
])
def test_boundaries_match_published_values(fractions, alpha, spending, sides, published):
    decimals = max(len(f"{value}".split(".")[1]) for value in published)
    assert boundaries(fractions, alpha, spending, sides) == pytest.approx(published, abs=0.6 * 10 ** -decimals)


def test_two_sided_obrien_fleming_at_three_equal_looks_is_the_one_sided_design_at_half_alpha():
    """Two-sided α = 0.05 spends 0.025 a side; a path crossing one side after nearly crossing the other
    is so rare that the bounds equal the one-sided design's to four decimals (3.7103, 2.5114, 1.9930)."""
    assert boundaries(THIRDS, 0.05, "obrien-fleming") == pytest.approx([3.7103, 2.5114, 1.9930], abs=5e-5)


@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock"])
def test_each_look_spends_its_increment_and_the_design_spends_alpha(spending):
    fractions = [0.25, 0.5, 0.8, 1.0]
    bounds = boundaries(fractions, 0.05, spending)
    crossing = crossing_probabilities(bounds, fractions)
    assert crossing == pytest.approx(np.diff(2 * spent(fractions, 0.025, spending), prepend=0), abs=1e-9)
    assert crossing.sum() == pytest.approx(0.05, abs=1e-9)


def test_one_look_is_the_fixed_test_and_the_spending_functions_end_at_alpha():
    assert boundaries([1.0], 0.05)[0] == pytest.approx(stats.norm.isf(0.025), abs=1e-9)
    assert spent([1.0], 0.05, "pocock")[0] == pytest.approx(0.05)
    assert spent([1.0], 0.05, "obrien-fleming")[0] == pytest.approx(0.05)


def test_power_grows_with_the_drift_and_equals_the_fixed_test_at_one_look():
    drift = 2.8   # Φ(2.8 − 1.96) = 0.80 for a single two-sided look at α = 0.05
    fixed = stats.norm.sf(stats.norm.isf(0.025) - drift) + stats.norm.cdf(-stats.norm.isf(0.025) - drift)
    assert crossing_probabilities(boundaries([1.0]), [1.0], drift).sum() == pytest.approx(fixed, abs=1e-9)
    bounds = boundaries(THIRDS)
    powers = [crossing_probabilities(bounds, THIRDS, d).sum() for d in (0.0, 1.5, 2.8)]
    assert powers[0] == pytest.approx(0.05, abs=1e-9) and powers[0] < powers[1] < powers[2] < fixed


def test_bad_designs_are_refused():
    with pytest.raises(ValueError, match="increase"):
        boundaries([0.5, 0.5, 1])
    with pytest.raises(ValueError, match="spending"):
        boundaries(THIRDS, 0.05, "haybittle")
    with pytest.raises(ValueError, match="seed counts"):
        information_fractions([3, 3, 6])


def test_information_fractions_are_seeds_over_the_last_look():
    assert information_fractions([3, 6, 9]) == pytest.approx(THIRDS)


def test_welch_z_has_welchs_p_value_and_sign():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, (50, 4)), rng.normal(0.5, 2, (50, 6))
    test = stats.ttest_ind(b, a, axis=-1, equal_var=False)
    z = welch_z(a, b)
    assert 2 * stats.norm.sf(np.abs(z)) == pytest.approx(test.pvalue, rel=1e-9)
    assert np.array_equal(np.sign(z), np.sign(test.statistic))
    assert np.isnan(welch_z(np.zeros(3), np.zeros(3)))


def test_stopping_look_and_decision():
    bounds = np.array([3.0, 2.5, 2.0])
    z = np.array([[3.2, 0.0, 0.0], [1.0, -2.6, 0.0], [1.0, 1.0, 1.9], [np.nan, 1.0, 2.0]])
    assert stopping_look(z, bounds).tolist() == [0, 1, 3, 2]
    assert stopping_look(z[:, :2], bounds).tolist() == [0, 1, 2, 2]
    assert decision([1.0], bounds) == CONTINUE
    assert decision([1.0, -2.6], bounds) == REJECT
    assert decision([1.0, 1.0, 1.9], bounds) == ACCEPT
    with pytest.raises(ValueError, match="4 looks"):
        decision([0, 0, 0, 0], bounds)


def test_compare_at_looks_decides_each_category_from_the_seeds_both_arms_have():
    looks, bounds = [3, 6, 9], np.array([3.0, 2.5, 2.0])
    rng = np.random.default_rng(3)
    a = rng.normal(0.4, 0.05, (3, 7))
    b = np.stack([a[0] + 1.0, a[1] + rng.normal(0, 0.05, 7), a[2] + 0.06])   # far apart, equal, near
    b = b[:, :6]                                   # B has 6 seeds so far, A 7: looks 3 and 6 are taken
    result = compare_at_looks(a, b, looks, bounds)
    z = np.stack([welch_z(a[:, :k], b[:, :k]) for k in (3, 6)], axis=-1)
    assert result.z == pytest.approx(z)
    expected = [REJECT if (np.abs(row) >= bounds[:2]).any() else CONTINUE for row in z]
    assert result.decision.tolist() == expected
    assert expected[0] == REJECT and result.stopped_at[0] == 0
    assert expected[1] == CONTINUE and result.stopped_at[1] == 2
    waiting = compare_at_looks(a, a[:, ::-1], looks, bounds)
    assert waiting.z.shape == (3, 2)               # 7 seeds a side: the last look is not reached
    full = rng.normal(0.4, 0.05, (1, 9))
    done = compare_at_looks(full, full.copy(), looks, bounds)
    assert done.z == pytest.approx(np.zeros((1, 3))) and done.decision.tolist() == [ACCEPT]
    none = compare_at_looks(a[:, :2], b, looks, bounds)
    assert none.z.shape == (3, 0) and none.decision.tolist() == [CONTINUE] * 3
    assert none.stopped_at.tolist() == [0, 0, 0]


def test_interval_widths_by_hand():
    scores = np.array([0.1, 0.3, 0.5])   # mean 0.3, s = 0.2
    low, high = interval_bounds(scores, "mean", "t")
    half = stats.t.ppf(0.975, 2) * 0.2 / np.sqrt(3)
    assert (low, high) == pytest.approx((0.3 - half, 0.3 + half))
    chi2 = interval_width(scores, "σ", "chi2")
    assert chi2 == pytest.approx(0.2 * np.sqrt(2) * (1 / np.sqrt(stats.chi2.ppf(0.025, 2))
                                                     - 1 / np.sqrt(stats.chi2.ppf(0.975, 2))))
    assert np.isnan(interval_width(scores, "σ", "bonett"))   # Bonett needs 5 seeds
    with pytest.raises(ValueError, match="no interval"):
        interval_width(scores, "mean", "chi2")


def test_a_condition_stays_open_while_a_category_is_wide_or_undefined():
    widths = np.array([[0.1, 0.3], [0.1, 0.2], [0.1, np.nan], [0.5, 0.5]])
    seeds = np.array([4, 4, 4, 10])
    assert condition_open(widths, seeds, target=0.2, max_seeds=10).tolist() == [True, False, True, False]


# The simulator: the same rules in the calibration's worlds (`sequential_calibration`).

LOOKS = (3, 6, 9)   # the study's 6 seeds per arm with an interim look at 3 and a last one at 9
SIMS = 4000         # Monte-Carlo interval of a 5 % rate: about ± 0.7 points


def _rate(events):
    low, high = wilson_interval(events.sum(), events.size, 0.95)
    return float(low), float(high)


def test_naive_repeated_testing_at_the_looks_exceeds_alpha():
    """What the check must be able to catch: a Welch test at α = 0.05 after 3, 6 and 9 seeds per arm,
    stopping at the first p < 0.05, rejects far more than 5 % of A/A studies (about 9.5 %)."""
    tests = decision_false_positives("normal", UNIT, LOOKS, boundaries(information_fractions(LOOKS)), sims=SIMS,
                                     rng=np.random.default_rng(11))
    low, _ = _rate(tests.naive)
    assert low > 0.07


@pytest.mark.parametrize("world", ["normal", "heavy"])
def test_obrien_fleming_boundary_holds_alpha_at_the_studys_design(world):
    tests = decision_false_positives(world, UNIT, LOOKS, boundaries(information_fractions(LOOKS)), sims=SIMS,
                                     rng=np.random.default_rng(12))
    low, high = _rate(tests.sequential)
    assert low <= 0.05          # never above α beyond Monte-Carlo error
    if world == "normal":
        assert high >= 0.05     # and not wastefully below it either: within Monte-Carlo error of α
    assert set(np.unique(tests.seeds)) <= set(LOOKS)


def test_pocock_boundary_holds_alpha_in_the_resampling_world_of_real_looking_cells():
    rng = np.random.default_rng(13)
    scores = np.clip(rng.normal(0.4, 0.12, (5, 9)), -1, 1)
    cells = fit(scores, np.zeros(scores.shape, bool))
    tests = decision_false_positives("resampling", cells, LOOKS, boundaries(information_fractions(LOOKS), 0.05,
                                                                            "pocock"), sims=SIMS, rng=rng)
    assert tests.sequential.shape == (5, SIMS)
    assert _rate(tests.sequential)[0] <= 0.05
    table = decision_rows(tests, np.arange(5), "resampling", "pocock")
    assert set(table["method"]) == {"sequential pocock", "naive repeated"}
    assert (table["measured"] == table["hits"] / table["sims"]).all()


def test_sequential_tests_stop_at_the_first_crossing_by_hand():
    """One study whose arms differ by far more than their spread: it crosses at the first look."""
    a = np.zeros((1, 1, 9)) + np.array([0.0, 0.01, -0.01] * 3)
    tests = sequential_tests(a, a + 1.0, LOOKS, boundaries(information_fractions(LOOKS)))
    assert tests.sequential.all() and tests.naive.all() and tests.seeds.tolist() == [[3]]
    same = sequential_tests(a, a.copy(), LOOKS, boundaries(information_fractions(LOOKS)))
    assert not same.sequential.any() and not same.naive.any() and same.seeds.tolist() == [[9]]


def test_precision_stops_at_the_first_narrow_look_and_a_group_waits_for_its_widest_cell():
    steady = np.array([0.40, 0.41, 0.39, 0.40, 0.41, 0.39])          # t interval narrow from 3 seeds on
    shaky = np.array([0.35, 0.45, 0.40, 0.40, 0.41, 0.39])           # t interval 0.25, 0.13, 0.07 wide
    samples = np.stack([steady, shaky])[:, None, :]
    looks = (3, 4, 6)
    widths = [[interval_width(row[:k]) for k in looks] for row in (steady, shaky)]
    target = 0.1
    expected = [next((i for i, w in enumerate(ws) if w <= target), len(looks) - 1) for ws in widths]
    assert precision_stops(samples, looks, target).ravel().tolist() == expected
    assert expected == [0, 2]
    grouped = precision_stops(samples, looks, target, groups=[0, 0])
    assert grouped.ravel().tolist() == [expected[1], expected[1]]
    truth = np.array([0.40, 0.40])
    covered = coverage_at_stop(samples, looks, grouped, truth)
    low, high = interval_bounds(shaky[: looks[expected[1]]])
    assert covered[1, 0] == (low <= 0.40 <= high)


def test_stopping_for_precision_costs_coverage_and_the_simulator_measures_it():
    """The t interval of the mean at a fixed 9 seeds covers 95 %; stopped at the first of 3..20 seeds
    whose interval is ≤ 0.2 wide it covers less (it stops when the sample σ happens to be small), and
    the simulator says by how much. Its seeds stay within the looks."""
    cells = fit(np.array([[0.3, 0.5, 0.4, 0.2, 0.6, 0.4]]), np.zeros((1, 6), bool))   # σ 0.14
    run = precision_coverage("normal", cells, range(3, 21), 0.2, sims=SIMS, rng=np.random.default_rng(14))
    low, high = _rate(run.covered)
    assert high < 0.95
    assert low > 0.85
    assert 3 <= run.seeds.min() and run.seeds.max() <= 20
    fixed = precision_coverage("normal", cells, (9,), 10.0, sims=SIMS, rng=np.random.default_rng(15))
    assert _rate(fixed.covered)[0] <= 0.95 <= _rate(fixed.covered)[1]
    table = rows({("mean MCC", "t, stopped for precision"): run.covered}, np.arange(1), "normal", "coverage", 0.95)
    assert table["measured"].iloc[0] == pytest.approx(run.covered.mean())
