"""Training sets where a feature occurs at a chosen rate (controlled presence).

The pool is shuffled once with the seed and annotated in that order, chunk by chunk, only
until enough pairs with and without the feature are found; the subset is the first k
pairs with the feature and the first n-k without, in shuffled order. The result thus
depends on the seed only, not on the chunk size or on how much of the pool was annotated.
"""
from __future__ import annotations

import math
import random
from typing import Any, Mapping, Sequence

from annotators.api import annotate, supported_features
from annotators.features import check_feature
from stability.core.errors import UserError
from stability.core.records import Example

_MIN_CHUNK = 1000


def presence_count(n: int, presence: float) -> int:
    """Pairs that must carry the feature: n * presence / 100, rounded half up."""
    if not 0 <= presence <= 100:
        raise UserError(f"presence {presence} is outside 0..100",
                        fix="give the share of pairs with the feature as a percent, e.g. 25")
    return math.floor(n * presence / 100 + 0.5)


def controlled_subset(pool: Sequence[Example], lang: str, feature: str, presence: float, n: int,
                      seed: int, settings: Mapping[str, Any] | None = None) -> list[Example]:
    """n pairs of `pool`, exactly round(n * presence / 100) of them with `feature`.

    `presence` is a percent (0..100), as the training config's `data.mnli.presence`.
    """
    check_feature(feature)
    if feature not in supported_features(lang, settings):
        raise UserError(f"feature '{feature}' cannot be detected in '{lang}'",
                        fix="choose a feature the language supports (nli-stability annotate action=stats lists them)")
    if n < 0:
        raise UserError(f"subset size {n} is negative", fix="give a positive number of pairs")
    wanted_with = presence_count(n, presence)
    wanted_without = n - wanted_with
    order = list(range(len(pool)))
    random.Random(seed).shuffle(order)
    chosen: list[int] = []
    found_with = found_without = 0
    chunk = max(_MIN_CHUNK, n)
    for start in range(0, len(order), chunk):
        if found_with >= wanted_with and found_without >= wanted_without:
            break
        indices = order[start:start + chunk]
        for index, features in zip(indices, annotate([pool[i] for i in indices], lang, settings)):
            if features.has(feature):
                if found_with < wanted_with:
                    chosen.append(index)
                found_with += 1
            else:
                if found_without < wanted_without:
                    chosen.append(index)
                found_without += 1
    if found_with < wanted_with or found_without < wanted_without:
        raise UserError(
            f"the pool of {len(pool)} pairs has {found_with} with '{feature}' and {found_without} "
            f"without; a subset of {n} at {presence}% needs {wanted_with} and {wanted_without}",
            fix="lower the subset size or the presence, or use a larger pool")
    return [pool[i] for i in chosen]
