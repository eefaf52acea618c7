"""Templates and their expansion: the product of the slots' values minus the exclusion rules,
optionally sampled to n items per template, rendered with agreement.

Exclusion rules:
- slots of one lexicon (`name1`, `name2`) never take the same entry;
- `unordered: [[a, b]]` keeps one order of each pair: slot a takes the entry listed earlier
  in the lexicon (so with numbers listed in ascending order, a < b);
- `different: [[a.DIM, b.DIM]]` keeps combinations whose inherent DIM values differ;
- a slot written with an inherent feature ({role.MASC}) takes only entries that have it.

Everything is deterministic: combinations are enumerated in a fixed order (slots sorted by
name, entries in lexicon order) and a sample of n depends only on (seed, template id, number
of combinations), so the same templates and lexicon sizes give the same `idx` in every language.
`idx` is `<template id>:<slot>=<entry index>,...` over the slots that can take more than one value.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Iterator, Mapping

from stability.core.errors import UserError
from stability.templates.features import bundle_text
from stability.templates.lexicon import Entry, Lexicon, MissingForm
from stability.templates.syntax import Part, SlotRef, Switch, lexicon_of

Assignment = Mapping[str, Entry]


@dataclass(frozen=True)
class Template:
    """One premise/hypothesis pattern with its gold label and diagnostic categories."""

    id: str
    label: int
    categories: tuple[str, ...]
    premise: tuple[Part, ...]
    hypothesis: tuple[Part, ...]
    unordered: tuple[tuple[str, str], ...] = ()
    different: tuple[tuple[tuple[str, str], tuple[str, str]], ...] = ()
    where: str = "<template>"

    @property
    def refs(self) -> list[SlotRef]:
        return [part for part in self.premise + self.hypothesis if isinstance(part, SlotRef)]

    @property
    def slots(self) -> tuple[str, ...]:
        """The rendered slots, sorted: the order of enumeration and of `idx`."""
        return tuple(sorted({ref.slot for ref in self.refs}))

    def error(self, message: str, fix: str) -> UserError:
        return UserError(f"template '{self.id}': {message}", path=self.where, fix=fix)


@dataclass(frozen=True)
class Item:
    """One generated premise/hypothesis pair."""

    idx: str
    template: Template
    premise: str
    hypothesis: str
    features: dict[str, str]


def check_references(template: Template, lexicons: Mapping[str, Lexicon]) -> None:
    """Every slot has a lexicon, and every slot a rule or agreement names is rendered."""
    slots = set(template.slots)
    for ref in template.refs:
        if ref.lexicon not in lexicons:
            raise template.error(f"no lexicon '{ref.lexicon}' for {{{ref.text}}}",
                                 f"add it to the lexicons or use one of {', '.join(sorted(lexicons))}")
    named = [agreement.slot for ref in template.refs for agreement in ref.agreements]
    named += [alt.slot for part in template.premise + template.hypothesis if isinstance(part, Switch)
              for alt in part.alternatives if alt.slot is not None]
    named += [slot for pair in template.unordered for slot in pair]
    named += [slot for pair in template.different for slot, _ in pair]
    for slot in named:
        if slot not in slots:
            raise template.error(f"'{slot}' is named but never rendered",
                                 f"use one of the template's slots: {', '.join(sorted(slots))}")
    for first, second in template.unordered:
        if lexicon_of(first) != lexicon_of(second):
            raise template.error(f"unordered slots {first} and {second} come from different lexicons",
                                 "pair slots of one lexicon")


def domains(template: Template, lexicons: Mapping[str, Lexicon]) -> dict[str, tuple[Entry, ...]]:
    """The entries each slot may take: those whose inherent features match the slot's fixed ones."""
    found = {}
    for slot in template.slots:
        fixed = [ref.fixed for ref in template.refs if ref.slot == slot]
        entries = tuple(entry for entry in lexicons[lexicon_of(slot)].entries
                        if all(entry.inherent.get(name, value) == value
                               for bundle in fixed for name, value in bundle.items()))
        if not entries:
            raise template.error(f"no entry of '{lexicon_of(slot)}' fits every use of {slot}",
                                 "check the features written on this slot")
        found[slot] = entries
    return found


def _inherent(template: Template, entry: Entry, slot: str, dimension: str) -> str:
    value = entry.inherent.get(dimension)
    if value is None:
        raise template.error(f"'{entry.name}' ({slot}) has no single {dimension}",
                             f"give every entry of '{lexicon_of(slot)}' one {dimension}")
    return value


def assignments(template: Template, slot_domains: Mapping[str, tuple[Entry, ...]]) -> Iterator[dict[str, Entry]]:
    """The product of the slots' values (`domains`) minus the exclusion rules, in a fixed order."""
    slots = template.slots
    same_lexicon = [(a, b) for a, b in itertools.combinations(slots, 2) if lexicon_of(a) == lexicon_of(b)]
    for combination in itertools.product(*slot_domains.values()):
        chosen = dict(zip(slots, combination))
        if any(chosen[a].index == chosen[b].index for a, b in same_lexicon):
            continue
        if any(chosen[a].index > chosen[b].index for a, b in template.unordered):
            continue
        if any(_inherent(template, chosen[a], a, dim_a) == _inherent(template, chosen[b], b, dim_b)
               for (a, dim_a), (b, dim_b) in template.different):
            continue
        yield chosen


def _render_ref(template: Template, ref: SlotRef, chosen: Assignment) -> str:
    request = dict(ref.fixed)
    for agreement in ref.agreements:
        for dimension in agreement.dimensions:
            request[dimension] = _inherent(template, chosen[agreement.slot], agreement.slot, dimension)
    try:
        return chosen[ref.slot].form(request)
    except MissingForm as err:
        raise template.error(f"{{{ref.text}}}: {err}", "add the form to the lexicon or change the "
                             "features the template asks for") from None


def _render_switch(template: Template, switch: Switch, chosen: Assignment) -> str:
    for alternative in switch.alternatives:
        if alternative.slot is None or all(chosen[alternative.slot].inherent.get(name) == value
                                           for name, value in alternative.condition.items()):
            return alternative.text
    described = ", ".join(f"{slot}={chosen[slot].name} ({bundle_text(chosen[slot].inherent)})"
                          for slot in sorted({alt.slot for alt in switch.alternatives if alt.slot}))
    raise template.error(f"no alternative of {{{switch.text}}} holds for {described}",
                         "add an alternative for these features or a default (text without ':') last")


def render(template: Template, parts: tuple[Part, ...], chosen: Assignment) -> str:
    """One sentence; its first letter is capitalised (a slot may start it: `der Nachbar`)."""
    text = "".join(part if isinstance(part, str)
                   else _render_ref(template, part, chosen) if isinstance(part, SlotRef)
                   else _render_switch(template, part, chosen)
                   for part in parts)
    return text[:1].upper() + text[1:]


def _used_dimensions(template: Template) -> set[tuple[str, str]]:
    """(slot, dimension) pairs the template reads: agreement, switches, `different`, fixed features."""
    used = {(agreement.slot, name) for ref in template.refs for agreement in ref.agreements
            for name in agreement.dimensions}
    used |= {(ref.slot, name) for ref in template.refs for name in ref.fixed}
    used |= {(alt.slot, name) for part in template.premise + template.hypothesis if isinstance(part, Switch)
             for alt in part.alternatives if alt.slot is not None for name in alt.condition}
    used |= {side for pair in template.different for side in pair}
    return used


def varied_dimensions(template: Template, lexicons: Mapping[str, Lexicon],
                      slot_domains: Mapping[str, tuple[Entry, ...]]) -> dict[str, tuple[str, ...]]:
    """Per slot, the inherent dimensions that take more than one value over the slot's entries
    (`domains`): the features an item records (a constant feature says nothing about an error).
    Computed dimensions (STARTSWITH) count only where the template reads them."""
    used = _used_dimensions(template)
    varied = {}
    for slot, entries in slot_domains.items():
        computed = lexicons[lexicon_of(slot)].computed
        dimensions = sorted({name for entry in entries for name in entry.inherent
                             if name not in computed or (slot, name) in used})
        varied[slot] = tuple(name for name in dimensions
                             if len({entry.inherent.get(name) for entry in entries}) > 1)
    return varied


def sample_positions(count: int, n: int | None, seed: int, template_id: str) -> list[int]:
    """Which of `count` combinations to keep: all, or n drawn by (seed, template id), in order."""
    if n is None or n >= count:
        return list(range(count))
    return sorted(random.Random(f"{seed}:{template_id}").sample(range(count), n))


def expand(template: Template, lexicons: Mapping[str, Lexicon], n: int | None = None,
           seed: int = 0) -> list[Item]:
    """The template's items: every combination, or a sample of n of them."""
    check_references(template, lexicons)
    slot_domains = domains(template, lexicons)
    combinations = list(assignments(template, slot_domains))
    varied = varied_dimensions(template, lexicons, slot_domains)
    # a slot with one possible value (a helper word such as Russian быть) varies nothing and
    # is left out of idx, so languages that need such a word still align with those that don't
    named = [slot for slot, entries in slot_domains.items() if len(entries) > 1]
    items = []
    for position in sample_positions(len(combinations), n, seed, template.id):
        chosen = combinations[position]
        idx = template.id + ":" + ",".join(f"{slot}={chosen[slot].index}" for slot in named)
        features = {f"{slot}.{name}": chosen[slot].inherent[name]
                    for slot, names in varied.items() for name in names if name in chosen[slot].inherent}
        items.append(Item(idx, template, render(template, template.premise, chosen),
                          render(template, template.hypothesis, chosen), features))
    return items
