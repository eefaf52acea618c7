"""Records as `datasets.Dataset`s: the one container every source feeds (docs/design.md, "Data contract").

A split is a Dataset with the record columns `idx, premise, hypothesis, label, lang, source`
(`label` a `ClassLabel` entailment / not_entailment), diagnostic sets also `categories` and
`coarse` (lists of names), and generated test suites also `template` and `features` (the
template's varied features as a JSON object: their keys differ from template to template,
which an Arrow struct cannot hold). The released-format readers return `Example`s and keep
their one-line errors; `to_dataset` turns them into this container, `to_examples` back.
"""
from __future__ import annotations

import json
import random
from typing import Iterable, Sequence

import datasets
from datasets import ClassLabel, Dataset, Features, Sequence as ListOf, Value

from stability.core.progress import bars_shown
from stability.core.records import LABEL_NAMES, Example

# `datasets` draws bars and logs warnings of its own (a cache fallback, a transform it cannot
# hash): bars only where the project's show (a terminal), warnings not at all, so that a run's
# log says what the project says and an error stays one line.
if not bars_shown():
    datasets.disable_progress_bars()
datasets.logging.set_verbosity_error()

RECORD_FEATURES = Features({
    "idx": Value("string"), "premise": Value("string"), "hypothesis": Value("string"),
    "label": ClassLabel(names=list(LABEL_NAMES)), "lang": Value("string"), "source": Value("string"),
})
DIAGNOSTIC_FEATURES = {"categories": ListOf(Value("string")), "coarse": ListOf(Value("string"))}
SUITE_FEATURES = {"template": Value("string"), "features": Value("string")}


def features_of(examples: Sequence[Example]) -> Features:
    """The record columns, plus the diagnostic and suite columns when some example has them."""
    columns = dict(RECORD_FEATURES)
    if any(example.categories for example in examples):
        columns.update(DIAGNOSTIC_FEATURES)
    if any(example.template is not None for example in examples):
        columns.update(SUITE_FEATURES)
    return Features(columns)


def to_dataset(examples: Sequence[Example]) -> Dataset:
    """A Dataset of these records (in memory)."""
    features = features_of(examples)
    columns: dict[str, list] = {name: [] for name in features}
    for example in examples:
        row = example.to_json()
        row["features"] = None if example.features is None else json.dumps(example.features, sort_keys=True)
        for name, values in columns.items():
            values.append(row.get(name))
    return Dataset.from_dict(columns, features=features)


def to_examples(dataset: Dataset) -> list[Example]:
    """The records of a Dataset as `Example`s (the readers' type)."""
    names = set(dataset.column_names)
    examples = []
    for row in dataset:
        features = row.get("features")
        examples.append(Example(
            idx=row["idx"], premise=row["premise"], hypothesis=row["hypothesis"], label=row["label"],
            lang=row["lang"], source=row["source"],
            categories=tuple(row["categories"]) if "categories" in names else (),
            coarse=tuple(row["coarse"]) if "coarse" in names else (),
            template=row.get("template"), features=None if features is None else json.loads(features)))
    return examples


def nested_indices(size: int, n: int, seed: int) -> list[int]:
    """The first n of a seeded permutation of range(size): samples of growing n are nested
    (the 1k sample lies inside the 5k sample), whichever container they select from."""
    order = list(range(size))
    random.Random(seed).shuffle(order)
    return order[:n]


def first(dataset: Dataset, limit: int | None) -> Dataset:
    """The first `limit` rows (all when None): data.max_*_samples cut every split this way."""
    return dataset if limit is None or limit >= len(dataset) else dataset.select(range(limit))


def texts(datasets: Iterable[Dataset]) -> Iterable[str]:
    """Every premise and hypothesis, pair by pair (the tiny model's vocabulary is trained on them)."""
    for dataset in datasets:
        for batch in dataset.select_columns(["premise", "hypothesis"]).iter(batch_size=4096):
            for premise, hypothesis in zip(batch["premise"], batch["hypothesis"]):
                yield premise
                yield hypothesis
