"""English MNLI as extra training data: nested subsamples and controlled feature presence.

The subsample uses its own seed (`data.mnli.seed`), so across model seeds only training
randomness varies; taking a prefix of one fixed permutation makes smaller samples subsets
of larger ones (the 1k sample lies inside the 5k sample).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from hydra.utils import get_method

from stability.core.errors import UserError, first_line
from stability.core.records import Example
from stability.core.schemas.data import ALL, parse_n_samples
from stability.data.container import nested_indices
from stability.data.formats import read_examples
from stability.data.sources import BUILTIN_DIR, DataSettings, DownloadSpec, FileSource, downloads_dir


def mnli_source(settings: DataSettings) -> FileSource:
    """MNLI's file source: built-in pool for smoke runs, else data.root or the download cache."""
    data = settings.data
    if data.source == "builtin":
        return FileSource("built-in MNLI", {"train": "mnli/train.jsonl"}, BUILTIN_DIR, Path(),
                          DownloadSpec())
    return FileSource(
        name="MNLI",
        files={"train": data.mnli.file},
        root=Path(data.root).expanduser() if data.root else None,
        cache_dir=downloads_dir(settings.paths),
        download=DownloadSpec.from_config(data.mnli.download),
        key="data.mnli.file",
    )


def check_pool_size(n: int | str, pool_size: int, pool: str = "MNLI", key: str = "data.mnli.n_samples") -> None:
    """A count larger than the pool it is drawn from is a user error, wherever it is noticed first."""
    if n != ALL and n > pool_size:
        raise UserError(f"asked for {n} {pool} pairs but the pool has {pool_size}",
                        fix=f"use {key}<={pool_size} or 'all'")


def nested_sample(pool: list[Example], n: int | str, seed: int) -> list[Example]:
    """The first n of a seeded permutation: samples of growing n are nested."""
    if n == ALL:
        return list(pool)
    check_pool_size(n, len(pool))
    return [pool[i] for i in nested_indices(len(pool), n, seed)]


def mnli_addition(settings: DataSettings) -> list[Example]:
    """The MNLI pairs a run adds to its training data (empty when n_samples is 0). The schema
    (`core.schemas.data.Mnli`) has checked that a feature comes with a count and a presence."""
    mnli = settings.data.mnli
    n = parse_n_samples(mnli.n_samples)
    if n == 0:
        return []
    pool = read_examples(mnli_source(settings).path("train"), "en", source="mnli")
    if mnli.feature is None:
        return nested_sample(pool, n, mnli.seed)
    select = _subset_selector(mnli.subset_selector)
    return select(pool, "en", mnli.feature, mnli.presence, n, mnli.seed, settings=settings.annotator)


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

