"""Per-item agreement: share of seed pairs predicting the same label, worked out by hand."""
from __future__ import annotations

import pandas as pd
import pytest

from stability.report.agreement import (
    ALL_ITEMS,
    agreement_by_category,
    flip_items,
    item_agreement,
)


def predictions(preds: dict[str, list[int]], categories: dict[str, str], setup: str = "rte") -> pd.DataFrame:
    rows = [("fr", setup, seed, idx, 0, pred, 0.5, categories[idx])
            for idx, seed_preds in preds.items() for seed, pred in enumerate(seed_preds)]
    return pd.DataFrame(rows, columns=["lang", "setup", "seed", "idx", "label", "pred", "prob_entailment",
                                       "categories"]).assign(variant="")


def test_three_seeds_predicting_0_0_1_agree_on_one_pair_of_three():
    items = item_agreement(predictions({"a": [0, 0, 1]}, {"a": "Negation"}))
    assert items.iloc[0]["agreement"] == pytest.approx(1 / 3)
    assert items.iloc[0]["share_entailment"] == pytest.approx(2 / 3)
    assert items.iloc[0]["share_correct"] == pytest.approx(2 / 3)   # label 0


FOUR_SEEDS = predictions({"a": [0, 0, 0, 1], "b": [0, 0, 1, 1], "c": [1, 1, 1, 1]},
                         {"a": "Negation", "b": "Negation;Conjunction", "c": "Conjunction"})


def test_four_seeds_by_hand():
    items = item_agreement(FOUR_SEEDS).set_index("idx")
    assert items.loc["a", "agreement"] == pytest.approx(3 / 6)    # C(3,2) + C(1,2) of C(4,2)
    assert items.loc["b", "agreement"] == pytest.approx(2 / 6)    # C(2,2) + C(2,2)
    assert items.loc["c", "agreement"] == pytest.approx(1.0)
    assert (items["n_seeds"] == 4).all()


def test_agreement_by_category_and_all_items_row():
    table = agreement_by_category(item_agreement(FOUR_SEEDS)).set_index("category")
    assert table.loc["Negation", "agreement_mean"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    assert table.loc["Conjunction", "agreement_mean"] == pytest.approx((1 / 3 + 1) / 2)
    assert table.loc["Negation", "n_items"] == 2
    assert table.loc[ALL_ITEMS, "agreement_mean"] == pytest.approx((1 / 2 + 1 / 3 + 1) / 3)
    assert list(table.index) == ["Negation", "Conjunction", ALL_ITEMS]


def test_flip_items_are_the_lowest_agreement_ones_and_skip_unanimous():
    flips = flip_items(item_agreement(FOUR_SEEDS), top=5)
    assert list(flips["idx"]) == ["b", "a"]
    assert list(flip_items(item_agreement(FOUR_SEEDS), top=1)["idx"]) == ["b"]
