"""A fused sweep (`trainer.fuse_seeds=2`) on SLURM: each group of seeds is one array task, which trains
the group and writes its members' run folders; the other members' jobs find them written; the runs
equal the same sweep's under the local launcher."""
from __future__ import annotations

import re

from helpers import QUICK, predictions, runs
from slurm_helpers import on_slurm_and_locally

from stability.core.jobrecord import DONE, read_job_record

SWEEP = [*QUICK, "seed=0..3", "trainer.fuse_seeds=2"]
VARIANT = "ep2_fused2_ntrain32"


def test_each_fused_group_is_one_array_task_and_equals_the_local_launcher(tmp_path, slurm_env):
    on_slurm = on_slurm_and_locally(SWEEP, tmp_path, slurm_env)

    names = [f"smoke/en/rte/{VARIANT}/seed{seed}" for seed in range(4)]
    records = runs(tmp_path / "slurm")
    assert sorted(records) == sorted(runs(tmp_path / "local")) == names
    assert [records[name]["fused_with"] for name in names] == [[0, 1], [0, 1], [2, 3], [2, 3]]
    for name in names:
        assert predictions(tmp_path / "slurm" / name) == predictions(tmp_path / "local" / name)
        assert read_job_record(tmp_path / "slurm" / name).state == DONE
    # one array of two tasks, one per group, each in a process of its own
    sweep = tmp_path / "slurm" / "smoke" / ".submitit"
    assert len([folder for folder in sweep.iterdir() if re.fullmatch(r"\d+_\d+", folder.name)]) == 2
    assert len({records[name]["pid"] for name in names}) == 2
    assert "Results in" in on_slurm.stdout and "(4 runs)" in on_slurm.stdout
