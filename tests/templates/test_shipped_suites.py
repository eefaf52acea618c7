"""The shipped suites (stability/templates/suites): coverage, balance, alignment across
languages, agreement in real items, counts, determinism and the diagnostic file format."""
from __future__ import annotations

import functools
import json
from collections import Counter

import pytest

from stability.core.languages import language_codes
from stability.core.taxonomy import COARSE_OF
from stability.data.formats import read_examples
from stability.templates import generate_suite, languages, write_diagnostic_jsonl

LANGS = language_codes()      # every shipped language (stability/conf/lang/) has suites
REQUIRED = ("Negation", "Double negation", "Universal", "Existential", "Conditionals", "Intervals/Numbers",
            "Temporal", "Active/Passive", "Symmetry/Collectivity", "Conjunction", "Disjunction", "Datives")


@functools.lru_cache(maxsize=None)
def suite(lang: str, n: int | None = None, seed: int = 0):
    return tuple(generate_suite(lang, "all", n, seed))


def by_idx(lang: str, n: int | None = None, seed: int = 0):
    return {example.idx: example for example in suite(lang, n, seed)}


def test_every_language_has_suites():
    assert languages() == LANGS


@pytest.mark.parametrize("lang", LANGS)
def test_required_categories_have_both_labels_and_a_language_specific_test(lang):
    labels = {(c, e.label) for e in suite(lang) for c in e.categories}
    assert all((name, label) in labels for name in REQUIRED for label in (0, 1))
    specific = {e.template for e in suite(lang) if e.template.startswith(f"{lang}.")}
    assert len(specific) >= 2


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("n", [None, 50, 7])
def test_labels_are_balanced_within_ten_percent_per_category(lang, n):
    counts = Counter((c, e.label) for e in suite(lang, n) for c in e.categories)
    for name in {c for c, _ in counts}:
        entailed, not_entailed = counts[(name, 0)], counts[(name, 1)]
        assert abs(entailed - not_entailed) <= 0.1 * (entailed + not_entailed), (name, entailed, not_entailed)


@pytest.mark.parametrize("lang", LANGS)
def test_every_generated_file_passes_the_loader(lang, tmp_path):
    examples = list(suite(lang))
    path = tmp_path / f"suite_{lang}.jsonl"
    write_diagnostic_jsonl(examples, path)
    read = read_examples(path, lang, source="file")
    assert len(read) == len(examples) == len({e.idx for e in examples})
    assert [{**e.to_json(), "source": "file"} for e in examples] == [e.to_json() for e in read]
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert set(first) >= {"idx", "label", "sentence1", "sentence2", "template", "features"}


def test_categories_sit_in_their_coarse_fields(tmp_path):
    path = tmp_path / "suite.jsonl"
    write_diagnostic_jsonl(list(suite("sv", 2)), path)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    fields = {row["template"]: {key for key in row if key in ("logic", "lexical-semantics",
                                                               "predicate-argument-structure", "knowledge")}
              for row in rows}
    assert fields["negation.entailed"] == {"logic"}
    assert fields["datives.entailed"] == {"predicate-argument-structure"}
    assert fields["symmetry.entailed"] == {"lexical-semantics"}
    assert COARSE_OF["Quantifiers"] == "Lexical Semantics" and fields["sv.definite_number.entailed"] == {"lexical-semantics"}


@pytest.mark.parametrize("n, seed", [(None, 0), (50, 3)])
def test_shared_templates_align_across_languages_by_idx(n, seed):
    def shared(lang):
        return {e.idx: (e.label, e.categories) for e in suite(lang, n, seed) if not e.template.startswith(f"{lang}.")}
    english = shared("en")
    assert len(english) > 1000 if n is None else len(english) == 26 * 50 - 4 * (50 - 48)
    for lang in LANGS:
        assert shared(lang) == english, lang


def test_counts_are_the_product_minus_the_exclusions():
    counts = Counter(e.template for e in suite("en"))
    assert counts["negation.entailed"] == 8 * 6                       # names × activities
    assert counts["temporal.entailed"] == 8 * 7 * 6 * 5               # two distinct names, two distinct activities
    assert counts["numbers.more_than.entailed"] == 8 * (5 * 4 // 2) * 4   # unordered numbers × items
    french = Counter(e.template for e in suite("fr"))
    assert french["fr.adjective_gender.subject.entailed"] == (4 * 4 + 4 * 4) * 5   # genders differ
    german = Counter(e.template for e in suite("de"))
    assert german["de.case_order.entailed"] == 3 * 5 * 4             # masculine role1, another role2, verbs


def test_french_items_agree_in_gender_and_elide():
    items = by_idx("fr")
    female = items["fr.adjective_gender.subject.entailed:adj=0,name1=0,name2=1"]
    assert (female.premise, female.hypothesis) == ("Marie a appelé Pierre, ravie de la nouvelle.",
                                                   "Marie était ravie de la nouvelle.")
    assert female.features == {"name1.GENDER": "FEM", "name2.GENDER": "MASC"}
    male = items["fr.adjective_gender.object.not_entailed:adj=3,name1=1,name2=2"]
    assert (male.premise, male.hypothesis) == ("Pierre a appelé Alice, furieuse de la nouvelle.",
                                               "Pierre était furieux de la nouvelle.")
    assert items["active_passive.entailed:name1=1,name2=0,tv=0"].hypothesis == "Marie a été photographiée par Pierre."
    assert items["negation.entailed:act=0,name=2"].hypothesis == "Il est faux qu'Alice ait chanté."
    assert items["datives.entailed:name=0,obj=0,role=0"].premise == "Marie a donné le livre au voisin."
    assert items["datives.not_entailed:name=0,obj=1,role=1"].hypothesis == \
        "C'est à Marie que l'enseignante a donné la lettre."


def test_russian_past_tense_agrees_with_the_subjects_gender():
    items = by_idx("ru")
    assert (items["negation.not_entailed:act=0,name=0"].premise,
            items["negation.not_entailed:act=0,name=1"].premise) == ("Анна не пела.", "Пётр не пел.")
    passive = items["active_passive.entailed:name1=1,name2=0,tv=0"]
    assert (passive.premise, passive.hypothesis) == ("Пётр сфотографировал Анну.",
                                                     "Анна была сфотографирована Петром.")
    motion = items["ru.motion.not_entailed:dest=0,go_toward=0,name1=2,name2=3"]
    assert (motion.premise, motion.hypothesis) == ("Вчера Мария шла в библиотеку и встретила Ивана.",
                                                   "Вчера Мария была в библиотеке.")


def test_german_case_and_swedish_definiteness_in_items():
    german = by_idx("de")["de.case_order.not_entailed:role1=0,role2=1,tv=3"]
    assert (german.premise, german.hypothesis) == ("Den Nachbarn warnte die Lehrerin.",
                                                   "Der Nachbar warnte die Lehrerin.")
    assert by_idx("de")["datives.not_entailed:name=0,obj=0,role=1"].hypothesis == "Die Lehrerin gab Anna das Buch."
    assert by_idx("de")["datives.entailed:name=0,obj=0,role=1"].hypothesis == "Der Lehrerin gab Anna das Buch."
    swedish = by_idx("sv")
    assert swedish["sv.definite_number.entailed:name=0,see=0,thing=0"].premise == "Anna såg husen."
    assert swedish["sv.definite_number.not_entailed:name=0,see=0,thing=0"].premise == "Anna såg huset."


def test_generation_is_deterministic_per_seed():
    first = [e.to_json() for e in generate_suite("de", "logic", 5, 11)]
    assert first == [e.to_json() for e in generate_suite("de", "logic", 5, 11)]
    assert first != [e.to_json() for e in generate_suite("de", "logic", 5, 12)]
