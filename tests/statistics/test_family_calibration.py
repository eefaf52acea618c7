"""The whole-family A/A check of the tests sections: each study's family of seed-bootstrap p-values is
corrected as statsmodels' Holm and BH would (recomputed here from the same draws), a family of one cell is
its cell's test, and the simulator finds what an uncorrected family of 37 cells does (far above 5 %)."""
from __future__ import annotations

import numpy as np
from statsmodels.stats.multitest import multipletests

from stability.statistics.calibration import (ALPHA, BH, FAMILY_TEST, HOLM, UNCORRECTED, bootstrap_p,
                                              family_false_positives)


def _units(rng: np.random.Generator, cells: int, runs: int) -> list[tuple[np.ndarray, int]]:
    return [(rng.normal(0.3, 0.1, (cells, runs)), runs), (rng.normal(0.5, 0.05, (cells, runs)), runs + 1)]


def test_the_corrections_are_statsmodels_on_the_same_draws(holm_without_gc):
    units = _units(np.random.default_rng(0), 3, 4)
    events = family_false_positives(units, sims=12, rng=np.random.default_rng(5))
    rng = np.random.default_rng(5)   # the same draws, in the same order
    p = []
    for scores, n_b in units:
        runs = scores.shape[1]
        picks_a, picks_b = rng.integers(0, runs, (12, runs)), rng.integers(0, runs, (12, n_b))
        p.append(bootstrap_p(scores[:, picks_a], scores[:, picks_b], rng))
    p = np.concatenate(p).T
    assert p.shape == (12, 6)
    for method, name in ((HOLM, "holm"), (BH, "fdr_bh")):
        expected = [multipletests(row, alpha=ALPHA, method=name)[0].any() for row in p]
        np.testing.assert_array_equal(events[(FAMILY_TEST, method)][0], expected)
    np.testing.assert_array_equal(events[(FAMILY_TEST, UNCORRECTED)][0], (p < ALPHA).any(axis=1))


def test_one_cell_is_its_own_test_and_a_large_uncorrected_family_is_caught():
    rng = np.random.default_rng(1)
    single = family_false_positives([(rng.normal(0, 1, (1, 6)), 6)], sims=300, rng=rng)
    np.testing.assert_array_equal(single[(FAMILY_TEST, HOLM)], single[(FAMILY_TEST, UNCORRECTED)])
    np.testing.assert_array_equal(single[(FAMILY_TEST, BH)], single[(FAMILY_TEST, UNCORRECTED)])
    # 37 cells of 6 seeds from one condition's own runs: some cell below 0.05 in most A/A comparisons
    family = family_false_positives([(rng.normal(0, 1, (37, 6)), 6)], sims=200, rng=rng)
    assert family[(FAMILY_TEST, UNCORRECTED)].mean() > 0.3
    assert family[(FAMILY_TEST, HOLM)].mean() <= family[(FAMILY_TEST, BH)].mean() \
        <= family[(FAMILY_TEST, UNCORRECTED)].mean()
