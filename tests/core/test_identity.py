"""Run identity: a sweep over any key keeps every run, and finished sweeps keep their directories."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import assert_one_line_error, runs, train_cli
from stability.core.config import compose_config
from stability.core.identity import run_subdir, variant_family, variant_name

# A smoke sweep (`python -m stability.train experiment=smoke`) written by main at commit 041fde0,
# before runs had a variant: its four files per run, as that commit left them.
OLD_SMOKE = Path(__file__).parent.parent / "fixtures" / "smoke_main_041fde0"


def variant(*overrides: str) -> str:
    return compose_config(["experiment=smoke", *overrides]).variant


@pytest.mark.slow
def test_variant_names_what_differs_from_the_experiment():
    assert variant() == "" and variant("seed=3") == ""
    assert variant("trainer.learning_rate=3e-5") == "lr3e-05"
    assert variant("trainer.learning_rate=1e-3") == ""            # the smoke preset's own value
    assert variant("trainer.batch_size=16", "trainer.learning_rate=2e-5") == "lr2e-05_bs16"
    assert variant("model=mbert") == "model-mbert"                  # a group choice, not its leaves
    assert variant("model=mbert", "model.dropout=0.2") == "model-mbert_dropout0.2"
    assert variant("model.name=/models/ckpt/mbert-ft") == "model-ckpt-mbert-ft"
    assert variant("data.source=files") == "source-files"


def test_seeds_set_apart_from_seed_are_named_and_equal_ones_are_not():
    assert variant("seed=0", "seed_init=0", "seed_order=0") == ""
    assert variant("seed=0", "seed_init=1") == "init1"
    assert variant("seed=2", "seed_order=0") == "order0"
    assert variant("seed=0", "seed_init=1", "seed_order=1", "trainer.max_epochs=3") == "ep3_init1_order1"


@pytest.mark.slow
def test_keys_that_change_no_result_and_keys_in_the_path_are_never_a_variant():
    for override in ("data.root=/elsewhere", "trainer.resume=true", "trainer.eval_batch_size=64",
                     "trainer.save_model=true", "logger=wandb", "paths.output_dir=/o", "force=true",
                     "lang=fr", "data.mnli.n_samples=1000", "data.diagnostic=generated", "experiment_name=x"):
        assert variant(override) == "", override


def test_names_are_filesystem_safe_and_bounded():
    assert variant_name([("model", "org/model name:v2"), ("flag", True), ("n", None)]) \
        == "model-org-model-name-v2_flag-true_n-none"
    assert variant_name([("x", [1, 2])]) == variant_name([("x", [1, 2])]) != variant_name([("x", [2, 1])])
    long = variant_name([(f"key{i}", "value" * 3) for i in range(20)])
    assert len(long) == 100 and long != variant_name([(f"key{i}", "value" * 3) for i in range(21)])


def test_run_subdir_and_family():
    assert run_subdir("en", "rte", "", 0) == "en/rte/seed0"
    assert run_subdir("fr", "rte+mnli1000", "lr3e-05", 4) == "fr/rte+mnli1000/lr3e-05/seed4"
    assert variant_family("init1_order0") == ""
    assert variant_family("lr3e-05_init2_order1") == "lr3e-05"
    assert variant_family("order5") == "" and variant_family("model-mbert") == "model-mbert"


@pytest.mark.slow
def test_a_learning_rate_sweep_keeps_both_runs(tmp_path):
    out = tmp_path / "outputs"
    result = train_cli(["experiment=smoke", "seed=0", "trainer.learning_rate=1e-5,3e-5",
                        f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(runs(out)) == ["smoke/en/rte/lr1e-05/seed0", "smoke/en/rte/lr3e-05/seed0"]
    assert f"Results in {out / 'smoke'} (2 runs)" in result.stdout
    table = result.stdout.split("(2 runs):")[1].splitlines()
    assert "variant" in table[1] and [line.split()[2] for line in table[3:5]] == ["lr1e-05", "lr3e-05"]


@pytest.mark.slow
def test_an_init_by_order_grid_keeps_its_four_runs(tmp_path):
    out = tmp_path / "outputs"
    result = train_cli(["experiment=smoke", "seed=0", "seed_init=0,1", "seed_order=0,1",
                        "trainer.max_epochs=2", f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    found = runs(out)
    assert sorted(found) == ["smoke/en/rte/ep2/seed0", "smoke/en/rte/ep2_init1/seed0",
                             "smoke/en/rte/ep2_init1_order1/seed0", "smoke/en/rte/ep2_order1/seed0"]
    assert {(m["seed_init"], m["seed_order"]) for m in found.values()} == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert f"(4 runs)" in result.stdout


def test_jobs_that_would_share_a_directory_are_refused_before_any_starts(tmp_path):
    out = tmp_path / "outputs"
    result = train_cli(["experiment=smoke", "seed=0", "data.root=/a,/b", f"paths.output_dir={out}"], tmp_path)
    assert_one_line_error(result, "2 jobs of this sweep would share the run directory",
                          f"{out}/smoke/en/rte/seed0", "data.root = /a, /b")
    assert not out.exists()


@pytest.mark.slow
def test_a_smoke_sweep_finished_before_variants_is_skipped_not_rerun(tmp_path):
    out = tmp_path / "outputs"
    shutil.copytree(OLD_SMOKE, out)
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    result = train_cli(["experiment=smoke", f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("[skip]") == 2
    assert all(path.read_bytes() == data for path, data in before.items())
    assert sorted(runs(out)) == ["smoke/en/rte/seed0", "smoke/en/rte/seed1"]


@pytest.mark.parametrize("overrides", [["trainer.eval_batch_size=64,128"], ["trainer.resume=true,false"]])
def test_sweeping_a_key_the_identity_ignores_is_refused(tmp_path, overrides):
    result = train_cli(["experiment=smoke", "seed=0", *overrides, f"paths.output_dir={tmp_path}"], tmp_path)
    key = overrides[0].split("=")[0]
    assert_one_line_error(result, "would share the run directory", key)


PRESET_FUSES = "# @package _global_\ndefaults:\n  - smoke\n  - _self_\ntrainer:\n  fuse_seeds: 3\n"


def test_the_engine_is_named_however_a_preset_chose_it(tmp_path):
    """A preset of one's own that fuses, an experiment or a trainer preset: its runs are `fused<K>`, not
    the preset's `''`, so a fused seed never takes a solo seed's name."""
    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "fused.yaml").write_text(PRESET_FUSES, encoding="utf-8")
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "fused2.yaml").write_text("defaults:\n  - default\n  - _self_\nfuse_seeds: 2\n",
                                                      encoding="utf-8")
    searchpath = f"hydra.searchpath=[file://{tmp_path}]"
    assert variant(searchpath, "experiment=fused") == "fused3"
    assert variant(searchpath, "trainer=fused2") == "trainer-fused2_fused2"
