"""`python -m probing` as a user runs it: config composition and one-line errors (status 2)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import assert_one_line_error
from probe_helpers import probe_cli

from stability.core.config import PROBE_CONFIG_NAME, compose_config
from stability.core.errors import UserError
from stability.core.jobs import job_configs
from stability.core.runrecord import RunDir, RunRecord

SHARED_GROUPS = ("lang", "model", "data", "annotator", "paths")


def test_probe_config_composes_the_training_groups():
    overrides = ["lang=fr", "data.root=/data", "data.max_train_samples=100", "model.name=/models/mbert"]
    probe = compose_config(overrides, config_name=PROBE_CONFIG_NAME)
    train = compose_config(overrides)
    for group in SHARED_GROUPS:
        assert probe[group] == train[group], group
    assert probe.out == str(Path(train.paths.output_dir) / "probing" / "fr")
    beside_runs = compose_config(["runs=outputs/baseline", "probe.labels=gold"], config_name=PROBE_CONFIG_NAME)
    assert beside_runs.out == str(Path("outputs/baseline/probing_gold"))
    assert beside_runs.probe.l2 == [0.1, 0.01, 0.001, 0.0001, 1e-05]


def _run_without_weights(root: Path, lang: str) -> Path:
    """A finished run directory, written through the run-record API, that saved no weights."""
    run = RunDir(root / lang / "rte" / "seed0")
    run.write_config(compose_config([f"lang={lang}", "experiment=smoke", "trainer.save_model=false"]))
    run.write_record(RunRecord(lang=lang, setup="rte", seed=0))
    return run.path


def test_missing_checkpoint(tmp_path):
    result = probe_cli([f"model.name={tmp_path / 'no-such-model'}", "data.source=builtin"], tmp_path)
    assert_one_line_error(result, "cannot load the pretrained encoder", "no-such-model")


def test_run_without_saved_weights(tmp_path):
    run = _run_without_weights(tmp_path / "sweep", "en")
    result = probe_cli([f"runs={tmp_path / 'sweep'}", "data.source=builtin"], tmp_path)
    assert_one_line_error(result, f"{run}: the run saved no weights", "trainer.save_model=true")


@pytest.mark.parametrize("args, fragments", [
    (["lang=en"], ("no runs of lang=en under this folder (it holds fr)", "pass lang=fr")),
    (["lang=fr", "probe.labels=silver"], ("probe.labels='silver' is not known",)),
])
def test_bad_arguments(tmp_path, args, fragments):
    _run_without_weights(tmp_path / "sweep", "fr")
    result = probe_cli([f"runs={tmp_path / 'sweep'}", "data.source=builtin", *args], tmp_path)
    assert_one_line_error(result, *fragments)


@pytest.mark.parametrize("override, message", [
    ("probe.l2=[0.1,-1]", "probe.l2=-1.0 is out of range (fix: pass probe.l2=<a number > 0>)"),
    ("probe.heldout=train", "probe.heldout='train' is not known"),
    ("probe.pair_features=sum", "probe.pair_features='sum' is not known"),
    ("probe.folds=2", "probe.folds=2 is out of range (fix: pass probe.folds=<a number >= 3>)"),
    ("probe.confidence=95", "probe.confidence=95.0 is out of range (fix: pass probe.confidence=<a number in [0, 1)>)"),
    ("probe.batch_size=many", "'probe.batch_size=many': Value 'many' of type 'str' could not be converted to Integer"),
    ("probe.l2=[x]", "'probe.l2=[x]': Value 'x' of type 'str' could not be converted to Float"),
    ("probe.device=gpu7", "probe.device='gpu7' is not a device"),
])
def test_bad_probe_settings(override, message):
    """Checked when the config is composed (the schema), before anything is loaded."""
    with pytest.raises(UserError, match=re.escape(message)):
        job_configs([override], PROBE_CONFIG_NAME)


def test_tiny_model_needs_runs(tmp_path):
    assert_one_line_error(probe_cli(["model=tiny"], tmp_path), "model=tiny has no pretrained weights")


def test_unknown_language(tmp_path):
    assert_one_line_error(probe_cli(["lang=xx"], tmp_path), "unknown lang 'xx'")
