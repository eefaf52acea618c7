"""Which diagnostic categories an item belongs to, as bool columns in taxonomy order.

Items carry their fine categories as one `;`-joined string (`collect`). The bootstrap and
the consistency tables count outcomes per category as `membership.T @ outcomes`, so both
build their columns here and cannot disagree on who belongs where.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from stability.core.taxonomy import COARSE_CATEGORIES, COARSE_OF, FINE_CATEGORIES

# (fine, coarse) bool: the coarse category of each fine one
_COARSE_OF_FINE = np.array([[COARSE_OF[fine] == coarse for coarse in COARSE_CATEGORIES] for fine in FINE_CATEGORIES])


def fine_membership(categories: pd.Series) -> np.ndarray:
    """(items, 33) bool in FINE_CATEGORIES order; a missing or empty string belongs to none."""
    dummies = categories.fillna("").str.get_dummies(sep=";")
    return dummies.reindex(columns=FINE_CATEGORIES, fill_value=0).to_numpy(bool)


def coarse_membership(fine: np.ndarray) -> np.ndarray:
    """(items, 4) bool in COARSE_CATEGORIES order: an item is in a coarse category when it is in
    any of its fine ones, so the coarse columns never contradict the fine."""
    return fine @ _COARSE_OF_FINE
