"""Typed configs: every training config converts to its schemas, the schemas add, drop and
retype no key, and wrong values are refused at compose time with one line naming the key."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from omegaconf import DictConfig, OmegaConf

from stability.core.config import CONF_DIR, compose_config
from stability.core.errors import UserError
from stability.core.jobs import job_configs
from stability.core.runrecord import config_fingerprint
from stability.core.schemas.data import Suite
from stability.core.schemas.lang import Lang, LangWithAllowedWords, PinnedLang, PinnedLangWithLidAccepted
from stability.core.schemas.logger import Logger, WandbLogger
from stability.core.schemas.model import PretrainedModel, TinyModel
from stability.core.schemas.train import TrainConfig, train_settings
from stability.core.schemas.trainer import Trainer

FIXTURE_RUN = Path(__file__).parent.parent / "fixtures" / "smoke_main_041fde0" / "smoke" / "en" / "rte" / "seed0"
TYPED_GROUPS = ("lang", "model", "data", "trainer", "logger", "paths")


def _settings(*overrides: str) -> TrainConfig:
    return train_settings(compose_config(list(overrides)))


@pytest.mark.parametrize("lang, schema", [("en", Lang), ("de", PinnedLang), ("fr", PinnedLang),
                                          ("ru", LangWithAllowedWords), ("sv", PinnedLangWithLidAccepted)])
def test_each_language_converts_to_its_schema(lang, schema):
    settings = _settings(f"lang={lang}")
    assert type(settings.lang) is schema and settings.lang.code == lang
    assert isinstance(settings.lang.released_train_size, int) and isinstance(settings.lang.files, dict)


def test_group_options_convert_to_their_schemas_with_typed_values():
    default = _settings()
    assert type(default.model) is PretrainedModel and type(default.logger) is Logger
    smoke = _settings("experiment=smoke", "logger=wandb", "trainer.learning_rate=1", "seed=3")
    assert type(smoke.model) is TinyModel and smoke.model.hidden_size == 64
    assert type(smoke.logger) is WandbLogger and smoke.logger.tags == []
    assert type(smoke.trainer) is Trainer and smoke.trainer.batch_size == 8
    assert smoke.trainer.learning_rate == 1.0 and isinstance(smoke.trainer.learning_rate, float)
    assert (smoke.seed, smoke.seed_init, smoke.seed_order) == (3, 3, 3)
    assert smoke.setup == "rte" and smoke.variant == "lr1" and smoke.out == "outputs/smoke"
    assert isinstance(smoke.annotator, dict) and smoke.annotator["batch_size"] == 256
    mixed = _settings("experiment=feature_presence", "data.mnli.presence=50")
    assert (mixed.data.mnli.n_samples, mixed.data.mnli.presence, mixed.setup) == (10000, 50, "rte+mnli10000+Negation50")


def _group_files() -> list[Path]:
    return sorted(path for group in TYPED_GROUPS for path in (CONF_DIR / group).glob("*.yaml"))


@pytest.mark.parametrize("path", _group_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_schema_adds_drops_and_retypes_no_key_of_its_yaml(path):
    """The composed group equals the file's own keys and values (over those of the sibling files
    it builds on, e.g. trainer/mosbach.yaml on trainer/default.yaml), in the files' order:
    config.yaml and every fingerprint stay what they were before the schemas."""
    composed = compose_config([f"{path.parent.name}={path.stem}"])[path.parent.name]
    assert OmegaConf.to_yaml(composed) == OmegaConf.to_yaml(_own_keys(path))


def _own_keys(path: Path) -> DictConfig:
    """A group file's keys merged over those of the same-group files its defaults list names."""
    raw = OmegaConf.load(path)
    base = OmegaConf.create()
    for entry in raw.pop("defaults", []):
        if isinstance(entry, str) and entry != "_self_" and not entry.startswith("/"):
            base = OmegaConf.merge(base, _own_keys(path.parent / f"{entry}.yaml"))
    return OmegaConf.merge(base, raw)


def test_the_training_schema_has_train_yaml_keys_after_the_groups():
    own = [key for key in OmegaConf.load(CONF_DIR / "train.yaml") if key != "defaults"]
    groups = ["lang", "model", "data", "trainer", "logger", "annotator", "paths"]
    assert [field.name for field in dataclasses.fields(TrainConfig)] == groups + own
    assert list(compose_config([])) == groups + own


def test_the_smoke_fingerprint_is_that_of_runs_made_before_typed_configs():
    recorded = json.loads((FIXTURE_RUN / "metrics.json").read_text(encoding="utf-8"))["config_fingerprint"]
    assert config_fingerprint(compose_config(["experiment=smoke", "seed=0"])) == recorded


def _replaced(node: object, **changes: object) -> None:
    dataclasses.replace(node, **changes)  # runs __post_init__ on the new values


@pytest.mark.parametrize("group, changes, message", [
    ("trainer", {"batch_size": 0}, "trainer.batch_size=0 is out of range (fix: pass trainer.batch_size=<a number >= 1>)"),
    ("trainer", {"eval_batch_size": -1}, "trainer.eval_batch_size=-1 is out of range"),
    ("trainer", {"patience": 0}, "trainer.patience=0 is out of range"),
    ("trainer", {"learning_rate": 0.0}, "trainer.learning_rate=0.0 is out of range (fix: pass trainer.learning_rate=<a number > 0>)"),
    ("trainer", {"max_grad_norm": -1.0}, "trainer.max_grad_norm=-1.0 is out of range"),
    ("trainer", {"weight_decay": -0.1}, "trainer.weight_decay=-0.1 is out of range"),
    ("trainer", {"mixed_precision": "fp8"}, "trainer.mixed_precision='fp8' is not known (fix: use one of: no, fp16, "
                                            "bf16, auto)"),
    ("model", {"dropout": 1.0}, "model.dropout=1.0 is out of range (fix: pass model.dropout=<a number in [0, 1)>)"),
    ("model", {"dropout": -0.1}, "model.dropout=-0.1 is out of range"),
    ("model", {"kind": "tiny"}, "model.kind='tiny' is not known"),
    ("data", {"source": "web"}, "data.source='web' is not known"),
    ("data", {"max_train_samples": -5}, "data.max_train_samples=-5 is out of range (fix: pass "
                                          "data.max_train_samples=<a number >= 1 or null>)"),
    ("data", {"max_eval_samples": 0}, "data.max_eval_samples=0 is out of range"),
    ("data", {"max_length": 0}, "data.max_length=0 is out of range"),
    ("lang", {"script": "greek"}, "lang.script='greek' is not known"),
    ("lang", {"files": {"train": "a", "validation": "b"}}, "lang en names no diagnostic file"),
])
def test_out_of_range_values_are_refused_naming_the_key(group, changes, message):
    node = getattr(_settings(), group)
    _replaced(node)  # the shipped values pass
    with pytest.raises(UserError, match="^" + re.escape(message)):
        _replaced(node, **changes)


def test_tiny_model_checks_its_architecture():
    tiny = _settings("model=tiny").model
    with pytest.raises(UserError, match="model.hidden_size=63 is not a multiple of model.num_attention_heads=2"):
        _replaced(tiny, hidden_size=63)
    with pytest.raises(UserError, match="model.vocab_size=0 is out of range"):
        _replaced(tiny, vocab_size=0)
    _replaced(tiny, kind="pretrained")  # a preset on the tiny model pointed at a checkpoint
    with pytest.raises(UserError, match="model.kind='bert' is not known"):
        _replaced(tiny, kind="bert")


def test_suite_size_is_positive_or_null():
    suite = _settings().data.suite
    _replaced(suite, n=None)
    with pytest.raises(UserError, match="data.suite.n=0 is out of range"):
        Suite(name="all", n=0, seed=0)


@pytest.mark.parametrize("n_samples", [0, 10, "all", "ALL"])
def test_mnli_counts(n_samples):
    _replaced(_settings().data.mnli, n_samples=n_samples)


@pytest.mark.parametrize("changes, message", [
    ({"n_samples": -1}, "data.mnli.n_samples=-1 is not a count"),
    ({"n_samples": "many"}, "data.mnli.n_samples='many' is not a count"),
    ({"n_samples": 2.5}, "data.mnli.n_samples=2.5 is not a count"),
    ({"n_samples": True}, "data.mnli.n_samples=True is not a count"),
    ({"n_samples": 10, "presence": 101}, "data.mnli.presence=101 is out of range (fix: pass data.mnli.presence=<a number in [0, 100]>)"),
    ({"n_samples": 10, "presence": "half"}, "data.mnli.presence='half' is not a number"),
    ({"feature": "Negation"}, "data.mnli.feature needs MNLI pairs"),
    ({"n_samples": "all", "feature": "Negation", "presence": 50}, "data.mnli.feature needs a count and a presence"),
    ({"n_samples": 10, "feature": "Negation"}, "data.mnli.feature needs a count and a presence"),
])
def test_bad_mnli_settings(changes, message):
    with pytest.raises(UserError, match="^" + re.escape(message)):
        _replaced(_settings().data.mnli, **changes)


def test_mnli_presence_and_count_keep_the_types_they_are_given():
    """Typed `Any`: a float field would write the preset's `presence: 25` as 25.0 and rename the setup."""
    cfg = compose_config(["experiment=feature_presence", "data.mnli.presence=25"])
    assert "presence: 25\n" in OmegaConf.to_yaml(cfg.data.mnli) and cfg.setup == "rte+mnli10000+Negation25"
    settings = _settings("experiment=feature_presence", "data.mnli.presence=12.5")
    assert settings.data.mnli.presence == 12.5 and settings.setup == "rte+mnli10000+Negation12.5"
    assert _settings("data.mnli.n_samples=all").data.mnli.n_samples == "all"


@pytest.mark.parametrize("override, message", [
    ("trainer.batch_size=abc", "trainer.batch_size='abc' is not an integer (fix: pass trainer.batch_size=<integer>)"),
    ("trainer.learning_rate=fast", "trainer.learning_rate='fast' is not a number"),
    ("trainer.resume=maybe", "trainer.resume='maybe' is not true or false"),
    ("trainer.batch_size=null", "trainer.batch_size cannot be null"),
    ("seed=1.5", "seed=1.5 is not an integer"),
    ("data.max_train_samples=x", "data.max_train_samples='x' is not an integer (fix: pass "
                                 "data.max_train_samples=<integer> or null)"),
    ("data.max_train_samples=-5", "data.max_train_samples=-5 is out of range"),
    ("model.dropout=2", "model.dropout=2.0 is out of range (fix: pass model.dropout=<a number in [0, 1)>)"),
])
def test_compose_refuses_wrong_values_naming_the_key(override, message):
    with pytest.raises(UserError) as err:
        job_configs(["experiment=smoke", "seed=0..1", override])
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_users_language_config_is_typed_by_the_schema_it_names(tmp_path):
    """A language added on the search path names a lang schema first, like the shipped ones."""
    shipped = (CONF_DIR / "lang" / "en.yaml").read_text(encoding="utf-8")
    (tmp_path / "lang").mkdir()
    (tmp_path / "lang" / "xx.yaml").write_text(shipped.replace("code: en", "code: xx"), encoding="utf-8")
    (tmp_path / "lang" / "yy.yaml").write_text(shipped.replace("code: en", "code: yy").replace(
        "  - /lang_schema@_here_\n", ""), encoding="utf-8")
    search = f"hydra.searchpath=[file://{tmp_path}]"
    assert type(_settings(search, "lang=xx").lang) is Lang
    with pytest.raises(UserError, match=re.escape("the config of lang=yy names no schema (fix: start its defaults")):
        _settings(search, "lang=yy")
