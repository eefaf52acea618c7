"""Every Russian form generated through pymorphy3 parses back (pymorphy3) to the lemma and the
requested features, over the whole Russian lexicon (lexicon.yaml and every suite's own)."""
from __future__ import annotations

import pymorphy3
import pytest
import yaml

from stability.core.errors import UserError
from stability.templates.suites import SUITES_DIR, build_resources, load_suite, suite_names

# written out here rather than taken from the module, so a wrong mapping there fails this test
OPENCORPORA = {"NOM": "nomn", "ACC": "accs", "GEN": "gent", "DAT": "datv", "INS": "ablt", "ESS": "loct",
               "SG": "sing", "PL": "plur", "MASC": "masc", "FEM": "femn", "NEUT": "neut", "PST": "past",
               "PRS": "pres", "3": "3per", "PASS": "pssv", "PTCP": "PRTS"}
GENDERS = {"masc": "MASC", "femn": "FEM", "neut": "NEUT"}
MORPH = pymorphy3.MorphAnalyzer(lang="ru")


def russian_lexicons():
    """(name, YAML spec, built Lexicon) of every pymorphy3 lexicon of the Russian suites."""
    files = [SUITES_DIR / "ru" / "lexicon.yaml"] + [SUITES_DIR / "ru" / f"{name}.yaml" for name in suite_names("ru")]
    built = {**load_suite("ru", suite_names("ru")[0]).resources.lexicons}
    for name in suite_names("ru"):
        built.update(load_suite("ru", name).resources.lexicons)
    for path in files:
        for name, spec in (yaml.safe_load(path.read_text(encoding="utf-8")).get("lexicons") or {}).items():
            if isinstance(spec, dict) and "pymorphy3" in spec:
                yield name, spec, built[name]


def test_every_generated_russian_form_parses_back_to_the_requested_features():
    checked = 0
    for name, spec, lexicon in russian_lexicons():
        requested = [str(bundle).split(".") for bundle in spec["pymorphy3"]["forms"]]
        assert [entry.lemma for entry in lexicon.entries] == spec["lemmas"]
        for entry in lexicon.entries:
            assert len(entry.forms) == len(requested)
            for values, (bundle, form) in zip(requested, entry.forms):
                wanted = {OPENCORPORA[value] for value in values}
                parses = [p for p in MORPH.parse(form.lower()) if p.normal_form == entry.lemma.lower()
                          and wanted <= (p.tag.grammemes | {p.tag.POS})]
                assert parses, f"{name}: '{form}' does not parse as {entry.lemma} {'.'.join(values)}"
                assert set(values) <= set(bundle.values())
                if spec["pymorphy3"]["pos"] == "NOUN":
                    assert {GENDERS[p.tag.gender] for p in parses} >= {bundle["GENDER"]}
                checked += 1
    # names 8×5, act 6×4, item 4, tv 4×4, sym 3×2, asym 3×2, role 6×2, obj 4, be 3, give 2,
    # and the motion suite's go_round 2×2, go_toward 2×2, dest 5×2
    assert checked == 40 + 24 + 4 + 16 + 6 + 6 + 12 + 4 + 3 + 2 + 4 + 4 + 10


def test_names_keep_their_capital_letter_and_nouns_their_dictionary_gender():
    lexicons = load_suite("ru", "logic").resources.lexicons
    forms = dict((b["CASE"], f) for b, f in lexicons["name"].entries[1].forms)
    assert forms == {"NOM": "Пётр", "ACC": "Петра", "GEN": "Петра", "DAT": "Петру", "INS": "Петром"}
    assert [e.inherent["GENDER"] for e in lexicons["role"].entries] == ["MASC", "FEM", "MASC", "FEM", "MASC", "MASC"]
    # марка is the stamp (genitive plural марок), not the name Марк
    assert lexicons["item"].entries[3].forms[0][1] == "марок"


def test_an_unknown_lemma_or_impossible_form_is_a_user_error():
    bad_lemma = {"lexicons": {"x": {"pymorphy3": {"pos": "NOUN", "forms": ["SG.NOM"]}, "lemmas": ["кракозябрщик"]}}}
    with pytest.raises(UserError, match="pymorphy3 knows no NOUN 'кракозябрщик'"):
        build_resources(bad_lemma, "<test>")
    no_form = {"lexicons": {"x": {"pymorphy3": {"pos": "VERB", "forms": ["PRS.3.SG"]}, "lemmas": ["дать"]}}}
    with pytest.raises(UserError, match="cannot inflect 'дать' to SG.3.PRS"):
        build_resources(no_form, "<test>")
