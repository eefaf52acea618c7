"""The diagnostic taxonomy of docs/design.md, "Taxonomy": 33 fine categories under 4 coarse ones.

Names are the canonical spellings of the released files; everything that scores or
reports categories iterates over these tuples so the order is the same everywhere.
"""
from __future__ import annotations

COARSE_FIELDS: dict[str, str] = {
    "lexical-semantics": "Lexical Semantics",
    "predicate-argument-structure": "Predicate-Argument Structure",
    "logic": "Logic",
    "knowledge": "Knowledge",
}

TAXONOMY: dict[str, tuple[str, ...]] = {
    "Lexical Semantics": (
        "Lexical entailment", "Morphological negation", "Factivity",
        "Symmetry/Collectivity", "Redundancy", "Named entities", "Quantifiers",
    ),
    "Predicate-Argument Structure": (
        "Core args", "Prepositional phrases", "Ellipsis/Implicits", "Anaphora/Coreference",
        "Active/Passive", "Nominalization", "Genitives/Partitives", "Datives",
        "Relative clauses", "Coordination scope", "Intersectivity", "Restrictivity",
    ),
    "Logic": (
        "Negation", "Double negation", "Intervals/Numbers", "Conjunction", "Disjunction",
        "Conditionals", "Universal", "Existential", "Temporal", "Upward monotone",
        "Downward monotone", "Non-monotone",
    ),
    "Knowledge": ("Common sense", "World knowledge"),
}

COARSE_CATEGORIES: tuple[str, ...] = tuple(TAXONOMY)
FINE_CATEGORIES: tuple[str, ...] = tuple(c for fine in TAXONOMY.values() for c in fine)
COARSE_OF: dict[str, str] = {c: coarse for coarse, fine in TAXONOMY.items() for c in fine}

assert len(FINE_CATEGORIES) == 33
