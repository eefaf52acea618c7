"""Errors a user can cause: one line naming the file (and line) and the fix, status 2."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from forked_cli import run_module
from helpers import assert_one_line_error

from stability.core.config import CONF_DIR

REPO = Path(__file__).resolve().parents[2]
GOOD_TRAIN = '{"premise": "a b", "hypothesis": "b", "label": "entailment", "idx": 0}\n'
GOOD_DIAG = '{"idx": "0", "label": "entailment", "sentence1": "a", "sentence2": "b", "logic": "Negation"}\n'


def _train(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    env.pop("NLI_STABILITY_TRACEBACK", None)
    return run_module("stability.train", args, cwd, env=env, timeout=300)


def _french_release(root: Path, train: str = GOOD_TRAIN, diag: str = GOOD_DIAG) -> Path:
    (root / "French" / "TERRa").mkdir(parents=True)
    (root / "French" / "diagnostics").mkdir(parents=True)
    (root / "French" / "TERRa" / "train_fr.jsonl").write_text(train, encoding="utf-8")
    (root / "French" / "TERRa" / "val_fr.jsonl").write_text(GOOD_TRAIN, encoding="utf-8")
    (root / "French" / "diagnostics" / "LiDiRus_fr.jsonl").write_text(diag, encoding="utf-8")
    return root


BAD_FILES = {
    "malformed": (GOOD_TRAIN + '{"premise": "x",\n', GOOD_DIAG, "train_fr.jsonl:2: malformed JSON"),
    "missing_field": ('{"premise": "x", "label": "entailment"}\n', GOOD_DIAG,
                      "train_fr.jsonl:1: missing field 'hypothesis'"),
    "unknown_label": ('{"premise": "x", "hypothesis": "y", "label": "yes"}\n', GOOD_DIAG,
                      "train_fr.jsonl:1: unknown label 'yes'"),
    "unknown_category": (GOOD_TRAIN, GOOD_DIAG.replace("Negation", "Negations"),
                         "LiDiRus_fr.jsonl:1: unknown category 'Negations'"),
    "empty": ("", GOOD_DIAG, "train_fr.jsonl: file is empty"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_data_file(tmp_path, case):
    train, diag, message = BAD_FILES[case]
    root = _french_release(tmp_path / "data", train, diag)
    result = _train(["lang=fr", "model=tiny", f"data.root={root}", f"paths.output_dir={tmp_path / 'out'}"],
                    tmp_path)
    assert_one_line_error(result, message)
    assert not list((tmp_path / "out").rglob("metrics.json"))


@pytest.mark.slow
def test_missing_file(tmp_path):
    root = _french_release(tmp_path / "data")
    (root / "French" / "TERRa" / "val_fr.jsonl").unlink()
    result = _train(["lang=fr", "model=tiny", f"data.root={root}"], tmp_path)
    assert_one_line_error(result, "val_fr.jsonl: missing French validation file", "data.root")


def test_unknown_lang(tmp_path):
    shipped = ", ".join(sorted(path.stem for path in (CONF_DIR / "lang").glob("*.yaml")))
    assert_one_line_error(_train(["lang=xx"], tmp_path), "unknown lang 'xx'", shipped)


@pytest.mark.parametrize("value", ["5..0", "a..b", "0..x"])
def test_bad_range(tmp_path, value):
    assert_one_line_error(_train([f"seed={value}"], tmp_path), f"bad range 'seed={value}'", "seed=0..5")


@pytest.mark.slow
def test_missing_model_folder(tmp_path):
    root = _french_release(tmp_path / "data")
    result = _train(["lang=fr", f"model.name={tmp_path / 'no-such-model'}", f"data.root={root}"], tmp_path)
    assert_one_line_error(result, "cannot load the tokenizer of model.name=")


def test_finished_results_survive_a_failing_rerun(tmp_path):
    """A bad override in a later sweep must not touch what an earlier run wrote."""
    run = tmp_path / "outputs" / "default" / "fr" / "rte" / "seed0"
    run.mkdir(parents=True)
    (run / "metrics.json").write_text(json.dumps({"overall_mcc": 0.5}), encoding="utf-8")
    assert_one_line_error(_train(["lang=fr", "seed=3..1"], tmp_path), "bad range")
    assert json.loads((run / "metrics.json").read_text())["overall_mcc"] == 0.5


@pytest.mark.parametrize("override, message", [
    ("trainer.batch_size=abc", "trainer.batch_size='abc' is not an integer"),
    ("trainer.learning_rate=fast", "trainer.learning_rate='fast' is not a number"),
    ("trainer.max_epochs=0", "trainer.max_epochs=0 is out of range (fix: pass trainer.max_epochs=<a number >= 1>)"),
    ("model.dropout=1.5", "model.dropout=1.5 is out of range (fix: pass model.dropout=<a number in [0, 1)>)"),
    ("trainer.mixed_precision=fp8", "trainer.mixed_precision='fp8' is not known (fix: use one of: no, fp16, bf16, "
                                    "auto)"),
    ("data.max_train_samples=-5", "data.max_train_samples=-5 is out of range (fix: pass "
                                  "data.max_train_samples=<a number >= 1 or null>)"),
    ("model.dropout=2", "model.dropout=2.0 is out of range"),
    ("data.mnli.n_samples=many", "data.mnli.n_samples='many' is not a count"),
])
def test_bad_override_values(tmp_path, override, message):
    result = _train(["experiment=smoke", "hydra.mode=RUN", override, f"paths.output_dir={tmp_path}"],
                    tmp_path)
    assert_one_line_error(result, message)
    assert not list(tmp_path.rglob("*.yaml")) and not list(tmp_path.rglob("*.log"))  # refused before any run


def test_a_bad_value_in_one_job_of_a_sweep_stops_the_whole_sweep(tmp_path):
    result = _train(["experiment=smoke", "seed=0..1", "trainer.batch_size=4,0", f"paths.output_dir={tmp_path}"],
                    tmp_path)
    assert_one_line_error(result, "trainer.batch_size=0 is out of range")
    assert not list(tmp_path.rglob("*.yaml"))


def _closed_pipe() -> tuple[int, object]:
    """A pipe whose reader has gone (`| head` after its lines): its write end, as a file and a descriptor."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    return write_end, os.fdopen(write_end, "w")


def test_output_into_a_closed_pipe_ends_quietly(tmp_path, monkeypatch):
    """`nli-stability train --help | head -1`: the reader gone, a command ends as `cat` does (status 141,
    nothing on stderr), not in Python's BrokenPipeError traceback; the front door's own usage too."""
    import sys

    from stability.core.errors import BROKEN_PIPE_STATUS, exit_on_user_error

    write_end, stdout = _closed_pipe()
    monkeypatch.setattr(sys, "stdout", stdout)
    with pytest.raises(SystemExit) as ended:
        exit_on_user_error(lambda: print("a help text longer than the reader wanted " * 200))()
    assert ended.value.code == BROKEN_PIPE_STATUS == 141
    monkeypatch.undo()
    stdout.close()
    with pytest.raises(BrokenPipeError):      # a broken pipe of anything but stdout stays a traceback
        exit_on_user_error(lambda: (_ for _ in ()).throw(BrokenPipeError()))()
    write_end, stdout = _closed_pipe()
    try:
        result = subprocess.run([sys.executable, "-m", "stability.cli", "--help"], stdout=write_end,
                                stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                                env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    finally:
        stdout.close()
    assert (result.returncode, result.stderr) == (141, "")
