"""Word-level language checks: what a text holds that its language would not.

- Cyrillic-script languages: lowercase Latin-script words of at least `min_length` letters
  found in the `web2` English word list (english-words). Capitalised words are left out on
  purpose: they are names, acronyms and brands (web2 lists names capitalised, so "Moscow"
  never matches), and so are the language's `qa_allowed_words` (Russian written in Latin
  letters that is also an English word: "da", "net", "tsar", ...).
- Latin-script languages: letters outside the language's alphabet (either case), apart
  from `allowed` extra letters. Cyrillic left over from the Russian source (whole
  sentences, or single Cyrillic look-alikes such as "С" inside a Latin word) shows up
  here. Latin letters with foreign diacritics inside a capitalised word are names kept in
  their own spelling (Riihimäki, Dvořák; German also capitalises nouns such as Café) and
  pass unless `names` is set; letters of any other script never pass.
"""
from __future__ import annotations

import functools
import re
import unicodedata

from stability.core.errors import require
from stability.core.languages import Language

# a run of lowercase ASCII letters not touching any other letter (so "iPhone" is not "hone")
_LOWER_LATIN_WORD = re.compile(r"(?<![^\W\d_])[a-z]+(?![^\W\d_])")
_WORD = re.compile(r"[^\W\d_]+")


@functools.lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """The web2 list in its own spelling (names capitalised)."""
    english = require("english_words", "english-words is not installed", fix="pip install 'nli-stability[dataqa]'")
    return frozenset(english.get_english_words_set(["web2"], lower=False))


@functools.lru_cache(maxsize=None)
def _letters(alphabet: str, allowed: str) -> frozenset[str]:
    return frozenset(alphabet + alphabet.upper() + allowed + allowed.upper())


def foreign_words(text: str, language: Language, min_length: int) -> list[str]:
    """English dictionary words in Cyrillic-script text, in order of appearance."""
    words = english_words()
    return [word for word in _LOWER_LATIN_WORD.findall(text)
            if len(word) >= min_length and word in words and word not in language.qa_allowed_words]


@functools.lru_cache(maxsize=None)
def _is_latin(char: str) -> bool:
    return unicodedata.name(char, "").startswith("LATIN")


def foreign_letters(text: str, language: Language, allowed: str = "", names: bool = False) -> list[str]:
    """Letters outside a Latin-script language's alphabet (and `allowed`), each once, in order;
    foreign Latin letters in capitalised words (names) only when `names`."""
    letters = _letters(language.alphabet, allowed)
    found = []
    for word in _WORD.findall(text):
        name = word[0].isupper() and not names
        found += [char for char in word if char not in letters and not (name and _is_latin(char))]
    return list(dict.fromkeys(found))


def word_findings(text: str, language: Language, min_length: int, allowed: str, names: bool = False) -> list[str]:
    """What the word-level check finds in `text` for the language's script (empty = pass)."""
    if language.script == "cyrillic":
        return foreign_words(text, language, min_length)
    return foreign_letters(text, language, allowed, names)
