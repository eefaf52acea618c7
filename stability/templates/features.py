"""Feature names and values: UniMorph dimensions plus the dimensions a suite defines itself.

A feature bundle is written as dot-joined values, e.g. `MASC.SG.NOM`; each value belongs to
exactly one dimension, so the bundle reads as {GENDER: MASC, NUMBER: SG, CASE: NOM} without
naming the dimensions. A suite may add dimensions whose value is computed from a word form
(e.g. STARTSWITH: VOW / CONS for French elision) by the first matching regular expression.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Mapping

from stability.core.errors import UserError

Bundle = Mapping[str, str]   # dimension -> value

# UniMorph dimension names and the values the suites use. Two spellings differ from UniMorph
# only where its notation collides with ours: the infinitive is NFIN and the participle PTCP
# (UniMorph's V.PTCP part of speech; '.' separates features here), both under VERBFORM.
# Russian's prepositional case is UniMorph's ESS.
UNIMORPH: dict[str, tuple[str, ...]] = {
    "GENDER": ("MASC", "FEM", "NEUT"),
    "NUMBER": ("SG", "PL"),
    "CASE": ("NOM", "ACC", "GEN", "DAT", "INS", "ESS"),
    "DEFINITENESS": ("DEF", "INDF"),
    "PERSON": ("1", "2", "3"),
    "TENSE": ("PRS", "PST", "FUT"),
    "MOOD": ("IND", "SBJV", "COND"),
    "ASPECT": ("IPFV", "PFV"),
    "VOICE": ("ACT", "PASS"),
    "VERBFORM": ("NFIN", "PTCP"),
}
_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_VALUE = re.compile(r"^[A-Z0-9][A-Z0-9_]*$")


@dataclass(frozen=True)
class FeatureSchema:
    """Which dimension each value belongs to, and how computed dimensions are derived."""

    dimensions: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(UNIMORPH))
    # dimension -> ((value, pattern), ...): the first pattern that matches a form gives its value
    computed: Mapping[str, tuple[tuple[str, re.Pattern[str]], ...]] = field(default_factory=dict)

    @functools.cached_property
    def dimension_of(self) -> dict[str, str]:
        """value -> dimension."""
        return {value: name for name, values in self.dimensions.items() for value in values}

    def with_dimensions(self, spec: object, where: str) -> FeatureSchema:
        """Add a suite's own dimensions: {NAME: {VALUE: regex, ...}} (values tried in order)."""
        if spec is None:
            return self
        if not isinstance(spec, dict):
            raise UserError("'dimensions' must map a dimension name to {VALUE: regex}", path=where,
                            fix="write e.g. STARTSWITH: {VOW: '^[aeiou]', CONS: ''}")
        dimensions, computed = dict(self.dimensions), dict(self.computed)
        taken = dict(self.dimension_of)
        for name, values in spec.items():
            if not (isinstance(name, str) and _NAME.match(name)) or name in dimensions:
                raise UserError(f"dimension '{name}' is not a new upper-case name", path=where,
                                fix=f"choose a name other than {', '.join(dimensions)}")
            if not isinstance(values, dict) or not values:
                raise UserError(f"dimension '{name}' needs {{VALUE: regex}} pairs", path=where,
                                fix="write each value with the regular expression a form must match")
            rules = []
            for value, pattern in values.items():
                value = str(value)
                if not _VALUE.match(value) or value in taken:
                    raise UserError(f"value '{value}' of dimension '{name}' is not a new upper-case value",
                                    path=where, fix="every value must belong to one dimension only")
                try:
                    rules.append((value, re.compile(str(pattern or ""))))
                except re.error as err:
                    raise UserError(f"bad regular expression for {name}={value} ({err})", path=where,
                                    fix="repair the pattern") from None
                taken[value] = name
            dimensions[name] = tuple(value for value, _ in rules)
            computed[name] = tuple(rules)
        return FeatureSchema(dimensions, computed)

    def bundle(self, text: object, where: str) -> dict[str, str]:
        """Parse `MASC.SG.NOM` (an empty string is the empty bundle)."""
        bundle: dict[str, str] = {}
        for value in (str(text).split(".") if str(text) else []):
            name = self.dimension_of.get(value)
            if name is None:
                raise UserError(f"unknown feature value '{value}' in '{text}'", path=where,
                                fix=f"use values of {', '.join(self.dimensions)}, or define a dimension")
            if name in bundle:
                raise UserError(f"'{text}' gives {name} twice", path=where, fix="give each dimension once")
            bundle[name] = value
        return bundle

    def computed_features(self, form: str) -> dict[str, str]:
        """The computed dimensions' values for a word form (first matching pattern per dimension)."""
        found = {}
        for name, rules in self.computed.items():
            for value, pattern in rules:
                if pattern.search(form):
                    found[name] = value
                    break
        return found


def bundle_text(bundle: Bundle) -> str:
    """`MASC.SG` for messages and ids, dimensions in a fixed order."""
    return ".".join(bundle[name] for name in sorted(bundle)) or "(no features)"
