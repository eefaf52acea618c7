"""Config composition, as lightning-hydra-template tests it: every preset composes."""
from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from stability.core.config import CONF_DIR, compose_config
from stability.core.languages import language_codes

EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))


def _compose(overrides: list[str]):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("train", overrides=overrides, return_hydra_config=True)


def test_defaults_are_the_papers():
    cfg = _compose([])
    assert cfg.model.name == "bert-base-multilingual-cased" and cfg.lang.code == "en"
    t = cfg.trainer
    assert (t.batch_size, t.learning_rate, t.max_grad_norm, t.max_epochs) == (4, 1e-5, 1.0, 10)
    assert cfg.model.dropout == 0.1 and cfg.setup == "rte"
    assert cfg.seed_init == cfg.seed == cfg.seed_order == 0


def test_presets_exist():
    assert {"smoke", "baseline", "rte_mnli", "mnli_size", "feature_presence"} <= set(EXPERIMENTS)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_preset_composes_and_resolves(name):
    cfg = _compose([f"experiment={name}"])
    assert cfg.experiment_name == name
    assert str(cfg.hydra.mode) == "RunMode.MULTIRUN"
    job_cfg = compose_config([f"experiment={name}"])
    OmegaConf.to_container(job_cfg, resolve=True)  # every interpolation of the job resolves
    assert "# @package _global_" in (Path(CONF_DIR) / "experiment" / f"{name}.yaml").read_text()


def test_preset_contents():
    params = lambda name: dict(_compose([f"experiment={name}"]).hydra.sweeper.params)  # noqa: E731
    assert params("baseline")["seed"] == "0,1,2,3,4,5"
    for every_language in ("baseline", "rte_mnli"):    # each language's own data: every shipped language
        assert sorted(params(every_language)["lang"].split(",")) == list(language_codes())
    assert _compose(["experiment=rte_mnli"]).setup == "rte+mnli_all"
    assert params("mnli_size")["data.mnli.n_samples"] == "1000,5000,10000,50000,100000,200000,250000,all"
    fp = _compose(["experiment=feature_presence", "data.mnli.presence=50"])
    assert fp.setup == "rte+mnli10000+Negation50"
    smoke = _compose(["experiment=smoke"])
    assert smoke.model.kind == "tiny" and smoke.data.source == "builtin"
    assert params("smoke") == {"seed": "0,1"}


def test_run_dir_names_experiment_lang_setup_seed():
    cfg = _compose(["experiment=rte_mnli", "lang=de", "seed=3"])
    assert cfg.hydra.run.dir == "outputs/rte_mnli/de/rte+mnli_all/seed3"
    assert cfg.hydra.sweep.subdir == "de/rte+mnli_all/seed3"
