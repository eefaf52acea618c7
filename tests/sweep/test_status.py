"""`python -m stability.status`: each run of a sweep folder judged from its files alone.

The sweep here is made by hand (multirun.yaml, records, job records, submitit logs) so that
every state occurs at once; tests/slurm/test_sweep_status.py does the same on a real cluster.
"""
from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest
from forked_cli import run_module
from omegaconf import OmegaConf

from stability.core.jobrecord import JobRecord, write_job_record
from stability.core.jobs import without_hydra
from stability.core.runrecord import RunDir, RunRecord, config_fingerprint
from stability.sweep import squeue
from stability.sweep.status import format_status, sweep_configs, sweep_status

REPO = Path(__file__).resolve().parents[2]
SEEDS = 7


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _record(state: str, pid: int, slurm_job: str | None = None, error: str | None = None) -> JobRecord:
    return JobRecord(state, socket.gethostname(), pid, "2026-01-01T00:00:00+00:00", slurm_job, error=error)


def _submitit_logs(sweep: Path, job: str, out: str, err: str) -> None:
    folder = sweep / ".submitit" / job
    folder.mkdir(parents=True)
    (folder / f"{job}_0_log.out").write_text(out)
    (folder / f"{job}_0_log.err").write_text(err)


STARTED = "submitit INFO (2026-01-01 10:00:00,000) - Starting with JobEnvironment(job_id={job}, hostname=vm)\n"
CANCELLED = "slurmstepd: error: *** JOB 7 ON vm CANCELLED AT 2026-01-01T10:05:00 ***\n"


@pytest.fixture
def sweep(tmp_path) -> Path:
    """Seven runs: done, running, interrupted locally, failed, not started, and two SLURM array
    tasks (one cancelled after its start, one whose log shows no kill)."""
    folder = tmp_path / "outputs" / "smoke"
    folder.mkdir(parents=True)
    task = ["experiment=smoke", f"seed={','.join(map(str, range(SEEDS)))}", f"paths.output_dir={tmp_path / 'outputs'}"]
    OmegaConf.save({"hydra": {"overrides": {"hydra": [], "task": task}}}, folder / "multirun.yaml")
    configs = sweep_configs(folder)
    runs = [folder / str(cfg.hydra.sweep.subdir) for cfg in configs]
    RunDir(runs[0]).write_record(RunRecord(lang="en", setup="rte", seed=0, val_accuracy=0.5, overall_mcc=0.25,
                                           config_fingerprint=config_fingerprint(without_hydra(configs[0]))))
    write_job_record(runs[1], _record("running", os.getpid()))
    write_job_record(runs[2], _record("running", _dead_pid()))
    write_job_record(runs[3], _record("failed", 1, error="error: data/train.jsonl:3: malformed JSON"))
    write_job_record(runs[5], _record("running", 1, slurm_job="7_5"))
    _submitit_logs(folder, "7_5", STARTED.format(job="7_5"), CANCELLED)
    write_job_record(runs[6], _record("running", 1, slurm_job="7_6"))
    _submitit_logs(folder, "7_6", STARTED.format(job="7_6"), "")
    return folder


def test_every_state_from_the_files_alone(sweep, monkeypatch):
    monkeypatch.setattr(squeue, "squeue_available", lambda: False)  # as on a machine without SLURM
    status = sweep_status(sweep)
    assert [(run.run, run.state) for run in status.runs] == [
        ("en/rte/seed0", "done"), ("en/rte/seed1", "running"), ("en/rte/seed2", "interrupted"),
        ("en/rte/seed3", "failed"), ("en/rte/seed4", "not started"), ("en/rte/seed5", "interrupted"),
        ("en/rte/seed6", "running")]
    details = [run.detail for run in status.runs]
    assert details[0] == "val acc 0.5000, overall MCC 0.2500"
    assert details[1] == f"process {os.getpid()} on {socket.gethostname()}"
    assert details[2].endswith("is gone")
    assert details[3] == "error: data/train.jsonl:3: malformed JSON"
    assert details[5] == "SLURM job 7_5 cancelled"
    assert details[6] == "SLURM job 7_6 (from its log; no squeue here)"
    assert status.counts() == {"done": 1, "running": 2, "failed": 1, "interrupted": 2, "not started": 1}
    assert format_status(status).splitlines()[-1] == \
        "done 1 · running 2 · failed 1 · interrupted 2 · not started 1"


@pytest.mark.slow
def test_a_requeued_job_started_again_is_not_interrupted(sweep, monkeypatch):
    monkeypatch.setattr(squeue, "squeue_available", lambda: False)
    log = sweep / ".submitit" / "7_5" / "7_5_0_log.out"
    log.write_text(log.read_text() + STARTED.format(job="7_5").replace("10:00:00", "10:06:00"))
    assert sweep_status(sweep).runs[5].state == "running"


def test_squeue_decides_where_it_answers(sweep, monkeypatch):
    monkeypatch.setattr(squeue, "squeue_available", lambda: True)
    listed = {"7_5": squeue.QueuedJob("7_5", "PENDING", ""), "7_6": squeue.QueuedJob("7_6", "CANCELLED", "vm")}

    def fake_run(command, **kwargs):
        assert command[0] == "squeue" and "--jobs=7" in command
        lines = "".join(f"{job.job_id}|{job.state}|{job.node}\n" for job in listed.values())
        return subprocess.CompletedProcess(command, 0, lines, "")

    monkeypatch.setattr(squeue.subprocess, "run", fake_run)
    runs = sweep_status(sweep).runs
    assert (runs[5].state, runs[5].detail) == ("running", "SLURM job 7_5 PENDING")  # requeued, waiting
    assert (runs[6].state, runs[6].detail) == ("interrupted", "SLURM job 7_6 CANCELLED before the run finished")


@pytest.mark.slow
def test_status_command(sweep):
    result = run_module("stability.status", [f"runs={sweep}"], sweep.parent, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"Sweep {sweep}: 7 runs"
    assert lines[2].split() == ["run", "state", "detail"]
    assert lines[4].split()[:2] == ["en/rte/seed0", "done"]
    assert lines[-1].startswith("done 1 · running 2 · failed 1 · ")


def test_status_of_a_folder_without_a_sweep(tmp_path):
    result = run_module("stability.status", [f"runs={tmp_path}"], tmp_path, timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"error: {tmp_path}: no multirun.yaml: not the folder of a sweep "
                                     "(fix: pass the experiment folder a sweep wrote, e.g. runs=outputs/smoke)")
