"""Schemas of the `lang` group (`conf/lang/<code>.yaml`): a language's facts and its data files.

The five files share most keys, but not all: the paper's fr/de/sv release pins each file's
sha256 (`download.sha256`) and names a test split, Russian lists transliterations data QA
accepts (`dataqa_allowed_words`), Swedish the languages lid.176 confuses with it
(`dataqa_lid_accepted`). A field with a default would add its key to every language and
change every run's fingerprint, so each shape is a schema of its own, named first in the
file's defaults list:

| schema | class | files |
|---|---|---|
| `lang_schema` | `Lang` | en |
| `pinned_lang_schema` | `PinnedLang` | de, fr |
| `lang_with_allowed_words_schema` | `LangWithAllowedWords` | ru |
| `pinned_lang_with_lid_accepted_schema` | `PinnedLangWithLidAccepted` | sv |

Fields keep the files' key order, because OmegaConf orders a merged node by its schema and a
run's config.yaml must not change. Dataclasses collect fields along the reversed MRO, so the
data-QA keys, declared on subclasses of `LangFacts` listed after `Lang`, sit between the facts
(code … alphabet) and the data keys (released_train_size, files, download), where the files
have them. For the same reason the training config types `lang` as Any and checks that it is
a `Lang`: merged into a field typed `Lang`, a subclass's node would keep `Lang`'s key order
(its own keys appended) and `Lang`'s `download` type, which has no sha256.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.errors import UserError
from stability.core.schemas.checks import at_least, one_of
from stability.core.schemas.data import Download, PinnedDownload

SCRIPTS = ("latin", "cyrillic")
# the splits every run reads (data.source=files); `test` is optional (probing's held-out split)
RUN_SPLITS = ("train", "validation", "diagnostic")


@dataclass
class LangFacts:
    """What a language is: its code, name, writing system and lower-case letters."""

    code: str = MISSING
    name: str = MISSING
    script: str = MISSING
    alphabet: str = MISSING


@dataclass
class _LangData:
    """Where its data comes from: file names under data.root, and the release to download."""

    released_train_size: Optional[int] = None  # train pairs of the release, for planning
    files: Dict[str, str] = MISSING            # split -> path relative to data.root
    download: Download = MISSING


@dataclass
class Lang(_LangData, LangFacts):
    """A language config; the training config's type for `lang`."""

    def __post_init__(self) -> None:
        one_of("lang.script", self.script, SCRIPTS)
        at_least("lang.released_train_size", self.released_train_size, 1, optional=True)
        missing = [split for split in RUN_SPLITS if not self.files.get(split)]
        if missing:
            raise UserError(f"lang {self.code} names no {missing[0]} file",
                            fix=f"pass ++lang.files.{missing[0]}=PATH or add it to the language config")


@dataclass
class PinnedLang(Lang):
    """A language whose release pins every file's sha256."""

    download: PinnedDownload = MISSING


@dataclass
class _AllowedWords(LangFacts):
    # Latin-script words that are not English here (quote YAML's booleans: "no", "on")
    dataqa_allowed_words: List[str] = MISSING


@dataclass
class _LidAccepted(LangFacts):
    dataqa_lid_accepted: List[str] = MISSING   # lid.176 labels counted as this language


@dataclass
class LangWithAllowedWords(Lang, _AllowedWords):
    """A Cyrillic-script language whose text may hold transliterated words (Russian)."""


@dataclass
class PinnedLangWithLidAccepted(PinnedLang, _LidAccepted):
    """A pinned release whose language lid.176 confuses with neighbours (Swedish)."""


def register(store: ConfigStore) -> None:
    for name, node in (("lang_schema", Lang), ("pinned_lang_schema", PinnedLang),
                       ("lang_with_allowed_words_schema", LangWithAllowedWords),
                       ("pinned_lang_with_lid_accepted_schema", PinnedLangWithLidAccepted)):
        store.store(name=name, node=node)
