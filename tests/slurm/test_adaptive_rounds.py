"""An adaptive sweep on SLURM: each round is one job array on the test cluster, the command waits
for it, decides, and submits the next round's array for the conditions still open."""
from __future__ import annotations

from helpers import QUICK, QUICK_VARIANT
from slurm_helpers import ON_SLURM, finish, start_train

from stability.core.adaptiverecord import MAXIMUM, read_record
from stability.core.runrecord import RunDir


def test_each_round_is_a_job_array(tmp_path, slurm_env):
    out = tmp_path / "quick"
    result = finish(start_train([*QUICK, f"out={out}", *ON_SLURM, "adaptive=precision", "adaptive.start=2", "adaptive.max=3",
                                 "adaptive.target=0.5"], tmp_path, slurm_env))
    assert result.returncode == 0, result.stderr
    condition = f"en/rte/{QUICK_VARIANT}"
    record = read_record(out)
    assert [(done.seeds, done.ran) for done in record.rounds] == [([0, 1], [condition]), ([2], [condition])]
    assert record.rounds[-1].decisions[condition]["state"] == MAXIMUM   # MCC 0 on every seed: no interval
    assert all(RunDir(out / condition / f"seed{seed}").is_finished() for seed in range(3))
    # round 1's two runs as one array (tasks <job>_0, <job>_1); round 2's array covers every seed so far
    # (a deleted round-1 run is trained again), its tasks of the finished seeds 0 and 1 skip them
    submitted = {path.name for path in (out / ".submitit").iterdir() if path.is_dir()}
    arrays = sorted({name.split("_")[0] for name in submitted if "_" in name}, key=int)
    assert len(arrays) == 2, submitted
    first, second = arrays
    assert {name for name in submitted if name.startswith(f"{first}_")} == {f"{first}_0", f"{first}_1"}
    assert {name for name in submitted if name.startswith(f"{second}_")} == {f"{second}_{task}" for task in range(3)}
