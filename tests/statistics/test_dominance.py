"""Almost stochastic order: ε_min is deepsig's on the same scores, seed and confidence level."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stability.statistics.dominance import (
    ASO_COLUMNS,
    aso_available,
    aso_table,
    bonferroni_confidence,
    epsilon_min,
    epsilon_min_matrix,
)

deepsig = pytest.importorskip("deepsig", reason="install the [stats] extra")
ITERATIONS = 40  # deepsig's bootstrap is slow; equality with deepsig does not need many


@pytest.fixture
def scores() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"rte": rng.normal(0.30, 0.05, 6), "rte+mnli": rng.normal(0.36, 0.05, 5), "mnli": rng.normal(0.5, 0.02, 4)}


def _aso(a: np.ndarray, b: np.ndarray, seed: int, confidence: float = 0.95) -> float:
    return deepsig.aso(a, b, confidence_level=confidence, num_bootstrap_iterations=ITERATIONS, show_progress=False,
                       seed=seed)


def test_epsilon_min_equals_deepsig_aso(scores):
    a, b = scores["rte+mnli"], scores["rte"]
    assert epsilon_min(a, b, seed=3, iterations=ITERATIONS) == _aso(a, b, seed=3)
    # Bonferroni over 7 comparisons: each at level 1 − 0.05 / 7
    assert epsilon_min(a, b, seed=3, comparisons=7, iterations=ITERATIONS) == _aso(a, b, 3, 1 - 0.05 / 7)
    # seeded: the same call again gives the same value
    assert epsilon_min(a, b, seed=3, iterations=ITERATIONS) == epsilon_min(a, b, seed=3, iterations=ITERATIONS)


def test_bonferroni_confidence_is_bonferroni():
    assert bonferroni_confidence(0.95, 1) == 0.95
    assert bonferroni_confidence(0.95, 2) == pytest.approx(0.975)
    assert bonferroni_confidence(0.95, 165) == pytest.approx(1 - 0.05 / 165)


def test_epsilon_min_matrix_equals_multi_aso(scores):
    # 3 conditions, 3 pairs: each pair at level 1 − 0.05 / 3
    expected = deepsig.multi_aso(scores, confidence_level=1 - 0.05 / 3, use_bonferroni=False,
                                 num_bootstrap_iterations=ITERATIONS, return_df=True, show_progress=False, seed=5)
    matrix = epsilon_min_matrix(scores, seed=5, iterations=ITERATIONS)
    assert list(matrix.index) == list(matrix.columns) == list(scores)
    off_diagonal = ~np.eye(3, dtype=bool)
    np.testing.assert_array_equal(matrix.to_numpy()[off_diagonal], expected.to_numpy()[off_diagonal])
    assert np.isnan(np.diag(matrix.to_numpy())).all()
    # a pair's first-named direction is deepsig.aso's own bootstrap
    assert matrix.loc["rte", "rte+mnli"] == _aso(scores["rte"], scores["rte+mnli"], 5, 1 - 0.05 / 3)
    # the clearly best condition dominates both others
    assert matrix.loc["mnli", "rte"] < 0.2 and matrix.loc["mnli", "rte+mnli"] < 0.2


def _long(cells: dict[tuple[str, str], np.ndarray]) -> pd.DataFrame:
    return pd.DataFrame([(lang, setup, value) for (lang, setup), values in cells.items() for value in values],
                        columns=["lang", "setup", "mcc"])


def test_aso_table_per_group_with_bonferroni(scores):
    table_in = _long({("de", "rte"): scores["rte"], ("de", "mnli"): scores["mnli"],
                      ("fr", "rte"): scores["rte+mnli"], ("fr", "mnli"): scores["mnli"] - 0.2,
                      ("sv", "rte"): scores["rte"]})           # sv has no mnli runs: no comparison
    table = aso_table(table_in, ["lang"], "setup", "rte", "mnli", seed=9, iterations=ITERATIONS)
    assert list(table.columns) == ["lang", *ASO_COLUMNS]
    assert list(table["lang"]) == ["de", "fr"] and list(table["n_seeds_a"]) == [6, 5]
    for lang, a, b in (("de", scores["rte"], scores["mnli"]), ("fr", scores["rte+mnli"], scores["mnli"] - 0.2)):
        row = table.set_index("lang").loc[lang]
        # a family of 2 comparisons: each at level 1 − 0.05 / 2
        assert row["eps_min_b_over_a"] == _aso(b, a, 9, 0.975)
    de = table.set_index("lang").loc["de"]
    assert de["eps_min_b_over_a"] < 0.2 < 0.8 < de["eps_min_a_over_b"]   # mnli dominates rte in de


def test_aso_table_without_bonferroni_is_multi_aso_of_the_pair(scores):
    table_in = _long({("de", "rte"): scores["rte"], ("de", "mnli"): scores["rte+mnli"]})
    row = aso_table(table_in, ["lang"], "setup", "rte", "mnli", seed=2, bonferroni=False,
                    iterations=ITERATIONS).iloc[0]
    expected = deepsig.multi_aso({"mnli": scores["rte+mnli"], "rte": scores["rte"]}, use_bonferroni=False,
                                 num_bootstrap_iterations=ITERATIONS, return_df=True, show_progress=False, seed=2)
    assert row["eps_min_b_over_a"] == expected.loc["mnli", "rte"] == _aso(scores["rte+mnli"], scores["rte"], 2)
    assert row["eps_min_a_over_b"] == expected.loc["rte", "mnli"]
