"""`trainer.mixed_precision=auto`: bf16 where the run's device has it, float32 elsewhere; the run
record says which ran, and the report never pools runs of one variant that ran in different ones.

This machine's CPU has no bf16 instructions, so the capability is faked both ways."""
from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml
from helpers import QUICK, assert_report_refuses, runs

from stability.core.errors import UserError
from stability.core.jobs import job_configs, without_hydra
from stability.core.runrecord import RunDir, RunRecord, config_fingerprint
from stability.core.taxonomy import FINE_CATEGORIES
from stability.finetune import precision
from stability.finetune.precision import resolve_mixed_precision, run_device
from stability.report.cli import main as report_main
from stability.report.collect import collect
from stability.sweep.guard import check_sweep

CUDA = torch.device("cuda", 0)
CPU = torch.device("cpu")
OLD_RUN = Path(__file__).parent.parent / "fixtures" / "run_main_807686d"
CPU_CHECKS = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")


@pytest.fixture
def fresh_accelerate():
    """accelerate keeps one state per process and refuses another mixed precision in it: each
    in-process run starts from none, as a run of its own process would."""
    from accelerate.state import AcceleratorState, GradientState

    def reset() -> None:
        AcceleratorState._reset_state(reset_partial_state=True)
        GradientState._reset_state()

    reset()
    yield
    reset()


@pytest.mark.parametrize("capability, expected", [((8, 0), "bf16"), ((9, 0), "bf16"), ((7, 5), "no")])
def test_auto_on_cuda_follows_the_compute_capability(monkeypatch, caplog, capability, expected):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    with caplog.at_level(logging.INFO, logger=precision.__name__):
        assert resolve_mixed_precision("auto", CUDA) == expected
    ran = "bf16" if expected == "bf16" else "float32"
    assert caplog.messages == [f"trainer.mixed_precision=auto: {ran} on cuda:0 "
                               f"(compute capability {capability[0]}.{capability[1]}; bf16 from 8.0)"]


@pytest.mark.parametrize("avx512_bf16, amx, expected", [(True, False, "bf16"), (False, True, "bf16"),
                                                        (False, False, "no")])
def test_auto_on_a_cpu_follows_its_bf16_instructions(monkeypatch, caplog, avx512_bf16, amx, expected):
    for name, present in zip(CPU_CHECKS, (avx512_bf16, amx)):
        monkeypatch.setattr(torch.cpu, name, lambda present=present: present, raising=False)
    with caplog.at_level(logging.INFO, logger=precision.__name__):
        assert resolve_mixed_precision("auto", CPU) == expected
    reason = "the CPU has AVX512-BF16 or AMX" if expected == "bf16" else "the CPU has neither AVX512-BF16 nor AMX"
    assert caplog.messages[-1].endswith(f"on cpu ({reason})")


def test_a_torch_without_the_private_cpu_checks_means_float32(monkeypatch):
    for name in CPU_CHECKS:
        monkeypatch.delattr(torch.cpu, name, raising=False)
    assert resolve_mixed_precision("auto", CPU) == "no"


def test_other_devices_train_in_float32():
    assert resolve_mixed_precision("auto", torch.device("meta")) == "no"


@pytest.mark.parametrize("supported", [True, False])
@pytest.mark.parametrize("requested", ["no", "fp16", "bf16"])
def test_an_explicit_precision_is_passed_through(monkeypatch, caplog, requested, supported):
    monkeypatch.setattr(precision, "bf16_supported", lambda device: supported)
    with caplog.at_level(logging.INFO, logger=precision.__name__):
        assert resolve_mixed_precision(requested, CUDA) == requested
    assert not caplog.messages


@pytest.mark.parametrize("env, cpu, expected", [({}, False, False), ({}, True, True),
                                                ({"ACCELERATE_USE_CPU": "True"}, False, True),
                                                ({"ACCELERATE_USE_CPU": "False"}, False, False)])
def test_the_device_is_the_one_the_accelerator_will_use(monkeypatch, env, cpu, expected):
    """`accelerate launch --cpu` says so in ACCELERATE_USE_CPU, which the Accelerator reads and
    PartialState does not."""
    import accelerate

    asked = []

    class State:
        def __init__(self, cpu: bool) -> None:
            asked.append(cpu)
            self.device = CPU

    monkeypatch.delenv("ACCELERATE_USE_CPU", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(accelerate, "PartialState", State)
    assert run_device(cpu) == CPU and asked == [expected]


def test_auto_is_a_variant_of_its_own_and_keeps_its_fingerprint():
    """A sweep over no,auto: two jobs, two variants, two fingerprints; the config keeps the request."""
    configs = job_configs(["experiment=smoke", "seed=0", "trainer.mixed_precision=no,auto"])
    check_sweep(configs)
    assert [cfg.variant for cfg in configs] == ["", "precision-auto"]
    assert [cfg.trainer.mixed_precision for cfg in configs] == ["no", "auto"]
    assert len({config_fingerprint(without_hydra(cfg)) for cfg in configs}) == 2


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_accelerate")
@pytest.mark.parametrize("bf16, recorded", [(True, "bf16"), (False, "float32")])
def test_a_smoke_run_with_auto_records_the_precision_that_ran(tmp_path, monkeypatch, bf16, recorded):
    from stability.train import main as train_main

    monkeypatch.setattr(precision, "bf16_supported", lambda device: bf16)
    monkeypatch.setattr(sys, "argv", ["nli-stability"])   # the command line rewrites it
    out = tmp_path / "outputs"
    train_main([*QUICK, "trainer.max_epochs=1", "seed=0", "hydra.mode=RUN", "trainer.mixed_precision=auto",
                f"paths.output_dir={out}"])
    (name, metrics), = runs(out).items()
    assert metrics["precision"] == recorded and metrics["schema"] == 7
    assert "precision-auto" in name
    assert yaml.safe_load((out / name / "config.yaml").read_text())["trainer"]["mixed_precision"] == "auto"
    assert f"trainer.mixed_precision=auto: {recorded} on " in (out / name / "train.log").read_text()


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_accelerate")
def test_one_process_trains_a_sweep_over_both_precisions(tmp_path, monkeypatch):
    """Hydra's basic launcher (like a reused joblib worker) runs every job in one process: the
    second precision used to fail there ("AcceleratorState has already been initialized")."""
    from stability.train import main as train_main

    monkeypatch.setattr(sys, "argv", ["nli-stability"])
    out = tmp_path / "outputs"
    train_main([*QUICK, "trainer.max_epochs=1", "seed=0", "trainer.mixed_precision=no,bf16",
                f"paths.output_dir={out}"])
    assert sorted(m["precision"] for m in runs(out).values()) == ["bf16", "float32"]


def test_a_record_before_the_field_ran_its_configs_precision(tmp_path):
    old = RunDir(OLD_RUN)
    record = old.read_record()
    assert record.precision is None and old.precision(record) == "float32"
    copy = RunDir(tmp_path / "seed0")
    shutil.copytree(OLD_RUN, copy.path)
    config = (copy.path / "config.yaml").read_text()
    (copy.path / "config.yaml").write_text(config.replace("mixed_precision: 'no'", "mixed_precision: bf16"))
    assert copy.precision(record) == "bf16"
    (copy.path / "config.yaml").unlink()
    assert copy.precision(record) is None          # a hand-made record says nothing
    new = RunDir(tmp_path / "new")
    new.write_record(RunRecord(lang="en", setup="rte", seed=0, precision="bf16"))
    assert new.precision(new.read_record()) == "bf16"


def write_run(root: Path, seed: int, precision_ran: str | None, variant: str = "precision-auto") -> Path:
    """A hand-made finished run of en / rte / `variant` whose record says `precision_ran`."""
    run = RunDir(root / "en" / "rte" / variant / f"seed{seed}")
    run.path.mkdir(parents=True)
    run.write_record(RunRecord(lang="en", setup="rte", seed=seed, variant=variant, n_items=8, overall_mcc=0.1 * seed,
                               category_mcc={name: 0.1 * seed for name in FINE_CATEGORIES},
                               category_n={name: 4 for name in FINE_CATEGORIES}, precision=precision_ran))
    return run.path


def test_the_report_refuses_to_pool_runs_of_one_variant_in_two_precisions(tmp_path, capsys, monkeypatch):
    runs_dir = tmp_path / "runs"
    write_run(runs_dir, 0, "bf16")
    write_run(runs_dir, 1, "float32")
    write_run(runs_dir, 2, "bf16")
    write_run(runs_dir, 3, None)                   # says nothing: matches either
    folder = runs_dir / "en" / "rte" / "precision-auto"
    fix = f"runs=[{folder / 'seed0'},{folder / 'seed2'}] out=report-bf16"
    line = (f"{folder}: 4 runs of en / rte / precision-auto trained in different precisions: bf16 in seed0, "
            f"float32 in seed1 (fix: report each precision's runs apart, e.g. {fix})")
    assert_report_refuses(runs_dir, tmp_path / "report", line, capsys)
    # the fix, typed as written: the bf16 runs alone are reported
    monkeypatch.chdir(tmp_path)
    report_main([*fix.split(), "bootstrap=0", "figures=false"])
    summary = pd.read_csv(tmp_path / "report-bf16" / "summary.csv")
    assert summary["n_seeds"].unique().tolist() == [2]


def test_one_precision_per_variant_is_pooled_and_old_records_read_their_config(tmp_path):
    write_run(tmp_path, 0, "bf16")
    write_run(tmp_path, 1, "bf16")
    write_run(tmp_path, 0, "float32", variant="")
    old = tmp_path / "en" / "rte" / "seed1"
    shutil.copytree(OLD_RUN, old)                  # mixed_precision 'no', no precision recorded
    metrics = json.loads((old / "metrics.json").read_text())
    (old / "metrics.json").write_text(json.dumps({**metrics, "seed": 1}))
    assert collect([tmp_path]).n_runs == 4
    write_run(tmp_path, 2, "bf16", variant="")
    with pytest.raises(UserError, match=r"3 runs of en / rte trained in different precisions: bf16 in "
                                        r"seed2, float32 in seed0 \(fix:"):
        collect([tmp_path])
