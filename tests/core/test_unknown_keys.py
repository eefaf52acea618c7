"""A key no schema declares is refused, whatever its prefix (`+`, `++`, none) and also under
`--cfg job`: one line that suggests the closest declared key, status 2, before anything is
written. `+key=value` used to slip past struct mode: the run kept the preset's value and was
named after the typo. Free-form maps, group selections and `hydra.*` still compose."""
from __future__ import annotations

import pytest
from helpers import assert_one_line_error, front_door
from omegaconf import OmegaConf

from stability.cli import COMMANDS
from stability.core.errors import UserError
from stability.core.jobs import job_configs
from stability.core.overrides import split_flags

TYPO = "trainer.lerning_rate=3e-5"


@pytest.mark.parametrize("args", [
    [f"+{TYPO}"],
    pytest.param([f"++{TYPO}"], marks=pytest.mark.slow),
    [TYPO, "--cfg", "job"],
    pytest.param([f"+{TYPO}", "--resolve", "--cfg=all"], marks=pytest.mark.slow),
    pytest.param([f"++{TYPO}", "-p", "trainer"], marks=pytest.mark.slow),
])
def test_a_misspelt_key_is_one_line_before_any_work(tmp_path, args):
    result = front_door(["train", "experiment=smoke", *args], tmp_path)
    assert_one_line_error(result, "unknown key 'trainer.lerning_rate'", "fix: did you mean trainer.learning_rate?")
    assert result.stdout == "" and not list(tmp_path.iterdir())


def test_plan_checks_its_training_keys_under_cfg_too(tmp_path):
    result = front_door(["plan", "experiment=smoke", f"+{TYPO}", "--cfg", "job"], tmp_path)
    assert_one_line_error(result, "unknown key 'trainer.lerning_rate'", "fix: did you mean trainer.learning_rate?")


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_refuses_an_appended_unknown_key(tmp_path, command):
    # train and plan (its training overrides) know trainer.*; the other commands have no trainer
    fragment = "unknown key 'trainer.lerning_rate'" if command in ("train", "plan") else "unknown key 'trainer'"
    result = front_door([command, f"+{TYPO}"], tmp_path)
    assert_one_line_error(result, fragment)
    assert result.stdout == "" and not list(tmp_path.iterdir())


# a near miss of one of each command's own keys, and the key suggested
NEAR_MISSES = {
    "train": ("+data.max_lenght=64", "data.max_length"),
    "report": ("+bootstrapp=10", "bootstrap"),
    "probe": ("++probe.fold=3", "probe.folds"),
    "generate": ("+seeds=1", "seed"),
    "plan": ("+plan.expected_epoch=3", "plan.expected_epochs"),
    "status": ("+run=sweep", "runs"),
    "dataqa": ("+min_word=3", "min_words"),
    "annotate": ("+caches=false", "cache"),
    "view": ("+prot=8001", "port"),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_closest_declared_key_is_suggested(command):
    override, suggested = NEAR_MISSES[command]
    key = override.lstrip("+").split("=")[0]
    with pytest.raises(UserError, match=rf"^unknown key '{key}' \(fix: did you mean {suggested}\? "):
        job_configs([override], command)


def test_a_key_deep_in_a_node_is_named_with_its_path():
    with pytest.raises(UserError, match=r"^unknown key 'trainer.foo' \(fix: check its spelling;"):
        job_configs(["experiment=smoke", "+trainer.foo.bar=1"])
    with pytest.raises(UserError, match=r"^unknown key 'lerning_rate' \(fix: did you mean trainer.learning_rate\?"):
        job_configs(["experiment=smoke", "+lerning_rate=1"])


def test_free_form_maps_groups_and_declared_keys_still_compose():
    [cfg] = job_configs(["experiment=smoke", "seed=0", "lang=fr", "model=tiny", "hydra/launcher=basic",
                         "+data.train_set.labels.maybe=entailment", "++trainer.learning_rate=3e-5",
                         "++lang.files.test=fr/test.jsonl", "+annotator.extra=1", "+hydra.job.env_set.FOO=1"])
    assert cfg.experiment_name == "smoke" and cfg.lang.code == "fr"
    assert dict(cfg.data.train_set.labels) == {"maybe": "entailment"}
    assert cfg.trainer.learning_rate == 3e-5 and cfg.lang.files.test == "fr/test.jsonl"


def test_a_group_appended_with_plus_is_chosen_twice():
    # Hydra's own refusal (the defaults list names every group), as one line that drops the +
    with pytest.raises(UserError, match=r"^experiment is chosen twice \(fix: choose it once, without \+: experiment="):
        job_configs(["+experiment=smoke"])


def test_a_new_key_of_a_map_without_plus_says_to_add_it():
    with pytest.raises(UserError, match=r"'data.train_set.labels.maybe' is a new key of its map "
                                        r"\(fix: add it with \+data.train_set.labels.maybe=entailment\)"):
        job_configs(["experiment=smoke", "data.train_set.labels.maybe=entailment"])


def test_cfg_job_checks_the_keys_but_shows_a_config_still_lacking_values():
    with pytest.raises(UserError, match="runs is required"):
        job_configs([], "status")
    assert OmegaConf.is_missing(job_configs(["--cfg", "job"], "status")[0], "runs")
    with pytest.raises(UserError, match="^unknown key 'run' "):
        job_configs(["+run=sweep", "--cfg", "job"], "status")


def test_flag_values_are_no_overrides():
    argv = ["-m", "--cfg", "job", "seed=0", "--cfg=all", "--resolve", "-p", "trainer", "lang=fr"]
    assert split_flags(argv) == (["-m", "--cfg", "--cfg", "--resolve", "-p"], ["seed=0", "lang=fr"])
