"""One run over two processes with `accelerate launch` (DDP over gloo on CPU)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import predictions, runs, train_cli

from stability.core.runrecord import RunDir
from stability.finetune.distributed import (
    NON_MAIN_RANK_OVERRIDES,
    cpu_only_distributed,
    launch_rank,
    rank_overrides,
)

# No dropout: DDP with two processes x 2 examples must then train exactly like one process x 4.
RUN = ["model=tiny", "model.dropout=0", "data.source=builtin", "data.max_train_samples=32",
       "data.max_eval_samples=24", "trainer.batch_size=4", "trainer.learning_rate=3e-3",
       "trainer.max_epochs=1"]
# the run's directory below the output folder, named by its identity (variant)
RUN_DIR = "default/en/rte/model-tiny_lr0.003_ep1_dropout0_ntrain32_neval24_source-builtin/seed0"


@pytest.mark.parametrize("env, rank", [({}, 0), ({"RANK": "0"}, 0), ({"RANK": "3", "LOCAL_RANK": "1"}, 3),
                                       ({"PMI_RANK": "1"}, 1)])
def test_launch_rank(env, rank):
    assert launch_rank(env) == rank


def test_only_rank_zero_lets_hydra_write():
    assert rank_overrides({}) == [] and rank_overrides({"RANK": "0", "WORLD_SIZE": "2"}) == []
    assert rank_overrides({"RANK": "1", "WORLD_SIZE": "2"}) == list(NON_MAIN_RANK_OVERRIDES)


def test_cpu_only_distributed():
    assert not cpu_only_distributed({})
    assert not cpu_only_distributed({"WORLD_SIZE": "1"})
    assert cpu_only_distributed({"WORLD_SIZE": "2"}) == (not torch.cuda.is_available())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _accelerate_launch(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`accelerate launch --multi_gpu --num_processes 2 -m stability.train ARGS`, on CPU here.

    (`--cpu` would start a single process unless MPI is set up; without CUDA, `--multi_gpu`
    starts two processes that accelerate joins with gloo.) HF_HOME hides any user accelerate config.
    """
    command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
               "--main_process_port", str(_free_port()), "-m", "stability.train", *args]
    env = {**os.environ, "HF_HOME": str(cwd / "hf")}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_two_processes_write_one_run_that_trains_like_one_process(tmp_path):
    out = tmp_path / "ddp"
    # recording the training dynamics too: each process passes over its own slice of the items
    result = _accelerate_launch([*RUN, "trainer.dynamics=true", f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    found = runs(out)
    assert list(found) == [RUN_DIR]
    assert found[RUN_DIR]["num_processes"] == 2
    variant_dir = RUN_DIR.rsplit("/", 1)[0]
    assert [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_dir()] == [
        "default", "default/en", "default/en/rte", variant_dir, RUN_DIR, f"{RUN_DIR}/dynamics", f"{RUN_DIR}/.hydra"]

    single = train_cli([*RUN, "trainer.dynamics=true", f"paths.output_dir={tmp_path / 'single'}"], tmp_path)
    assert single.returncode == 0, single.stderr
    # each process took 2 of every 4 examples and the gradients were averaged: the global
    # batch stayed 4, so the model equals a one-process run's (another batch size differs)
    ddp_probs = [p["prob_entailment"] for p in predictions(out / RUN_DIR)]
    one_probs = [p["prob_entailment"] for p in predictions(tmp_path / "single" / RUN_DIR)]
    assert ddp_probs == pytest.approx(one_probs, abs=1e-5)
    assert ddp_probs != pytest.approx(_probs_with_batch_size(2, tmp_path), abs=1e-5)
    # the dynamics of both processes' training passes, gathered: those of the one-process run
    ddp, one = RunDir(out / RUN_DIR).read_dynamics(), RunDir(tmp_path / "single" / RUN_DIR).read_dynamics()
    assert not np.isnan(ddp.prob_entailment).any()
    np.testing.assert_allclose(ddp.prob_entailment, one.prob_entailment, atol=2e-3)   # float16, reduction order


def _probs_with_batch_size(batch_size: int, tmp_path: Path) -> list[float]:
    out = tmp_path / f"batch{batch_size}"
    result = train_cli([*RUN, f"trainer.batch_size={batch_size}", f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    (run,) = runs(out)  # batch size 2 is another variant
    return [p["prob_entailment"] for p in predictions(out / run)]


@pytest.mark.slow
def test_non_main_rank_writes_nothing(tmp_path):
    """Each rank gets its own run dir here, so whatever rank 1 writes would show."""
    out = tmp_path / "ddp"
    result = _accelerate_launch([*RUN, f"paths.output_dir={out}", f"hydra.run.dir={out}/rank${{oc.env:RANK}}"],
                                tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert {p.name for p in (out / "rank0").iterdir()} >= {".hydra", "metrics.json", "config.yaml"}
    assert list((out / "rank1").iterdir()) == []  # Hydra creates the job dir, nothing more


@pytest.mark.slow
def test_only_the_main_rank_records_a_sweep_job(tmp_path):
    """A sweep (job.json around each job) launched on two processes, each rank with its own
    sweep folder: rank 0 records the job and holds the run, rank 1 writes no job.json."""
    out = tmp_path / "ddp"
    result = _accelerate_launch([*RUN, "seed=0,1", f"hydra.sweep.dir={out}/rank${{oc.env:RANK}}"], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    recorded = {path.relative_to(out).parts[0] for path in out.rglob("job.json")}
    assert recorded == {"rank0"} and len(list((out / "rank0").rglob("job.json"))) == 2
    assert not list(out.rglob("run.lock"))  # released at the end of each job
