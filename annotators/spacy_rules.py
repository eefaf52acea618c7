"""English and French: word lists plus spaCy POS tags, dependencies and entities.

The two parsers use different label sets (ClearNLP-style for English, Universal
Dependencies for French), so each language has a `SyntaxProfile` naming the labels that
mark a feature; the rules themselves are shared.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotators.affixes import MorphNegation
from annotators.tokenize import normalize_token
from annotators.wordlist_rules import LexicalRules
from annotators.wordlists import Sentence

_NUMERIC_ENTITIES = frozenset({"CARDINAL", "QUANTITY", "PERCENT", "MONEY"})


@dataclass(frozen=True)
class SyntaxProfile:
    entity_labels: frozenset[str]      # entity types that are named entities
    relative_deps: frozenset[str]      # head verb of a relative clause
    dative_deps: frozenset[str]        # indirect objects, "to"/"à" of the dative alternation
    pp_deps: frozenset[str]            # label of an adposition heading a PP
    dative_adpositions: frozenset[str] = frozenset()  # "à": dative when it heads an oblique of a verb
    non_dative_clitics: frozenset[str] = frozenset()  # locative clitics parsed as iobj ("y", "en")


PROFILES: dict[str, SyntaxProfile] = {
    "en": SyntaxProfile(
        entity_labels=frozenset({"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT",
                                 "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"}),
        relative_deps=frozenset({"relcl"}),
        dative_deps=frozenset({"dative"}),
        pp_deps=frozenset({"prep", "agent", "dative"}),
    ),
    "fr": SyntaxProfile(
        entity_labels=frozenset({"PER", "LOC", "ORG", "MISC"}),
        relative_deps=frozenset({"acl:relcl"}),
        dative_deps=frozenset({"iobj"}),
        pp_deps=frozenset({"case"}),
        dative_adpositions=frozenset({"à", "au", "aux"}),
        non_dative_clitics=frozenset({"y", "en"}),
    ),
}
_MORPH_POS = frozenset({"ADJ", "ADV", "NOUN", "VERB"})


def _lexicon(nlp) -> dict[str, frozenset[str]]:
    """Known words per POS from the lemmatizer's tables (empty when the pipeline has none).

    Adjectives also accept any lemma of the lookup table: participles serve as adjectives
    ("in+connu", "in+attendu") and lemmatise to themselves there, but are no adjective lemmas.
    """
    if "lemmatizer" not in nlp.pipe_names:
        return {}
    lookups = nlp.get_pipe("lemmatizer").lookups
    if not lookups.has_table("lemma_index"):
        return {}
    index = lookups.get_table("lemma_index")
    lexicon = {pos: frozenset(index[pos.lower()]) for pos in _MORPH_POS if pos.lower() in index}
    if lookups.has_table("lemma_lookup"):
        forms = lookups.get_table("lemma_lookup")
        lexicon["ADJ"] = lexicon.get("ADJ", frozenset()) | frozenset(
            form for lemmas in forms.values() for form in (lemmas if isinstance(lemmas, list) else [lemmas]))
    return lexicon


class SpacyAnnotator:
    def __init__(self, lang: str, nlp) -> None:
        self.lang = lang
        self.nlp = nlp
        self.profile = PROFILES[lang]
        self.backend = f"spacy:{nlp.meta['name']}-{nlp.meta['version']}"
        self.rules = LexicalRules(lang)
        lexicon = _lexicon(nlp)
        self.morphneg = (MorphNegation.load(lang, self._is_word_in(lexicon)) if lexicon else None)
        syntax = {"Named entities", "Intervals/Numbers", "Prepositional phrases",
                  "Relative clauses", "Datives"}
        if self.morphneg is not None:
            syntax.add("Morphological negation")
        self.supported = self.rules.supported | syntax

    @staticmethod
    def _is_word_in(lexicon: dict[str, frozenset[str]]):
        def is_word(stem: str, pos: str | None) -> bool:
            if pos is not None:
                return stem in lexicon.get(pos, ())
            return any(stem in words for words in lexicon.values())
        return is_word

    def annotate_texts(self, texts: list[str], batch_size: int, n_process: int) -> list[frozenset[str]]:
        """Names are capitalised in English and French, so the entity recogniser (as costly as
        the parser) runs afterwards, only on sentences with a proper noun or a capitalised
        word after the first; it reads the tok2vec output the first pass stored on each doc."""
        has_ner = "ner" in self.nlp.pipe_names
        with self.nlp.select_pipes(disable=["ner"] if has_ner else []):
            docs = list(self.nlp.pipe(texts, batch_size=batch_size, n_process=n_process))
        if has_ner:
            candidates = [doc for doc in docs if any(
                token.pos_ == "PROPN" or (token.i > 0 and token.is_title) for token in doc)]
            for _ in self.nlp.get_pipe("ner").pipe(candidates, batch_size=batch_size):
                pass
        return [frozenset(self._features(doc)) for doc in docs]

    def _is_dative(self, token) -> bool:
        profile = self.profile
        if token.dep_ in profile.dative_deps:
            return token.lower_ not in profile.non_dative_clitics
        return (token.lower_ in profile.dative_adpositions and token.head.dep_.startswith("obl")
                and token.head.head.pos_ in ("VERB", "AUX"))

    def _features(self, doc) -> set[str]:
        profile = self.profile
        found: set[str] = set()
        negative_words = 0
        words, lemmas = [], []
        for token in doc:
            word = normalize_token(token.text)
            lemma = normalize_token(token.lemma_) or word
            words.append(word)
            lemmas.append(lemma)
            pos, dep = token.pos_, token.dep_
            base = lemma
            if pos == "VERB" and "Part" in token.morph.get("VerbForm"):
                pos, base = "ADJ", word   # a participle negated as an adjective: "inattendu"
            if dep in profile.relative_deps:
                found.add("Relative clauses")
            if pos == "ADP" and dep in profile.pp_deps:
                found.add("Prepositional phrases")
            if self._is_dative(token):
                found.add("Datives")
            if pos == "NUM":
                found.add("Intervals/Numbers")
            if self.morphneg is not None and pos in _MORPH_POS and self.morphneg.is_negated(base, pos):
                found.add("Morphological negation")
                negative_words += 1
        for entity in doc.ents:
            if entity.label_ in profile.entity_labels:
                found.add("Named entities")
            elif entity.label_ in _NUMERIC_ENTITIES:
                found.add("Intervals/Numbers")
        found |= self.rules.detect(Sentence.of(doc.text, words, lemmas), negative_words)
        return found
