"""A result belongs to the inputs that made it: a finished run is never replaced or reused for
another config or other input content, a computation is never run twice in one sweep, and a
forced rerun replaces a finished run only once it has finished itself."""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from forked_cli import ForkedProcess, run_module

from helpers import (QUICK, QUICK_VARIANT, assert_one_line_error, builtin_release, folder_files,
                      train_cli)
from stability.core import contenthash
from stability.core.config import compose_config
from stability.core.runmatch import OTHER, RECORD_MORE, SAME, judge
from stability.core.runrecord import RunDir, iter_runs
from stability.core.schemas.train import train_settings
from stability.data.inputs import run_inputs

FRENCH = ["experiment=smoke", "lang=fr", "data.source=files", "data.max_train_samples=32",
          "trainer.max_epochs=2", "seed=0", "hydra.mode=RUN"]
FRENCH_RUN = f"smoke/fr/rte/{QUICK_VARIANT}_source-files/seed0"


def _files(run: Path) -> dict[str, bytes]:
    """Every file of a run folder but Hydra's own (.hydra/, train.log), by relative path."""
    return folder_files(run, leave_out=(".hydra", "train.log", "job.json"))


def _french_release(root: Path) -> Path:
    release = builtin_release(root, ["fr"])
    return next(release.rglob("train_fr.jsonl"))


@pytest.mark.slow
def test_another_data_root_neither_replaces_the_finished_run_nor_is_lost_when_forced(tmp_path):
    _french_release(tmp_path / "v1")
    train_v2 = _french_release(tmp_path / "v2")
    train_v2.write_text("".join(train_v2.read_text(encoding="utf-8").splitlines(True)[8:]), encoding="utf-8")
    out = tmp_path / "outputs"
    args = [*FRENCH, f"paths.output_dir={out}"]
    assert train_cli([*args, f"data.root={tmp_path / 'v1'}"], tmp_path).returncode == 0
    run = out / FRENCH_RUN
    first = _files(run)

    refused = train_cli([*args, f"data.root={tmp_path / 'v2'}"], tmp_path)
    assert_one_line_error(refused, str(run), f"data.root: {tmp_path / 'v1'} -> {tmp_path / 'v2'}",
                          f"train ({train_v2}): content", "force=true", f"out={out / 'smoke'}-2")
    assert _files(run) == first

    forced = train_cli([*args, f"data.root={tmp_path / 'v2'}", "force=true"], tmp_path)
    assert forced.returncode == 0, forced.stderr
    [kept] = RunDir(run).replaced_runs()
    assert {name: data for name, data in _files(kept).items()} == first
    record = RunDir(run).read_record()
    assert record.inputs["train"]["source"] == str(train_v2)
    assert [found.path for found in iter_runs(out)] == [run]  # the replaced run is not a run of the sweep


@pytest.mark.slow
def test_a_data_file_changed_in_place_is_refused_not_reused(tmp_path):
    train = _french_release(tmp_path / "data")
    out = tmp_path / "outputs"
    sweep = [arg for arg in FRENCH if arg != "hydra.mode=RUN"]  # a sweep of one run: status can read it
    args = [*sweep, f"data.root={tmp_path / 'data'}", f"paths.output_dir={out}"]
    assert train_cli(args, tmp_path).returncode == 0
    run = out / FRENCH_RUN
    first = _files(run)
    before = json.loads((run / "metrics.json").read_text())["inputs"]["train"]["sha256"]
    assert before == contenthash.sha256_of_file(train)

    lines = train.read_text(encoding="utf-8").splitlines(True)
    train.write_text("".join(lines[1:] + lines[:1]), encoding="utf-8")  # same pairs, another order
    after = contenthash.sha256_of_file(train)
    refused = train_cli(args, tmp_path)
    assert_one_line_error(refused, str(run), f"train ({train}): content {before[:8]} -> {after[:8]}")
    assert _files(run) == first
    status = run_module("stability.status", [f"runs={out / 'smoke'}"], tmp_path, timeout=120)
    assert status.returncode == 0, status.stderr
    assert "not started" in status.stdout and f"train ({train}): content" in status.stdout


def test_an_inert_seed_sweep_is_refused_before_any_job_starts(tmp_path):
    out = tmp_path / "outputs"
    result = train_cli(["experiment=smoke", "seed=0,1", "seed_init=0", "seed_order=0",
                        f"paths.output_dir={out}"], tmp_path)
    assert_one_line_error(result, "2 jobs of this sweep would compute the same run", "seed = 0, 1",
                          "seed does nothing when seed_init and seed_order are both set")
    assert not out.exists()


def test_a_value_listed_twice_is_named_as_such(tmp_path):
    result = train_cli(["experiment=smoke", "seed=0,0", f"paths.output_dir={tmp_path / 'out'}"], tmp_path)
    assert_one_line_error(result, "2 jobs of this sweep are the same job", "list each value of a swept key once")


@pytest.mark.slow
def test_an_interrupted_forced_rerun_leaves_the_finished_run_as_it_was(tmp_path):
    out = tmp_path / "outputs"
    args = [*QUICK, "seed=0", "hydra.mode=RUN", "trainer.max_epochs=40", "trainer.patience=40",
            "data.max_train_samples=64", f"paths.output_dir={out}"]
    assert train_cli(args, tmp_path).returncode == 0
    run = next(path.parent for path in out.rglob("metrics.json"))
    first = _files(run)

    rerun = ForkedProcess("stability.train", [*args, "force=true"], tmp_path, start_new_session=True)
    staged_log = RunDir(run).staging.path / "train_log.jsonl"
    deadline = time.monotonic() + 120
    while not (staged_log.is_file() and staged_log.read_text().strip()) and time.monotonic() < deadline:
        assert rerun.poll() is None, rerun.communicate()[1]
        time.sleep(0.02)
    os.killpg(rerun.pid, signal.SIGINT)  # Ctrl-C
    rerun.wait(timeout=60)
    assert rerun.returncode != 0
    assert _files(run).keys() - first.keys() <= {f".staging/{name}" for name in ("config.yaml", "train_log.jsonl")}
    assert {name: data for name, data in _files(run).items() if name in first} == first
    assert [found.path for found in iter_runs(out)] == [run]
    assert "[skip]" in train_cli(args, tmp_path).stdout  # the finished run is still this job's


def test_a_file_is_hashed_once_per_content(tmp_path, monkeypatch):
    data = tmp_path / "train.jsonl"
    data.write_text('{"a": 1}\n')
    calls = []
    real = contenthash.sha256_of_file
    monkeypatch.setattr(contenthash, "sha256_of_file", lambda path: calls.append(path) or real(path))
    cache = tmp_path / "cache"
    first = contenthash.file_hash(data, cache)
    assert [contenthash.file_hash(data, cache) for _ in range(3)] == [first] * 3 and len(calls) == 1
    data.write_text('{"a": 2}\n')
    os.utime(data, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert contenthash.file_hash(data, cache) == real(data) != first and len(calls) == 2


def _job(overrides: list[str]):
    cfg = compose_config(["experiment=smoke", *overrides])
    settings = train_settings(cfg)
    return cfg, settings


def test_run_inputs_name_every_file_a_run_reads(tmp_path, minilm_folder):
    cfg, settings = _job(["data.mnli.n_samples=16"])
    inputs = run_inputs(settings, settings.model)
    assert list(inputs) == ["train", "validation", "diagnostic", "mnli"]
    for item in inputs.values():
        assert item["sha256"] == contenthash.sha256_of_file(Path(item["source"]))
    cfg, settings = _job(["model.kind=pretrained", f"model.name={minilm_folder}"])
    model = run_inputs(settings, settings.model)["model"]
    assert model["source"] == str(minilm_folder) and len(model["sha256"]) == 64


def _finished_run(tmp_path: Path, cfg, inputs) -> RunDir:
    from stability.core.runrecord import RunRecord, config_fingerprint

    run = RunDir(tmp_path / "run")
    run.write_config(cfg)
    run.write_record(RunRecord(lang="en", setup="rte", seed=0, config_fingerprint=config_fingerprint(cfg),
                               inputs=inputs))
    return run


def test_the_verdict_names_each_difference(tmp_path):
    cfg, settings = _job([])
    inputs = run_inputs(settings, settings.model)
    run = _finished_run(tmp_path, cfg, inputs)
    assert judge(run, cfg, inputs).state == SAME
    assert judge(run, cfg, inputs, needs_model=True).state == RECORD_MORE
    other_lr, _ = _job(["trainer.learning_rate=0.5"])
    verdict = judge(run, other_lr, inputs)
    assert verdict.state == OTHER and verdict.differences == ("trainer.learning_rate: 0.001 -> 0.5",)
    changed = {**inputs, "train": {"source": "x", "sha256": "f" * 64}}
    assert judge(run, cfg, changed).differences == (f"train (x): content {inputs['train']['sha256'][:8]} -> ffffffff",)
    assert judge(_finished_run(tmp_path / "old", cfg, {}), cfg, changed).state == SAME  # inputs not recorded


def test_a_model_folder_whose_weights_changed_is_another_input(tmp_path, minilm_folder):
    import shutil

    model = tmp_path / "model"
    shutil.copytree(minilm_folder, model)
    cfg, settings = _job(["model.kind=pretrained", f"model.name={model}"])
    before = run_inputs(settings, settings.model)
    run = _finished_run(tmp_path, cfg, before)
    weights = next(model.glob("*.safetensors"))
    with weights.open("r+b") as handle:  # one byte of the weights, as a further fine-tuning would
        handle.seek(-1, 2)
        last = handle.read(1)
        handle.seek(-1, 2)
        handle.write(bytes([last[0] ^ 1]))
    after = run_inputs(settings, settings.model)
    verdict = judge(run, cfg, after)
    assert verdict.state == OTHER and verdict.differences[0].startswith(f"model ({model}): content ")
