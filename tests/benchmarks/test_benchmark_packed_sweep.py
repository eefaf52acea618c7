"""benchmarks/packed_sweep.py, its CPU path: the checkpoint it builds, its sweeps and its packing check."""
from __future__ import annotations

import json
import sys
from argparse import Namespace
from pathlib import Path

import pytest
from forked_cli import run_script
from transformers import AutoConfig, AutoTokenizer

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "packed_sweep.py"
sys.path.append(str(SCRIPT.parent))  # last: benchmarks/probing.py must not hide the probing package
import packed_sweep  # noqa: E402  (benchmarks/ is not a package)


def test_checkpoint_has_the_requested_shape_and_a_padded_vocabulary(tmp_path):
    args = Namespace(lang="fr", samples=64, data_root=None, shape="small", pieces=500)
    parameters, mean_tokens = packed_sweep.build_checkpoint(args, tmp_path)
    config = AutoConfig.from_pretrained(tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(tmp_path)
    assert (config.vocab_size, config.hidden_size, config.num_hidden_layers) == (2_000, 64, 2)
    # 500 learnt pieces, padded with unused entries to the model's vocabulary size
    assert len(tokenizer) == 2_000
    assert tokenizer.convert_ids_to_tokens(1_999) == f"[unused{2_000 - 500 - 1}]"
    embeddings = 2_000 * 64 + 512 * 64 + 2 * 64 + 2 * 64  # word, position, token type, LayerNorm
    layer = 4 * (64 * 64 + 64) + 2 * 2 * 64 + (64 * 128 + 128) + (128 * 64 + 64)
    assert parameters == embeddings + 2 * layer + (64 * 64 + 64)  # + the pooler
    assert 10 < mean_tokens < 200


@pytest.mark.slow
def test_cpu_sweeps_time_every_packing_and_find_packed_runs_equal_to_runs_alone(tmp_path):
    figures = tmp_path / "figures.json"
    done = run_script(SCRIPT, ["--device", "cpu", "--shape", "small", "--runs", "2", "--samples", "32",
                               "--jobs", "1", "2", "--precisions", "fp32", "--json", str(figures)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(figures.read_text())
    sweeps = {(s["precision"], s["jobs_per_device"]): s for s in result["sweeps"]}
    assert set(sweeps) == {("fp32", 1), ("fp32", 2)}
    for sweep in sweeps.values():
        assert sweep["runs"] == 2
        assert sweep["runs_per_hour"] == pytest.approx(2 / sweep["wall_seconds"] * 3600)
        # 32 examples x 1 epoch x 2 runs over the wall time
        assert sweep["device_samples_per_second"] == pytest.approx(64 / sweep["wall_seconds"])
        assert sweep["packed_samples_per_second"] == pytest.approx(sweep["jobs_per_device"] * sweep["run_samples_per_second"])
    [check] = result["checks"]
    assert check["items"] == 2 * 83  # both seeds, every built-in French diagnostic item
    # on the CPU a packed run has fewer threads than one alone, which may reorder float sums;
    # the labels stay and the probabilities agree to rounding
    assert check["labels_differing"] == 0
    assert check["max_abs_prob_difference"] < 1e-4
    assert "| fp32 | 2 | 2 |" in done.stdout
    assert "best: fp32, jobs_per_device=" in done.stdout


def test_wrong_arguments_are_refused_in_one_line(tmp_path):
    done = run_script(SCRIPT, ["--device", "cpu", "--jobs", "2", "4"], tmp_path)
    assert done.returncode == 2
    assert "--jobs must include 1" in done.stderr.splitlines()[-1]
