"""End to end on the built-in data: sweeps, run directories, reproducibility, cached tokens."""
from __future__ import annotations

import pytest

import json

import yaml
from helpers import QUICK, QUICK_VARIANT, predictions, runs, train_cli

from stability.core.taxonomy import FINE_CATEGORIES

RUN_FILES = {"config.yaml", "metrics.json", "predictions.jsonl", "train_log.jsonl"}


@pytest.mark.slow
def test_seed_range_sweep_reproducibility_and_cache(tmp_path):
    out = tmp_path / "outputs"
    sweep = train_cli([*QUICK, "seed=0..1", f"paths.output_dir={out}"], tmp_path)
    assert sweep.returncode == 0, sweep.stderr
    found = runs(out)
    assert sorted(found) == [f"smoke/en/rte/{QUICK_VARIANT}/seed0", f"smoke/en/rte/{QUICK_VARIANT}/seed1"]
    for name, metrics in found.items():
        run_dir = out / name
        assert RUN_FILES <= {p.name for p in run_dir.iterdir()}
        assert set(metrics["category_mcc"]) == set(FINE_CATEGORIES)
        log = [json.loads(line) for line in (run_dir / "train_log.jsonl").read_text().splitlines()]
        assert [e["epoch"] for e in log] == [1, 2] and metrics["epochs_trained"] == 2
        assert metrics["val_accuracy"] == max(e["val_accuracy"] for e in log)
        assert len(predictions(run_dir)) == metrics["n_items"] == 83
        assert yaml.safe_load((run_dir / "config.yaml").read_text())["seed"] == metrics["seed"]
    # the second seed reused the first seed's tokenization
    assert not found[f"smoke/en/rte/{QUICK_VARIANT}/seed0"]["tokenization_cached"]
    assert found[f"smoke/en/rte/{QUICK_VARIANT}/seed1"]["tokenization_cached"]
    # the sweep ends with its table
    assert "val acc" in sweep.stdout and "overall MCC" in sweep.stdout

    again = train_cli([*QUICK, "seed=0", "experiment_name=again", f"paths.output_dir={out}"], tmp_path)
    assert again.returncode == 0, again.stderr
    first = predictions(out / f"smoke/en/rte/{QUICK_VARIANT}/seed0")
    assert predictions(out / f"again/en/rte/{QUICK_VARIANT}/seed0") == first
    other = predictions(out / f"smoke/en/rte/{QUICK_VARIANT}/seed1")
    assert [p["prob_entailment"] for p in other] != [p["prob_entailment"] for p in first]


@pytest.mark.slow
def test_seed_init_and_seed_order_set_apart(tmp_path):
    out = tmp_path / "outputs"
    result = train_cli([*QUICK, "seed=0", "seed_order=5", "hydra.mode=RUN", f"paths.output_dir={out}"],
                       tmp_path)
    assert result.returncode == 0, result.stderr
    metrics = runs(out)[f"smoke/en/rte/{QUICK_VARIANT}_order5/seed0"]
    assert (metrics["seed"], metrics["seed_init"], metrics["seed_order"]) == (0, 0, 5)
    assert metrics["variant"] == f"{QUICK_VARIANT}_order5"
