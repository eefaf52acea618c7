"""The one record type every loader returns (docs/design.md, "Data contract")."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

ENTAILMENT = 0
NOT_ENTAILMENT = 1
LABEL_NAMES = ("entailment", "not_entailment")

# Released files spell labels in several ways; MNLI and GLUE's 3-way labels collapse.
_LABEL_VALUES: dict[str, int] = {
    "entailment": ENTAILMENT,
    "0": ENTAILMENT,
    "not_entailment": NOT_ENTAILMENT,
    "not entailment": NOT_ENTAILMENT,
    "1": NOT_ENTAILMENT,
    "neutral": NOT_ENTAILMENT,
    "contradiction": NOT_ENTAILMENT,
}


def labels_from_probability(prob_entailment: np.ndarray) -> np.ndarray:
    """Label ENTAILMENT (0) when it is the more probable class, NOT_ENTAILMENT (1) otherwise."""
    return np.where(prob_entailment >= 0.5, ENTAILMENT, NOT_ENTAILMENT)


def parse_label(value: object) -> int | None:
    """Map a released label value to 0/1; None when the value is not a known label."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value in (ENTAILMENT, NOT_ENTAILMENT) else None
    if isinstance(value, str):
        return _LABEL_VALUES.get(value.strip().lower())
    return None


@dataclass(frozen=True)
class Example:
    """One premise/hypothesis pair; diagnostic items also carry their categories, and items of
    generated test suites their template id and the features the template varied."""

    idx: str
    premise: str
    hypothesis: str
    label: int
    lang: str
    source: str
    categories: tuple[str, ...] = field(default_factory=tuple)
    coarse: tuple[str, ...] = field(default_factory=tuple)
    template: str | None = None
    features: dict[str, str] | None = None

    def to_json(self) -> dict:
        """Plain dict for jsonl output and hashing."""
        row = {
            "idx": self.idx, "premise": self.premise, "hypothesis": self.hypothesis,
            "label": self.label, "lang": self.lang, "source": self.source,
            "categories": list(self.categories), "coarse": list(self.coarse),
        }
        if self.template is not None:
            row["template"] = self.template
        if self.features is not None:
            row["features"] = self.features
        return row
