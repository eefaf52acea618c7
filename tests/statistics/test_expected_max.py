"""Expected best validation score over n runs: the closed form by hand for 4 runs, its limits,
and the selected run's score against brute-force enumeration of every draw."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from stability.statistics.expected_max import (
    EXPECTED_MAX_COLUMNS,
    expected_max,
    expected_max_table,
    expected_selected,
)

VALID = [0.70, 0.80, 0.75, 0.90]     # sorted: 0.70, 0.75, 0.80, 0.90
MCC = [0.20, 0.35, 0.30, 0.25]       # in validation order: 0.20, 0.30, 0.35, 0.25


def test_expected_max_by_hand_for_four_runs():
    expected = [
        (0.70 + 0.75 + 0.80 + 0.90) / 4,                                  # n = 1: weights 1/4 each
        (0.70 * 1 + 0.75 * 3 + 0.80 * 5 + 0.90 * 7) / 16,                 # n = 2: (i² − (i−1)²) / 16
        (0.70 * 1 + 0.75 * 7 + 0.80 * 19 + 0.90 * 37) / 64,               # n = 3: (i³ − (i−1)³) / 64
        (0.70 * 1 + 0.75 * 15 + 0.80 * 65 + 0.90 * 175) / 256,            # n = 4
    ]
    assert expected == pytest.approx([0.7875, 0.828125, 0.85078125, 0.865039062])
    np.testing.assert_allclose(expected_max(VALID), expected)


def test_limits():
    values = np.random.default_rng(0).uniform(size=7)
    curve = expected_max(values, n_max=2000)
    assert curve[0] == pytest.approx(values.mean())
    assert curve[-1] == pytest.approx(values.max())
    assert np.all(np.diff(curve) >= -1e-12)   # non-decreasing, up to rounding


def test_selected_score_by_hand():
    # n = 1: mean of MCC; n = 2: (0.20·1 + 0.30·3 + 0.35·5 + 0.25·7) / 16; large n: the best run's 0.25
    curve = expected_selected(VALID, MCC, n_max=1000)
    assert curve[0] == pytest.approx(0.275)
    assert curve[1] == pytest.approx(4.6 / 16)
    assert curve[-1] == pytest.approx(0.25)


def brute_force(valid: list[float], score: list[float], n: int) -> float:
    """Every ordered draw of n runs, equally likely; ties among the drawn best split evenly."""
    outcomes = []
    for draw in itertools.product(range(len(valid)), repeat=n):
        best = max(valid[i] for i in draw)
        outcomes.append(np.mean([score[i] for i in draw if valid[i] == best]))
    return float(np.mean(outcomes))


def test_selected_score_with_ties_equals_enumeration():
    valid = [0.8, 0.8, 0.7, 0.9, 0.9]
    score = [0.1, 0.3, 0.5, 0.0, 0.4]
    curve = expected_selected(valid, score)
    for n in range(1, 5):
        assert curve[n - 1] == pytest.approx(brute_force(valid, score, n))
    # and the expected maximum is the selected score when selecting by itself
    np.testing.assert_allclose(expected_max(valid), [brute_force(valid, valid, n) for n in range(1, 6)])


def test_table_per_group():
    runs = pd.DataFrame({"lang": ["fr"] * 4 + ["de"] * 2, "setup": "rte", "val_accuracy": VALID + [0.6, np.nan],
                         "overall_mcc": MCC + [0.1, 0.2]})
    table = expected_max_table(runs)
    assert list(table.columns) == ["lang", "setup", *EXPECTED_MAX_COLUMNS]
    de, fr = table[table["lang"] == "de"], table[table["lang"] == "fr"]
    assert list(de["n"]) == [1] and list(de["n_runs"]) == [1] and de["expected_max_valid"].item() == 0.6
    np.testing.assert_allclose(fr["expected_max_valid"], expected_max(VALID))
    np.testing.assert_allclose(fr["expected_selected_score"], expected_selected(VALID, MCC))
