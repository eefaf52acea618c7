"""`resolve_job`, the jobs' interpolations resolved as `OmegaConf.resolve` resolves them (Hydra's help
texts left out), and a resolver's one-line error through `job_configs` as before."""
from __future__ import annotations

import copy

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from stability.core.config import CONF_DIR
from stability.core.errors import UserError
from stability.core.jobs import HELP_NODES, job_configs, resolve_job


def _without_help(cfg) -> dict:
    resolved = OmegaConf.to_container(cfg, resolve=False)
    for name in HELP_NODES:
        resolved["hydra"].pop(name)
    return resolved


@pytest.mark.parametrize("config_name, overrides", [
    ("train", ["experiment=translate_train", "data.root=/data", "seed=3"]),
    ("train", ["experiment=smoke", "lang=fr", "hydra/launcher=slurm"]),
    ("train", ["experiment=mnli_size", "data.root=/data", "hydra/launcher=local_gpus"]),
    ("report", ["runs=/runs"]),
    ("probe", ["runs=/runs"]),
])
def test_every_key_but_the_help_texts_as_omegaconf_resolves_it(config_name, overrides, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3", job_name=config_name):
        composed = compose(config_name, overrides=overrides, return_hydra_config=True)
    whole, job = copy.deepcopy(composed), copy.deepcopy(composed)
    OmegaConf.resolve(whole)
    resolve_job(job)
    assert _without_help(job) == _without_help(whole)
    # nothing left to resolve outside the help texts: the hydra.runtime values Hydra fills at launch stay missing
    assert "${" not in str(_without_help(job))
    assert OmegaConf.is_missing(job.hydra.runtime, "output_dir")


def test_a_resolvers_error_at_a_top_level_key_is_its_own_line(monkeypatch, tmp_path):
    """`variant` (a top-level key, read by resolve_job) and hydra.launcher.n_jobs (inside a node that
    OmegaConf.resolve resolves): the resolver's UserError, not OmegaConf's message around it."""
    def refuse(_root):
        raise UserError("no variant here", fix="pick one")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("stability.core.config.variant_of", refuse)
    with pytest.raises(UserError) as refused:
        job_configs(["experiment=smoke"])
    assert str(refused.value) == "no variant here (fix: pick one)"
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match="jobs_per_device=0 is out of range"):
        job_configs(["experiment=smoke", "hydra/launcher=local_gpus", "hydra.launcher.jobs_per_device=0"])
