"""One failing language on SLURM: the other runs finish, the end names each failed run; and
`python -m stability.status` in the middle of it, with done, running, failed and queued runs."""
from __future__ import annotations

import os
import signal
from pathlib import Path

from forked_cli import run_module
from helpers import QUICK, builtin_release, runs
from slurm_helpers import ON_SLURM, finish, start_train, wait_for

from stability.core.jobrecord import read_job_record
from stability.sweep.status import sweep_status

VARIANT = "ep150_patience150_ntrain32_source-files"
# one array task at a time, in the sweep's order: (seed 0, en), (0, fr), (1, en), (1, fr): done, failed,
# running and not started when the test looks;
# 150 epochs of 32 pairs without early stopping (seconds), so that a run is still training when the
# test stops it, as soon as its record is written (a job writes it only once it starts to train)
SWEEP = [*QUICK, "trainer.max_epochs=150", "trainer.patience=150", "data.source=files", "seed=0..1", "lang=en,fr",
         "hydra.launcher.array_parallelism=1"]


def _status(sweep: Path, env: dict[str, str]) -> str:
    result = run_module("stability.status", [f"runs={sweep}"], Path.cwd(), env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_status_mid_sweep_and_a_failing_language(tmp_path, slurm_env, slurm_cluster, monkeypatch, capsys):
    monkeypatch.setenv("SLURM_CONF", slurm_cluster.env["SLURM_CONF"])  # squeue, for sweep_status here
    root = builtin_release(tmp_path / "data", ["en", "fr"], broken="fr")
    out = tmp_path / "outputs"
    sweep = out / "smoke"
    process = start_train([*SWEEP, f"data.root={root}", f"paths.output_dir={out}", *ON_SLURM], tmp_path, slurm_env)
    fr, en = (f"{lang}/rte/{VARIANT}/seed{{}}" for lang in ("fr", "en"))

    training = wait_for(lambda: read_job_record(sweep / en.format(1)), "seed 1's English run to start", timeout=900,
                        every=0.05)
    # held still while status looks (SIGSTOP, which SLURM does not see: its job stays RUNNING), so
    # that it is running then however slow status is, without training for minutes
    os.kill(training.pid, signal.SIGSTOP)
    try:
        printed = _status(sweep, slurm_env)
        status = sweep_status(sweep)
    finally:
        os.kill(training.pid, signal.SIGCONT)
    with capsys.disabled():
        print(f"\n{printed}")
    states = {run.run: run.state for run in status.runs}
    assert states == {en.format(0): "done", fr.format(0): "failed", en.format(1): "running",
                      fr.format(1): "not started"}
    details = {run.run: run.detail for run in status.runs}
    job = read_job_record(sweep / en.format(1)).slurm_job
    assert details[en.format(1)] == f"SLURM job {job} RUNNING on {slurm_cluster.host}"
    assert details[fr.format(0)].startswith(f"error: {root}/French/TERRa/train_fr.jsonl:65: malformed JSON")
    assert details[fr.format(1)] == f"SLURM job {job.split('_')[0]}_3 PENDING"  # queued, not started
    assert printed.splitlines()[-1] == "done 1 · running 1 · failed 1 · interrupted 0 · not started 1"

    ended = finish(process)
    assert ended.returncode == 1
    assert sorted(runs(out)) == [f"smoke/{en.format(seed)}" for seed in range(2)]
    summary = ended.stderr.strip().splitlines()[-3:]
    assert summary[0] == "2 of 4 jobs failed:"
    for seed, row in enumerate(summary[1:]):
        assert row.startswith(f"  {sweep / fr.format(seed)}: error: {root}/French/TERRa/train_fr.jsonl:65: "
                              "malformed JSON")
    assert _status(sweep, slurm_env).splitlines()[-1] == \
        "done 2 · running 0 · failed 2 · interrupted 0 · not started 0"
