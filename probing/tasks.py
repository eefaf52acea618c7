"""Probe tasks and their binary labels.

`labels=annotator` (the study's method): a pair is positive for a coarse task (Logic,
Lexical Semantics, Predicate-Argument Structure) when the rule-based annotator finds any
of that group's features in its premise or hypothesis, on every split. A feature the
language's annotator cannot detect is left out of the task and listed, never counted as
absent; a task with no detectable feature is dropped and listed.

`labels=gold`: the diagnostic set's own categories (fine, and coarse as `gold:<name>`)
with at least `min_positives` items, each item positive when tagged with it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from annotators import FEATURES, annotate, supported_features
from stability.core.errors import UserError
from stability.core.records import Example
from stability.core.taxonomy import COARSE_CATEGORIES, COARSE_OF, FINE_CATEGORIES, TAXONOMY

GOLD_PREFIX = "gold:"


@dataclass(frozen=True)
class Task:
    """A binary probing task: labels per split (0/1 arrays), and the features that define it."""

    name: str
    labels: dict[str, np.ndarray]
    features: tuple[str, ...] = ()


@dataclass
class TaskSet:
    """The tasks to probe and notes on what was left out and why."""

    tasks: list[Task]
    notes: list[str] = field(default_factory=list)


def annotator_features(coarse: str) -> tuple[str, ...]:
    """The annotator features that belong to a coarse category."""
    if coarse not in TAXONOMY:
        raise UserError(f"unknown probe task '{coarse}'",
                        fix=f"use coarse categories the annotator covers: {', '.join(_annotated_coarse())}")
    return tuple(feature for feature in FEATURES if COARSE_OF[feature] == coarse)


def _annotated_coarse() -> list[str]:
    return [name for name in COARSE_CATEGORIES if any(COARSE_OF[f] == name for f in FEATURES)]


def annotator_tasks(splits: Mapping[str, list[Example]], lang: str, names: list[str],
                    settings: Mapping[str, Any] | None = None) -> TaskSet:
    """Coarse tasks labelled by the annotator on every split."""
    supported = supported_features(lang, settings)
    order = list(splits)
    pairs = [example for name in order for example in splits[name]]
    found = annotate(pairs, lang, settings)
    bounds = np.cumsum([0] + [len(splits[name]) for name in order])
    result = TaskSet([])
    for coarse in names:
        features = annotator_features(coarse)
        if not features:
            raise UserError(f"the annotator detects no feature of '{coarse}'",
                            fix=f"use one of: {', '.join(_annotated_coarse())}")
        usable = tuple(f for f in features if f in supported)
        missing = [f for f in features if f not in supported]
        if missing:
            result.notes.append(f"{coarse}: the {lang} annotator cannot detect {', '.join(missing)}; "
                                f"left out of the task (not counted as absent)")
        if not usable:
            result.notes.append(f"{coarse}: no detectable feature in {lang}; task dropped")
            continue
        positive = np.array([any(features_of.has(f) for f in usable) for features_of in found], dtype=np.int8)
        labels = {name: positive[bounds[i]:bounds[i + 1]] for i, name in enumerate(order)}
        result.tasks.append(Task(coarse, labels, usable))
    return result


def gold_tasks(diagnostic: list[Example], min_positives: int) -> TaskSet:
    """Fine and coarse gold categories of the diagnostic set with ≥ min_positives items."""
    result = TaskSet([])
    candidates = [(name, lambda e, n=name: n in e.categories) for name in FINE_CATEGORIES]
    candidates += [(name, lambda e, n=name: n in e.coarse) for name in COARSE_CATEGORIES]
    for name, tagged in candidates:
        labels = np.array([tagged(example) for example in diagnostic], dtype=np.int8)
        positives = int(labels.sum())
        if positives < min_positives or len(labels) - positives < min_positives:
            continue
        result.tasks.append(Task(GOLD_PREFIX + name, {"test": labels}))
    skipped = len(candidates) - len(result.tasks)
    if skipped:
        result.notes.append(f"{skipped} gold categories with fewer than {min_positives} positive (or negative) "
                            f"items left out")
    return result
