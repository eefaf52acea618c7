"""Users add presets and machine settings without editing the package: `hydra.searchpath`."""
from __future__ import annotations

import pytest

from pathlib import Path

from helpers import runs, train_cli

USER_PRESET = """\
# @package _global_
defaults:
  - override /model: tiny
experiment_name: mine
data:
  source: builtin
  max_train_samples: 16
trainer:
  max_epochs: 2
  batch_size: 8
"""


def _user_dir(root: Path, output_dir: Path) -> Path:
    (root / "experiment").mkdir(parents=True)
    (root / "experiment" / "mine.yaml").write_text(USER_PRESET, encoding="utf-8")
    (root / "local").mkdir()
    (root / "local" / "default.yaml").write_text(
        f"# @package _global_\npaths:\n  output_dir: {output_dir}\n", encoding="utf-8")
    return root


@pytest.mark.slow
def test_user_preset_and_local_settings_from_an_extra_search_path(tmp_path):
    out = tmp_path / "mine_outputs"
    user = _user_dir(tmp_path / "my_configs", out)
    result = train_cli([f"hydra.searchpath=[file://{user}]", "experiment=mine"], tmp_path)
    assert result.returncode == 0, result.stderr
    # the preset chose the tiny model and 2 epochs; local/default.yaml chose the output folder
    metrics = runs(out)["mine/en/rte/seed0"]
    assert metrics["model"] == "tiny-bert" and metrics["epochs_trained"] == 2 and metrics["n_train"] == 16
    # every message of the run is in its log file, epoch lines included
    log = (out / "mine/en/rte/seed0/train.log").read_text(encoding="utf-8")
    assert "[en rte seed 0] epoch 1: loss" in log and "[en rte seed 0] epoch 2: loss" in log
    # its first line: the trainer values it trains with, the preset's over the trainer group's
    assert log.splitlines()[0].endswith("[en rte seed 0] trainer=default as composed: batch size 8, learning rate "
                                        "1e-05, at most 2 epochs, patience 3, validated each epoch, adamw, "
                                        "weight decay 0, constant schedule")


def test_unknown_preset_lists_the_users_too(tmp_path):
    user = _user_dir(tmp_path / "my_configs", tmp_path / "out")
    result = train_cli([f"hydra.searchpath=[file://{user}]", "experiment=mine2"], tmp_path)
    assert result.returncode == 2
    assert "unknown experiment 'mine2'" in result.stderr and "mine, mnli_size" in result.stderr
    assert str(user / "experiment") in result.stderr


@pytest.mark.parametrize("name, text, line, message", [
    ("trainer/swa.yaml", "defaults:\n  - default\n  - _self_\n# weight averaging\nswa: true\n", 5,
     "unknown key 'trainer.swa' (fix: check its spelling (the nearest keys: trainer.save_model); --help lists"),
    ("experiment/typo.yaml", "# @package _global_\ndefaults:\n  - smoke\n  - _self_\ntrainer:\n  max_epochs: 2\n"
     "  learnig_rate: 3e-5\n", 7, "unknown key 'trainer.learnig_rate' (fix: did you mean trainer.learning_rate?"),
    ("experiment/wrong.yaml", "# @package _global_\ndefaults:\n  - smoke\n  - _self_\ntrainer:\n  batch_size: abc\n",
     6, "trainer.batch_size='abc' is not an integer"),
])
def test_a_bad_key_of_a_preset_names_its_file_line_and_the_nearest_keys(tmp_path, name, text, line, message):
    from stability.core.errors import UserError
    from stability.core.jobs import job_configs

    path = tmp_path / name
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    choice = f"{path.parent.name}={path.stem}"
    with pytest.raises(UserError) as raised:
        job_configs([f"hydra.searchpath=[file://{tmp_path}]", choice])
    assert str(raised.value).startswith(f"{path}:{line}: {message}")
