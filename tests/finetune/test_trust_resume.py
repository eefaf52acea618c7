"""`trainer.resume=true` continues only a checkpoint of the same job: a checkpoint carries its run's
config fingerprint, input contents and whether it recorded dynamics; after a data change (or from a
checkpoint older than that) the resume is refused in one line whose fix, force=true, starts over.
`trainer.resume` itself is in no fingerprint: resuming a finished sweep skips it."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import time
from pathlib import Path

import pytest
import torch
from forked_cli import ForkedProcess
from helpers import (QUICK, assert_one_line_error, builtin_release, folder_files,
                      predictions, train_cli)
from omegaconf import OmegaConf

from stability.core import contenthash
from stability.core.jobs import job_configs, without_hydra
from stability.core.runmatch import SAME, checkpoint_differences, checkpoint_identity, judge
from stability.core.runrecord import RunDir, config_fingerprint, config_fingerprints, fingerprint, semantic_config

FRENCH = ["experiment=smoke", "lang=fr", "data.source=files", "data.max_train_samples=32", "seed=0",
          "hydra.mode=RUN", "trainer.max_epochs=3", "trainer.resume=true"]
FRENCH_RUN = "smoke/fr/rte/ep3_ntrain32_source-files/seed0"


def _files(run: Path) -> dict[str, bytes]:
    """Every file of a run folder but the writer's lock (a refused job writes no .hydra/ and no
    train.log either)."""
    return folder_files(run, leave_out=("run.lock",))


def _killed_after_first_epoch(args: list[str], run: Path, cwd: Path, sig: signal.Signals) -> None:
    """Start `args` as a user would, and send `sig` once its first epoch is checkpointed."""
    process = ForkedProcess("stability.train", args, cwd, start_new_session=True)
    log = run / "train_log.jsonl"
    deadline = time.monotonic() + 300
    while not ((run / "checkpoint" / "last.pt").is_file() and log.is_file() and log.read_text().count("\n") >= 1):
        assert process.poll() is None and time.monotonic() < deadline, "the run ended before it could be killed"
        time.sleep(0.05)
    os.killpg(process.pid, sig)
    process.wait(timeout=60)
    assert not (run / "metrics.json").exists()
    assert (run / "checkpoint" / "last.pt").is_file(), "the interrupted run lost its checkpoint"


# relative to the command's folder, so a copy of the killed run and its data is the same job
COPIED = [*FRENCH, "data.root=data", "paths.output_dir=outputs"]


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory) -> Path:
    """A folder holding `data/` and, in `outputs/`, a French run with trainer.resume=true that was
    Ctrl-C'd after its first epoch."""
    root = tmp_path_factory.mktemp("killed")
    builtin_release(root / "data", ["fr"])
    _killed_after_first_epoch(COPIED, root / "outputs" / FRENCH_RUN, root, signal.SIGINT)
    return root


def _copy(killed: Path, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """The killed run and its data copied into `tmp_path`: (training file, run folder, the command's args)."""
    for name in ("data", "outputs"):
        shutil.copytree(killed / name, tmp_path / name, symlinks=True)
    return next((tmp_path / "data").rglob("train_fr.jsonl")), tmp_path / "outputs" / FRENCH_RUN, COPIED


def _forced(args: list[str]) -> list[str]:
    return [*args, "force=true"]


def _not_resumed(args: list[str]) -> list[str]:
    return [arg.replace("trainer.resume=true", "trainer.resume=false") for arg in args]


@pytest.mark.slow
@pytest.mark.parametrize("fix, said", [(_forced, "[restart]"), (_not_resumed, "removed checkpoint")])
def test_a_resume_after_a_data_change_is_refused_and_either_fix_starts_over(killed_run, tmp_path, fix, said):
    train, run, args = _copy(killed_run, tmp_path)
    before = contenthash.sha256_of_file(train)
    rows = [json.loads(line) for line in train.read_text(encoding="utf-8").splitlines()]
    rows[0]["label"] = "not_entailment" if rows[0]["label"] == "entailment" else "entailment"   # one label edited
    train.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    after = contenthash.sha256_of_file(train)
    written = _files(run)

    refused = train_cli(args, tmp_path)
    assert_one_line_error(refused, f"{run / 'checkpoint' / 'last.pt'}: the checkpoint differs from this job in "
                                   f"train ({train.relative_to(tmp_path)}): content {before[:8]} -> {after[:8]}",
                          "fix: force=true starts the run over", "trainer.resume=false does so")
    assert _files(run) == written                      # the checkpoint and the log of epoch 1 as they were

    fixed = train_cli(fix(args), tmp_path)            # the fix, as typed
    assert fixed.returncode == 0, fixed.stderr
    assert "epoch 1:" in fixed.stdout and said in fixed.stdout
    record = RunDir(run).read_record()
    assert record.inputs["train"]["sha256"] == after and record.epochs_trained == 3
    assert [entry["epoch"] for entry in RunDir(run).read_train_log()] == [1, 2, 3]
    assert not (run / "checkpoint" / "last.pt").exists()
    # epochs 2 and 3 were not trained on top of epoch 1 of the old data: a run of the new data from scratch
    fresh = tmp_path / "fresh"
    assert train_cli([*args, f"paths.output_dir={fresh}"], tmp_path).returncode == 0
    assert predictions(run) == predictions(fresh / FRENCH_RUN)


def _without_identity(checkpoint: Path) -> str:
    """As a checkpoint written before checkpoints kept their job's identity."""
    saved = torch.load(checkpoint, weights_only=False)
    del saved["identity"]
    torch.save(saved, checkpoint)
    return "the checkpoint differs from this job in its config and input contents (not recorded: the checkpoint " \
           "predates that)"


def _truncated(checkpoint: Path) -> str:
    checkpoint.write_bytes(checkpoint.read_bytes()[:1000])
    return "unreadable checkpoint ("


@pytest.mark.slow
@pytest.mark.parametrize("damage", [_without_identity, _truncated])
def test_a_checkpoint_that_cannot_be_checked_is_not_resumed_and_force_true_starts_over(killed_run, tmp_path, damage):
    """Whether such a checkpoint's data is this job's cannot be told: refused rather than continued on a guess."""
    _, run, args = _copy(killed_run, tmp_path)
    problem = damage(run / "checkpoint" / "last.pt")
    written = _files(run)

    refused = train_cli(args, tmp_path)
    assert_one_line_error(refused, problem, "fix: force=true starts the run over")
    assert _files(run) == written
    forced = train_cli([*args, "force=true"], tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "epoch 1:" in forced.stdout and RunDir(run).read_record().epochs_trained == 3


@pytest.mark.slow
def test_an_unchanged_job_still_resumes_from_its_checkpoint(killed_run, tmp_path):
    """The resumed run trains the epochs its checkpoint had not: from the second on, or later where
    the Ctrl-C reached the killed run only after a further epoch (a busy machine)."""
    _, run, args = _copy(killed_run, tmp_path)
    next_epoch = torch.load(run / "checkpoint" / "last.pt", weights_only=False)["state"].epoch
    assert next_epoch in (2, 3), f"the killed run's checkpoint stands before epoch {next_epoch}"
    resumed = train_cli(args, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert re.findall(r"epoch (\d+):", resumed.stdout) == [str(epoch) for epoch in range(next_epoch, 4)], \
        resumed.stdout
    assert [entry["epoch"] for entry in RunDir(run).read_train_log()] == [1, 2, 3]


@pytest.mark.slow
def test_resume_on_a_finished_run_skips_it(tmp_path):
    """trainer.resume changes no result: a finished sweep run again with it is skipped, not refused."""
    out = tmp_path / "outputs"
    args = [*QUICK, "trainer.max_epochs=1", "seed=0", "hydra.mode=RUN", f"paths.output_dir={out}"]
    assert train_cli(args, tmp_path).returncode == 0
    run = out / f"smoke/en/rte/ep1_ntrain32/seed0"
    written = _files(run)
    resumed = train_cli([*args, "trainer.resume=true"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "[skip]" in resumed.stdout and _files(run) == written


def _composed(*overrides: str):
    (cfg,) = job_configs(["experiment=smoke", "seed=0", *overrides])
    return without_hydra(cfg)


def test_resume_is_in_no_fingerprint_and_an_older_runs_fingerprint_with_it_still_matches():
    without, with_resume = _composed(), _composed("trainer.resume=true")
    assert config_fingerprint(without) == config_fingerprint(with_resume)
    # the fingerprints runs recorded before: their semantic config held the resume they ran with
    semantic = semantic_config(without)
    assert semantic["trainer"]["resume"] is False    # as every run without resume always hashed it
    older_with_resume = fingerprint({**semantic, "trainer": {**semantic["trainer"], "resume": True}})
    assert config_fingerprints(without) == config_fingerprints(with_resume) == \
        {config_fingerprint(without), older_with_resume}
    assert config_fingerprints(_composed("trainer.learning_rate=0.5")).isdisjoint(config_fingerprints(without))


def test_a_checkpoint_differs_in_config_inputs_or_recorded_dynamics():
    cfg = _composed()
    inputs = {"train": {"source": "a.jsonl", "sha256": "1" * 64}}
    saved = json.loads(json.dumps(checkpoint_identity(cfg, inputs, False)))   # as torch.save round-trips it
    assert checkpoint_differences(saved, checkpoint_identity(_composed("trainer.resume=true"), inputs, False)) == []
    assert checkpoint_differences(saved, checkpoint_identity(_composed("trainer.learning_rate=0.5"), inputs, False)) \
        == [f"trainer.learning_rate: {OmegaConf.select(cfg, 'trainer.learning_rate')} -> 0.5"]
    edited = {"train": {"source": "a.jsonl", "sha256": "2" * 64}}
    assert checkpoint_differences(saved, checkpoint_identity(cfg, edited, False)) == \
        ["train (a.jsonl): content 11111111 -> 22222222"]
    assert checkpoint_differences(saved, checkpoint_identity(cfg, inputs, True)) == ["trainer.dynamics: False -> True"]


def test_an_old_fixture_run_keeps_matching_with_resume_set():
    """A run made by older code (resume false, in its fingerprint) is the same computation for a
    job with trainer.resume=true."""
    run = RunDir(Path(__file__).parent.parent / "fixtures" / "run_main_807686d")
    recorded = run.read_config()
    assert recorded.trainer.resume is False
    for resume in (False, True):
        assert judge(run, OmegaConf.merge(recorded, {"trainer": {"resume": resume}}), {}).state == SAME
