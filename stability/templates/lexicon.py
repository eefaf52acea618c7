"""Lexicons: the values a placeholder takes, each value a set of word forms keyed by features.

A lexicon is a list of entries. An entry is a plain string (one form, no features) or a
mapping from a feature bundle to a form, e.g. {MASC.SG: ravi, FEM.SG: ravie}; a Russian
lexicon may instead list lemmas whose forms pymorphy3 generates (`russian.py`); `suites.py`
reads either kind. The dimensions an entry has with one value in every form are its
*inherent* features (a name's GENDER, a noun's STARTSWITH): agreement and switches read
those. Entry i of a lexicon means the same in every language, which is what aligns
generated items across languages.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from stability.core.errors import UserError
from stability.templates.features import Bundle, FeatureSchema, bundle_text


class MissingForm(LookupError):
    """An entry has no single form for the requested features (the engine adds the template)."""


@dataclass(frozen=True)
class Entry:
    """One lexicon value: its forms, its inherent features, and its position in the lexicon."""

    index: int
    forms: tuple[tuple[Bundle, str], ...]
    inherent: Mapping[str, str]
    lemma: str | None = None
    # rendered forms by request: a suite asks the same few questions thousands of times
    _found: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def name(self) -> str:
        """How messages refer to the entry: its lemma or its first form."""
        return self.lemma or self.forms[0][1]

    def form(self, request: Bundle) -> str:
        """The form whose bundle has every requested dimension the entry inflects for.

        Dimensions no form of the entry names are ignored (`rapide`, written without gender,
        serves both genders); a missing form is an error, never a silent fallback.
        """
        key = tuple(sorted(request.items()))
        if key not in self._found:
            self._found[key] = self._lookup(request)
        return self._found[key]

    def _lookup(self, request: Bundle) -> str:
        known = {name for bundle, _ in self.forms for name in bundle}
        wanted = {name: value for name, value in request.items() if name in known}
        forms = {form for bundle, form in self.forms
                 if all(bundle.get(name) == value for name, value in wanted.items())}
        if not forms:
            raise MissingForm(f"'{self.name}' has no form for {bundle_text(request)} "
                              f"(it has {', '.join(bundle_text(b) for b, _ in self.forms)})")
        if len(forms) > 1:
            raise MissingForm(f"'{self.name}' has several forms for {bundle_text(request)} "
                              f"({', '.join(sorted(forms))}); add the features that pick one")
        return forms.pop()


@dataclass(frozen=True)
class Lexicon:
    entries: tuple[Entry, ...]
    # dimensions computed from the forms (STARTSWITH), not written in the lexicon
    computed: frozenset[str] = frozenset()


def make_entry(index: int, forms: list[tuple[dict[str, str], str]], schema: FeatureSchema,
               lemma: str | None = None) -> Entry:
    """Add the computed dimensions to every form (written features win) and find the inherent ones."""
    full = tuple(({**schema.computed_features(form), **bundle}, form) for bundle, form in forms)
    shared = set.intersection(*(set(bundle) for bundle, _ in full))
    inherent = {name: full[0][0][name] for name in sorted(shared)
                if len({bundle[name] for bundle, _ in full}) == 1}
    return Entry(index=index, forms=full, inherent=inherent, lemma=lemma)


def written_entry(index: int, value: object, schema: FeatureSchema, where: str) -> Entry:
    """Entry `index` as the lexicon writes it: a plain form, or a mapping FEATURES: form."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return make_entry(index, [({}, str(value))], schema)
    if isinstance(value, dict) and value:
        forms = []
        for key, form in value.items():
            if not isinstance(form, (str, int, float)) or isinstance(form, bool) or not str(form):
                raise UserError(f"entry {index}: the form for '{key}' must be a non-empty string",
                                path=where, fix="write FEATURES: form")
            forms.append((schema.bundle(key, where), str(form)))
        bundles = [bundle for bundle, _ in forms]
        if any(bundles.count(bundle) > 1 for bundle in bundles):
            raise UserError(f"entry {index}: two forms share a feature bundle", path=where,
                            fix="give each form its own bundle")
        return make_entry(index, forms, schema)
    raise UserError(f"entry {index} is neither a string nor a mapping FEATURES: form", path=where,
                    fix="write a plain string, or e.g. {MASC.SG: ravi, FEM.SG: ravie}")
