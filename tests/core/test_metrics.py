"""The metrics of docs/design.md, "Metrics", against values computed by hand."""
from __future__ import annotations

import math

import pytest

from stability.core.metrics import accuracy, mcc, score_diagnostic
from stability.core.taxonomy import FINE_CATEGORIES


def test_mcc_by_hand():
    # gold 0,0,1,1 / pred 0,1,1,1 -> tp=2 tn=1 fp=1 fn=0 -> (2*1 - 1*0)/sqrt(3*2*2*1)
    assert mcc([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx(2 / math.sqrt(12))
    assert mcc([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)
    assert mcc([0, 0, 1], [0, 0, 0]) is None  # nothing predicted positive: undefined


def _items():
    # (gold, pred, fine categories, coarse)
    return [
        (0, 0, ("Negation",), ("Logic",)),
        (1, 1, ("Negation", "Quantifiers"), ("Logic", "Lexical Semantics")),
        (1, 0, ("Negation",), ("Logic",)),
        (0, 0, ("Quantifiers",), ("Lexical Semantics",)),
        (1, 1, ("Datives",), ("Predicate-Argument Structure",)),
        (1, 1, ("Datives",), ("Predicate-Argument Structure",)),
    ]


def test_category_coarse_overall_and_degenerate():
    gold, pred, fine, coarse = zip(*_items())
    scores = score_diagnostic(list(gold), list(pred), fine, coarse)
    # Negation: gold 0,1,1 pred 0,1,0 -> tp=1 tn=1 fp=0 fn=1 -> 1/sqrt(1*2*1*2) = 0.5
    assert scores.category_mcc["Negation"] == pytest.approx(0.5)
    # Quantifiers: gold 1,0 pred 1,0 -> 1.0
    assert scores.category_mcc["Quantifiers"] == pytest.approx(1.0)
    # Datives: all gold 1 -> undefined -> 0.0 and degenerate; absent categories too
    assert scores.category_mcc["Datives"] == 0.0 and "Datives" in scores.degenerate
    assert scores.category_mcc["Temporal"] == 0.0 and "Temporal" in scores.degenerate
    assert "Negation" not in scores.degenerate
    assert scores.category_n["Negation"] == 3 and scores.category_n["Temporal"] == 0
    # Logic = items 0,1,2 (same as Negation); Lexical Semantics = items 1,3
    assert scores.coarse_mcc["Logic"] == pytest.approx(0.5)
    assert scores.coarse_mcc["Lexical Semantics"] == pytest.approx(1.0)
    assert scores.coarse_n == {"Lexical Semantics": 2, "Predicate-Argument Structure": 2,
                               "Logic": 3, "Knowledge": 0}
    # overall: gold 0,1,1,0,1,1 pred 0,1,0,0,1,1 -> tp=3 tn=2 fp=0 fn=1 -> 6/sqrt(3*4*2*3)
    assert scores.overall_mcc == pytest.approx(6 / math.sqrt(72))
    assert len(scores.category_mcc) == 33 and list(scores.category_mcc) == list(FINE_CATEGORIES)
    assert scores.mean_category_mcc == pytest.approx((0.5 + 1.0) / 33)


def test_accuracy():
    assert accuracy([0, 1, 1, 0], [0, 1, 0, 0]) == 0.75
