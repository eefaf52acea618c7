"""Every value range checked when the command line is composed, one message per key: the
command a user types, status 2, one line naming the key (and the key its range depends on),
a fix that works as typed, and nothing already written changed."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from forked_cli import run_module
from helpers import assert_one_line_error, builtin_release, folder_files

from stability.core import jobs, overrides
from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.core.jobs import job_configs
from stability.core.schemas.checks import SEED_MAX
from stability.core.schemas.data import Download
from stability.core.schemas.train import train_settings
from stability.core.schemas.trainer import Trainer
from stability.data.sources import DownloadSpec, FileSource

QUICK = ["experiment=smoke", "seed=0", "data.max_train_samples=32", "trainer.max_epochs=2"]


def _cli(command: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`nli-stability COMMAND ARGS` as a user runs it."""
    env = {key: value for key, value in os.environ.items() if key != "NLI_STABILITY_TRACEBACK"}
    return run_module("stability", [command, *args], cwd, env=env)



@pytest.fixture
def written(tmp_path) -> Path:
    """An output folder holding a run's files already, which a refused command must leave as they are."""
    run = tmp_path / "out" / "smoke" / "en" / "rte" / "seed0"
    run.mkdir(parents=True)
    (run / "metrics.json").write_text('{"overall_mcc": 0.25}\n', encoding="utf-8")
    (run / "train.log").write_text("epoch 1\n", encoding="utf-8")
    return tmp_path / "out"


def _refused(command: str, args: list[str], cwd: Path, written: Path, *fragments: str) -> str:
    """Run a command that must be refused: one line holding `fragments`, status 2, no file
    under `written` created or changed; returns the line."""
    before = folder_files(written)
    result = _cli(command, [*args, f"paths.output_dir={written}"], cwd)
    assert_one_line_error(result, *fragments)
    assert folder_files(written) == before
    assert sorted(p.name for p in written.iterdir()) == ["smoke"]
    return result.stderr.strip()


def _composed_error(*argv: str, config_name: str = "train") -> str:
    with pytest.raises(UserError) as err:
        job_configs(list(argv), config_name)
    assert "\n" not in str(err.value)
    return str(err.value)


def _fix(message: str) -> str:
    return message.split("(fix: ", 1)[1].removesuffix(")")


# --- one message per key: the whole range, whichever side the value falls -----------------------

@pytest.mark.parametrize("key, values, fix", [
    ("trainer.lr_decay_factor", ["0", "1", "1.5", "-0.5", "nan"], "pass trainer.lr_decay_factor=<a number in (0, 1)>"),
    ("trainer.layer_lr_decay", ["0", "1.5", "-1"], "pass trainer.layer_lr_decay=<a number in (0, 1]>"),
    ("trainer.learning_rate", ["0", "-1e-5", "inf"], "pass trainer.learning_rate=<a number > 0>"),
    ("trainer.warmup_ratio", ["-0.1", "1"], "pass trainer.warmup_ratio=<a number in [0, 1)>"),
    ("trainer.mixout", ["-0.1", "1"], "pass trainer.mixout=<a number in [0, 1)>"),
    ("trainer.pretrained_decay", ["-1", "inf"], "pass trainer.pretrained_decay=<a number >= 0>"),
    ("trainer.min_lr", ["-1", "inf"], "pass trainer.min_lr=<a number >= 0>"),
    ("seed", ["-1", str(SEED_MAX + 1)], f"pass seed=<a number in [0, {SEED_MAX}]>"),
])
def test_each_key_states_one_range_on_either_side(key, values, fix):
    for value in values:
        message = _composed_error("experiment=smoke", f"{key}={value}")
        assert message.startswith(f"{key}=") and " is out of range" in message, message
        assert _fix(message) == fix


@pytest.mark.parametrize("config_name, key, values, fix", [
    ("dataqa", "near_threshold", ["0", "1.5"], "pass near_threshold=<a number in (0, 1]>"),
    ("probe", "probe.confidence", ["0", "1"], "pass probe.confidence=<a number in (0, 1)>"),
    ("probe", "probe.seed", ["-1"], f"pass probe.seed=<a number in [0, {SEED_MAX}]>"),
    ("generate", "seed", ["-1"], f"pass seed=<a number in [0, {SEED_MAX}]>"),
    ("report", "random_state", ["-1"], f"pass random_state=<a number in [0, {SEED_MAX}]>"),
    ("plan", "plan.samples_per_second", ["0", "inf"], "pass plan.samples_per_second=<a number > 0 or null>"),
])
def test_other_commands_state_one_range_per_key(config_name, key, values, fix):
    given = {"dataqa": ["lang=fr"], "probe": ["runs=somewhere"], "generate": ["lang=fr", "suite=all"],
             "report": ["runs=somewhere"], "plan": []}[config_name]
    for value in values:
        assert _fix(_composed_error(*given, f"{key}={value}", config_name=config_name)) == fix


# --- bad case 5: min_lr above the learning rate ---------------------------------------------------

def test_min_lr_above_the_learning_rate_is_refused_naming_both_keys(tmp_path, written):
    line = _refused("train", [*QUICK, "trainer.lr_patience=1", "trainer.min_lr=0.01"], tmp_path, written,
                    "trainer.min_lr=0.01 is out of range", "trainer.learning_rate=0.001",
                    "pass trainer.min_lr=<a number in [0, 0.001]> or trainer.lr_patience=null")
    assert "trainer.lr_patience set" in line
    # the same range below it, and none without the plateau rule (min_lr is then unread)
    assert _fix(_composed_error("experiment=smoke", "trainer.lr_patience=1", "trainer.min_lr=-1")) == \
        "pass trainer.min_lr=<a number in [0, 0.001]> or trainer.lr_patience=null"
    job_configs(["experiment=smoke", "trainer.min_lr=0.01"])
    job_configs(["experiment=smoke", "trainer.lr_patience=1", "trainer.min_lr=0.001"])


@pytest.mark.slow
def test_min_lr_at_the_learning_rate_trains_past_the_first_epoch(tmp_path):
    """The fix as typed: min_lr within [0, learning_rate] trains on (before, any min_lr above the
    rate stopped the run after its first validation)."""
    result = _cli("train", [*QUICK, "trainer.lr_patience=1", "trainer.min_lr=0.001",
                            f"paths.output_dir={tmp_path / 'out'}"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "epoch 2: loss" in result.stdout  # Hydra logs to stdout
    assert len(list((tmp_path / "out").rglob("metrics.json"))) == 1


# --- bad case 7: negative seeds -------------------------------------------------------------------

def test_a_negative_seed_is_refused_before_any_folder(tmp_path, written):
    _refused("train", ["experiment=smoke", "seed=-1"], tmp_path, written,
             f"seed=-1 is out of range (fix: pass seed=<a number in [0, {SEED_MAX}]>)")
    assert not (written / "smoke" / "en" / "rte" / "seed-1").exists()


def test_plan_refuses_a_range_of_negative_seeds_and_plans_the_fixed_one(tmp_path, written):
    _refused("plan", ["experiment=smoke", "seed=-3..1"], tmp_path, written, "seed=-3 is out of range")
    result = _cli("plan", ["experiment=smoke", "seed=0..1", "plan.json=true"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert [run["seed"] for run in json.loads(result.stdout)["runs"]] == [0, 1]


@pytest.mark.parametrize("key", ["seed_init", "seed_order", "data.mnli.seed", "data.mix.seed", "data.suite.seed"])
def test_every_seed_key_is_non_negative(key):
    assert _composed_error("experiment=smoke", f"{key}=-1").startswith(f"{key}=-1 is out of range")
    job_configs(["experiment=smoke", f"{key}={SEED_MAX}"])


# --- reinit_layers against the encoder's layers -----------------------------------------------------

def test_reinit_layers_above_the_tiny_models_layers_is_refused(tmp_path, written):
    _refused("train", ["experiment=smoke", "trainer.reinit_layers=3"], tmp_path, written,
             "trainer.reinit_layers=3 is out of range: the encoder of model.name=tiny-bert has 2 layers",
             "pass trainer.reinit_layers=<a number in [0, 2]>")
    # one range below it too, and where the layers are unknown, at least 0
    assert _fix(_composed_error("experiment=smoke", "trainer.reinit_layers=-1")) == \
        "pass trainer.reinit_layers=<a number in [0, 2]>"
    assert _fix(_composed_error("model.name=someone/not-downloaded", "trainer.reinit_layers=-1")) == \
        "pass trainer.reinit_layers=<a number >= 0>"


@pytest.mark.slow
def test_reinit_layers_within_the_layers_trains(tmp_path):
    result = _cli("train", [*QUICK, "trainer.reinit_layers=2", f"paths.output_dir={tmp_path / 'out'}"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert [p.parent.name for p in (tmp_path / "out").rglob("metrics.json")] == ["seed0"]


def test_reinit_layers_of_a_local_checkpoint_are_read_from_its_config(minilm_folder):
    model = [f"model.name={minilm_folder}", "model.kind=pretrained"]
    message = _composed_error("experiment=smoke", *model, "trainer.reinit_layers=7")
    assert f"the encoder of model.name={minilm_folder} has 6 layers" in message
    assert _fix(message) == "pass trainer.reinit_layers=<a number in [0, 6]>"
    job_configs(["experiment=smoke", *model, "trainer.reinit_layers=6"])


def _hub_cache(cache: Path, repo_id: str, config: dict) -> None:
    """A Hugging Face cache holding one snapshot of `repo_id` with only its config.json."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0" * 40)
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(config))


def test_reinit_layers_of_a_cached_hub_model_are_checked_and_of_an_unknown_one_left_to_the_run(tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    _hub_cache(tmp_path / "hub", "someone/bert-4", {"model_type": "bert", "num_hidden_layers": 4})
    message = _composed_error("model.name=someone/bert-4", "trainer.reinit_layers=5")
    assert "model.name=someone/bert-4 has 4 layers" in message and "[0, 4]" in message
    job_configs(["model.name=someone/bert-4", "trainer.reinit_layers=4"])
    job_configs(["model.name=someone/not-downloaded", "trainer.reinit_layers=50"])  # its run checks


# --- weak: a sweep too large to compose ------------------------------------------------------------

def test_a_huge_seed_range_is_refused_at_once_with_a_split_that_fits(tmp_path, written):
    line = _refused("plan", ["experiment=baseline", "seed=0..100000"], tmp_path, written,
                    "the sweep has 500,005 jobs, more than the 2,000",
                    "run it as several sweeps: seed=0..399, then seed=400..799")
    assert "error: " in line


def test_the_split_the_refusal_proposes_composes(monkeypatch):
    """MAX_JOBS lowered to keep the test short (2,000 jobs take minutes to compose): the proposed
    split is the largest part that fits, and composes."""
    for module in (jobs, overrides):
        monkeypatch.setattr(module, "MAX_JOBS", 10)
    message = _composed_error("experiment=baseline", "seed=0..100")
    assert message.startswith("the sweep has 505 jobs, more than the 10 ")
    assert _fix(message) == "run it as several sweeps: seed=0..1, then seed=2..3, ..."
    assert len(job_configs(["experiment=baseline", "seed=0..1"])) == 10
    assert len(job_configs(["experiment=baseline", "seed=2..3"])) == 10
    # values that are no consecutive range: a count per command instead
    assert _fix(_composed_error("experiment=baseline", "seed=0,2,4,6")) == \
        "run it as several sweeps: at most 2 values of lang in each"


# --- weak: a recipe's validation interval past max_epochs ------------------------------------------

def test_a_run_rounded_up_a_whole_epoch_past_max_epochs_says_so():
    jiant = train_settings(compose_config(["trainer=jiant_superglue"])).trainer
    # 64 pairs at batch 4: 16 steps an epoch, 160 in 10 epochs, rounded up to the first of 1,000
    assert jiant.epochs_past_max(16) == (
        "this run trains 1,000 steps, 62.5 epochs of 16 steps (its training set at batch size 4), not "
        "trainer.max_epochs=10: trainer.eval_every=1000 rounds training up to whole validations; "
        "trainer.eval_every=epoch keeps to max_epochs")
    assert "7,000 steps, 11.2 epochs of 623 steps" in jiant.epochs_past_max(623)  # English RTE
    assert jiant.epochs_past_max(1000) is None  # exactly 10 validations
    assert jiant.epochs_past_max(1050) is None  # 11,000 steps: less than one epoch more
    by_epoch = train_settings(compose_config([])).trainer
    assert by_epoch.epochs_past_max(16) is None


@pytest.mark.slow
def test_the_run_logs_the_epochs_its_validation_interval_forces(tmp_path):
    result = _cli("train", ["experiment=smoke", "seed=0", "data.max_train_samples=32", "trainer.max_epochs=1",
                            "trainer.eval_every=20", f"paths.output_dir={tmp_path / 'out'}"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "this run trains 20 steps, 5 epochs of 4 steps (its training set at batch size 8), not " \
           "trainer.max_epochs=1" in result.stdout  # Hydra logs to stdout


# --- weak: a symbolic-link loop as data.root --------------------------------------------------------

def test_a_symlink_loop_as_data_root_is_said_to_be_one(tmp_path, written):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    _refused("train", ["experiment=smoke", "data.source=files", f"data.root={tmp_path / 'loop'}"], tmp_path,
             written, f"data.root={tmp_path / 'loop'} is a loop of symbolic links", "pass data.root=<the real folder>")
    real = builtin_release(tmp_path / "real", ["en"])
    job_configs(["experiment=smoke", "data.source=files", f"data.root={real}"])


def test_a_symlink_loop_on_a_data_files_path_is_said_to_be_one(tmp_path):
    (tmp_path / "RTE").symlink_to(tmp_path / "RTE")
    source = FileSource("English", {"train": "RTE/train.jsonl"}, tmp_path, tmp_path / "cache",
                        DownloadSpec.from_config(Download()))
    with pytest.raises(UserError, match=re.escape("the English train file is a loop of symbolic links")):
        source.path("train")


# --- the schemas themselves -------------------------------------------------------------------------

def test_the_min_lr_range_follows_the_learning_rate():
    trainer: Trainer = train_settings(compose_config(["trainer=jiant_superglue"])).trainer
    assert (trainer.min_lr, trainer.learning_rate, trainer.lr_patience) == (1e-7, 1e-5, 4)
    dataclasses.replace(trainer, min_lr=1e-5)  # at the rate: trains until the first cut
    with pytest.raises(UserError, match=re.escape("(fix: pass trainer.min_lr=<a number in [0, 1e-05]> "
                                                  "or trainer.lr_patience=null)")):
        dataclasses.replace(trainer, min_lr=2e-5)
    with pytest.raises(UserError, match=re.escape("(fix: pass trainer.min_lr=<a number in [0, 2e-05]>")):
        dataclasses.replace(trainer, min_lr=1e-4, learning_rate=2e-5)


def test_the_plateau_floor_compares_the_base_rate_not_layer_wise_decays_lowest():
    """With layer-wise decay the first group is the embeddings (η·ξ^L): its rate must not stop a
    run whose min_lr is within [0, η]. Groups 0.01 (embeddings) and 0.1 (η), patience 0, factor
    0.5, floor 0.05: cut after validations 2 and 3, η = 0.1, 0.05, 0.025, so only the third stops."""
    import torch

    from stability.finetune.schedules import LearningRate

    weights = [torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))]
    optimizer = torch.optim.SGD([{"params": [weights[0]], "lr": 0.01}, {"params": [weights[1]], "lr": 0.1}])
    policy = LearningRate(optimizer, "constant", 0.0, 10, 0, 0.5, 0.05)
    assert [policy.after_validation(0.5) for _ in range(3)] == [False, False, True]
    assert policy.base_rates() == pytest.approx([0.0025, 0.025])
