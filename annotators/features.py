"""The fifteen detectable features and the per-pair result type.

Names are the canonical diagnostic category names (docs/design.md, "Taxonomy"), so annotator
output can be scored directly against gold categories.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from stability.core.errors import UserError
from stability.core.taxonomy import FINE_CATEGORIES

FEATURES: tuple[str, ...] = (
    "Negation", "Double negation", "Morphological negation", "Quantifiers", "Factivity",
    "Named entities", "Intervals/Numbers", "Temporal", "Conditionals", "Conjunction",
    "Disjunction", "Prepositional phrases", "Anaphora/Coreference", "Relative clauses",
    "Datives",
)
assert set(FEATURES) <= set(FINE_CATEGORIES)


def check_feature(name: str) -> str:
    """Return `name` if it is a detectable feature, else a UserError suggesting the closest."""
    if name in FEATURES:
        return name
    close = difflib.get_close_matches(name, FEATURES, n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"use one of: {', '.join(FEATURES)}"
    raise UserError(f"unknown feature '{name}'", fix=hint)


def ordered(names: frozenset[str] | set[str]) -> list[str]:
    """Feature names in the canonical order, for stable output."""
    return [name for name in FEATURES if name in names]


@dataclass(frozen=True)
class FeatureSet:
    """Features of one pair: per sentence, and which features the language can detect at all.

    A feature outside `supported` is unknown, not absent: `has` returns None for it.
    """

    premise: frozenset[str]
    hypothesis: frozenset[str]
    supported: frozenset[str]

    @property
    def features(self) -> frozenset[str]:
        """A pair has a feature when its premise or its hypothesis does."""
        return self.premise | self.hypothesis

    @property
    def unsupported(self) -> list[str]:
        return [name for name in FEATURES if name not in self.supported]

    def has(self, feature: str) -> bool | None:
        """True/False for a supported feature, None when the language cannot detect it."""
        if check_feature(feature) not in self.supported:
            return None
        return feature in self.features

    def to_json(self) -> dict:
        return {
            "features": ordered(self.features),
            "premise_features": ordered(self.premise),
            "hypothesis_features": ordered(self.hypothesis),
            "unsupported": self.unsupported,
        }
