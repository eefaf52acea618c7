"""Regex tokenization shared by every language, and the normalised form word lists use.

Words keep inner hyphens ("кто-то", "peut-être"); apostrophes split words ("n'était" ->
"n", "était") and are dropped; every other punctuation mark, including Russian and
French quotes and dashes (« » „ “ — –), becomes a token of its own so that rules can
anchor on clause boundaries such as ", om".
"""
from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+(?:[-‐]\w+)*|[^\w\s'’‘`´]")
_EDGE_APOSTROPHES = "'’‘`´"


def normalize(word: str) -> str:
    """Lower case, 'ё' as 'е' (Russian texts use both), typographic apostrophes as "'"."""
    return word.lower().replace("ё", "е").replace("’", "'")


def tokenize(text: str) -> list[str]:
    """Tokens of `text` in their original case."""
    return _TOKEN.findall(text)


def normalize_token(text: str) -> str:
    """Normalise a token produced by another tokenizer (spaCy) to the word-list convention."""
    return normalize(text).strip(_EDGE_APOSTROPHES)
