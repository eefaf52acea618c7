"""Seed statistics against values worked out by hand on small matrices."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from stability.report.stats import language_corr, summary
from stability.statistics.correlation import mean_pairwise, pearson_matrix
from stability.statistics.seeds import category_stats

CATS = ["Negation", "Conjunction", "Disjunction"]


def tidy(values: dict[tuple[str, str, int], list[float]], overall: dict[tuple[str, str, int], float] | None = None
         ) -> pd.DataFrame:
    """Fine rows (and optional level-all rows) from {(lang, setup, seed): [mcc per CATS]}."""
    rows = [(lang, setup, seed, "fine", cat, 10, mcc)
            for (lang, setup, seed), mccs in values.items() for cat, mcc in zip(CATS, mccs)]
    rows += [(lang, setup, seed, "all", "overall", 100, mcc) for (lang, setup, seed), mcc in (overall or {}).items()]
    return pd.DataFrame(rows, columns=["lang", "setup", "seed", "level", "category", "n_items", "mcc"]) \
        .assign(variant="")


# Seed 2 is constant, so its 3 pairs are skipped; r(0,1) = -1, r(0,3) = 1, r(1,3) = -1.
SEEDS = {("fr", "rte", 0): [0.1, 0.2, 0.3], ("fr", "rte", 1): [0.3, 0.2, 0.1],
         ("fr", "rte", 2): [0.2, 0.2, 0.2], ("fr", "rte", 3): [0.1, 0.3, 0.5]}
OVERALL = {("fr", "rte", 0): 0.1, ("fr", "rte", 1): 0.2, ("fr", "rte", 2): 0.6, ("fr", "rte", 3): 0.3}


def test_summary_by_hand():
    row = summary(tidy(SEEDS, OVERALL)).iloc[0]
    assert row["n_seeds"] == 4
    assert row["overall_mcc_mean"] == pytest.approx(0.3)
    # deviations -0.2, -0.1, 0.3, 0.0 → Σ² = 0.14, ddof = 1 → sqrt(0.14 / 3)
    assert row["overall_mcc_std"] == pytest.approx(math.sqrt(0.14 / 3))
    # per-seed means 0.2, 0.2, 0.2, 0.3 → mean 0.225, σ = sqrt(3·0.025² + 0.075²) / sqrt(3) = 0.05
    assert row["mean_category_mcc_mean"] == pytest.approx(0.225)
    assert row["mean_category_mcc_std"] == pytest.approx(0.05)
    assert row["rs_corr"] == pytest.approx(-1 / 3)
    assert (row["rs_corr_pairs"], row["rs_corr_skipped"]) == (3, 3)


def test_one_seed_has_no_spread_and_no_pairs():
    row = summary(tidy({("fr", "rte", 0): [0.1, 0.2, 0.3]}, {("fr", "rte", 0): 0.4})).iloc[0]
    assert row["overall_mcc_mean"] == pytest.approx(0.4)
    assert math.isnan(row["overall_mcc_std"]) and math.isnan(row["rs_corr"])
    assert (row["rs_corr_pairs"], row["rs_corr_skipped"]) == (0, 0)


def test_fine_rows_only_leave_overall_empty():
    row = summary(tidy(SEEDS)).iloc[0]
    assert math.isnan(row["overall_mcc_mean"]) and math.isnan(row["overall_mcc_std"])
    assert row["mean_category_mcc_mean"] == pytest.approx(0.225)


def test_category_stats_by_hand():
    stats = category_stats(tidy(SEEDS))
    negation = stats[stats["category"] == "Negation"].iloc[0]
    # Negation over seeds: 0.1, 0.3, 0.2, 0.1 → mean 0.175, Σ² of deviations 0.0275
    assert negation["mcc_mean"] == pytest.approx(0.175)
    assert negation["mcc_std"] == pytest.approx(math.sqrt(0.0275 / 3))
    assert negation["coarse"] == "Logic"
    assert [negation[f"seed_{s}"] for s in range(4)] == pytest.approx([0.1, 0.3, 0.2, 0.1])
    # canonical taxonomy order: Negation before Conjunction before Disjunction
    assert list(stats["category"]) == CATS


def test_pearson_matrix_matches_numpy_and_marks_constant_rows():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(4, 33))
    np.testing.assert_allclose(pearson_matrix(vectors), np.corrcoef(vectors), atol=1e-12)
    corr = pearson_matrix(np.array([[1.0, 2, 3], [1.0, 3, 2], [5.0, 5, 5]]))
    assert corr[0, 1] == pytest.approx(0.5)       # centred (-1,0,1)·(-1,1,0) / 2 = 0.5
    assert np.isnan(corr[0, 2]) and np.isnan(corr[1, 2])
    pairs = mean_pairwise(corr)
    assert (pairs.mean, pairs.pairs, pairs.skipped) == (pytest.approx(0.5), 1, 2)


def test_language_corr_by_hand():
    results = tidy({("en", "rte", 0): [0.1, 0.2, 0.3], ("fr", "rte", 0): [0.3, 0.2, 0.1],
                    ("de", "rte", 0): [0.0, 0.2, 0.4],
                    ("en", "mnli", 0): [0.1, 0.2, 0.3], ("fr", "mnli", 0): [0.1, 0.3, 0.2],
                    ("de", "only", 0): [0.1, 0.2, 0.3]})
    table = language_corr(category_stats(results)).set_index(["setup", "lang_a", "lang_b"])["pearson"]
    assert table[("rte", "de", "en")] == pytest.approx(1.0)
    assert table[("rte", "de", "fr")] == pytest.approx(-1.0)
    assert table[("rte", "en", "fr")] == pytest.approx(-1.0)
    assert table[("rte", "de", "mean")] == pytest.approx(0.0)
    assert table[("rte", "fr", "mean")] == pytest.approx(-1.0)
    assert table[("rte", "mean", "mean")] == pytest.approx(-1 / 3)
    assert table[("mnli", "en", "fr")] == pytest.approx(0.5)
    assert "only" not in table.index.get_level_values("setup")   # one language: nothing to correlate
