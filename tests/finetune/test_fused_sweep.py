"""Fused seeds asked for in a sweep (`trainer.fuse_seeds=K`, `stability.finetune.fused_run`): K ordinary
run folders that report and status read; a killed group resumes to the predictions of an uninterrupted
one; the engine is recorded and never pooled with another; what cannot be fused is refused in one line."""
from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from forked_cli import ForkedProcess, run_module
from helpers import (QUICK, assert_one_line_error, assert_report_refuses, predictions, runs, saved_model_probabilities,
                     train_cli)

from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.core.jobrecord import DONE, JobRecord, read_job_record, write_job_record
from stability.core.runrecord import RunDir, RunRecord
from stability.core.schemas.train import train_settings
from stability.core.taxonomy import FINE_CATEGORIES
from stability.report.cli import main as report_main
from stability.report.collect import collect
from stability.sweep.fused_groups import fused_groups, group_members
from stability.sweep.plan import format_plan, fused_group_count, plan_json, planned_runs

FUSED = [*QUICK, "seed=0..2", "trainer.fuse_seeds=3"]
VARIANT = "ep2_fused3_ntrain32"
# the job's own files (Hydra's, its log and record), which only the job that trains the group writes
JOB_FILES = {".hydra", "train.log", "job.json", "run.lock"}


def _run_files(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")
            if path.is_file() and not JOB_FILES & set(path.relative_to(folder).parts)}


@pytest.fixture(scope="module")
def fused_sweep(tmp_path_factory) -> Path:
    """The smoke data's seeds 0..2 fused three at a time, uninterrupted: the sweep's folder."""
    root = tmp_path_factory.mktemp("fused")
    result = train_cli([*FUSED, f"paths.output_dir={root / 'outputs'}"], root)
    assert result.returncode == 0, result.stderr
    return root / "outputs" / "smoke"


@pytest.mark.slow
def test_a_fused_sweep_writes_run_folders_as_solo_runs_do_that_report_and_status_read(fused_sweep, tmp_path):
    out = tmp_path / "outputs"
    solo = train_cli([*QUICK, "seed=0", f"paths.output_dir={out}"], tmp_path)
    assert solo.returncode == 0, solo.stderr
    solo_run = out / "smoke" / "en" / "rte" / "ep2_ntrain32" / "seed0"
    records = runs(fused_sweep)
    assert sorted(records) == [f"en/rte/{VARIANT}/seed{seed}" for seed in range(3)]
    solo_record = json.loads((solo_run / "metrics.json").read_text())
    assert solo_record["engine"] == "solo" and solo_record["fused_with"] == []
    for seed in range(3):
        folder = fused_sweep / "en" / "rte" / VARIANT / f"seed{seed}"
        record = records[f"en/rte/{VARIANT}/seed{seed}"]
        assert _run_files(folder) == _run_files(solo_run)         # the files a solo run has, no other
        assert record.keys() == solo_record.keys()
        assert (record["engine"], record["fused_with"], record["seed_init"], record["seed_order"]) == \
            ("fused3", [0, 1, 2], seed, seed)
        assert yaml.safe_load((folder / "config.yaml").read_text())["trainer"]["fuse_seeds"] == 3
        log = [json.loads(line) for line in (folder / "train_log.jsonl").read_text().splitlines()]
        assert [entry["epoch"] for entry in log] == [1, 2] and record["epochs_trained"] == 2
    # each member is its own seed: its own predictions
    probabilities = [[row["prob_entailment"] for row in predictions(fused_sweep / "en" / "rte" / VARIANT / f"seed{s}")]
                     for s in range(3)]
    assert probabilities[0] != probabilities[1] != probabilities[2]

    report_main([f"runs={fused_sweep}", f"out={tmp_path / 'report'}", "bootstrap=0", "figures=false",
                 "calibration_sims=0"])
    summary = pd.read_csv(tmp_path / "report" / "summary.csv")
    assert summary["variant"].unique().tolist() == [VARIANT] and summary["n_seeds"].unique().tolist() == [3]
    status = run_module("stability", ["status", f"runs={fused_sweep}"], Path.cwd(), timeout=300)
    assert status.returncode == 0, status.stderr
    assert [line.split()[:2] for line in status.stdout.splitlines() if "/seed" in line] == \
        [[f"en/rte/{VARIANT}/seed{seed}", "done"] for seed in range(3)]


@pytest.mark.slow
def test_a_killed_fused_group_keeps_its_finished_members_and_ends_with_the_uninterrupted_predictions(
        fused_sweep, tmp_path):
    out = tmp_path / "outputs"
    folders = [out / "smoke" / "en" / "rte" / VARIANT / f"seed{seed}" for seed in range(3)]
    process = ForkedProcess("stability.train", [*FUSED, f"paths.output_dir={out}"], tmp_path)
    deadline = time.monotonic() + 600
    while not (folders[0] / "metrics.json").exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.kill()                   # SIGKILL: nothing runs after it, the locks are left behind
    process.wait(timeout=60)
    assert (folders[0] / "metrics.json").exists() and not (folders[2] / "metrics.json").exists()
    kept = (folders[0] / "metrics.json").read_bytes()

    again = train_cli([*FUSED, f"paths.output_dir={out}"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert (folders[0] / "metrics.json").read_bytes() == kept      # finished before the kill: kept as it was
    assert read_job_record(folders[0]).state == DONE                # the killed job's "running" put right
    for folder in folders:
        uninterrupted = fused_sweep / "en" / "rte" / VARIANT / folder.name
        assert predictions(folder) == predictions(uninterrupted)


@pytest.mark.slow
def test_fused_members_record_their_own_training_dynamics_and_the_same_results(fused_sweep, tmp_path):
    out = tmp_path / "outputs"
    result = train_cli([*FUSED, "trainer.dynamics=true", f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    best_diagnostic = []
    for seed in range(3):
        run = RunDir(out / "smoke" / "en" / "rte" / VARIANT / f"seed{seed}")
        dynamics, log, record = run.read_dynamics(), run.read_train_log(), run.read_record()
        assert dynamics is not None and len(dynamics.pred) == len(log) == 2 and dynamics.recorded.all()
        assert not np.isnan(dynamics.prob_entailment[:, dynamics.columns("train")]).any()   # every item, each epoch
        labels = dynamics.items["label"].to_numpy()
        validation = dynamics.columns("validation")
        for row, entry in zip(dynamics.pred, log):      # each validation is the member's own
            assert (row[validation] == labels[validation]).mean() == pytest.approx(entry["val_accuracy"])
        diagnostic = dynamics.prob_entailment[record.best_epoch - 1, dynamics.columns("diagnostic")]
        np.testing.assert_allclose(diagnostic, [row["prob_entailment"] for row in predictions(run.path)], atol=1e-3)
        best_diagnostic.append(diagnostic)
        # recording changes no result: the predictions of the sweep without dynamics (to float rounding:
        # the kept diagnostic pass is the fused one, the other a pass of the member alone)
        without = predictions(fused_sweep / "en" / "rte" / VARIANT / f"seed{seed}")
        assert [row["pred"] for row in predictions(run.path)] == [row["pred"] for row in without]
        np.testing.assert_allclose([row["prob_entailment"] for row in predictions(run.path)],
                                   [row["prob_entailment"] for row in without], atol=1e-5)
    assert not np.array_equal(best_diagnostic[0], best_diagnostic[1])


@pytest.mark.slow
def test_a_fused_sweep_asked_for_weights_redoes_its_groups_to_the_same_predictions_with_each_members_weights(
        fused_sweep, tmp_path):
    """Weights asked of a finished fused sweep: each group is trained again (a redo to record more, through
    the staging folders), the finished runs kept under replaced/, and each member's saved weights are its own."""
    out = tmp_path / "outputs"
    shutil.copytree(fused_sweep, out / "smoke")
    result = train_cli([*FUSED, "trainer.save_model=true", f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    for seed in range(3):
        run = RunDir(out / "smoke" / "en" / "rte" / VARIANT / f"seed{seed}")
        before = predictions(fused_sweep / "en" / "rte" / VARIANT / f"seed{seed}")
        assert run.read_record().saved_model == "model" and len(run.replaced_runs()) == 1
        assert predictions(run.path) == before                          # the same computation, redone
        np.testing.assert_allclose(saved_model_probabilities(run), [row["prob_entailment"] for row in before],
                                   atol=1e-5)


def test_a_member_whose_group_did_not_finish_it_says_so_in_one_line(tmp_path):
    """The group's first job failed, so a later member's job finds no run: it names that job, trains nothing."""
    from stability.finetune.fused_run import follow_group

    composed = compose_config([*QUICK, "seed=1", "trainer.fuse_seeds=2", f"paths.output_dir={tmp_path}"])
    first, own = tmp_path / "seed0", tmp_path / "seed1"
    with pytest.raises(UserError) as refused:
        follow_group(train_settings(composed), composed, own, first)
    assert str(refused.value) == (f"seed 1 is trained by its fused group's first job, in {first}, which did not "
                                  f"finish it (fix: see that job's error in {first}; the same command again trains "
                                  f"the group)")
    assert not own.exists()



@pytest.mark.slow
def test_a_member_failed_by_an_earlier_command_is_done_once_its_group_trains(tmp_path):
    """An earlier command left seed 1's job failed (its group's first job had failed then); the group
    trained now writes seed 1's run, so the sweep ends with no failed job and the record says done."""
    out = tmp_path / "outputs"
    folder = out / "smoke" / "en" / "rte" / VARIANT / "seed1"
    write_job_record(folder, JobRecord.started_here().finished("seed 1 is trained by its fused group's first job"))
    result = train_cli([*FUSED, f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "failed" not in result.stderr
    assert read_job_record(folder).state == DONE and (folder / "metrics.json").is_file()

def _write_run(root: Path, seed: int, engine: str | None) -> Path:
    """A hand-made finished run of en / rte whose record says it was trained by `engine`."""
    run = RunDir(root / "en" / "rte" / f"seed{seed}")
    run.path.mkdir(parents=True)
    run.write_record(RunRecord(lang="en", setup="rte", seed=seed, n_items=8, overall_mcc=0.1 * seed,
                               category_mcc={name: 0.1 * seed for name in FINE_CATEGORIES},
                               category_n={name: 4 for name in FINE_CATEGORIES}, engine=engine))
    return run.path


def test_the_report_refuses_to_pool_a_solo_and_a_fused_run_of_one_variant(tmp_path, capsys):
    """Two folders whose presets chose different engines give runs of one (lang, setup, variant)."""
    runs_dir = tmp_path / "runs"
    _write_run(runs_dir, 0, None)              # before the field: solo, the only engine then
    _write_run(runs_dir, 1, "solo")
    _write_run(runs_dir, 3, "fused3")
    folder = runs_dir / "en" / "rte"
    line = (f"{folder}: 3 runs of en / rte trained in different engines: fused3 in seed3, solo in seed0 "
            f"(fix: report each engine's runs apart, e.g. runs=[{folder / 'seed3'}] out=report-fused3)")
    assert_report_refuses(runs_dir, tmp_path / "report", line, capsys)
    (folder / "seed3").rename(tmp_path / "fused3")      # one engine per cell: pooled
    assert collect([runs_dir]).n_runs == 2


@pytest.mark.parametrize("fixed, seed_init", [([], [3, 4, 5]), (["seed_init=7"], [7, 7, 7])])
def test_a_groups_members_are_its_jobs_config_with_their_seeds_beside_its_folder(fixed, seed_init):
    """What a fused job launched apart derives from its own (unresolved) config: seed_init and seed_order
    follow the member's seed where they interpolate it, a fixed value stays."""
    cfg = compose_config(["experiment=smoke", "seed=4", "trainer.fuse_seeds=3", *fixed])
    members = group_members(cfg, Path("sweep/en/rte/fused3/seed4"))
    assert [str(folder) for _, folder in members] == [f"sweep/en/rte/fused3/seed{seed}" for seed in (3, 4, 5)]
    settings = [train_settings(member) for member, _ in members]
    assert [(s.seed, s.seed_init, s.seed_order) for s in settings] == list(zip((3, 4, 5), seed_init, (3, 4, 5)))
    assert (cfg.seed, train_settings(cfg).seed_init) == (4, seed_init[1])   # the job's own config is left alone


@pytest.mark.slow
def test_local_gpus_trains_each_fused_group_as_one_job_and_its_other_members_find_their_runs(tmp_path):
    out = tmp_path / "outputs"
    result = train_cli([*QUICK, "seed=0..5", "trainer.fuse_seeds=3", f"paths.output_dir={out}",
                        "hydra/launcher=local_gpus", "hydra.launcher.jobs_per_device=2"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"Results in {out / 'smoke'} (6 runs):" in result.stdout
    records = [runs(out / "smoke")[f"en/rte/{VARIANT}/seed{seed}"] for seed in range(6)]
    assert [record["fused_with"] for record in records] == [[0, 1, 2]] * 3 + [[3, 4, 5]] * 3
    pids = [record["pid"] for record in records]
    # each group trained in one joblib worker, the two side by side; its members' jobs trained nothing
    assert len(set(pids[:3])) == len(set(pids[3:])) == 1 and pids[0] != pids[3]
    assert (result.stdout + result.stderr).count("trained by its fused group's first job") == 4
    for seed in range(6):
        folder = out / "smoke" / "en" / "rte" / VARIANT / f"seed{seed}"
        assert read_job_record(folder).state == DONE


def test_plan_counts_fused_groups():
    planned = planned_runs(["experiment=smoke", "seed=0..5", "trainer.fuse_seeds=3"])
    assert len(planned) == 6 and fused_group_count(planned) == 2
    assert format_plan(planned, None, None).startswith("6 runs · 2 fused groups of 3 seeds, each trained as one model")
    assert plan_json(planned, None)["totals"]["fused_groups"] == 2
    assert fused_group_count(planned_runs(["experiment=smoke", "seed=0..5"])) == 0


@pytest.mark.parametrize("overrides, fragments", [
    (["seed=1..3", "trainer.fuse_seeds=3"],
     ["trainer.fuse_seeds=3 trains seeds in blocks of 3 (0..2 is one): this sweep has seed 1, 2 of it without 0",
      "(fix: sweep whole blocks, e.g. seed=0..2)"]),
    (["seed=0..2", "trainer.fuse_seeds=3", "hydra.sweep.subdir=job${seed}"],
     ["trainer.fuse_seeds trains a group's members in run folders beside each other (…/seed<N>); this sweep "
      "puts seed 0 in", "(fix: drop the hydra.sweep.subdir override, or pass trainer.fuse_seeds=1)"]),
    (["seed=0..2", "trainer.fuse_seeds=3", "trainer.mixout=0.1", "trainer.eval_every=4"],
     ["seeds cannot be fused with trainer.mixout=0.1, trainer.eval_every=4"]),
    (["seed=0..1", "seed_order=0,1", "trainer.fuse_seeds=2"],
     ["trainer.fuse_seeds=2 fuses jobs that differ only in seed, and this sweep also varies seed_init or "
      "seed_order (4 jobs of seeds 0..1)"]),
], ids=["part-of-a-block", "subdir", "unfusable", "seed-grid"])
def test_what_cannot_be_fused_is_refused_in_one_line_before_anything_is_written(tmp_path, overrides, fragments):
    out = tmp_path / "outputs"
    result = train_cli([*QUICK, *overrides, f"paths.output_dir={out}"], tmp_path)
    assert_one_line_error(result, *fragments)
    assert not out.exists()


def test_a_fused_sweep_with_seed_init_set_names_it():
    """seed_init=0 fixed puts seed 1 in `init0/`, apart from seed 0: the refusal names seed_init, not a
    hydra.sweep.subdir override the command never gave."""
    from stability.core.jobs import job_configs

    with pytest.raises(UserError, match=re.escape("this sweep puts seed 1 in") + ".*" + re.escape(
            "(fix: drop seed_init=0, which fused seeds follow (each member's seed_init and seed_order are its seed), "
            "or pass trainer.fuse_seeds=1)")):
        fused_groups(job_configs([*QUICK, "seed=0..1", "seed_init=0", "trainer.fuse_seeds=2"]))
