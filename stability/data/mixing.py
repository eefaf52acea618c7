"""Pairs of any NLI dataset mixed into the training data (`data.mix`), nested like MNLI's.

Translate-train (`experiment=translate_train`) mixes the run language's own XNLI train
split; the same seeded permutation as MNLI's (`container.nested_indices`) makes the 1k sample
a prefix of the 5k sample, and its own seed (`data.mix.seed`) keeps it fixed across model seeds.
"""
from __future__ import annotations

from datasets import Dataset

from stability.core.schemas.data import ALL, parse_n_samples
from stability.data.container import nested_indices
from stability.data.hub import load_nli_set
from stability.data.mnli import check_pool_size
from stability.data.sources import DataSettings

KEY = "data.mix.n_samples"


def nested_select(pool: Dataset, n: int | str, seed: int, name: str) -> Dataset:
    """The first n rows of a seeded permutation of `pool` (all of it for 'all')."""
    if n == ALL:
        return pool
    check_pool_size(n, len(pool), name, KEY)
    return pool.select(nested_indices(len(pool), n, seed))


def mix_addition(settings: DataSettings) -> Dataset | None:
    """The pairs a run mixes in; None when data.mix.n_samples is 0."""
    mix = settings.data.mix
    n = parse_n_samples(mix.n_samples, KEY)
    if n == 0:
        return None
    return nested_select(load_nli_set(mix, settings.lang.code, "data.mix"), n, mix.seed, mix.name)
