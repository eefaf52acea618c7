"""Schemas of the `data` group (`conf/data/default.yaml`): where a run's data comes from, how
much of it is used, what is mixed in, and what the runs are scored on.

Fields keep the YAML's key order (OmegaConf orders a merged node by its schema, and a run's
config.yaml must not change). `data.mnli.n_samples` (a count or `all`) and
`data.mnli.presence` (an int or a float percentage) are typed `Any`: OmegaConf has no Union,
and a float field would turn the preset's `presence: 25` into `25.0`, changing the setup name
and the fingerprint of every run made so far.

`train_set`, `mix`, `extra_eval` and `validation_set` are NLI datasets read through `datasets`
(`schemas.nli.NliSet`): the training data in place of the language's own split, pairs mixed
in like MNLI's, labelled sets every run is also scored on, and the validation data in place of
the language's own split. `eval_langs` lists other languages whose diagnostic sets every run is
scored on too (per-category MCC per language). They come last, after the keys
runs made before them have, and are left out of the fingerprint while unused
(`core.runrecord.config_fingerprint`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.errors import UserError
from stability.core.languages import language_codes
from stability.core.schemas.checks import at_least, no_symlink_loop, number, one_of, seed, within
from stability.core.schemas.nli import NliSet

SOURCES = ("files", "builtin")
ALL = "all"


def parse_n_samples(value: object, key: str = "data.mnli.n_samples") -> int | str:
    """A count of pairs to mix in (`data.mnli.n_samples`, `data.mix.n_samples`): a non-negative
    integer or the word 'all'."""
    if isinstance(value, str) and value.strip().lower() == ALL:
        return ALL
    try:
        count = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        count = -1
    if count < 0 or isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise UserError(f"{key}={value!r} is not a count",
                        fix=f"use a non-negative integer or 'all', e.g. {key}=10000")
    return count


@dataclass
class Download:
    """A release's addresses: `archives` maps a top folder to a zip; `base_url` mirrors paths."""

    base_url: Optional[str] = None
    archives: Dict[str, str] = field(default_factory=dict)


@dataclass
class PinnedDownload(Download):
    """A release whose files are checked against their sha256 (per split) when downloaded."""

    sha256: Dict[str, str] = field(default_factory=dict)  # split -> hex digest


@dataclass
class Suite:
    """The test suite generated as the diagnostic set when `data.diagnostic=generated`."""

    name: str = MISSING
    n: Optional[int] = None  # items per template; null = every combination
    seed: int = MISSING

    def __post_init__(self) -> None:
        at_least("data.suite.n", self.n, 1, optional=True)
        seed("data.suite.seed", self.seed)


@dataclass
class Mnli:
    """English MNLI pairs added to the training data, optionally with a controlled feature share."""

    n_samples: Any = MISSING  # an int >= 0 or "all"
    seed: int = MISSING
    feature: Optional[str] = None
    presence: Any = None      # percent of pairs with `feature`, in [0, 100]
    subset_selector: str = MISSING
    file: str = MISSING
    released_train_size: Optional[int] = None
    download: Download = MISSING

    def __post_init__(self) -> None:
        count = parse_n_samples(self.n_samples)
        if self.presence is not None:
            within("data.mnli.presence", number("data.mnli.presence", self.presence), 0, 100, closed_high=True)
        if self.feature is not None and count == 0:
            raise UserError("data.mnli.feature needs MNLI pairs", fix="set data.mnli.n_samples too")
        if self.feature is not None and (count == ALL or self.presence is None):
            raise UserError("data.mnli.feature needs a count and a presence",
                            fix="set data.mnli.n_samples=<int> and data.mnli.presence=<percent>")
        at_least("data.mnli.released_train_size", self.released_train_size, 1, optional=True)
        seed("data.mnli.seed", self.seed)


@dataclass
class _Sampled:
    n_samples: Any = 0   # an int >= 0 or "all"
    seed: int = 1234     # of the nested subsample, fixed across model seeds


@dataclass
class Mix(NliSet, _Sampled):
    """Pairs of an NLI dataset added to the training data, nested like MNLI's (setup
    `rte+<name><N>`); fields of `_Sampled` first (dataclasses collect along the reversed MRO)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        seed("data.mix.seed", self.seed)
        if parse_n_samples(self.n_samples, "data.mix.n_samples") != 0 and self.path is None:
            raise UserError("data.mix.n_samples needs a dataset to draw from",
                            fix="set data.mix.path (and name), e.g. experiment=translate_train")


@dataclass
class Data:
    """The `data` group."""

    source: str = MISSING
    root: Optional[str] = None
    max_train_samples: Optional[int] = None
    max_eval_samples: Optional[int] = None
    max_length: int = MISSING
    diagnostic: Optional[str] = None
    suite: Suite = MISSING
    mnli: Mnli = MISSING
    train_set: NliSet = field(default_factory=NliSet)
    mix: Mix = field(default_factory=Mix)
    extra_eval: List[NliSet] = field(default_factory=list)
    validation_set: NliSet = field(default_factory=lambda: NliSet(split="validation"))
    eval_langs: List[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        one_of("data.source", self.source, SOURCES)
        no_symlink_loop("data.root", self.root)
        if parse_n_samples(self.mnli.n_samples) != 0 and parse_n_samples(self.mix.n_samples, "data.mix.n_samples") != 0:
            raise UserError("data.mnli.n_samples and data.mix.n_samples are both set",
                            fix="mix in one dataset at a time (set the other to 0)")
        for number, extra in enumerate(self.extra_eval):  # a set without a path is unused elsewhere, not here
            if extra.path is None:
                raise UserError(f"data.extra_eval.{number} ({extra.name or 'unnamed'}) has no path",
                                fix="give it the dataset's path, e.g. data.extra_eval=[{name:xnli-test,"
                                    "path:facebook/xnli,config:fr,split:test}]")
        names = [extra.name for extra in self.extra_eval]
        if len(set(names)) < len(names):
            raise UserError(f"data.extra_eval names {names}: each set needs a name of its own",
                            fix="give every entry a distinct name, e.g. {name:xnli-test,path:...}")
        at_least("data.max_train_samples", self.max_train_samples, 1, optional=True)
        at_least("data.max_eval_samples", self.max_eval_samples, 1, optional=True)
        at_least("data.max_length", self.max_length, 1)
        self._check_eval_langs()

    def _check_eval_langs(self) -> None:
        """Shipped languages, each once; not beside another diagnostic set (`data.diagnostic`), whose
        items no other language has. The run's own language is checked with it (`TrainConfig`)."""
        for code in self.eval_langs:
            one_of("data.eval_langs", code, language_codes())
        if len(set(self.eval_langs)) < len(self.eval_langs):
            raise UserError(f"data.eval_langs={list(self.eval_langs)} names a language twice",
                            fix="list each language once, e.g. data.eval_langs=[fr,de,sv]")
        if self.eval_langs and self.diagnostic is not None:
            raise UserError(f"data.eval_langs scores the other languages' diagnostic sets, which data.diagnostic="
                            f"{self.diagnostic} replaces for the run's own language only",
                            fix="drop data.diagnostic, or data.eval_langs and run each language with lang=<code>")


def register(store: ConfigStore) -> None:
    store.store(name="data_schema", node=Data)
