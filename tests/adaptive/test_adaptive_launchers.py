"""An adaptive sweep's rounds go through the launcher the command line chooses: here
`hydra/launcher=local_gpus` (parallel CPU processes without GPUs). The quick smoke runs predict one
label, so every seed scores MCC 0: no spread, no calibrated interval ("no world fitted"), and the
condition stays open until the plan's maximum, which ends it."""
from __future__ import annotations

import pytest

from helpers import QUICK, QUICK_VARIANT, train_cli
from stability.core.adaptiverecord import MAXIMUM, OPEN, read_record
from stability.core.runrecord import RunDir


@pytest.mark.slow   # three quick smoke runs in two rounds
def test_rounds_run_on_the_local_gpus_launcher_until_the_maximum(tmp_path):
    out = tmp_path / "outputs" / "quick"
    result = train_cli([*QUICK, f"out={out}", "hydra/launcher=local_gpus", "hydra.launcher.n_jobs=2", "adaptive=precision",
                        "adaptive.start=2", "adaptive.max=3", "adaptive.target=0.5"], tmp_path)
    assert result.returncode == 0, result.stderr
    record = read_record(out)
    condition = f"en/rte/{QUICK_VARIANT}"
    assert [(done.seeds, done.ran) for done in record.rounds] == [([0, 1], [condition]), ([2], [condition])]
    first, last = (done.decisions[condition] for done in record.rounds)
    assert first["state"] == OPEN and first["width"] is None and first["cells"][0]["method"] == "no world fitted"
    assert last["state"] == MAXIMUM and last["n_seeds"] == 3
    for seed in range(3):   # ordinary run folders
        run = RunDir(out / condition / f"seed{seed}")
        assert run.is_finished() and run.read_record().overall_mcc == 0.0
    assert (result.stdout + result.stderr).count("Joblib.Parallel(") == 2   # each round through the launcher
    assert "done after 2 rounds: 1 maximum" in result.stdout
