"""Morphological negation: a negative affix on a real word ("un+happy", "im+possible",
"care+less", "не+верный"), checked against the analyser's lexicon so that "under",
"interest" or "uncle" (whose remainder is no word) are not negations.

Lists per language: `negation_prefixes.txt` and `negation_suffixes.txt` hold lines
`AFFIX POS...` (the universal POS tags of the negated word the affix applies to), and
`morph_negation_exceptions.txt` holds lemmas that look negated but are not ("disease").
A prefix needs a remainder of the same POS; a suffix ("-less") any POS.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from annotators.tokenize import normalize
from annotators.wordlists import read_entries

IsWord = Callable[[str, "str | None"], bool]  # (stem, POS or None for any POS) -> known word?
_MIN_STEM = 3


def _affixes(lang: str, name: str) -> tuple[tuple[str, frozenset[str]], ...]:
    rows = [entry.split() for entry in read_entries(lang, name) or []]
    return tuple((normalize(row[0]).strip("-"), frozenset(row[1:])) for row in rows)


@dataclass(frozen=True)
class MorphNegation:
    prefixes: tuple[tuple[str, frozenset[str]], ...]
    suffixes: tuple[tuple[str, frozenset[str]], ...]
    exceptions: frozenset[str]
    is_word: IsWord

    @classmethod
    def load(cls, lang: str, is_word: IsWord) -> MorphNegation | None:
        """None when the language has no affix lists (feature unsupported)."""
        if read_entries(lang, "negation_prefixes") is None:
            return None
        exceptions = frozenset(normalize(e) for e in read_entries(lang, "morph_negation_exceptions") or [])
        return cls(_affixes(lang, "negation_prefixes"), _affixes(lang, "negation_suffixes"),
                   exceptions, is_word)

    def is_negated(self, lemma: str, pos: str) -> bool:
        if lemma in self.exceptions:
            return False
        for prefix, tags in self.prefixes:
            if pos in tags and lemma.startswith(prefix):
                stem = lemma[len(prefix):].lstrip("-")
                if len(stem) >= _MIN_STEM and self.is_word(stem, pos):
                    return True
        for suffix, tags in self.suffixes:
            if pos in tags and lemma.endswith(suffix):
                stem = lemma[:-len(suffix)]
                if len(stem) >= _MIN_STEM and self.is_word(stem, None):
                    return True
        return False
