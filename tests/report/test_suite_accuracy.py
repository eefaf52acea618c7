"""Per-template and per-feature accuracy of runs scored on generated suites, checked against
values computed by hand."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from stability.report.sections.suites import suite_section
from stability.report.suites import ALL_TEMPLATES, feature_gaps, suite_accuracy

FEM, MASC = {"name.GENDER": "FEM"}, {"name.GENDER": "MASC"}


def predictions() -> pd.DataFrame:
    # template a (entailment): 4 items; template b (not_entailment): 2 items; 2 seeds;
    # one item of an ordinary diagnostic set (no template) that must be left out
    items = [("a:0", 0, FEM), ("a:1", 0, FEM), ("a:2", 0, MASC), ("a:3", 0, MASC), ("b:0", 1, FEM), ("b:1", 1, MASC)]
    preds = {0: [0, 1, 0, 0, 1, 1], 1: [1, 1, 0, 0, 0, 1]}
    rows = [{"lang": "en", "setup": "rte", "seed": seed, "idx": idx, "label": label, "pred": pred,
             "prob_entailment": 0.5, "categories": "Negation", "template": idx[0], "features": features}
            for seed in (0, 1) for (idx, label, features), pred in zip(items, preds[seed])]
    rows.append({"lang": "en", "setup": "rte", "seed": 0, "idx": "7", "label": 0, "pred": 0, "prob_entailment": 0.5,
                 "categories": "Negation", "template": None, "features": None})
    return pd.DataFrame(rows).assign(variant="")


def row(table: pd.DataFrame, template: str, feature: str = "", value: str = "") -> pd.Series:
    found = table[(table["template"] == template) & (table["feature"] == feature) & (table["value"] == value)]
    assert len(found) == 1
    return found.iloc[0]


def test_accuracy_per_template_per_feature_and_pooled():
    table = suite_accuracy(predictions())
    # seed 0: a correct 1,0,1,1 (0.75), b 1,1 (1.0); seed 1: a 0,0,1,1 (0.5), b 0,1 (0.5)
    a = row(table, "a")
    assert (a.label, a.categories, a.n_items, a.n_seeds) == ("entailment", "Negation", 4, 2)
    assert a.accuracy_mean == pytest.approx(0.625) and a.accuracy_std == pytest.approx(0.25 / math.sqrt(2))
    assert row(table, "a", "name.GENDER", "FEM").accuracy_mean == pytest.approx(0.25)
    assert row(table, "a", "name.GENDER", "MASC").accuracy_mean == pytest.approx(1.0)
    assert row(table, "b").accuracy_mean == pytest.approx(0.75) and row(table, "b").label == "not_entailment"
    # pooled female items: seed 0 2 of 3 correct, seed 1 none
    pooled = row(table, ALL_TEMPLATES, "name.GENDER", "FEM")
    assert (pooled.n_items, pooled.accuracy_mean, pooled.label) == (3, pytest.approx(1 / 3), "")
    assert len(table) == 2 * 3 + 2   # (whole, FEM, MASC) per template + pooled FEM, MASC


def test_feature_gaps_name_the_worst_and_best_values():
    gaps = feature_gaps(suite_accuracy(predictions())).set_index("template")
    assert (gaps.loc["a", "low_value"], gaps.loc["a", "high_value"]) == ("FEM", "MASC")
    assert gaps.loc["a", "gap"] == pytest.approx(0.75) and gaps.loc["b", "gap"] == pytest.approx(0.5)
    assert gaps.loc[ALL_TEMPLATES, "gap"] == pytest.approx(2 / 3) and gaps.loc[ALL_TEMPLATES, "low_n"] == 3


def test_no_suite_items_no_table():
    ordinary = predictions().assign(template=None, features=None)
    assert suite_accuracy(ordinary).empty


def test_the_markdown_section_reads_the_failing_feature():
    stats = pd.DataFrame([{"lang": "en", "setup": "rte", "variant": "", "category": "Negation", "coarse": "Logic", "n_items": 6,
                           "mcc_mean": 0.2, "mcc_std": 0.1}])
    text = suite_section(suite_accuracy(predictions()), stats)
    assert "### en, rte" in text
    assert "| a | entailment | Negation | 0.200 ± 0.100 | 4 | 0.625 ± 0.177 |" in text
    assert "| name.GENDER | FEM 0.333 (n=3) | MASC 1.000 (n=3) | 0.667 |" in text
    assert "| a | name.GENDER | FEM 0.250 (n=2) | MASC 1.000 (n=2) | 0.750 |" in text
    # lowest accuracy first
    assert text.index("| a | entailment") < text.index("| b | not_entailment")
