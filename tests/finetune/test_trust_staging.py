"""A redo takes over only what it wrote itself: it starts from an empty `.staging/` (what a killed
attempt or a hand left there is removed, said in one line), a resumed redo keeps only what its
checkpoint accounts for, and asking a finished run for one more artefact (weights, dynamics) keeps
the others: the redo records them again rather than leaving them in `replaced/`. `probe`'s fix for
runs without weights, "rerun the sweep with trainer.save_model=true", is such a request."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from forked_cli import ForkedProcess
from helpers import QUICK, folder_files, predictions, train_cli
from safetensors.torch import load_file

from stability.core.runrecord import RunDir

ONE_RUN = [*QUICK, "seed=0", "hydra.mode=RUN"]


def _files(run: Path) -> dict[str, bytes]:
    """Every file of a run folder but the writer's lock, by relative path: Hydra's own (.hydra/,
    train.log) too, since a redo writes its own into its staging folder."""
    return folder_files(run, leave_out=("run.lock",))


def _kill_when(args: list[str], cwd: Path, ready) -> None:
    """Start the command as a user would and SIGKILL it (and its children) once `ready()`."""
    process = ForkedProcess("stability.train", args, cwd, start_new_session=True)
    deadline = time.monotonic() + 300
    while not ready():
        assert process.poll() is None and time.monotonic() < deadline, "the run ended before it could be killed"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)


def _lines(output: str, marker: str) -> list[str]:
    return [line for line in output.splitlines() if marker in line]


@pytest.mark.slow
def test_a_killed_redo_with_dynamics_leaves_nothing_in_the_next_redo(tmp_path):
    out = tmp_path / "outputs"
    args = [*ONE_RUN, "trainer.max_epochs=3", f"paths.output_dir={out}"]
    assert train_cli(args, tmp_path).returncode == 0
    run = RunDir(next(path.parent for path in out.rglob("metrics.json")))
    first = _files(run.path)

    staged = run.staging.path
    _kill_when([*args, "force=true", "trainer.dynamics=true"], tmp_path,
               lambda: (staged / "dynamics" / "validation-0002.parquet").is_file())
    (staged / "model").mkdir()
    (staged / "model" / "config.json").write_text("{}")     # a hand's file in the staging folder
    assert {name: data for name, data in _files(run.path).items() if not name.startswith(".staging/")} == first

    redone = train_cli([*args, "force=true"], tmp_path)      # without dynamics
    assert redone.returncode == 0, redone.stderr
    (clean,) = _lines(redone.stdout, "[clean]")
    assert f"[clean] {staged}: removed .hydra, config.yaml, dynamics, model, train.log, train_log.jsonl, left by " \
           "an unfinished attempt" in clean
    assert not run.has_dynamics() and not run.has_model() and not staged.exists()
    assert run.read_dynamics() is None
    (replaced,) = run.replaced_runs()
    assert _files(replaced) == first                          # the finished run, kept whole
    assert "force=true" in (run.path / ".hydra" / "overrides.yaml").read_text()   # the redo's own, moved in
    assert "[clean]" in (run.path / "train.log").read_text()
    assert predictions(run.path) == predictions(replaced)   # the same computation, redone


@pytest.mark.slow
def test_a_killed_resumable_redo_continues_with_only_what_its_checkpoint_holds(tmp_path):
    out = tmp_path / "outputs"
    args = [*ONE_RUN, "trainer.max_epochs=3", "trainer.resume=true", f"paths.output_dir={out}"]
    assert train_cli(args, tmp_path).returncode == 0
    run = RunDir(next(path.parent for path in out.rglob("metrics.json")))
    reference = RunDir(tmp_path / "reference" / run.path.relative_to(out))

    redo = [*args, "force=true", "trainer.dynamics=true"]
    staged = run.staging
    _kill_when(redo, tmp_path, lambda: staged.checkpoint_path.is_file()
               and (staged.path / "dynamics" / "validation-0001.parquet").is_file())
    (staged.path / "model").mkdir()
    (staged.path / "model" / "config.json").write_text("{}")

    resumed = train_cli(redo, tmp_path)                       # the same command again, as after a time limit
    assert resumed.returncode == 0, resumed.stderr
    assert "epoch 1:" not in resumed.stdout
    (clean,) = _lines(resumed.stdout, "[clean]")
    assert clean.endswith(f"{staged.path}: removed model, left by an unfinished attempt that this one does not "
                          "continue")
    assert run.has_dynamics() and not run.has_model()
    # as the uninterrupted redo records them
    assert train_cli([*args[:-1], f"paths.output_dir={tmp_path / 'reference'}", "trainer.dynamics=true"],
                     tmp_path).returncode == 0
    dynamics, uninterrupted = run.read_dynamics(), reference.read_dynamics()
    assert dynamics.missing == () and dynamics.pred.shape[0] == 3
    np.testing.assert_array_equal(dynamics.pred, uninterrupted.pred)
    assert predictions(run.path) == predictions(reference.path)


@pytest.mark.slow
@pytest.mark.parametrize("first, more, kept", [("trainer.dynamics=true", "trainer.save_model=true", "dynamics"),
                                               ("trainer.save_model=true", "trainer.dynamics=true", "save_model")])
def test_asking_for_one_more_artefact_keeps_the_others(tmp_path, first, more, kept):
    out = tmp_path / "outputs"
    args = [*ONE_RUN, "trainer.max_epochs=1", f"paths.output_dir={out}"]
    assert train_cli([*args, first], tmp_path).returncode == 0
    run = RunDir(next(path.parent for path in out.rglob("metrics.json")))
    dynamics, weights = run.read_dynamics(), run.model_dir / "model.safetensors"
    weights = load_file(weights) if weights.is_file() else None

    redone = train_cli([*args, more], tmp_path)
    assert redone.returncode == 0, redone.stderr
    (said,) = _lines(redone.stdout, "as the finished run has them")
    assert f"[redo] {run.path}: also trainer.{kept}=true" in said
    assert run.has_dynamics() and run.has_model()
    assert run.read_config().trainer[kept] is True
    if dynamics is not None:
        np.testing.assert_array_equal(run.read_dynamics().pred, dynamics.pred)
    if weights is not None:         # the same computation: the same best weights
        again = load_file(run.model_dir / "model.safetensors")
        assert again.keys() == weights.keys()
        for name, tensor in weights.items():
            torch.testing.assert_close(again[name], tensor, rtol=0, atol=0, msg=name)
    assert "[skip]" in train_cli([*args, first, more], tmp_path).stdout   # everything there: nothing to redo


def test_leftovers_of_an_unfinished_attempt_are_cleared_unless_a_resume_continues_them(tmp_path):
    def attempt(folder: Path) -> RunDir:
        for name in ("config.yaml", "train_log.jsonl", "predictions.jsonl", "train.log", ".hydra/config.yaml",
                     "model/config.json", "dynamics/items.parquet", "checkpoint/last.pt"):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text("x")
        return RunDir(folder)

    run = attempt(tmp_path / "run")
    assert run.clear_leftovers(resumed=False, dynamics=True) == ["model", "predictions.jsonl", "checkpoint",
                                                                 "dynamics"]
    assert sorted(str(p.relative_to(run.path)) for p in run.path.rglob("*") if p.is_file()) == \
        [".hydra/config.yaml", "config.yaml", "train.log", "train_log.jsonl"]   # Hydra's, and rewritten at start
    run = attempt(tmp_path / "resumed")
    assert run.clear_leftovers(resumed=True, dynamics=True) == ["model", "predictions.jsonl"]
    assert run.clear_leftovers(resumed=True, dynamics=False) == ["dynamics"]
    staging = attempt(tmp_path / "finished" / ".staging")
    assert staging.clear_leftovers(resumed=False, dynamics=False) == [".hydra", "checkpoint", "config.yaml",
                                                                      "dynamics", "model", "predictions.jsonl",
                                                                      "train.log", "train_log.jsonl"]
    assert not staging.path.exists()
    assert RunDir(tmp_path / "nothing" / ".staging").clear_leftovers(resumed=False, dynamics=False) == []
