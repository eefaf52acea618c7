"""How many training examples a run will see, without loading its data or downloading anything.

With local files (`data.root`, or the built-in data) the examples are counted the way a run
reads them; otherwise the plan falls back on the released sizes the configs state
(`lang.released_train_size`, `data.mnli.released_train_size`). An NLI dataset read through
`datasets` (`data.train_set`, `data.mix`) is never loaded here: a mixed-in count is taken as
given, and its whole split, or a training set in place of the language's, by its
`released_size`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from stability.core.errors import UserError
from stability.core.schemas.nli import NliSet
from stability.data.formats import read_examples
from stability.data.loading import language_source
from stability.data.mnli import ALL, check_pool_size, mnli_source, parse_n_samples
from stability.data.sources import DataSettings, FileSource

COUNTED, RELEASED = "counted", "release"


@dataclass(frozen=True)
class TrainSize:
    """A run's training examples: its language's own split plus the mixed-in MNLI pairs."""

    own: int
    added: int
    origin: str  # COUNTED when every number comes from local files, else RELEASED

    @property
    def total(self) -> int:
        return self.own + self.added


@lru_cache(maxsize=None)
def _count(path: Path, lang: str) -> int:
    return len(read_examples(path, lang))


def _size(source: FileSource, lang: str, released: int | None) -> tuple[int, str]:
    """Count the local train file (a missing one is the run's own user error), else the release size."""
    if source.root is not None:
        return _count(source.path("train"), lang), COUNTED
    if released is None:
        raise UserError(f"no known train size for {source.name}",
                        fix="pass data.root=DIR so the plan can count the files")
    return released, RELEASED


def _released(dataset: NliSet, key: str) -> int:
    if dataset.released_size is None:
        raise UserError(f"no known size of {dataset.name}'s {dataset.split} split",
                        fix=f"set {key}.released_size=<pairs> for the plan")
    return dataset.released_size


def train_size(settings: DataSettings) -> TrainSize:
    """Examples per epoch of the run `settings` describes (data.max_train_samples cuts the own split)."""
    data = settings.data
    if data.train_set.path is not None:
        own, origin = _released(data.train_set, "data.train_set"), RELEASED
    else:
        own, origin = _size(language_source(settings), settings.lang.code, settings.lang.released_train_size)
    if data.max_train_samples is not None:
        own = min(own, data.max_train_samples)
    mixed = parse_n_samples(data.mix.n_samples, "data.mix.n_samples")
    if mixed != 0:
        return TrainSize(own, _released(data.mix, "data.mix") if mixed == ALL else mixed, origin)
    n = parse_n_samples(data.mnli.n_samples)
    if n == 0:
        return TrainSize(own, 0, origin)
    pool, pool_origin = _size(mnli_source(settings), "en", data.mnli.released_train_size)
    check_pool_size(n, pool)
    return TrainSize(own, pool if n == ALL else n, origin if origin == pool_origin else RELEASED)
