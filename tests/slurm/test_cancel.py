"""A sweep cancelled with scancel, then the same command again: only the missing runs run."""
from __future__ import annotations

from pathlib import Path

from forked_cli import run_module
from helpers import QUICK, QUICK_VARIANT, runs
from slurm_helpers import ON_SLURM, finish, start_train, wait_for

from stability.core.jobrecord import read_job_record
from stability.core.runrecord import RunDir

SWEEP = [*QUICK, "seed=0..3"]
NAMES = [f"smoke/en/rte/{QUICK_VARIANT}/seed{seed}" for seed in range(4)]


def _stamps(run: RunDir) -> tuple[int, ...]:
    """The run's files and the job's own (a skipping job writes neither)."""
    names = ("metrics.json", "predictions.jsonl", "train.log", ".hydra/hydra.yaml")
    return tuple((run.path / name).stat().st_mtime_ns for name in names)


def test_cancelled_sweep_rerun_runs_only_the_missing_runs(tmp_path, slurm_env, slurm_cluster):
    out = tmp_path / "outputs"
    command = [*SWEEP, f"paths.output_dir={out}", *ON_SLURM]
    first = start_train(command, tmp_path, slurm_env)
    wait_for(lambda: runs(out), "the first finished run", timeout=600)
    array = read_job_record(out / next(iter(runs(out)))).slurm_job.split("_")[0]
    slurm_cluster.run("scancel", array)
    cancelled = finish(first, timeout=300)  # the launcher sees the cancelled jobs without sacct
    assert cancelled.returncode == 1
    assert cancelled.stderr.strip().splitlines()[-1].startswith("error: Job ")
    assert "nli-stability status runs=" in cancelled.stderr

    finished = {name: _stamps(RunDir(out / name)) for name in runs(out)}
    assert 0 < len(finished) < 4
    status = run_module("stability.status", [f"runs={out / 'smoke'}"], Path.cwd(), env=slurm_env, timeout=300)
    counts = status.stdout.strip().splitlines()[-1]
    assert counts.startswith(f"done {len(finished)} · running 0 · failed 0 · "), status.stdout

    rerun = finish(start_train(command, tmp_path, slurm_env))
    assert rerun.returncode == 0, rerun.stderr
    assert sorted(runs(out)) == NAMES  # none lost
    for name, stamps in finished.items():  # finished runs untouched: skipped, not run twice, not written to
        assert _stamps(RunDir(out / name)) == stamps
    for name in set(NAMES) - set(finished):
        assert "epoch 2:" in (out / name / "train.log").read_text()
