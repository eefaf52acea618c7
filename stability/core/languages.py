"""Language facts, read from the one place that states them: the `lang` config group
(`stability/conf/lang/<code>.yaml`). Commands compose those files through Hydra, and a
command's composed `lang` node gives its facts through `language_of` (so a language kept in
a user's config folder works too); tools that run outside a config (annotators, plan) read the
shipped ones through `language`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Mapping

import yaml

from stability.core.confdir import CONF_DIR
from stability.core.errors import UserError

LANG_DIR = CONF_DIR / "lang"


@dataclass(frozen=True)
class Language:
    """One language config: its files, where they download from, and facts about the language."""

    code: str
    name: str
    script: str                      # "latin" or "cyrillic"
    alphabet: str                    # the language's letters (lower case), for data QA
    files: dict[str, str]
    released_train_size: int | None  # train pairs of the release, for planning without files
    download: dict[str, Any] = field(default_factory=dict)
    # Latin-script words data QA accepts in this (Cyrillic-script) language's text although an
    # English word list holds them: transliterations and loanwords (da, net, tsar, ...)
    qa_allowed_words: frozenset[str] = frozenset()
    # languages fastText's lid.176 confuses with this one on short texts (no/da for Swedish):
    # data QA counts them as this language at line level
    qa_lid_accepted: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=None)
def language_codes() -> tuple[str, ...]:
    """Every configured language code, sorted."""
    return tuple(sorted(path.stem for path in LANG_DIR.glob("*.yaml")))


def language_of(config: Mapping[str, Any]) -> Language:
    """The facts a `lang` config states (a shipped file, or a composed node as a dict)."""
    return Language(code=config["code"], name=config["name"], script=config["script"],
                    alphabet=config["alphabet"], files=dict(config["files"]),
                    released_train_size=config.get("released_train_size"),
                    download=dict(config.get("download") or {}),
                    qa_allowed_words=frozenset(config.get("dataqa_allowed_words") or ()),
                    qa_lid_accepted=frozenset(config.get("dataqa_lid_accepted") or ()))


@functools.lru_cache(maxsize=None)
def language(code: str) -> Language:
    """The facts of the shipped language `code`; an unknown code is a user error listing them."""
    if code not in language_codes():
        raise UserError(f"unsupported language '{code}'", fix=f"use one of: {', '.join(language_codes())}")
    return language_of(yaml.safe_load((LANG_DIR / f"{code}.yaml").read_text(encoding="utf-8")))
