"""Russian: regex tokens, pymorphy3 analyses (case, POS, name tags) and word lists on lemmas.

Each distinct word form is analysed once per process (`analyse` is an LRU cache), which is
what makes Russian fast: running text reuses a small vocabulary.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from annotators.affixes import MorphNegation
from annotators.tokenize import normalize, tokenize
from annotators.wordlist_rules import LexicalRules
from annotators.wordlists import Sentence
from stability.core.errors import require

_NAME_TAGS = frozenset({"Name", "Surn", "Patr", "Geox", "Orgn", "Trad"})
_NOMINAL = frozenset({"NOUN", "NPRO"})
# Words that may stand between a preposition and its noun ("к своему старшему брату").
_PREPOSITION_MODIFIERS = frozenset({"ADJF", "PRTF", "NUMR"})
_COARSE_POS = {"ADJF": "ADJ", "ADJS": "ADJ", "PRTF": "ADJ", "PRTS": "ADJ", "COMP": "ADJ",
               "ADVB": "ADV", "PRED": "ADV", "NOUN": "NOUN", "VERB": "VERB", "INFN": "VERB"}


@dataclass(frozen=True)
class Analysis:
    lemma: str
    pos: str
    grammemes: frozenset[str]
    known: bool


@functools.lru_cache(maxsize=1)
def _analyzer():
    pymorphy3 = require("pymorphy3", "the 'ru' annotator needs pymorphy3, which is not installed",
                        fix="pip install 'nli-stability[annotators]'")
    return pymorphy3.MorphAnalyzer()


@functools.lru_cache(maxsize=1 << 18)
def analyse(word: str) -> Analysis:
    """Most probable pymorphy3 parse of a normalised word form."""
    parse = _analyzer().parse(word)[0]
    return Analysis(normalize(parse.normal_form), str(parse.tag.POS or ""),
                    frozenset(parse.tag.grammemes), _analyzer().word_is_known(word))


@functools.lru_cache(maxsize=1 << 16)
def is_word(stem: str, pos: str | None) -> bool:
    """A dictionary word, of coarse POS `pos` in one of its readings when given."""
    if not _analyzer().word_is_known(stem):
        return False
    return pos is None or any(_COARSE_POS.get(str(p.tag.POS)) == pos for p in _analyzer().parse(stem))


def _backend() -> str:
    from importlib.metadata import version

    return f"pymorphy3-{version('pymorphy3')}:dicts-{version('pymorphy3-dicts-ru')}"


class RussianAnnotator:
    def __init__(self) -> None:
        self.lang = "ru"
        self.backend = _backend()
        self.rules = LexicalRules("ru")
        self.morphneg = MorphNegation.load("ru", is_word)
        morphology = {"Named entities", "Intervals/Numbers", "Prepositional phrases", "Datives"}
        if self.morphneg is not None:
            morphology.add("Morphological negation")
        self.supported = self.rules.supported | morphology

    def annotate_texts(self, texts: list[str], batch_size: int, n_process: int) -> list[frozenset[str]]:
        return [frozenset(self._features(text)) for text in texts]

    def _features(self, text: str) -> set[str]:
        tokens = tokenize(text)
        words = [normalize(token) for token in tokens]
        analyses = [analyse(word) for word in words]
        found: set[str] = set()
        negative_words = 0
        after_preposition = False
        for i, (token, a) in enumerate(zip(tokens, analyses)):
            if a.pos == "PREP":
                found.add("Prepositional phrases")
                after_preposition = True
                continue
            if a.pos in _NOMINAL and "datv" in a.grammemes and not after_preposition:
                found.add("Datives")
            after_preposition = after_preposition and a.pos in _PREPOSITION_MODIFIERS
            if a.pos == "NUMR" or "NUMB" in a.grammemes:
                found.add("Intervals/Numbers")
            if token[:1].isupper() and (a.grammemes & _NAME_TAGS or (i > 0 and not a.known)):
                found.add("Named entities")
            coarse = _COARSE_POS.get(a.pos)
            if self.morphneg is not None and coarse and self.morphneg.is_negated(a.lemma, coarse):
                found.add("Morphological negation")
                negative_words += 1
        sentence = Sentence.of(text, words, [a.lemma for a in analyses])
        return found | self.rules.detect(sentence, negative_words)
