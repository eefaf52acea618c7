"""Range checks for the schemas' `__post_init__`: one UserError naming the key, its value and the fix."""
from __future__ import annotations

import errno
import math
import os
from pathlib import Path
from typing import Iterable

from stability.core.errors import UserError

# A schema field's metadata key for an example value, which the fix for a value of the wrong
# shape shows (`compare=rte`: `compare=[rte,rte+mnli10000]`); a list field without one is
# shown the value given in brackets (`files=a.jsonl`: `files=[a.jsonl]`).
EXAMPLE = "example"


# Seeds go to torch, numpy and Python's random: a negative one fails in numpy (or, in
# random.Random, draws what its absolute value draws), so every seed key takes this range,
# the one numpy's legacy seeding accepts and every other library too.
SEED_MAX = 2**32 - 1


def out_of_range(key: str, value: object, allowed: str, *, why: str = "", otherwise: str = "") -> UserError:
    """The one message of a value outside its key's range: the value, why it cannot be (when
    the range depends on another key), and the fix stating the whole allowed range (`allowed`,
    e.g. "a number in (0, 1]"), or `otherwise`, another key's value that lifts the limit."""
    problem = f"{key}={value!r} is out of range" + (f": {why}" if why else "")
    return UserError(problem, fix=f"pass {key}=<{allowed}>" + (f" or {otherwise}" if otherwise else ""))


def _shown(bound: float) -> str:
    """A bound as the fix shows it: an int in full (4294967295), a float short (1e-05)."""
    return str(bound) if isinstance(bound, int) else f"{bound:g}"


def at_least(key: str, value: float | None, low: float, *, optional: bool = False) -> None:
    """`value >= low` and finite (None passes when `optional`): no range is open to inf."""
    if value is None and optional:
        return
    if value is None or not value >= low or not math.isfinite(value):
        raise out_of_range(key, value, f"a number >= {_shown(low)}" + (" or null" if optional else ""))


def above(key: str, value: float | None, low: float, *, optional: bool = False) -> None:
    """`value > low` and finite (None passes when `optional`)."""
    if value is None and optional:
        return
    if value is None or not value > low or not math.isfinite(value):
        raise out_of_range(key, value, f"a number > {_shown(low)}" + (" or null" if optional else ""))


def within(key: str, value: float, low: float, high: float, *, open_low: bool = False,
           closed_high: bool = False, why: str = "", otherwise: str = "") -> None:
    """`low <= value < high`, with `open_low` `low < value`, with `closed_high` `value <= high`:
    one check per key, so its message states the key's whole range (two checks of one key,
    `> 0` and `[0, 1)`, would each state half of it)."""
    above_low = value > low if open_low else value >= low
    below_high = value <= high if closed_high else value < high
    if not (above_low and below_high):
        bound = f"{'(' if open_low else '['}{_shown(low)}, {_shown(high)}{']' if closed_high else ')'}"
        raise out_of_range(key, value, f"a number in {bound}", why=why, otherwise=otherwise)


def seed(key: str, value: int) -> None:
    """A seed: a whole number in [0, SEED_MAX]."""
    within(key, value, 0, SEED_MAX, closed_high=True)


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


def symlink_loop(path: Path) -> bool:
    """Whether following `path` runs into a loop of symbolic links: `Path.exists()` is then
    False, and a user would be told a file is missing."""
    try:
        os.stat(path)
    except OSError as err:
        return err.errno == errno.ELOOP
    return False


def no_symlink_loop(key: str, value: str | None) -> None:
    """`value`, a path, does not end in a loop of symbolic links."""
    if value is not None and symlink_loop(Path(value).expanduser()):
        raise UserError(f"{key}={value} is a loop of symbolic links",
                        fix=f"pass {key}=<the real folder>; `ls -l {value}` shows where the link points")


def items_per_template(key: str, value: object) -> int | None:
    """A test suite's items per template: a positive integer, or None / 'all' (every combination)."""
    if value is None or value == "all":
        return None
    if isinstance(value, bool) or not str(value).isdigit() or int(value) < 1:
        raise UserError(f"{key}={value!r} is not a positive number of items per template",
                        fix=f"pass {key}=<integer> or {key}=all")
    return int(value)
