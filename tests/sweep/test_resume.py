"""Resumable sweeps: finished runs are skipped by config fingerprint, killed ones redone."""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from forked_cli import ForkedProcess
from helpers import QUICK, QUICK_VARIANT, predictions, runs, train_cli

from stability.core.runrecord import RunDir

ONE_RUN = [*QUICK, "seed=0", "hydra.mode=RUN"]


@pytest.mark.slow
def test_skip_rerun_rules(tmp_path):
    out = tmp_path / "outputs"
    args = [*ONE_RUN, f"paths.output_dir={out}"]
    assert train_cli(args, tmp_path).returncode == 0
    metrics = out / f"smoke/en/rte/{QUICK_VARIANT}/seed0/metrics.json"
    stamp = metrics.stat().st_mtime_ns

    skipped = train_cli(args, tmp_path)
    assert "[skip]" in skipped.stdout and metrics.stat().st_mtime_ns == stamp

    # a result-changing value is another variant: a run directory of its own, this one untouched
    other_lr = train_cli([*args, "trainer.learning_rate=0.002"], tmp_path)
    assert "[skip]" not in other_lr.stdout and metrics.stat().st_mtime_ns == stamp
    assert (out / f"smoke/en/rte/lr0.002_{QUICK_VARIANT}/seed0/metrics.json").is_file()

    # a key the identity leaves out but the fingerprint holds: same directory, refused
    changed = train_cli([*args, "trainer.eval_batch_size=64"], tmp_path)
    assert changed.returncode == 2 and "trainer.eval_batch_size: 128 -> 64" in changed.stderr
    assert metrics.stat().st_mtime_ns == stamp

    # forced: redone, the finished run kept under replaced/
    forced = train_cli([*args, "trainer.eval_batch_size=64", "force=true"], tmp_path)
    assert "[skip]" not in forced.stdout and metrics.stat().st_mtime_ns != stamp
    assert [path.name for path in (metrics.parent / "replaced").iterdir()] != []

    metrics.unlink()
    redone = train_cli([*args, "trainer.eval_batch_size=64"], tmp_path)
    assert "[skip]" not in redone.stdout and metrics.is_file()


def _start(args: list[str], cwd: Path) -> ForkedProcess:
    return ForkedProcess("stability.train", args, cwd, start_new_session=True)


def _kill_when(process: ForkedProcess, ready, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the sweep ended before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@pytest.mark.slow
def test_killed_sweep_finishes_without_duplicates_and_equal_results(tmp_path):
    sweep = [*QUICK, "seed=0..2", "trainer.max_epochs=3"]
    reference = tmp_path / "reference"
    assert train_cli([*sweep, f"paths.output_dir={reference}"], tmp_path).returncode == 0

    out = tmp_path / "outputs"
    process = _start([*sweep, f"paths.output_dir={out}"], tmp_path)
    first_metrics = out / "smoke/en/rte/ep3_ntrain32/seed0/metrics.json"
    _kill_when(process, first_metrics.is_file)
    assert len(runs(out)) < 3

    rerun = train_cli([*sweep, f"paths.output_dir={out}"], tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert "[skip]" in rerun.stdout  # seed 0 finished before the kill
    assert sorted(runs(out)) == sorted(runs(reference)) == [f"smoke/en/rte/ep3_ntrain32/seed{s}" for s in range(3)]
    assert len(list(out.rglob("metrics.json"))) == 3
    for name in runs(out):
        assert predictions(out / name) == predictions(reference / name)


@pytest.mark.slow
def test_trainer_resume_continues_from_last_epoch(tmp_path):
    # with the training dynamics recorded: a resumed run records what the uninterrupted one did
    args = [*ONE_RUN, "trainer.max_epochs=4", "trainer.resume=true", "trainer.dynamics=true"]
    reference = tmp_path / "reference"
    assert train_cli([*args, f"paths.output_dir={reference}"], tmp_path).returncode == 0

    out = tmp_path / "outputs"
    run_dir = out / "smoke/en/rte/ep4_ntrain32/seed0"
    process = _start([*args, f"paths.output_dir={out}"], tmp_path)
    log = run_dir / "train_log.jsonl"
    _kill_when(process, lambda: (run_dir / "checkpoint" / "last.pt").is_file() and log.is_file()
               and log.read_text().count("\n") >= 1)
    assert not (run_dir / "metrics.json").exists()

    resumed = train_cli([*args, f"paths.output_dir={out}"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    epochs = [json.loads(line)["epoch"] for line in log.read_text().splitlines()]
    assert epochs == [1, 2, 3, 4]  # the log matches the checkpoint, nothing twice
    assert "epoch 1:" not in resumed.stdout  # the checkpointed epoch was not redone
    assert predictions(run_dir) == predictions(reference / "smoke/en/rte/ep4_ntrain32/seed0")
    assert not (run_dir / "checkpoint" / "last.pt").exists()
    dynamics = RunDir(run_dir).read_dynamics()
    uninterrupted = RunDir(reference / "smoke/en/rte/ep4_ntrain32/seed0").read_dynamics()
    assert dynamics.pred.shape[0] == 4
    np.testing.assert_array_equal(dynamics.prob_entailment, uninterrupted.prob_entailment)
    np.testing.assert_array_equal(dynamics.pred, uninterrupted.pred)
