"""Features that word lists alone detect, for every language; the whole annotator for de/sv.

Negation is counted, not just found, because Double negation means two negations in one
sentence or a negated negative word ("not impossible", "ne pas refuser"). In
negative-concord languages (French, Russian) n-words such as "jamais"/"никогда" only
accompany the negator, so they live in `negation_concord.txt`: they mark Negation on
their own but are not counted as extra negations.
"""
from __future__ import annotations

import re

from annotators.tokenize import normalize, tokenize
from annotators.wordlists import Sentence, WordList, load

# Feature -> word list whose presence marks it.
LIST_FEATURES: dict[str, str] = {
    "Quantifiers": "quantifiers",
    "Factivity": "factives",
    "Intervals/Numbers": "numbers",
    "Temporal": "temporal",
    "Conditionals": "conditionals",
    "Conjunction": "conjunction",
    "Disjunction": "disjunction",
    "Anaphora/Coreference": "anaphora",
    "Relative clauses": "relative_pronouns",
}
_DIGIT = re.compile(r"\d")


class LexicalRules:
    """Word-list features of one language; `supported` follows from which lists exist."""

    def __init__(self, lang: str) -> None:
        self.lists: dict[str, WordList] = {
            feature: wordlist for feature, name in LIST_FEATURES.items()
            if (wordlist := load(lang, name)) is not None
        }
        self.negation = load(lang, "negation")
        self.concord = load(lang, "negation_concord")
        self.negative_words = load(lang, "negative_predicates")
        supported = set(self.lists)
        if self.negation is not None:
            supported |= {"Negation", "Double negation"}
        self.supported = frozenset(supported)

    def detect(self, sentence: Sentence, negative_words: int = 0) -> set[str]:
        """Features of one sentence; `negative_words` counts negative words found by morphology."""
        found = {feature for feature, wordlist in self.lists.items() if wordlist.matches(sentence)}
        if "Intervals/Numbers" in self.lists and _DIGIT.search(sentence.text):
            found.add("Intervals/Numbers")
        if self.negation is None:
            return found
        negators = self.negation.count(sentence)
        negated = negators > 0 or (self.concord is not None and self.concord.matches(sentence))
        if negated:
            found.add("Negation")
            if self.negative_words is not None:
                negative_words += self.negative_words.count(sentence)
            if negators >= 2 or negative_words:
                found.add("Double negation")
        return found


class LexicalAnnotator:
    """Annotator for languages without a morphosyntactic analyser here (German, Swedish)."""

    backend = "wordlists"

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.rules = LexicalRules(lang)
        self.supported = self.rules.supported

    def annotate_texts(self, texts: list[str], batch_size: int, n_process: int) -> list[frozenset[str]]:
        return [frozenset(self.rules.detect(Sentence.of(text, [normalize(t) for t in tokenize(text)])))
                for text in texts]
