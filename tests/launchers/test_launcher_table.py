"""README's "Where things are" says what each launcher adds (`local_gpus` adds `jobs_per_device`, ...):
every such key is in that launcher's composed config and in no other launcher's; and the SLURM packing
override docs/clusters.md shows composes and asks sbatch for a GPU shard instead of a whole GPU."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hydra.utils import instantiate
from submitit.slurm.slurm import SlurmExecutor

from test_launchers import _hydra_config, _Submitted

REPO = Path(__file__).resolve().parents[2]
LAUNCHERS = ("local_gpus", "slurm")


def _claims() -> dict[str, set[str]]:
    """launcher -> the keys README's launcher row says it adds ("`slurm` adds `squeue` ..." names a tool)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `hydra_plugins/nli_stability/`"))
    return {launcher: set(re.findall(r"`(\w+)`", re.search(rf"`{launcher}` adds ([^;,(]*)", row).group(1)))
            for launcher in LAUNCHERS}


def test_each_launcher_has_the_keys_the_readme_says_it_adds_and_no_other():
    claims = _claims()
    configs = {launcher: _hydra_config([f"hydra/launcher={launcher}"]).hydra.launcher for launcher in LAUNCHERS}
    assert claims["local_gpus"] == {"jobs_per_device"}
    keys = set().union(*claims.values()) & set().union(*(set(config) for config in configs.values()))
    assert keys == {"jobs_per_device"}
    for launcher, config in configs.items():
        for key in keys:
            assert (key in config) == (key in claims[launcher]), (launcher, key)


def test_jobs_per_device_on_slurm_is_refused():
    with pytest.raises(Exception, match="jobs_per_device"):
        _hydra_config(["hydra/launcher=slurm", "hydra.launcher.jobs_per_device=2"])


def _documented_packing_override() -> list[str]:
    """The `hydra.launcher.*` overrides of the SLURM packing command in docs/clusters.md."""
    page = (REPO / "docs" / "clusters.md").read_text(encoding="utf-8")
    text = page.split("Packing there is the\ncluster's GPU sharing", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [word for word in text.replace("\\\n", " ").split() if word.startswith("hydra")]


def test_the_documented_slurm_packing_override_asks_for_a_shard(tmp_path, monkeypatch):
    def capture(self, script: Path):
        raise _Submitted(Path(script).read_text())

    overrides = _documented_packing_override()
    assert "hydra/launcher=slurm" in overrides and "hydra.launcher.gres=shard:1" in overrides
    monkeypatch.setattr(SlurmExecutor, "affinity", classmethod(lambda cls: 2))   # "srun is on PATH"
    monkeypatch.setattr(SlurmExecutor, "_make_submission_command", capture)
    cfg = _hydra_config([*overrides, f"paths.output_dir={tmp_path}"])
    launcher = instantiate(cfg.hydra.launcher)
    launcher.setup(hydra_context=None, task_function=None, config=cfg)
    with pytest.raises(_Submitted) as submitted:
        launcher.launch([["seed=0"], ["seed=1"]], initial_job_idx=0)
    script = str(submitted.value)
    assert "#SBATCH --gres=shard:1\n" in script and "--gpus-per-node" not in script, script
