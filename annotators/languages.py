"""Which annotator serves which language, and the fingerprint that keys its cache."""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Protocol

from annotators import wordlists
from annotators.settings import Settings
from annotators.spacy_rules import PROFILES, SpacyAnnotator
from stability.core.languages import language, language_codes

LANGUAGES: tuple[str, ...] = language_codes()


class Annotator(Protocol):
    lang: str
    backend: str                 # analyser and version, part of the cache fingerprint
    supported: frozenset[str]

    def annotate_texts(self, texts: list[str], batch_size: int, n_process: int) -> list[frozenset[str]]:
        """Features of each sentence, in order."""


def check_lang(lang: str) -> str:
    """`lang` if it is a configured language, else the user error naming the configured ones."""
    return language(lang).code


def get_annotator(lang: str, settings: Settings) -> Annotator:
    """The annotator of `lang` under `settings` (built once per process and model list)."""
    return _build(check_lang(lang), settings.models_for(lang))


@functools.lru_cache(maxsize=None)
def _build(lang: str, models: tuple[str, ...]) -> Annotator:
    if lang == "ru":
        from annotators.russian import RussianAnnotator

        return RussianAnnotator()
    if models and lang in PROFILES:
        from annotators.spacy_loader import load_pipeline

        return SpacyAnnotator(lang, load_pipeline(lang, models))
    from annotators.wordlist_rules import LexicalAnnotator

    return LexicalAnnotator(lang)


@functools.lru_cache(maxsize=1)
def _source_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def fingerprint(annotator: Annotator) -> str:
    """Changes whenever the rules, the word lists or the analyser could change a result."""
    parts = (annotator.lang, annotator.backend, wordlists.fingerprint(annotator.lang), _source_hash())
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]
