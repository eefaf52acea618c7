"""Word lists as data files: `annotators/wordlists/<lang>/<name>.txt`.

Format, one entry per line (lines starting with '#' are comments):
- a word: `never` (matched against the word form and its lemma, case-insensitively);
- a prefix: `kein*` (any word starting with "kein");
- a phrase: `as well as`, words separated by spaces; tokens are produced by
  `annotators.tokenize`, so punctuation is a word of its own (`, om`); `^` as the
  first element anchors the phrase at the start of the sentence (`^ om`); `...` skips
  any words up to the next punctuation mark (`om ... är`); `a|b` is either word.
A missing file means the language does not support the features that need it.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

from annotators.tokenize import normalize

WORDLIST_DIR = Path(__file__).parent / "wordlists"
_ANCHOR = "^"
_GAP = "..."


@dataclass(frozen=True)
class Sentence:
    """What rules see: normalised word forms and, aligned with them, lemmas."""

    text: str
    words: tuple[str, ...]
    lemmas: tuple[str, ...]
    forms: frozenset[str]

    @classmethod
    def of(cls, text: str, words: list[str], lemmas: list[str] | None = None) -> Sentence:
        words_t = tuple(words)
        lemmas_t = words_t if lemmas is None else tuple(lemmas)
        return cls(text, words_t, lemmas_t, frozenset(words_t) | frozenset(lemmas_t))

    def sequences(self) -> tuple[tuple[str, ...], ...]:
        return (self.words,) if self.lemmas is self.words else (self.words, self.lemmas)


def _element_matches(element: str, token: str) -> bool:
    return any(token.startswith(alt[:-1]) if alt.endswith("*") else token == alt
               for alt in element.split("|"))


def _is_word(token: str) -> bool:
    return token[:1].isalnum() or token[:1] == "_"


def _match_from(phrase: tuple[str, ...], k: int, seq: tuple[str, ...], j: int) -> bool:
    """Whether phrase[k:] matches seq from position j (a gap skips words, not punctuation)."""
    if k == len(phrase):
        return True
    if phrase[k] == _GAP:
        for start in range(j, len(seq) + 1):
            if _match_from(phrase, k + 1, seq, start):
                return True
            if start == len(seq) or not _is_word(seq[start]):
                return False
        return False
    return j < len(seq) and _element_matches(phrase[k], seq[j]) and _match_from(phrase, k + 1, seq, j + 1)


@dataclass(frozen=True)
class WordList:
    """A compiled list: set look-ups first, phrases tried only where their first word occurs."""

    name: str
    words: frozenset[str]
    prefixes: tuple[str, ...]
    by_head: dict[str, tuple[tuple[str, ...], ...]]   # phrases by each plain first word
    unindexed: tuple[tuple[str, ...], ...]            # phrases starting with ^, ... or a prefix

    @classmethod
    def parse(cls, name: str, entries: list[str]) -> WordList:
        words, prefixes, by_head, unindexed = set(), [], {}, []
        for entry in entries:
            parts = tuple(normalize(part) for part in entry.split())
            if len(parts) > 1 and _indexable(parts[0]):
                for head in parts[0].split("|"):
                    by_head.setdefault(head, []).append(parts)
            elif len(parts) > 1:
                unindexed.append(parts)
            elif parts[0].endswith("*"):
                prefixes.append(parts[0][:-1])
            else:
                words.add(parts[0])
        return cls(name, frozenset(words), tuple(prefixes),
                   {head: tuple(phrases) for head, phrases in by_head.items()}, tuple(unindexed))

    def _single_at(self, token: str) -> bool:
        return token in self.words or (bool(self.prefixes) and token.startswith(self.prefixes))

    def _phrase_at(self, phrase: tuple[str, ...], seq: tuple[str, ...], start: int) -> bool:
        if phrase[0] == _ANCHOR:
            return start == 0 and _match_from(phrase, 1, seq, 0)
        return _match_from(phrase, 0, seq, start)

    def matches(self, sentence: Sentence) -> bool:
        """Whether any entry occurs in the sentence (fast path: set intersection)."""
        if self.words & sentence.forms:
            return True
        if self.prefixes and any(form.startswith(self.prefixes) for form in sentence.forms):
            return True
        if not self.unindexed and sentence.forms.isdisjoint(self.by_head):
            return False
        return bool(self.positions(sentence, singles=False))

    def positions(self, sentence: Sentence, singles: bool = True) -> set[int]:
        """Token positions where an entry starts (a position counts once)."""
        hits: set[int] = set()
        for seq in sentence.sequences():
            for i, token in enumerate(seq):
                if singles and self._single_at(token):
                    hits.add(i)
                elif any(self._phrase_at(p, seq, i) for p in self.by_head.get(token, ())):
                    hits.add(i)
            for phrase in self.unindexed:
                hits.update(i for i in range(len(seq)) if self._phrase_at(phrase, seq, i))
        return hits

    def count(self, sentence: Sentence) -> int:
        return len(self.positions(sentence))


def _indexable(head: str) -> bool:
    """A first element that is one or more plain words, so a set look-up can rule it out."""
    return head not in (_ANCHOR, _GAP) and "*" not in head


def read_entries(lang: str, name: str) -> list[str] | None:
    """Non-comment lines of a word-list file, or None when the language has no such list."""
    path = WORDLIST_DIR / lang / f"{name}.txt"
    if not path.is_file():
        return None
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


@functools.lru_cache(maxsize=None)
def load(lang: str, name: str) -> WordList | None:
    entries = read_entries(lang, name)
    return None if entries is None else WordList.parse(name, entries)


def fingerprint(lang: str) -> str:
    """Hash of a language's word lists, so editing a list invalidates cached annotations."""
    digest = hashlib.sha256()
    for path in sorted((WORDLIST_DIR / lang).glob("*.txt")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
