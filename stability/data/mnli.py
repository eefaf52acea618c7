"""English MNLI as extra training data: nested subsamples and controlled feature presence.

The subsample uses its own seed (`data.mnli.seed`), so across model seeds only training
randomness varies; taking a prefix of one fixed permutation makes smaller samples subsets
of larger ones (the 1k sample lies inside the 5k sample).
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

from hydra.utils import get_method
from omegaconf import DictConfig

from stability.core.errors import UserError, first_line
from stability.core.records import Example
from stability.data.formats import read_examples
from stability.data.sources import BUILTIN_DIR, DownloadSpec, FileSource

ALL = "all"


def mnli_source(cfg: DictConfig) -> FileSource:
    """MNLI's file source: built-in pool for smoke runs, else data.root or the download cache."""
    mnli = cfg.data.mnli
    if cfg.data.source == "builtin":
        return FileSource("built-in MNLI", {"train": "mnli/train.jsonl"}, BUILTIN_DIR, Path(),
                          DownloadSpec())
    return FileSource(
        name="MNLI",
        files={"train": mnli.file},
        root=Path(cfg.data.root).expanduser() if cfg.data.root else None,
        cache_dir=Path(cfg.paths.cache_dir).expanduser() / "downloads",
        download=DownloadSpec.from_config(mnli.download),
    )


def parse_n_samples(value: object) -> int | str:
    """`data.mnli.n_samples` is a non-negative integer or the word 'all'."""
    if isinstance(value, str) and value.strip().lower() == ALL:
        return ALL
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = -1
    if number < 0 or (isinstance(value, float) and not value.is_integer()):
        raise UserError(f"data.mnli.n_samples={value!r} is not a count",
                        fix="use a non-negative integer or 'all', e.g. data.mnli.n_samples=10000")
    return number


def check_pool_size(n: int | str, pool_size: int) -> None:
    """A count larger than the MNLI pool is a user error, wherever it is noticed first."""
    if n != ALL and n > pool_size:
        raise UserError(f"asked for {n} MNLI pairs but the pool has {pool_size}",
                        fix=f"use data.mnli.n_samples<={pool_size} or 'all'")


def nested_sample(pool: list[Example], n: int | str, seed: int) -> list[Example]:
    """The first n of a seeded permutation: samples of growing n are nested."""
    if n == ALL:
        return list(pool)
    check_pool_size(n, len(pool))
    order = list(range(len(pool)))
    random.Random(seed).shuffle(order)
    return [pool[i] for i in order[:n]]


def mnli_addition(cfg: DictConfig) -> list[Example]:
    """The MNLI pairs a run adds to its training data (empty when n_samples is 0)."""
    mnli = cfg.data.mnli
    n = parse_n_samples(mnli.n_samples)
    if n == 0:
        if mnli.feature is not None:
            raise UserError("data.mnli.feature needs MNLI pairs", fix="set data.mnli.n_samples too")
        return []
    pool = read_examples(mnli_source(cfg).path("train"), "en", source="mnli")
    if mnli.feature is None:
        return nested_sample(pool, n, mnli.seed)
    if n == ALL or mnli.presence is None:
        raise UserError("data.mnli.feature needs a count and a presence",
                        fix="set data.mnli.n_samples=<int> and data.mnli.presence=<percent>")
    select = _subset_selector(mnli.subset_selector)
    return select(pool, "en", mnli.feature, float(mnli.presence), n, mnli.seed, settings=cfg.annotator)


def _subset_selector(path: str) -> Callable[..., list[Example]]:
    """The configured feature-controlled sampler, found by its dotted path.

    The default lives in the `annotators` package, which builds on this one: naming it in the
    config keeps the import direction one way (annotators → stability) and lets a user plug in
    another annotator with the same signature.
    """
    try:
        return get_method(path)
    except Exception as err:  # Hydra wraps the ImportError/AttributeError of a bad path
        raise UserError(f"cannot load data.mnli.subset_selector={path!r} ({first_line(err)})",
                        fix="install the annotators extra (pip install 'nli-stability[annotators]') "
                            "or name a function (pool, lang, feature, presence, n, seed, settings)") from None

