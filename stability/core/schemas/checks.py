"""Range checks for the schemas' `__post_init__`: one UserError naming the key, its value and the fix."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from stability.core.errors import UserError

# A schema field's metadata key for an example value, which the fix for a value of the wrong
# shape shows (`compare=rte`: `compare=[rte,rte+mnli10000]`); a list field without one is
# shown the value given in brackets (`files=a.jsonl`: `files=[a.jsonl]`).
EXAMPLE = "example"


def at_least(key: str, value: float | None, low: float, *, optional: bool = False) -> None:
    """`value >= low` (None passes when `optional`)."""
    if value is None and optional:
        return
    if value is None or value < low:
        allowed = f"a number >= {low:g}" + (" or null" if optional else "")
        raise UserError(f"{key}={value!r} is out of range", fix=f"pass {key}=<{allowed}>")


def above(key: str, value: float, low: float) -> None:
    """`value > low`."""
    if not value > low:
        raise UserError(f"{key}={value!r} is out of range", fix=f"pass {key}=<a number > {low:g}>")


def within(key: str, value: float, low: float, high: float, *, closed_high: bool = False) -> None:
    """`low <= value < high` (or `<= high` when `closed_high`)."""
    if not (low <= value <= high if closed_high else low <= value < high):
        bound = f"[{low:g}, {high:g}{']' if closed_high else ')'}"
        raise UserError(f"{key}={value!r} is out of range", fix=f"pass {key}=<a number in {bound}>")


def number(key: str, value: object) -> float:
    """`value` is an int or a float (not a bool), for fields typed `Any` (OmegaConf has no Union);
    OmegaConf itself refuses a value of the wrong type for a typed field."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"{key}={value!r} is not a number", fix=f"pass {key}=<number>")
    return value


def one_of(key: str, value: object, choices: Iterable[object]) -> None:
    """`value` is one of `choices`."""
    options = list(choices)
    if value not in options:
        raise UserError(f"{key}={value!r} is not known", fix=f"use one of: {', '.join(map(str, options))}")


def folder(key: str, value: str) -> None:
    """`value` can be the folder a command writes into: not an existing file (Hydra would fail
    creating it with a traceback)."""
    if Path(value).expanduser().exists() and not Path(value).expanduser().is_dir():
        raise UserError(f"{key}={value} is a file, not a folder", fix=f"pass {key}=<a folder to write into>")


def items_per_template(key: str, value: object) -> int | None:
    """A test suite's items per template: a positive integer, or None / 'all' (every combination)."""
    if value is None or value == "all":
        return None
    if isinstance(value, bool) or not str(value).isdigit() or int(value) < 1:
        raise UserError(f"{key}={value!r} is not a positive number of items per template",
                        fix=f"pass {key}=<integer> or {key}=all")
    return int(value)
