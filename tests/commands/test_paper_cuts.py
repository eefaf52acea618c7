"""Paper cuts a new user hit: each is now one line (or refused) naming the fix, and keeps what was written."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from forked_cli import run_module
from helpers import QUICK, assert_one_line_error, builtin_release, interrupt_when, interruptible
from omegaconf import OmegaConf

from stability.core.errors import UserError
from stability.core.jobs import job_configs, without_hydra
from stability.core.schemas.nli import NliSet
from stability.data.formats import read_examples
from stability.data.hub import load_nli_set
from stability.report.compare import check_conditions
from stability.sweep.slurm import PROGRAMS, require_slurm
from stability.sweep.status import sweep_configs, sweep_status

UTF16 = "(byte 0xff at column 1: the file is UTF-16) (fix: save it as UTF-8)"
PAIR = {"premise": "a", "hypothesis": "b", "label": "entailment"}


def _command(args: list[str], cwd: Path, *, env: dict[str, str] | None = None,
             module: str = "stability.cli") -> subprocess.CompletedProcess:
    """`nli-stability ARGS` as a user runs it (Hydra's and our own traceback switches off)."""
    environ = {**os.environ, "HYDRA_FULL_ERROR": "0", **(env or {})}
    environ.pop("NLI_STABILITY_TRACEBACK", None)
    return run_module(module, args, cwd, env=environ)


def _utf16(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-16")
    return path


# 1. a data file in another encoding

@pytest.mark.parametrize("name, text, where", [
    ("train.jsonl", json.dumps(PAIR) + "\n", f":1: not UTF-8 text {UTF16}"),
    ("train.tsv", "index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n", f":1: not UTF-8 text {UTF16}"),
])
def test_a_utf16_file_is_one_line_in_every_format(tmp_path, name, text, where):
    with pytest.raises(UserError) as raised:
        read_examples(_utf16(tmp_path / name, text), "en")
    assert str(raised.value) == f"{tmp_path / name}{where}"


def test_a_latin1_line_is_named_by_its_line_and_column(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_bytes((json.dumps(PAIR) + "\n").encode() * 2 + '{"premise": "café"}\n'.encode("latin-1"))
    with pytest.raises(UserError, match=r"train.jsonl:3: not UTF-8 text \(byte 0xe9 at column 17\) "
                                        r"\(fix: save it as UTF-8\)$"):
        read_examples(path, "en")


def test_a_utf16_data_file_of_a_datasets_set_is_one_line(tmp_path):
    path = _utf16(tmp_path / "pairs.jsonl", json.dumps(PAIR) + "\n")
    with pytest.raises(UserError) as raised:
        load_nli_set(NliSet(name="mine", path="json", data_files=[str(path)]), "en")
    assert str(raised.value) == f"{path}:1: not UTF-8 text {UTF16}"


@pytest.mark.slow
def test_train_dataqa_and_annotate_say_a_utf16_file_in_one_line(tmp_path):
    root = builtin_release(tmp_path / "data", ["en"])
    train = root / "RTE" / "train.jsonl"
    _utf16(train, train.read_text(encoding="utf-8"))
    message = f"{train}:1: not UTF-8 text {UTF16}"
    assert_one_line_error(_command(["train", "model=tiny", f"data.root={root}", f"paths.output_dir={tmp_path / 'out'}"],
                                   tmp_path), message)
    assert not list((tmp_path / "out").rglob("metrics.json"))
    for command in ("dataqa", "annotate"):
        assert_one_line_error(_command([command, "lang=en", f"files=[{train}]", f"out={tmp_path / command}"],
                                       tmp_path), message)


# 2. hydra/launcher=slurm without SLURM

def _programs(folder: Path, names: tuple[str, ...]) -> Path:
    folder.mkdir()
    for name in names:
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(stat.S_IRWXU)
    return folder


def test_slurm_is_required_only_where_its_programs_are_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_programs(tmp_path / "bin", PROGRAMS)))
    require_slurm()
    monkeypatch.setenv("PATH", str(_programs(tmp_path / "no-srun", ("sbatch",))))
    with pytest.raises(UserError, match=r"hydra/launcher=slurm needs SLURM, and this machine has no srun on PATH"):
        require_slurm()


@pytest.mark.slow
def test_a_slurm_sweep_without_slurm_is_one_line_and_writes_nothing(tmp_path):
    """Whether or not this machine has SLURM: the command runs with a PATH without its programs."""
    out = tmp_path / "outputs"
    result = _command(["experiment=smoke", "hydra/launcher=slurm", f"paths.output_dir={out}"], tmp_path,
                      env={"PATH": str(_programs(tmp_path / "bin", ()))}, module="stability.train")
    assert_one_line_error(result, "hydra/launcher=slurm needs SLURM, and this machine has no sbatch or srun on PATH",
                          "fix: submit from a login node")
    assert not out.exists()  # no multirun.yaml for `status` to read as runs not started


# 3. Ctrl-C

@pytest.mark.slow
def test_ctrl_c_in_a_training_sweep_is_one_line_and_keeps_the_finished_runs(tmp_path):
    out = tmp_path / "outputs"
    process = subprocess.Popen([sys.executable, "-m", "stability.cli", "train", *QUICK, "seed=0..3",
                                f"paths.output_dir={out}"], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    _, stderr = interrupt_when(process, lambda: any(out.rglob("metrics.json")))
    assert process.returncode == 130, stderr
    assert stderr.strip() == ("interrupted: finished runs are kept; the same command again goes on "
                              f"(nli-stability status runs={out / 'smoke'})")
    finished = list(out.rglob("metrics.json"))
    assert finished and all(json.loads(path.read_text(encoding="utf-8"))["lang"] == "en" for path in finished)


@pytest.mark.slow
def test_ctrl_c_while_a_report_reads_its_runs_is_one_line(tmp_path):
    """The report is interrupted at a known point: where it reads its runs, a real SIGINT arrives."""
    started = tmp_path / "started"
    code = ("import os, signal, sys, time; from pathlib import Path; import stability.report.cli as report; "
            f"report.prepare = lambda *arguments: (Path({str(started)!r}).touch(), time.sleep(60)); "
            "from stability.cli import main; main(sys.argv[1:])")
    process = subprocess.Popen([sys.executable, "-c", code, "report", f"runs={tmp_path}", f"out={tmp_path / 'r'}"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=interruptible)
    _, stderr = interrupt_when(process, started.exists)
    assert process.returncode == 130, stderr
    assert stderr.strip() == "interrupted: the same command again starts over"


# 4. a condition compared with itself

def test_a_condition_compared_with_itself_is_refused():
    results = pd.DataFrame({"lang": ["en", "en"], "setup": ["rte", "rte+mnli10000"], "variant": ["", ""]})
    check_conditions(results, "rte", "rte+mnli10000")
    with pytest.raises(UserError, match=r"compare: 'rte' and 'rte/' are the same condition .*compare=\[rte,"):
        check_conditions(results, "rte", "rte/")


# 5. unclear messages

@pytest.mark.parametrize("command, override, message", [
    ("report", "compare=rte", "compare takes a list, not 'rte' (fix: pass it in brackets: compare=[rte,rte+mnli10000])"),
    ("dataqa", "files=a.jsonl", "files takes a list, not 'a.jsonl' (fix: pass it in brackets: files=[a.jsonl])"),
])
def test_a_list_key_given_one_value_shows_the_brackets(command, override, message):
    with pytest.raises(UserError) as raised:
        job_configs(["runs=x", override] if command == "report" else [override], command)
    assert str(raised.value) == message


def test_an_unknown_label_names_its_row_from_1_and_a_fix_that_composes(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(PAIR) + "\n" + json.dumps({**PAIR, "label": "maybe"}) + "\n", encoding="utf-8")
    spec = ["data.train_set.name=mine", "data.train_set.path=json", f"data.train_set.data_files=[{path}]"]
    with pytest.raises(UserError, match=r"unknown label 'maybe' in row 2 \(fix: map it, e.g. "
                                        r"\+\+data\.train_set\.labels\.maybe=entailment"):
        load_nli_set(NliSet(name="mine", path="json", data_files=[str(path)]), "en")
    fixed = OmegaConf.to_object(job_configs([*spec, "++data.train_set.labels.maybe=entailment"])[0].data.train_set)
    assert len(load_nli_set(fixed, "en")) == 2
    with pytest.raises(UserError, match=r"\+\+data\.extra_eval\.0\.labels\.maybe=entailment"):
        load_nli_set(NliSet(name="mine", path="json", data_files=[str(path)]), "en", "data.extra_eval.0")


def test_an_extra_set_without_a_path_says_so():
    with pytest.raises(UserError, match=r"^data\.extra_eval\.0 \(foo\) has no path \(fix: give it the dataset's path"):
        job_configs(["data.extra_eval=[{name: foo}]"])


def test_a_tsv_header_without_a_pair_column_is_refused_at_line_1(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("index\ttext_a\ttext_b\tlabel\n0\ta\tb\tentailment\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"train\.tsv:1: the header has no premise column \(it has index, text_a, "
                                        r"text_b, label\) \(fix: name the columns as GLUE does: index, sentence1, "
                                        r"sentence2, label"):
        read_examples(path, "en")


def test_status_says_a_metrics_json_is_unreadable_and_what_to_do(tmp_path):
    folder = tmp_path / "outputs" / "smoke"
    folder.mkdir(parents=True)
    task = ["experiment=smoke", f"paths.output_dir={tmp_path / 'outputs'}"]
    OmegaConf.save({"hydra": {"overrides": {"hydra": [], "task": task}}}, folder / "multirun.yaml")
    run = folder / str(sweep_configs(folder)[0].hydra.sweep.subdir)
    run.mkdir(parents=True)
    (run / "metrics.json").write_text('{"lang": ', encoding="utf-8")
    detail = sweep_status(folder).runs[0].detail
    assert detail.startswith("unreadable metrics.json (") and detail.endswith(": the same command again redoes the run")


@pytest.mark.parametrize("overrides, fix", [
    (["lang=en", "lang.files.train=elsewhere.jsonl"], "point lang.files.train elsewhere"),
    (["lang=en", "data.mnli.n_samples=10"], "point data.mnli.file elsewhere"),
])
def test_a_missing_file_names_the_key_a_user_sets(tmp_path, overrides, fix):
    from stability.core.schemas.train import train_settings
    from stability.data.loading import language_source
    from stability.data.mnli import mnli_source

    root = builtin_release(tmp_path / "data", ["en"])
    settings = train_settings(without_hydra(job_configs([*overrides, f"data.root={root}"])[0]))
    source = mnli_source(settings) if "mnli" in fix else language_source(settings)
    with pytest.raises(UserError, match=rf"\(fix: put the file there, {fix}, "):
        source.path("train")


def test_an_empty_runs_folder_names_the_command_a_user_types(tmp_path):
    from stability.report.collect import collect

    with pytest.raises(UserError, match=r"fix: point at the output folder of nli-stability train, or at a tidy CSV"):
        collect([tmp_path])
