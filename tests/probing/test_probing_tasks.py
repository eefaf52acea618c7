"""Probe labels: coarse tasks from the annotator (unsupported features left out), gold categories."""
from __future__ import annotations

import pytest

from probing.tasks import annotator_features, annotator_tasks, gold_tasks
from stability.core.errors import UserError
from stability.core.records import Example


def _pair(premise: str, hypothesis: str, categories: tuple[str, ...] = (), coarse: tuple[str, ...] = ()) -> Example:
    return Example("0", premise, hypothesis, 0, "de", "test", categories, coarse)


def test_coarse_task_is_positive_when_any_of_its_detectable_features_occurs():
    splits = {"fit": [_pair("Der Hund schläft nicht.", "Der Hund ist wach."),      # Negation
                      _pair("Alle Hunde schlafen.", "Ein Hund schläft.")],        # Quantifiers
              "test": [_pair("Der Hund schläft.", "Das Tier ruht."),              # nothing
                       _pair("Er weiß, dass sie kommt.", "Sie kommt.")]}          # Factivity, Anaphora
    result = annotator_tasks(splits, "de", ["Logic", "Lexical Semantics", "Predicate-Argument Structure"])
    labels = {task.name: {split: values.tolist() for split, values in task.labels.items()} for task in result.tasks}
    assert labels == {
        "Logic": {"fit": [1, 0], "test": [0, 0]},
        "Lexical Semantics": {"fit": [0, 1], "test": [0, 1]},
        "Predicate-Argument Structure": {"fit": [0, 0], "test": [0, 1]},
    }
    # German word lists detect neither datives, relative clauses nor prepositional phrases:
    # they are left out of the task and said so, not counted as absent
    tasks = {task.name: task for task in result.tasks}
    assert tasks["Predicate-Argument Structure"].features == ("Anaphora/Coreference",)
    assert tasks["Lexical Semantics"].features == ("Quantifiers", "Factivity")
    assert any(note.startswith("Predicate-Argument Structure: the de annotator cannot detect Prepositional "
                               "phrases, Relative clauses, Datives") for note in result.notes)


def test_task_names_are_checked():
    assert annotator_features("Logic")[0] == "Negation"
    with pytest.raises(UserError, match="unknown probe task 'Logics'"):
        annotator_features("Logics")
    with pytest.raises(UserError, match="detects no feature of 'Knowledge'"):
        annotator_tasks({"fit": [_pair("a", "b")]}, "de", ["Knowledge"])


def test_gold_tasks_keep_categories_with_enough_positives_and_negatives():
    items = ([_pair("a", "b", ("Negation",), ("Logic",))] * 3 + [_pair("a", "b", ("Core args",),
             ("Predicate-Argument Structure",))] * 2 + [_pair("a", "b")] * 3)
    result = gold_tasks(items, min_positives=3)
    assert [task.name for task in result.tasks] == ["gold:Negation", "gold:Logic"]
    assert result.tasks[0].labels["test"].tolist() == [1, 1, 1, 0, 0, 0, 0, 0]
    assert result.notes == ["35 gold categories with fewer than 3 positive (or negative) items left out"]
