"""Which languages' diagnostic sets are translations of one another, so that their items may be paired.

The translated diagnostic sets share `idx`, gold labels and categories: one idx is one meaning in
each language (docs/design.md, "Data contract"), which is what the sections that pair items across
languages rely on (cross-lingual consistency, the atlas's language flip rate, `compare_langs`). Sets
that are not translations of one another share idx by chance: the built-in English set beside the
French release (`data.eval_langs=[fr]` on a run scored on the built-in English set) has idx 0–82
in both, with other sentences, labels and categories. Two languages of one condition (setup,
variant) are *aligned* when they share items and every item they share has the same label and
categories in both; a condition's languages fall into *alignment groups*, the languages connected
by aligned pairs, each named by its languages (`de+fr+sv`). Items are compared across languages only
within a group.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from stability.core.errors import UserError
from stability.statistics.clusters import components

CONDITION = ["setup", "variant"]
GROUP = "language_group"


def _signatures(predictions: pd.DataFrame) -> dict[tuple[str, str, str], pd.Series]:
    """Per (setup, variant, lang): each item's label and categories by idx (from any one run: a
    language's runs of one condition are scored on one set)."""
    items = predictions.drop_duplicates(["setup", "variant", "lang", "idx"])
    return {key: part.set_index(part["idx"].astype(str))["label"].astype(str) + "|" + part["categories"].fillna("")
            .astype(str).to_numpy() for key, part in items.groupby(["setup", "variant", "lang"], sort=True)}


def aligned(a: pd.Series, b: pd.Series) -> bool:
    """Two languages' item signatures (`_signatures`) are one set translated: shared items, each the same."""
    shared = a.index.intersection(b.index)
    return len(shared) > 0 and bool((a.loc[shared] == b.loc[shared]).all())


def alignment_groups(predictions: pd.DataFrame) -> pd.DataFrame:
    """One row per (setup, variant, lang) with predictions: its `language_group`, the languages of the
    condition whose items may be paired with its own, `+`-joined (module docstring)."""
    signatures = _signatures(predictions)
    conditions: dict[tuple[str, str], list[str]] = {}
    for setup, variant, lang in signatures:
        conditions.setdefault((setup, variant), []).append(lang)
    rows = []
    for (setup, variant), langs in conditions.items():
        pairs = [(a, b) for a, b in combinations(langs, 2)
                 if aligned(signatures[(setup, variant, a)], signatures[(setup, variant, b)])]
        # each language, and each aligned pair, one row of labels: the connected languages are one group
        linked = np.array([(lang, lang) for lang in langs] + pairs, dtype=object)
        groups = components(linked)[:len(langs)]
        names = {group: "+".join(sorted(lang for lang, other in zip(langs, groups) if other == group))
                 for group in set(groups)}
        rows += [(setup, variant, lang, names[group]) for lang, group in zip(langs, groups)]
    return pd.DataFrame(rows, columns=[*CONDITION, "lang", GROUP])


def with_groups(predictions: pd.DataFrame) -> pd.DataFrame:
    """`predictions` with each row's `language_group`."""
    return predictions.merge(alignment_groups(predictions), on=[*CONDITION, "lang"], how="left")


def unaligned_note(predictions: pd.DataFrame) -> str:
    """A sentence naming, per condition, the languages whose items are not paired with the others'
    (empty where every condition's languages are aligned)."""
    groups = alignment_groups(predictions)
    parts = []
    for (setup, variant), part in groups.groupby(CONDITION, sort=True):
        if part[GROUP].nunique() > 1:
            sets = " | ".join(sorted(part[GROUP].unique()))
            parts.append(f"{setup}{'/' + variant if variant else ''}: {sets}")
    return ("Diagnostic sets that are not translations of one another (other labels or categories under the "
            f"same idx) are not paired item by item: {'; '.join(parts)}." if parts else "")


def check_aligned(predictions: pd.DataFrame, lang_a: str, lang_b: str, option: str) -> None:
    """Refuse `option` (a pair of languages whose items a section pairs) where the two languages'
    diagnostic sets are not translations of one another in any condition they share."""
    signatures = _signatures(predictions)
    shared = [key[:2] for key in signatures if key[2] == lang_a and (*key[:2], lang_b) in signatures]
    if shared and not any(aligned(signatures[(*key, lang_a)], signatures[(*key, lang_b)]) for key in shared):
        raise UserError(f"{option}=[{lang_a},{lang_b}]: the two languages' diagnostic sets are not translations "
                        "of one another (their shared idx have other labels or categories), so their items "
                        "cannot be paired",
                        fix="compare languages scored on one translated release (e.g. the released "
                            "fr/de/sv sets, or the built-in sets of every language)")
