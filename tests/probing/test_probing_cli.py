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


@pytest.mark.slow
def test_missing_checkpoint(tmp_path):
    result = probe_cli([f"model.name={tmp_path / 'no-such-model'}", "data.source=builtin"], tmp_path)
    assert_one_line_error(result, "cannot load the pretrained encoder", "no-such-model")


@pytest.mark.slow
def test_run_without_saved_weights(tmp_path):
    run = _run_without_weights(tmp_path / "sweep", "en")
    result = probe_cli([f"runs={tmp_path / 'sweep'}", "data.source=builtin"], tmp_path)
    assert_one_line_error(result, f"{run}: the run saved no weights", "trainer.save_model=true")


@pytest.mark.parametrize("args, fragments", [
    (["lang=en"], ("no runs of lang=en under this folder (it holds fr)", "pass lang=fr")),
    (["lang=fr", "probe.labels=silver"], ("probe.labels='silver' is not known",)),
])
@pytest.mark.slow
def test_bad_arguments(tmp_path, args, fragments):
    _run_without_weights(tmp_path / "sweep", "fr")
    result = probe_cli([f"runs={tmp_path / 'sweep'}", "data.source=builtin", *args], tmp_path)
    assert_one_line_error(result, *fragments)


@pytest.mark.parametrize("override, message", [
    ("probe.l2=[0.1,-1]", "probe.l2=-1.0 is out of range (fix: pass probe.l2=<a number > 0>)"),
    ("probe.heldout=train", "probe.heldout='train' is not known"),
    ("probe.pair_features=sum", "probe.pair_features='sum' is not known"),
    ("probe.folds=2", "probe.folds=2 is out of range (fix: pass probe.folds=<a number >= 3>)"),
    ("probe.confidence=95", "probe.confidence=95.0 is out of range (fix: pass probe.confidence=<a number in (0, 1)>)"),
    ("probe.batch_size=many", "probe.batch_size='many' is not an integer"),
    ("probe.l2=[x]", "'probe.l2=[x]': Value 'x' of type 'str' could not be converted to Float"),
    ("probe.device=gpu7", "probe.device='gpu7' is not a device"),
])
def test_bad_probe_settings(override, message):
    """Checked when the config is composed (the schema), before anything is loaded."""
    with pytest.raises(UserError, match=re.escape(message)):
        job_configs([override], PROBE_CONFIG_NAME)


@pytest.mark.slow
def test_tiny_model_needs_runs(tmp_path):
    assert_one_line_error(probe_cli(["model=tiny"], tmp_path), "model=tiny has no pretrained weights")


def test_unknown_language(tmp_path):
    assert_one_line_error(probe_cli(["lang=xx"], tmp_path), "unknown lang 'xx'")


def _recorded(root: Path, overrides: list[str]):
    """The probe config `nli-stability probe runs=ROOT *overrides` would probe with."""
    from probing.recorded import recorded_runs

    task = [f"runs={root}", *overrides]
    return recorded_runs(compose_config(task, config_name=PROBE_CONFIG_NAME), task)


def _run(root: Path, lang: str, seed: int, *overrides: str) -> None:
    run = RunDir(root / lang / "rte" / f"seed{seed}")
    run.write_config(compose_config([f"lang={lang}", "experiment=smoke", f"seed={seed}", *overrides]))
    run.write_record(RunRecord(lang=lang, setup="rte", seed=seed))


def test_runs_give_lang_data_and_model(tmp_path):
    _run(tmp_path, "fr", 0, "data.max_train_samples=32", "data.max_length=64")
    _run(tmp_path, "fr", 1, "data.max_train_samples=32", "data.max_length=64")
    recorded = _recorded(tmp_path, [])
    cfg = recorded.cfg
    assert cfg.lang.code == "fr" and cfg.lang.files == compose_config(["lang=fr"]).lang.files
    assert (cfg.data.source, cfg.data.max_train_samples, cfg.data.max_eval_samples, cfg.data.max_length) == \
        ("builtin", 32, None, 64)
    assert (cfg.model.name, cfg.model.kind) == ("tiny-bert", "tiny")
    assert sorted(record.seed for _, record in recorded.runs) == [0, 1]
    # what the command line gives wins, key by key
    given = _recorded(tmp_path, ["data.max_train_samples=10", "model.name=/models/mbert"]).cfg
    assert (given.data.max_train_samples, given.data.max_length, given.model.name) == (10, 64, "/models/mbert")


def test_lang_selects_the_runs_of_a_mixed_folder(tmp_path):
    _run(tmp_path, "fr", 0)
    _run(tmp_path, "de", 0, "data.max_eval_samples=8")
    with pytest.raises(UserError, match=re.escape("the runs disagree on lang (de, fr) (fix: pass lang=de or lang=fr "
                                                  "to probe one language's runs)")):
        _recorded(tmp_path, [])
    german = _recorded(tmp_path, ["lang=de"])
    assert [record.lang for _, record in german.runs] == ["de"] and german.cfg.data.max_eval_samples == 8


def test_runs_that_disagree_on_a_data_setting(tmp_path):
    _run(tmp_path, "fr", 0, "data.source=files", f"data.root={tmp_path / 'a'}")
    _run(tmp_path, "fr", 1, "data.source=files", f"data.root={tmp_path / 'b'}")
    message = f"the runs disagree on data.root ({tmp_path / 'a'}, {tmp_path / 'b'})"
    with pytest.raises(UserError, match=re.escape(message)):
        _recorded(tmp_path, [])
    assert _recorded(tmp_path, [f"data.root={tmp_path / 'c'}"]).cfg.data.root == str(tmp_path / "c")


@pytest.mark.slow
def test_a_mixed_language_folder_is_one_line(tmp_path):
    _run(tmp_path / "sweep", "fr", 0)
    _run(tmp_path / "sweep", "en", 0)
    assert_one_line_error(probe_cli([f"runs={tmp_path / 'sweep'}"], tmp_path),
                          "the runs disagree on lang (en, fr)", "lang=en or lang=fr")
    assert not (tmp_path / "sweep" / "probing").exists()      # refused before Hydra made its folder


def test_runs_of_two_variants_are_two_fine_tuned_models(tmp_path):
    """Two learning rates of one setup are never pooled into one model's seed statistics."""
    from omegaconf import OmegaConf

    from probing.encoders import plan_from_runs

    runs = []
    for variant, seed in (("", 0), ("", 1), ("lr3e-05", 0)):
        run = RunDir(tmp_path / "en" / "rte" / variant / f"seed{seed}")
        (run.model_dir).mkdir(parents=True)
        (run.model_dir / "config.json").write_text("{}")
        runs.append((run, RunRecord(lang="en", setup="rte", seed=seed, variant=variant)))
    plan = plan_from_runs(runs, OmegaConf.create({"kind": "pretrained", "name": "bert-base-multilingual-cased"}), 0)
    assert [(spec.model, spec.seed) for spec in plan.fine_tuned] == [
        ("fine-tuned:rte", 0), ("fine-tuned:rte", 1), ("fine-tuned:rte/lr3e-05", 0)]
