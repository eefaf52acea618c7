"""Setup deltas and the shares of cells beyond the thresholds (strict inequalities)."""
from __future__ import annotations

import pandas as pd
import pytest

from stability.report.compare import delta_shares, setup_deltas


def stats_table() -> pd.DataFrame:
    cells = [  # lang, category, (mean, σ) for A, (mean, σ) for B
        ("fr", "Negation", (0.2, 0.15), (0.3, 0.10)),     # ΔMCC = 0.1 (0.3-0.2 in floats), Δσ = -0.05: neither
        ("fr", "Conjunction", (0.0, 0.20), (0.2, 0.10)),  # ΔMCC 0.2 > 0.1, Δσ -0.1 < -0.05: both
        ("fr", "Disjunction", (0.5, 0.10), (0.4, 0.12)),  # ΔMCC -0.1, Δσ 0.02: neither
        ("de", "Negation", (0.1, 0.10), (0.25, 0.10)),    # ΔMCC 0.15: yes; Δσ 0: no
        ("de", "Conjunction", (0.1, float("nan")), (0.1, float("nan"))),  # one seed: Δσ undefined
    ]
    rows = [(lang, setup, cat, "Logic", 10, mean, std)
            for lang, cat, a, b in cells for setup, (mean, std) in (("rte", a), ("rte+mnli", b))]
    return pd.DataFrame(rows, columns=["lang", "setup", "category", "coarse", "n_items", "mcc_mean", "mcc_std"]) \
        .assign(variant="")


def test_deltas_are_b_minus_a():
    deltas = setup_deltas(stats_table(), "rte", "rte+mnli").set_index(["lang", "category"])
    assert deltas.loc[("fr", "Conjunction"), "delta_mcc"] == pytest.approx(0.2)
    assert deltas.loc[("fr", "Conjunction"), "delta_std"] == pytest.approx(-0.1)
    assert deltas.loc[("fr", "Disjunction"), "delta_mcc"] == pytest.approx(-0.1)


def test_shares_at_the_thresholds_are_strict():
    shares = delta_shares(setup_deltas(stats_table(), "rte", "rte+mnli"), 0.1, -0.05).set_index("lang")
    assert shares.loc["fr", "n_cells"] == 3
    assert shares.loc["fr", "n_delta_mcc_above"] == 1        # exactly 0.1 does not count
    assert shares.loc["fr", "share_delta_mcc_above"] == pytest.approx(1 / 3)
    assert shares.loc["fr", "n_delta_std_below"] == 1        # exactly -0.05 does not count
    assert shares.loc["de", "share_delta_mcc_above"] == pytest.approx(1 / 2)
    assert shares.loc["de", "share_delta_std_below"] == pytest.approx(0.0)   # 0 of the 1 defined
    assert shares.loc["all", "n_cells"] == 5
    assert shares.loc["all", "share_delta_mcc_above"] == pytest.approx(2 / 5)
    assert shares.loc["all", "share_delta_std_below"] == pytest.approx(1 / 4)


def test_lower_threshold_counts_the_boundary_cell():
    shares = delta_shares(setup_deltas(stats_table(), "rte", "rte+mnli"), 0.09, -0.04).set_index("lang")
    assert shares.loc["fr", "n_delta_mcc_above"] == 2
    assert shares.loc["fr", "n_delta_std_below"] == 2
