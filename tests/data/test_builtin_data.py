"""The built-in offline dataset (stability/data/builtin): format, labels, taxonomy, alignment."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from stability.core.languages import language_codes
from stability.core.records import ENTAILMENT, NOT_ENTAILMENT
from stability.core.taxonomy import COARSE_FIELDS, TAXONOMY
from stability.data.formats import read_examples

BUILTIN = Path(__file__).resolve().parents[2] / "stability" / "data" / "builtin"
LANGS = language_codes()      # every shipped language (stability/conf/lang/) has built-in data
BINARY = {"entailment", "not_entailment"}
SPLIT_SIZES = {"train": 64, "validation": 24}
REQUIRED_CATEGORIES = {
    "logic": {"Negation", "Double negation", "Conditionals", "Conjunction", "Disjunction",
              "Temporal", "Intervals/Numbers"},
    "lexical-semantics": {"Quantifiers"},
    "predicate-argument-structure": {"Active/Passive", "Relative clauses", "Datives"},
    "knowledge": {"Common sense"},
}
NEGATION = re.compile(r"\b(?:not|never|no|nobody|nothing)\b|n't", re.IGNORECASE)


def _rows(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n"), f"{path}: trailing blank line"
    return [json.loads(line) for line in text.split("\n")[:-1]]


def _categories(row: dict) -> dict[str, list[str]]:
    return {field: [name.strip() for name in row[field].split(";")]
            for field in COARSE_FIELDS if field in row}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("split", sorted(SPLIT_SIZES))
def test_train_validation(lang: str, split: str) -> None:
    path = BUILTIN / lang / f"{split}.jsonl"
    rows = _rows(path)
    assert len(rows) == SPLIT_SIZES[split]
    for i, row in enumerate(rows):
        assert set(row) == {"idx", "premise", "hypothesis", "label"}
        assert row["idx"] == i and row["label"] in BINARY
        assert row["premise"].strip() and row["hypothesis"].strip()
    share = Counter(row["label"] for row in rows)["entailment"] / len(rows)
    assert 0.45 <= share <= 0.55
    examples = read_examples(path, lang)
    assert [e.label for e in examples] == [
        ENTAILMENT if row["label"] == "entailment" else NOT_ENTAILMENT for row in rows]


@pytest.mark.parametrize("split", sorted(SPLIT_SIZES))
def test_splits_aligned_across_languages(split: str) -> None:
    per_lang = {lang: _rows(BUILTIN / lang / f"{split}.jsonl") for lang in LANGS}
    reference = [(r["idx"], r["label"]) for r in per_lang["en"]]
    for lang, rows in per_lang.items():
        assert [(r["idx"], r["label"]) for r in rows] == reference, lang
        if lang != "en":  # translated, not copied
            assert all(r["premise"] != e["premise"] for r, e in zip(rows, per_lang["en"]))


@pytest.mark.parametrize("lang", LANGS)
def test_diagnostic(lang: str) -> None:
    path = BUILTIN / lang / "diagnostic.jsonl"
    rows = _rows(path)
    assert 70 <= len(rows) <= 100
    per_category: dict[str, Counter] = {}
    for i, row in enumerate(rows):
        assert row["idx"] == str(i) and row["label"] in BINARY
        assert set(row) <= {"idx", "label", "sentence1", "sentence2", *COARSE_FIELDS}
        assert row["sentence1"].strip() and row["sentence2"].strip()
        cats = _categories(row)
        assert cats, f"item {i} has no category"
        for field, names in cats.items():
            assert names and all(names), f"item {i}: empty name in '{field}'"
            allowed = TAXONOMY[COARSE_FIELDS[field]]
            for name in names:
                assert name in allowed, f"item {i}: '{name}' is not a {field} category"
                per_category.setdefault(name, Counter())[row["label"]] += 1
    usable = [name for name, counts in per_category.items()
              if sum(counts.values()) >= 6 and set(counts) == BINARY]
    assert len(usable) >= 10
    for field, names in REQUIRED_CATEGORIES.items():
        assert names <= set(usable), f"{field}: {names - set(usable)} too few items or one label"
    assert any(sum(len(v) for v in _categories(row).values()) >= 2 for row in rows)
    examples = read_examples(path, lang)
    assert len(examples) == len(rows) and all(e.categories for e in examples)


def test_diagnostic_aligned_across_languages() -> None:
    def key(row: dict) -> tuple:
        return row["idx"], row["label"], tuple(sorted(_categories(row).items()))

    reference = [key(row) for row in _rows(BUILTIN / "en" / "diagnostic.jsonl")]
    for lang in LANGS:
        assert [key(row) for row in _rows(BUILTIN / lang / "diagnostic.jsonl")] == reference, lang


def test_mnli_pool() -> None:
    path = BUILTIN / "mnli" / "train.jsonl"
    rows = _rows(path)
    assert len(rows) == 240
    assert [row["pairID"] for row in rows] == [f"b{i}" for i in range(240)]
    genres = {"fiction", "government", "travel", "telephone", "slate"}
    for row in rows:
        assert set(row) == {"pairID", "genre", "sentence1", "sentence2", "gold_label"}
        assert row["genre"] in genres
    assert {row["genre"] for row in rows} == genres
    labels = Counter(row["gold_label"] for row in rows)
    assert set(labels) == {"entailment", "neutral", "contradiction"}
    assert all(abs(count / len(rows) - 1 / 3) <= 0.05 for count in labels.values())
    negated = sum(bool(NEGATION.search(row["sentence1"] + " " + row["sentence2"])) for row in rows)
    assert 0.35 <= negated / len(rows) <= 0.45
    examples = read_examples(path, "en", "mnli")
    assert len(examples) == 240
    assert Counter(e.label for e in examples)[ENTAILMENT] == labels["entailment"]
