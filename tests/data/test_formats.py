"""Every released format of docs/design.md, "Data contract", read from small fixture files."""
from __future__ import annotations

from pathlib import Path

import pytest

from stability.core.errors import UserError
from stability.data.formats import read_examples

RELEASED = Path(__file__).parent.parent / "fixtures" / "released"


def test_superglue_jsonl_with_integer_idx():
    train = read_examples(RELEASED / "RTE" / "train.jsonl", "en")
    assert [(e.idx, e.label) for e in train] == [("0", 0), ("1", 1)]
    assert train[0].premise == "The cat sat on the mat." and train[0].hypothesis == "A cat sat."
    assert train[0].lang == "en" and train[0].source == "train" and train[0].categories == ()


def test_glue_tsv_reads_like_the_jsonl_release():
    tsv = read_examples(RELEASED / "RTE_glue" / "train.tsv", "en")
    jsonl = read_examples(RELEASED / "RTE" / "train.jsonl", "en")
    assert [(e.idx, e.premise, e.hypothesis, e.label) for e in tsv] == \
        [(e.idx, e.premise, e.hypothesis, e.label) for e in jsonl]


def test_superglue_diagnostic_categories_and_coarse():
    items = read_examples(RELEASED / "AX-b" / "AX-b.jsonl", "en")
    assert items[0].categories == ("Negation",) and items[0].coarse == ("Logic",)
    assert items[1].categories == ("Datives", "Common sense")
    assert items[1].coarse == ("Predicate-Argument Structure", "Knowledge")


def test_glue_diagnostic_full_tsv_crlf_three_way_labels():
    items = read_examples(RELEASED / "diagnostic" / "diagnostic-full.tsv", "en")
    assert [e.label for e in items] == [1, 0, 1]  # contradiction, entailment, neutral
    assert items[0].categories == ("Negation", "Double negation")
    assert items[0].hypothesis == "The cat did not sit."  # no trailing \r
    assert items[1].categories == ("Quantifiers",) and items[1].coarse == ("Lexical Semantics",)
    assert items[2].categories == ("World knowledge",)
    assert [e.idx for e in items] == ["0", "1", "2"]


def test_terra_and_lidirus_with_spaces_after_semicolon():
    assert read_examples(RELEASED / "TERRa" / "train.jsonl", "ru")[0].label == 0
    item = read_examples(RELEASED / "LiDiRus" / "LiDiRus.jsonl", "ru")[0]
    assert item.categories == ("Quantifiers", "Named entities", "Negation")
    assert item.coarse == ("Lexical Semantics", "Logic")


def test_paper_release_string_and_integer_idx():
    train = read_examples(RELEASED / "French" / "TERRa" / "train_fr.jsonl", "fr")
    diag = read_examples(RELEASED / "French" / "diagnostics" / "LiDiRus_fr.jsonl", "fr")
    assert train[0].idx == "0" and train[0].label == 1
    assert diag[0].idx == "7" and diag[0].categories == ("Lexical entailment",)


def test_official_mnli_collapses_labels_and_drops_no_consensus():
    pairs = read_examples(RELEASED / "MNLI" / "multinli_1.0_train.jsonl", "en")
    assert [(e.idx, e.label) for e in pairs] == [("1a", 1), ("3a", 1), ("4a", 0)]


def test_glue_mnli_tsv_and_plain_jsonl():
    glue = read_examples(RELEASED / "MNLI_glue" / "train.tsv", "en")
    assert [(e.idx, e.label) for e in glue] == [("31193n", 1), ("101457e", 0)]
    assert glue[0].premise.startswith("Conceptually")
    plain = read_examples(RELEASED / "MNLI" / "plain.jsonl", "en")
    assert plain[0].label == 1 and plain[0].idx == "0"


@pytest.mark.parametrize("content, message", [
    ('{"premise": "a", "hypothesis": "b", "label": "entailment"}\n{"premise": "a",\n',
     ":2: malformed JSON"),
    ('{"premise": "a", "label": "entailment"}\n', ":1: missing field 'hypothesis'"),
    ('{"premise": "a", "hypothesis": "b", "label": "maybe"}\n', ":1: unknown label 'maybe'"),
    ('{"sentence1": "a", "sentence2": "b", "label": "entailment", "logic": "Negotiation"}\n',
     ":1: unknown category 'Negotiation' in field 'logic' (fix: did you mean 'Negation'?)"),
    ("", ": file is empty"),
])
def test_bad_files_name_file_line_and_fix(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UserError) as err:
        read_examples(path, "en")
    assert str(err.value).startswith(str(path)) and message in str(err.value)
    assert "fix:" in str(err.value)
