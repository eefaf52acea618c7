"""The stabilisation methods as configs: the study's recipe composes to jiant v1's values, every
method is off by default (same variant, same fingerprint as before the keys existed), each
method names its variant, and `experiment=stabilizers` trains one variant per method and seed
that the report compares with the study's recipe."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from helpers import runs, train_cli
from stability.core.config import compose_config
from stability.core.runrecord import config_fingerprint
from stability.report.cli import main as report_main

FIXTURE_RUN = Path(__file__).parent.parent / "fixtures" / "smoke_main_041fde0" / "smoke" / "en" / "rte" / "seed0"
METHODS = ("jiant-superglue", "llrd", "mixout", "mosbach", "reinit")

# jiant v1.3.2 (588aa288): superglue_bert.conf over defaults.conf, trainer.py, BertAdam's defaults
JIANT_SUPERGLUE = {"optimizer": "bertadam", "learning_rate": 1e-5, "batch_size": 4, "eval_every": 1000,
                   "lr_patience": 4, "lr_decay_factor": 0.5, "min_lr": 1e-7, "patience": 21, "max_epochs": 10,
                   "max_grad_norm": 5.0, "schedule": "linear", "warmup_ratio": 0.1, "weight_decay": 0.01,
                   "group_by_length": True, "reinit_layers": 0, "layer_lr_decay": 1.0, "mixout": 0.0,
                   "pretrained_decay": 0.0}


def test_the_study_recipe_composes_to_jiants_values():
    cfg = compose_config(["trainer=jiant_superglue"])
    assert {key: cfg.trainer[key] for key in JIANT_SUPERGLUE} == JIANT_SUPERGLUE
    assert cfg.model.dropout == 0.1 and cfg.data.max_length == 256     # superglue_bert.conf: dropout, max_seq_len


@pytest.mark.parametrize("overrides", [[], ["trainer.optimizer=adamw", "trainer.schedule=constant",
                                            "trainer.lr_patience=null", "trainer.eval_every=epoch",
                                            "trainer.reinit_layers=0", "trainer.layer_lr_decay=1.0",
                                            "trainer.mixout=0.0", "trainer.pretrained_decay=0.0",
                                            "trainer.warmup_ratio=0.3", "trainer.min_lr=0.1"]])
def test_every_method_off_keeps_the_variant_and_the_fingerprint_of_runs_made_before(overrides):
    """Off (and the keys only an on method reads, warmup_ratio and min_lr) changes nothing."""
    cfg = compose_config(["experiment=smoke", "seed=0", *overrides])
    recorded = json.loads((FIXTURE_RUN / "metrics.json").read_text(encoding="utf-8"))["config_fingerprint"]
    assert cfg.variant == "" and config_fingerprint(cfg) == recorded


@pytest.mark.parametrize("overrides, variant", [
    (["trainer=jiant_superglue"], "trainer-jiant-superglue"),
    (["trainer=mosbach"], "trainer-mosbach"),
    (["trainer=mosbach", "trainer.reinit_layers=3"], "trainer-mosbach_reinit3"),
    (["trainer.optimizer=bertadam"], "opt-bertadam"),
    (["trainer.schedule=linear", "trainer.warmup_ratio=0.06"], "sched-linear_warmup0.06"),
    (["trainer.lr_patience=4", "trainer.min_lr=1e-7"], "lrpatience4_minlr1e-07"),
    (["trainer.eval_every=500"], "every500"),
    (["trainer.layer_lr_decay=0.9", "trainer.mixout=0.3", "trainer.pretrained_decay=0.001"],
     "llrd0.9_mixout0.3_l2sp0.001"),
])
def test_each_method_names_its_variant(overrides, variant):
    assert compose_config(["experiment=smoke", *overrides]).variant == variant


@pytest.mark.parametrize("override, fix", [
    ("trainer.optimizer=sgd", "adamw, bertadam"),
    ("trainer.eval_every=often", "trainer.eval_every=epoch"),
    ("trainer.eval_every=0", "trainer.eval_every=epoch"),
    ("trainer.mixout=1.0", "trainer.mixout=<a number in [0, 1)>"),
    ("trainer.layer_lr_decay=1.5", "trainer.layer_lr_decay=<a number in (0, 1]>"),
])
def test_a_wrong_method_value_is_one_line(tmp_path, override, fix):
    from helpers import assert_one_line_error

    result = train_cli(["experiment=smoke", override, f"paths.output_dir={tmp_path}"], tmp_path)
    assert_one_line_error(result, override.split("=")[0], fix)


@pytest.mark.slow
def test_the_stabilizers_sweep_and_its_report_section(tmp_path, holm_without_gc):
    out = tmp_path / "outputs"
    # 36 steps at a rate the tiny model learns at, validated every epoch of 4 steps (jiant's recipe trains
    # 1,000 steps before its first validation): runs whose MCCs differ, which is what the section reads
    result = train_cli(["experiment=stabilizers", "data.source=builtin", "model=tiny", "data.max_train_samples=16",
                        "trainer.max_epochs=9", "trainer.eval_every=4", "trainer.learning_rate=2e-3", "seed=0,1,2",
                        f"paths.output_dir={out}"], tmp_path, timeout=900)
    assert result.returncode == 0, result.stderr
    found = sorted(runs(out))
    variant = "model-tiny_trainer-{}_lr0.002_ep9_every4_ntrain16_source-builtin"
    assert found == sorted(f"stabilizers/fr/rte/{variant.format(method)}/seed{seed}"
                           for method in METHODS for seed in range(3))

    report = tmp_path / "report"
    report_main([f"runs=[{out / 'stabilizers'}]", f"out={report}", "bootstrap=50", "figures=false", "calibration_sims=0"])
    table = pd.read_csv(report / "stabilizers.csv")
    overall = table[table["category"] == "overall"].set_index("method")
    reference = variant.format("jiant-superglue")
    assert set(overall["reference"]) == {reference} and len(overall) == len(METHODS)
    failed = pd.read_csv(report / "failed_runs.csv").groupby("variant")["failed"].sum()
    mcc = {name: [runs(out)[f"stabilizers/fr/rte/{name}/seed{seed}"]["overall_mcc"] for seed in range(3)]
           for name in overall.index}
    for name, row in overall.iterrows():
        low, high = proportion_confint(int(failed[name]), 3, alpha=0.05, method="wilson")
        assert (row["failed"], row["failed_low"], row["failed_high"]) == (failed[name], pytest.approx(low),
                                                                         pytest.approx(high))
        assert row["std_mcc"] == pytest.approx(np.std(mcc[name], ddof=1))
        if name != reference:
            expected = stats.levene(mcc[name], mcc[reference], center="median").pvalue
            assert row["p_variance"] == pytest.approx(expected, nan_ok=True)
    compared = table.dropna(subset=["p_variance"])
    assert len(compared) > 0
    assert compared["p_variance_holm"].to_numpy() == pytest.approx(
        multipletests(compared["p_variance"], method="holm")[1])
    assert "## Which method stabilises what" in (report / "report.md").read_text(encoding="utf-8")


def test_the_help_names_every_experiment_and_trainer_preset():
    """`nli-stability train --help`'s footer lists the shipped presets; a new file must be named there."""
    footer = compose_config([], return_hydra_config=True).hydra.help.footer
    conf = Path(__file__).resolve().parents[2] / "stability" / "conf"
    for group in ("experiment", "trainer"):
        listed = footer.split(f"{group}=", 1)[1].split(";")[0].split(" ")[0].split("|")
        assert sorted(listed) == sorted(path.stem for path in (conf / group).glob("*.yaml")), group
