"""A sweep submitted again while its first array still runs: every run trains once, and the
second array's tasks leave the runs the first one holds alone (one writer per run)."""
from __future__ import annotations

import re

from helpers import QUICK
from slurm_helpers import ON_SLURM, finish, start_train, wait_for

from stability.core.runlock import read_owner
from stability.core.runrecord import RunDir

# ~0.12 s an epoch on one thread: a run trains for half a minute, longer than the second
# submission takes to reach it (its own start, sbatch, the array task's start)
EPOCHS = 200
SWEEP = [*QUICK, "data.max_train_samples=16", f"trainer.max_epochs={EPOCHS}", f"trainer.patience={EPOCHS}",
         "seed=0,1", "hydra.launcher.array_parallelism=1"]  # one task of each array at a time: two at once
_FIRST_EPOCH = re.compile(r"\[en rte \S+ seed (\d)\] epoch 1: loss")
_HELD = re.compile(r"\[held\] (\S+): held by \S+:\d+ \(SLURM job (\d+)_\d+\); left alone$", re.MULTILINE)


def test_a_sweep_submitted_again_leaves_the_held_runs_alone(tmp_path, slurm_env):
    out = tmp_path / "outputs"
    command = [*SWEEP, f"paths.output_dir={out}", *ON_SLURM]
    first = start_train(command, tmp_path, slurm_env)
    lock = RunDir(out).lock_path.name
    wait_for(lambda: next(out.rglob(lock), None), "the first array's first run to start", timeout=600)
    second = start_train(command, tmp_path, slurm_env)
    for ended in (finish(first), finish(second)):
        assert ended.returncode == 0, ended.stderr  # a held run is no failure

    sweep = out / "smoke"
    runs = sorted(path.parent for path in sweep.rglob("metrics.json"))
    assert [run.name for run in runs] == ["seed0", "seed1"]
    for run in runs:
        assert [entry["epoch"] for entry in RunDir(run).read_train_log()] == list(range(1, EPOCHS + 1))
        assert read_owner(run) is None
    # the tasks' logs, by SLURM id <array>_<task>: two arrays, and each run trained by one task
    logs = {folder.name: "".join(log.read_text() for log in folder.glob("*_log.out"))
            for folder in (sweep / ".submitit").iterdir() if re.fullmatch(r"\d+_\d+", folder.name)}
    first_array, second_array = sorted({name.split("_")[0] for name in logs}, key=int)
    assert sorted(_FIRST_EPOCH.findall("".join(logs.values()))) == ["0", "1"]
    # a task of the second array found a run that a task of the first held, and left it alone
    held = {(name.split("_")[0], folder, holder)
            for name, text in logs.items() for folder, holder in _HELD.findall(text)}
    assert any(array == second_array and holder == first_array and folder in map(str, runs)
               for array, folder, holder in held), logs
