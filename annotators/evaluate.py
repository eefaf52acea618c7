"""Agreement of the annotator with gold diagnostic categories.

Gold tags mark the phenomenon that matters for an item's inference, not every occurrence
of it, so recall is the headline figure; precision is a lower bound, and
`flag_rate_untagged` shows how often a feature is flagged on items not tagged with it.
"""
from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from annotators.features import FEATURES, FeatureSet
from stability.core.records import Example

COLUMNS = ["feature", "n_gold", "recall", "precision", "f1", "flag_rate_untagged"]


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else math.nan


def agreement(examples: Sequence[Example], feature_sets: Sequence[FeatureSet]) -> pd.DataFrame:
    """One row per feature; metrics are NaN for features the language cannot detect."""
    rows = []
    for feature in FEATURES:
        gold = [feature in example.categories for example in examples]
        n_gold = sum(gold)
        if not feature_sets or feature not in feature_sets[0].supported:
            rows.append([feature, n_gold, math.nan, math.nan, math.nan, math.nan])
            continue
        flagged = [feature in fs.features for fs in feature_sets]
        hits = sum(g and f for g, f in zip(gold, flagged))
        recall = _ratio(hits, n_gold)
        precision = _ratio(hits, sum(flagged))
        f1 = (2 * precision * recall / (precision + recall)
              if precision + recall > 0 else (0.0 if n_gold else math.nan))
        untagged = sum(f and not g for g, f in zip(gold, flagged))
        rows.append([feature, n_gold, recall, precision, f1, _ratio(untagged, len(gold) - n_gold)])
    return pd.DataFrame(rows, columns=COLUMNS)
