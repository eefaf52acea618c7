"""Range checks for the schemas' `__post_init__`: one UserError naming the key, its value and the fix.

The field types themselves (an integer, a number, true/false) are checked by OmegaConf when the
config is composed; these helpers check what a type cannot say.
"""
from __future__ import annotations

from typing import Iterable

from stability.core.errors import UserError


def at_least(key: str, value: float | None, low: float, *, optional: bool = False) -> None:
    """`value >= low` (None passes when `optional`)."""
    if value is None and optional:
        return
    if value is None or value < low:
        or_null = " or null" if optional else ""
        raise UserError(f"{key} must be at least {low:g}{or_null}, not {value!r}",
                        fix=f"pass {key}=<a number >= {low:g}>{or_null}")


def above(key: str, value: float, low: float) -> None:
    """`value > low`."""
    if not value > low:
        raise UserError(f"{key} must be above {low:g}, not {value!r}", fix=f"pass {key}=<a number > {low:g}>")


def within(key: str, value: float, low: float, high: float, *, closed_high: bool = False) -> None:
    """`low <= value < high` (or `<= high` when `closed_high`)."""
    if not (low <= value <= high if closed_high else low <= value < high):
        bound = f"[{low:g}, {high:g}{']' if closed_high else ')'}"
        raise UserError(f"{key} must lie in {bound}, not {value!r}", fix=f"pass {key}=<a number in {bound}>")


def one_of(key: str, value: object, choices: Iterable[object]) -> None:
    """`value` is one of `choices`."""
    options = list(choices)
    if value not in options:
        raise UserError(f"{key}={value!r} is not known", fix=f"use one of: {', '.join(map(str, options))}")


def number(key: str, value: object) -> float:
    """`value` is an int or a float (not a bool): for fields typed `Any` (OmegaConf has no Union)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"{key}={value!r} is not a number", fix=f"pass {key}=<number>")
    return value
