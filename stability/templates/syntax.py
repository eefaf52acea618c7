"""The placeholder syntax of template strings, parsed once into literal text, slots and switches.

    {name}                   a value of lexicon `name`
    {name1} {name2}          two slots filled from lexicon `name`, never with the same value
    {name.ACC}               the form with these features (an inherent feature, e.g.
                             {role.MASC}, also restricts which entries the slot takes)
    {adj.<name.GENDER>}      agreement: the form whose GENDER is name's (several dimensions
                             and fixed features in any order: {adj.SG.<name.NUMBER.GENDER>})
    {est:name.SG|sont:name.PL}   a switch: the first text whose condition holds for the slot's
                             inherent features; a last alternative without ':' is the default
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Union

from stability.core.errors import UserError
from stability.templates.features import FeatureSchema

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
SLOT = re.compile(r"^(?P<lexicon>[a-z][a-z_]*?)(?P<number>\d*)$")
_TOKENS = re.compile(r"<[^<>]*>|[^.<>]+")
_SYNTAX_FIX = "write {slot.FEATURE.<other.DIMENSION>} or {text:slot.VALUE|text:slot.VALUE}"


@dataclass(frozen=True)
class Agreement:
    """`<slot.DIM.DIM>`: take these dimensions' values from the other slot's entry."""

    slot: str
    dimensions: tuple[str, ...]


@dataclass(frozen=True)
class SlotRef:
    slot: str
    fixed: Mapping[str, str]
    agreements: tuple[Agreement, ...]
    text: str

    @property
    def lexicon(self) -> str:
        return lexicon_of(self.slot)


@dataclass(frozen=True)
class Alternative:
    """One branch of a switch; `slot` is None for the default branch."""

    text: str
    slot: str | None
    condition: Mapping[str, str]


@dataclass(frozen=True)
class Switch:
    alternatives: tuple[Alternative, ...]
    text: str


Part = Union[str, SlotRef, Switch]


def lexicon_of(slot: str) -> str:
    """`name2` -> `name`."""
    match = SLOT.match(slot)
    assert match is not None, slot
    return match["lexicon"]


def _slot_name(text: str, placeholder: str, where: str) -> str:
    if not SLOT.match(text):
        raise UserError(f"'{text}' in {{{placeholder}}} is not a slot name", path=where,
                        fix="slots are lower-case lexicon names, optionally numbered (name1, name2)")
    return text


def _slot_ref(body: str, schema: FeatureSchema, where: str) -> SlotRef:
    tokens = _TOKENS.findall(body)
    if not tokens or ".".join(tokens) != body:
        raise UserError(f"cannot read {{{body}}}", path=where, fix=_SYNTAX_FIX)
    slot = _slot_name(tokens[0], body, where)
    fixed: dict[str, str] = {}
    agreements = []
    given: list[str] = []
    for token in tokens[1:]:
        if token.startswith("<"):
            ref, *dimensions = token[1:-1].split(".")
            unknown = [name for name in dimensions if name not in schema.dimensions]
            if not dimensions or unknown:
                raise UserError(f"{{{body}}} agrees in unknown dimension(s) {', '.join(unknown) or '(none)'}",
                                path=where, fix=f"use dimensions among {', '.join(schema.dimensions)}")
            agreements.append(Agreement(_slot_name(ref, body, where), tuple(dimensions)))
            given += dimensions
        else:
            bundle = schema.bundle(token, where)
            fixed.update(bundle)
            given += list(bundle)
    if len(given) != len(set(given)):
        raise UserError(f"{{{body}}} sets a dimension twice", path=where,
                        fix="give each dimension once, fixed or by agreement")
    return SlotRef(slot, fixed, tuple(agreements), body)


def _switch(body: str, schema: FeatureSchema, where: str) -> Switch:
    alternatives = []
    branches = body.split("|")
    for position, branch in enumerate(branches):
        if ":" not in branch:
            if position != len(branches) - 1:
                raise UserError(f"in {{{body}}} only the last alternative may lack a condition",
                                path=where, fix=_SYNTAX_FIX)
            alternatives.append(Alternative(branch, None, {}))
            continue
        text, _, condition = branch.rpartition(":")
        slot, _, values = condition.partition(".")
        if not values:
            raise UserError(f"the condition '{condition}' in {{{body}}} names no feature", path=where,
                            fix=_SYNTAX_FIX)
        alternatives.append(Alternative(text, _slot_name(slot, body, where), schema.bundle(values, where)))
    return Switch(tuple(alternatives), body)


def parse_text(text: str, schema: FeatureSchema, where: str) -> tuple[Part, ...]:
    """Split a premise or hypothesis into literal text, slot references and switches."""
    if "{" in _PLACEHOLDER.sub("", text) or "}" in _PLACEHOLDER.sub("", text):
        raise UserError(f"unbalanced braces in '{text}'", path=where, fix="close every {placeholder}")
    parts: list[Part] = []
    position = 0
    for match in _PLACEHOLDER.finditer(text):
        if match.start() > position:
            parts.append(text[position:match.start()])
        body = match[1]
        parts.append(_switch(body, schema, where) if ("|" in body or ":" in body)
                     else _slot_ref(body, schema, where))
        position = match.end()
    if position < len(text):
        parts.append(text[position:])
    return tuple(parts)
