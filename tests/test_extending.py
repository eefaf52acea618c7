"""The checklists of docs/extending.md, checked where a test can check them: a language
configured in `stability/conf/lang/` has every file the other parts need, the names that
tie metrics, annotator features and probing tasks together agree, and a stabilisation method's
off value is one in its schema, its config and the fingerprint."""
from __future__ import annotations

import dataclasses

import pytest
import yaml

from annotators.features import FEATURES
from annotators.wordlist_rules import LIST_FEATURES
from annotators.wordlists import WORDLIST_DIR
from probing.tasks import annotator_features
from stability.core.config import CONF_DIR
from stability.core.languages import LANG_DIR, language_codes
from stability.core.metrics import DiagnosticScores
from stability.core.runrecord import RunRecord
from stability.core.taxonomy import COARSE_FIELDS, FINE_CATEGORIES, TAXONOMY
from stability.data.sources import BUILTIN_DIR
from stability.templates.suites import LEXICON_FILE, SUITES_DIR

LANGS = language_codes()
SCRIPTS = ("latin", "cyrillic")          # the word-level checks data QA knows
CONFIG_KEYS = ("code", "name", "script", "alphabet", "files", "download")
SPLITS = ("train", "validation", "diagnostic")
# the lists every language has: the word-list annotator of German and Swedish
REQUIRED_WORDLISTS = ("negation", "negative_predicates", "quantifiers", "factives", "numbers", "temporal",
                      "conditionals", "conjunction", "disjunction", "anaphora")
# lists read by name outside LIST_FEATURES (negation counting, morphological negation)
NAMED_WORDLISTS = ("negation", "negation_concord", "negative_predicates", "negation_prefixes",
                   "negation_suffixes", "morph_negation_exceptions")
REQUIRED_SUITES = ("logic", "structure", "morphology")
RUN_IDENTITY = ("lang", "setup", "seed")


def _config(lang: str) -> dict:
    return yaml.safe_load((LANG_DIR / f"{lang}.yaml").read_text(encoding="utf-8"))


def _template_ids(lang: str) -> dict[str, list[str]]:
    """Template ids per suite file of a language."""
    return {path.stem: [template["id"] for template in yaml.safe_load(path.read_text(encoding="utf-8"))["templates"]]
            for path in sorted((SUITES_DIR / lang).glob("*.yaml")) if path.name != LEXICON_FILE}


def test_the_shipped_languages_are_configured():
    """The checks below run per configured language: they must not run over none."""
    assert {"en", "ru", "fr", "de", "sv"} <= set(LANGS)


@pytest.mark.parametrize("lang", LANGS)
def test_language_config(lang):
    config = _config(lang)
    where = f"stability/conf/lang/{lang}.yaml"
    missing = [key for key in CONFIG_KEYS if key not in config]
    assert not missing, f"{where} lacks {', '.join(missing)}"
    assert config["code"] == lang, f"{where}: code {config['code']!r} is not the file name"
    assert config["script"] in SCRIPTS, f"{where}: script {config['script']!r} is not one of {SCRIPTS}"
    assert config["alphabet"] == config["alphabet"].lower() and len(set(config["alphabet"])) == len(config["alphabet"]), \
        f"{where}: the alphabet must list each lower-case letter once"
    assert set(SPLITS) <= set(config["files"]), f"{where}: files lacks {sorted(set(SPLITS) - set(config['files']))}"
    pinned = set((config["download"] or {}).get("sha256") or {})
    assert pinned <= set(config["files"]), f"{where}: sha256 pinned for unconfigured splits {sorted(pinned - set(config['files']))}"


@pytest.mark.parametrize("lang", LANGS)
def test_language_has_builtin_data(lang):
    missing = [f"stability/data/builtin/{lang}/{split}.jsonl" for split in SPLITS
               if not (BUILTIN_DIR / lang / f"{split}.jsonl").is_file()]
    assert not missing, f"missing built-in data: {', '.join(missing)}"


@pytest.mark.parametrize("lang", LANGS)
def test_language_has_word_lists(lang):
    missing = [f"annotators/wordlists/{lang}/{name}.txt" for name in REQUIRED_WORDLISTS
               if not (WORDLIST_DIR / lang / f"{name}.txt").is_file()]
    assert not missing, f"missing word lists: {', '.join(missing)}"


@pytest.mark.parametrize("lang", LANGS)
def test_language_has_test_suites(lang):
    folder = f"stability/templates/suites/{lang}"
    assert (SUITES_DIR / lang / LEXICON_FILE).is_file(), f"missing {folder}/{LEXICON_FILE}"
    ids = _template_ids(lang)
    missing = [f"{folder}/{name}.yaml" for name in REQUIRED_SUITES if name not in ids]
    assert not missing, f"missing suites: {', '.join(missing)}"
    own = [template for templates in ids.values() for template in templates if template.startswith(f"{lang}.")]
    assert len(own) >= 2, f"{folder}: needs at least two templates of its own (ids starting with '{lang}.')"


def test_every_language_has_every_shared_template():
    """Shared template ids (those not starting with a language code) align items across languages."""
    shared = {lang: {(suite, template) for suite, templates in _template_ids(lang).items() for template in templates
                     if not template.startswith(tuple(f"{code}." for code in LANGS))} for lang in LANGS}
    every = set().union(*shared.values())
    for lang in LANGS:
        missing = sorted(every - shared[lang])
        assert not missing, f"stability/templates/suites/{lang} lacks shared templates: " \
                            + ", ".join(f"{template} ({suite}.yaml)" for suite, template in missing)


def test_every_diagnostic_score_reaches_the_run_record():
    """Training writes every field of DiagnosticScores into the RunRecord."""
    scores = {field.name for field in dataclasses.fields(DiagnosticScores)}
    record = {field.name for field in dataclasses.fields(RunRecord)}
    assert scores <= record, f"RunRecord lacks {sorted(scores - record)}"


def test_run_record_fields_beyond_the_identity_have_defaults():
    """So that records written before a field existed still read."""
    required = [field.name for field in dataclasses.fields(RunRecord)
                if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING]
    assert required == list(RUN_IDENTITY)


def test_every_fine_category_belongs_to_one_coarse_category():
    owners = {fine: [coarse for coarse, members in TAXONOMY.items() if fine in members] for fine in FINE_CATEGORIES}
    assert {fine: coarse for fine, coarse in owners.items() if len(coarse) != 1} == {}
    assert len(set(FINE_CATEGORIES)) == 33 and len(TAXONOMY) == 4
    assert set(COARSE_FIELDS.values()) == set(TAXONOMY)


def test_every_annotator_feature_is_a_fine_category():
    assert set(FEATURES) <= set(FINE_CATEGORIES)
    assert set(LIST_FEATURES) <= set(FEATURES)


def test_every_probe_task_has_a_detectable_feature():
    tasks = yaml.safe_load((CONF_DIR / "probe.yaml").read_text(encoding="utf-8"))["probe"]["tasks"]
    assert tasks, "probe.yaml names no task"
    assert {task: annotator_features(task) for task in tasks if not annotator_features(task)} == {}


def test_every_word_list_a_rule_names_exists_for_some_language():
    present = {path.stem for path in WORDLIST_DIR.glob("*/*.txt")}
    named = set(LIST_FEATURES.values()) | set(NAMED_WORDLISTS)
    assert not named - present, f"no language has the word lists {sorted(named - present)}"


def test_every_word_list_file_is_read_by_a_rule():
    """A misspelt file name would be ignored silently (the feature reported unsupported)."""
    read = set(LIST_FEATURES.values()) | set(NAMED_WORDLISTS)
    unread = sorted(str(path.relative_to(WORDLIST_DIR.parent.parent)) for path in WORDLIST_DIR.glob("*/*.txt")
                    if path.stem not in read)
    assert not unread, f"word lists no rule reads (misspelt?): {', '.join(unread)}"


def test_every_word_list_folder_is_a_configured_language():
    folders = sorted(path.name for path in WORDLIST_DIR.iterdir() if path.is_dir())
    assert folders == sorted(LANGS)


def test_every_stabilisation_key_is_off_alike_in_schema_config_and_fingerprint_and_named():
    """docs/extending.md, "A stabilisation method", steps 1-3 and 5."""
    from stability.core.identity import ALIASES, NOT_VARIANT_KEYS
    from stability.core.runrecord import OFF_VALUES
    from stability.core.schemas.trainer import Trainer

    defaults = {field.name: field.default for field in dataclasses.fields(Trainer)}
    shipped = yaml.safe_load((CONF_DIR / "trainer" / "default.yaml").read_text(encoding="utf-8"))
    for key, off in OFF_VALUES.items():
        name = key.removeprefix("trainer.")
        assert defaults.get(name) == off, f"stability/core/schemas/trainer.py: Trainer.{name} defaults to {off!r}"
        assert shipped.get(name) == off, f"stability/conf/trainer/default.yaml: {name}: {off!r}"
        assert key in ALIASES or key in NOT_VARIANT_KEYS, f"stability/core/identity.py: ALIASES lacks {key}"
    footer = yaml.safe_load((CONF_DIR / "hydra" / "default.yaml").read_text(encoding="utf-8"))["help"]["footer"]
    methods = (CONF_DIR.parents[1] / "docs" / "stabilisation-methods.md").read_text(encoding="utf-8")
    for preset in sorted(path.stem for path in (CONF_DIR / "trainer").glob("*.yaml")):
        assert f"|{preset}" in footer or f"={preset}|" in footer, f"stability/conf/hydra/default.yaml: trainer={preset}"
        assert preset == "default" or f"`{preset}`" in methods or f"trainer={preset}" in methods, \
            f"docs/stabilisation-methods.md: {preset}"
