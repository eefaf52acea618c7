"""A sweep as a SLURM job array: every run finishes, the table is printed, results as local."""
from __future__ import annotations

from helpers import QUICK, QUICK_VARIANT, predictions, runs
from slurm_helpers import on_slurm_and_locally

SWEEP = [*QUICK, "seed=0..3"]


def test_seed_sweep_on_slurm_equals_the_local_launcher(tmp_path, slurm_env):
    on_slurm = on_slurm_and_locally(SWEEP, tmp_path, slurm_env)

    names = [f"smoke/en/rte/{QUICK_VARIANT}/seed{seed}" for seed in range(4)]
    assert sorted(runs(tmp_path / "slurm")) == sorted(runs(tmp_path / "local")) == names
    table = on_slurm.stdout[on_slurm.stdout.index("Results in"):].splitlines()
    assert table[0] == f"Results in {tmp_path / 'slurm' / 'smoke'} (4 runs):"
    assert [line.split()[3] for line in table[3:]] == ["0", "1", "2", "3"]  # lang setup variant seed ...
    for name in names:
        assert predictions(tmp_path / "slurm" / name) == predictions(tmp_path / "local" / name)
    # each run was an array task of its own, in a process of its own
    assert len({record["pid"] for record in runs(tmp_path / "slurm").values()}) == 4
    # submitit polled the cluster without accounting: no warning per poll
    assert "sacct" not in on_slurm.stderr
