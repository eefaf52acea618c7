"""Items are paired across languages only where the languages' diagnostic sets are translations of one
another (`report.alignment`): a set of other items under the same idx is never paired with them."""
from __future__ import annotations

import pandas as pd
import pytest

from stability.core.errors import UserError
from stability.report.alignment import alignment_groups, check_aligned, unaligned_note
from stability.report.consistency import consistency
from stability.report.instability_atlas import language_flips

# one translated release (fr, de: the same labels and categories per idx) and a set of other items (en)
LABELS = {"fr": [0, 1, 1, 0], "de": [0, 1, 1, 0], "en": [1, 1, 0, 0]}
PREDS = {("fr", 0): [0, 1, 0, 0], ("de", 0): [0, 1, 1, 1], ("en", 0): [1, 0, 0, 1],
         ("fr", 1): [0, 0, 0, 0], ("de", 1): [1, 1, 1, 1], ("en", 1): [1, 1, 0, 0]}


def predictions(labels: dict[str, list[int]] = LABELS) -> pd.DataFrame:
    rows = [{"lang": lang, "setup": "rte@en", "variant": "", "seed": seed, "idx": str(i), "label": labels[lang][i],
             "pred": pred, "prob_entailment": 0.5, "categories": "Negation"}
            for (lang, seed), preds in PREDS.items() for i, pred in enumerate(preds)]
    return pd.DataFrame(rows)


def test_languages_of_one_translated_set_form_a_group():
    groups = alignment_groups(predictions()).set_index("lang")["language_group"].to_dict()
    assert groups == {"de": "de+fr", "en": "en", "fr": "de+fr"}
    assert unaligned_note(predictions()).endswith("rte@en: de+fr | en.")
    same = {lang: LABELS["fr"] for lang in LABELS}
    assert set(alignment_groups(predictions(same))["language_group"]) == {"de+en+fr"}
    assert unaligned_note(predictions(same)) == ""


def test_consistency_pairs_only_aligned_languages():
    pairs = consistency(predictions()).pairs
    crossed = pairs[pairs["lang_a"] != pairs["lang_b"]]
    assert set(zip(crossed["lang_a"], crossed["lang_b"])) == {("de", "fr"), ("fr", "de")}
    # seed 0: fr and de agree on items 0, 1, 2 of 4
    seed0 = crossed[(crossed["lang_a"] == "fr") & (crossed["seed_a"] == 0)]
    assert seed0["consistency"].item() == pytest.approx(2 / 4)
    # every language keeps its seed baseline
    assert set(pairs.loc[pairs["lang_a"] == pairs["lang_b"], "lang_a"]) == {"de", "en", "fr"}


def test_the_language_flip_rate_counts_only_a_languages_group():
    flips = language_flips(predictions()).set_index(["lang", "idx"])
    # item 3: seed 0 fr 0 / de 1 (differ), seed 1 fr 0 / de 1 (differ): rate 1 in both; en alone: no pair (NaN)
    assert flips.loc[("fr", "3"), "flip_rate_languages"] == flips.loc[("de", "3"), "flip_rate_languages"] == 1.0
    assert flips.loc[("fr", "3"), "n_languages"] == 2
    assert flips.loc[("en", "3"), "n_languages"] == 1 and pd.isna(flips.loc[("en", "3"), "flip_rate_languages"])
    # item 1: seed 0 both 1 (agree), seed 1 fr 0 / de 1 (differ)
    assert flips.loc[("fr", "1"), "flip_rate_languages"] == pytest.approx(0.5)


def test_a_pair_of_unaligned_languages_is_refused_where_items_are_paired():
    check_aligned(predictions(), "fr", "de", "compare_langs")
    with pytest.raises(UserError, match=r"compare_langs=\[en,fr\]: the two languages' diagnostic sets are not "
                                        r"translations of one another"):
        check_aligned(predictions(), "en", "fr", "compare_langs")
