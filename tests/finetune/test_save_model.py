"""`trainer.save_model=true`: the best epoch's weights and tokenizer in HF format, and the
resume rule (a finished run without weights reruns only when weights are asked for)."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import QUICK, finished_run, predictions, runs, saved_model_probabilities, train_cli

from stability.core.runrecord import RunDir

ONE_RUN = [*QUICK, "seed=0", "hydra.mode=RUN", "trainer.max_epochs=3"]
RUN = "smoke/en/rte/ep3_ntrain32/seed0"


@pytest.mark.slow
def test_saved_weights_reproduce_the_runs_predictions(tmp_path):
    out = tmp_path / "outputs"
    result = train_cli([*ONE_RUN, "trainer.save_model=true", f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    run = RunDir(out / RUN)
    assert run.read_record().saved_model == "model" and run.has_model()
    assert (run.model_dir / "model.safetensors").is_file()
    items = predictions(run.path)
    prob = saved_model_probabilities(run)
    # the predictions were made with the best epoch's weights: the saved ones give the same
    np.testing.assert_allclose(prob, [row["prob_entailment"] for row in items], atol=1e-5)


@pytest.mark.slow
def test_finished_run_reruns_only_when_weights_are_asked_for(tmp_path):
    out = tmp_path / "outputs"
    args = [*ONE_RUN, f"paths.output_dir={out}"]
    run = finished_run(args, tmp_path, RUN)
    assert not run.has_model() and run.read_record().saved_model is None
    first = runs(out)[RUN]

    skipped = train_cli([*args, "trainer.save_model=false"], tmp_path)
    assert "[skip]" in skipped.stdout and not run.has_model()

    rerun = train_cli([*args, "trainer.save_model=true"], tmp_path)
    assert rerun.returncode == 0 and "[skip]" not in rerun.stdout
    assert run.has_model() and run.read_record().saved_model == "model"
    again = runs(out)[RUN]
    # the fingerprint ignores save_model, and the rerun computes the same results
    assert again["config_fingerprint"] == first["config_fingerprint"]
    assert again["category_mcc"] == first["category_mcc"]

    for save in ("true", "false"):    # weights present: skipped whether or not they are asked for
        assert "[skip]" in train_cli([*args, f"trainer.save_model={save}"], tmp_path).stdout
