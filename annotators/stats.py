"""Share of pairs with each feature, one column per dataset."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import pandas as pd

from annotators.features import FEATURES, FeatureSet


def feature_share(datasets: Mapping[str, Sequence[FeatureSet]]) -> pd.DataFrame:
    """Column `feature`, then the share per dataset; NaN where the feature is unsupported."""
    frame = pd.DataFrame({"feature": list(FEATURES)})
    for name, sets in datasets.items():
        frame[name] = [
            sum(feature in fs.features for fs in sets) / len(sets)
            if sets and feature in sets[0].supported else math.nan
            for feature in FEATURES
        ]
    return frame
