"""Setup names → added MNLI examples, and which setups a size curve joins."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from stability.core.setups import n_added_from_setup, setup_family
from stability.report.sizes import size_curve
from stability.report.stats import summary


@pytest.mark.parametrize("setup, expected", [
    ("rte", 0), ("rte+mnli10000", 10000), ("rte+mnli10000+Negation50", 10000), ("rte+Negation50", 0),
])
def test_n_added_from_name(setup, expected):
    assert n_added_from_setup(setup) == expected


@pytest.mark.parametrize("setup", ["rte+mnli_all", "xnli", "mnli10000"])
def test_n_added_unknown_from_name(setup):
    assert math.isnan(n_added_from_setup(setup))


def test_family_drops_only_the_mnli_part():
    assert setup_family("rte+mnli10000") == setup_family("rte+mnli_all") == setup_family("rte") == "rte"
    assert setup_family("rte+mnli10000+Negation50") == "rte+Negation50"


def test_curve_needs_two_sizes_in_a_family():
    rows = [(lang, setup, seed, "all", "overall", 100, mcc, n_added)
            for lang, setup, n_added, mcc in [("fr", "rte", 0, 0.2), ("fr", "rte+mnli10000", 10000, 0.4),
                                              ("fr", "rte+mnli10000+Negation50", 10000, 0.5),
                                              ("de", "rte", 0, 0.1)]
            for seed in (0, 1)]
    results = pd.DataFrame(rows, columns=["lang", "setup", "seed", "level", "category", "n_items", "mcc",
                                          "n_added"]).assign(variant="")
    curve = size_curve(summary(results), results)
    assert list(curve["setup"]) == ["rte", "rte+mnli10000"]   # de has one size; Negation50 its own family
    assert list(curve["n_added"]) == [0, 10000]
    assert list(curve["overall_mcc_mean"]) == pytest.approx([0.2, 0.4])
