"""`hydra/sweeper=checked`, the training command's: Hydra's basic sweeper that composes each job once,
to run it, where the basic one composes it twice (once more to validate it), since the command has
composed and checked every job before the sweep starts."""
from __future__ import annotations

from helpers import QUICK, QUICK_VARIANT, runs
from hydra._internal.config_loader_impl import ConfigLoaderImpl

from stability.core.config import compose_config
from stability.train import main


def test_the_training_commands_sweeper_is_the_checked_one():
    target = compose_config(["experiment=smoke"], return_hydra_config=True).hydra.sweeper._target_
    assert target == "hydra_plugins.nli_stability.sweepers.CheckedSweeper"


def test_a_sweep_composes_each_job_once_to_run_it(tmp_path, monkeypatch):
    composed = []
    original = ConfigLoaderImpl.load_sweep_config

    def counted(self, master_config, sweep_overrides):
        composed.append(list(sweep_overrides))
        return original(self, master_config, sweep_overrides)

    monkeypatch.setattr(ConfigLoaderImpl, "load_sweep_config", counted)
    monkeypatch.chdir(tmp_path)
    main([*QUICK, "seed=0..1", f"paths.output_dir={tmp_path / 'out'}"])
    assert sorted(runs(tmp_path / "out")) == [f"smoke/en/rte/{QUICK_VARIANT}/seed{seed}" for seed in (0, 1)]
    assert [next(o for o in job if o.startswith("seed=")) for job in composed] == ["seed=0", "seed=1"]

    composed.clear()    # Hydra's basic sweeper: each job twice
    main([*QUICK, "seed=0..1", f"paths.output_dir={tmp_path / 'basic'}", "hydra/sweeper=basic"])
    assert len(composed) == 4
